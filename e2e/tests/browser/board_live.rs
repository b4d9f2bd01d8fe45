//! The board at size: 200 cards load in two requests, and one live notice
//! costs at most two — the task list for a task change, one card's links
//! for a PR change — never one per card. A change made before the stream
//! connected shows once it does.

use std::time::Duration;

use anyhow::ensure;
use kandev_e2e::{Ctx, eventually, scenario};
use serde_json::json;

use crate::support::*;

/// API requests the page made since the last call (the stream excluded).
async fn api_requests(ctx: &Ctx) -> anyhow::Result<Vec<String>> {
    Ok(ctx
        .browser
        .requests()
        .await?
        .into_iter()
        .filter(|u| u.contains("/api/v1/") && !u.contains("/stream"))
        .collect())
}

async fn board_at_size(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let (number, _) = ctx.stack.sim_pr("acme", "api", "Linked").await?;
    let mut ids = vec![];
    for i in 0..200 {
        ids.push(ctx.stack.task(&ws, &format!("Card {i:03}"), "todo").await?);
    }
    let linked = ids[7].clone();
    ctx.stack
        .post(
            &format!("/api/v1/tasks/{linked}/prs"),
            json!({"url": format!("https://github.com/acme/api/pull/{number}")}),
        )
        .await?;
    // Drop what earlier pages asked for, then load the board.
    api_requests(&ctx).await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_text(".columns", "Card 199").await?;
    ctx.browser
        .wait_text(&format!("[data-task-id='{linked}'] .badges"), "open")
        .await?;
    let load = api_requests(&ctx).await?;
    // Only a live notice about the linked card (its PR synced while the
    // page loaded) may read one card's links; no other card is asked.
    let per_card: Vec<&String> = load
        .iter()
        .filter(|u| u.contains("/prs") && !u.contains("/board-prs"))
        .collect();
    ensure!(
        per_card.iter().all(|u| u.contains(&format!("/tasks/{linked}/prs"))),
        "the board asked for links card by card: {load:?}"
    );

    // A task changes: the task list is read again, nothing else.
    let gone = ids[42].clone();
    ctx.stack
        .post(&format!("/api/v1/tasks/{gone}/archive"), json!({}))
        .await?;
    eventually("the archived card to leave", Duration::from_secs(10), || async {
        (!ctx.browser.exists(&format!("[data-task-id='{gone}']")).await).then_some(())
    })
    .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after_task = api_requests(&ctx).await?;
    ensure!(
        after_task.len() <= 2,
        "one task change cost {} requests: {after_task:?}",
        after_task.len()
    );

    // A PR changes: only that card's links are read.
    ctx.stack
        .sim_post(&format!("/_sim/repos/acme/api/pulls/{number}/merge"), json!({}))
        .await?;
    ctx.browser
        .wait_text(&format!("[data-task-id='{linked}'] .badges"), "merged")
        .await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after_pr = api_requests(&ctx).await?;
    ensure!(
        after_pr.len() <= 2,
        "one PR change cost {} requests: {after_pr:?}",
        after_pr.len()
    );
    ensure!(
        after_pr.iter().all(|u| !u.contains("/board-prs")),
        "a PR change reread every link: {after_pr:?}"
    );
    Ok(())
}
scenario!(
    a_200_card_board_loads_in_two_requests_and_a_live_notice_costs_at_most_two,
    super::board_at_size
);

/// GIVEN a board whose live stream is slow to connect, WHEN a task is
/// created before it does, THEN the new card appears once it connects: the
/// page reads again on every (re)connection, so nothing in the gap is lost.
async fn stream_gap(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.stack.task(&ws, "Before the gap", "todo").await?;
    ctx.browser.hold_requests("*/stream*").await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_text(".columns", "Before the gap").await?;
    ctx.stack.task(&ws, "Made in the gap", "todo").await?;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let columns = ctx.browser.text(".columns").await?;
    ensure!(
        !columns.contains("Made in the gap"),
        "the stream was held, yet the card came: {columns}"
    );
    ctx.browser.release_requests().await?;
    eventually("the card made in the gap", Duration::from_secs(15), || async {
        let columns = ctx.browser.text(".columns").await.ok()?;
        columns.contains("Made in the gap").then_some(())
    })
    .await?;
    Ok(())
}
scenario!(
    a_change_made_before_the_stream_connected_shows_once_it_does,
    super::stream_gap
);
