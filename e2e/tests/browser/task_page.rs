//! The task page: the review bar, the reject dialog, refresh PR, the empty
//! sessions section, and delete that asks first.

use std::time::Duration;

use anyhow::{Context, ensure};
use kandev_e2e::{Ctx, eventually, scenario};
use serde_json::json;

use crate::support::*;

/// GIVEN a task in review, WHEN the user rejects it, THEN a dialog asks for the
/// reason and the task goes back to ready with that reason.
async fn reject_asks_for_a_reason(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let task = ctx.stack.task(&ws, "Polish the docs", "running").await?;
    ctx.stack
        .post(&format!("/api/v1/tasks/{task}/review"), json!({"summary": "Done"}))
        .await?;
    ctx.browser.goto(&format!("/w/{ws}/tasks/{task}")).await?;
    ctx.browser.wait_for(".review-bar #approve").await?;
    // The task page is part of the board; only Board is current.
    let current = current_nav(&ctx).await?;
    ensure!(current == ["Board"], "current header links: {current:?}");
    let empty = ctx.browser.text("#sessions-empty").await?;
    ensure!(empty.contains("No agent has worked on this task yet"), "{empty}");
    ctx.browser.click("#reject").await?;
    ctx.browser.type_into("#reject-reason", "Needs an example").await?;
    ctx.browser.click("#reject-confirm").await?;
    let status = eventually("the task back in ready", Duration::from_secs(10), || async {
        let t = ctx.stack.get(&format!("/api/v1/tasks/{task}")).await.ok()?;
        (t["status"] == "ready").then_some(t)
    })
    .await?;
    ensure!(status["status"] == "ready");
    let events = ctx.stack.get(&format!("/api/v1/tasks/{task}/events")).await?;
    let reason = events
        .as_array()
        .and_then(|l| l.iter().find(|e| e["kind"] == "rejected"))
        .map(|e| e["payload"]["reason"].clone());
    ensure!(reason == Some(json!("Needs an example")), "{events}");
    Ok(())
}
scenario!(
    rejecting_a_task_asks_for_the_reason_in_a_dialog,
    super::reject_asks_for_a_reason
);

/// GIVEN a task, WHEN the user deletes it, THEN it asks first; cancelling keeps
/// the task, confirming deletes it and returns to the board.
async fn delete_asks_first(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let task = ctx.stack.task(&ws, "Throwaway", "todo").await?;
    ctx.browser.goto(&format!("/w/{ws}/tasks/{task}")).await?;
    ctx.browser.click("#delete-task").await?;
    let body = ctx.browser.text("#confirm-body").await?;
    ensure!(body.contains("Throwaway"), "{body}");
    ctx.browser.click(".dialog .btn:not(.btn-danger)").await?;
    ctx.browser.wait_gone(".dialog").await?;
    ensure!(
        ctx.stack.get(&format!("/api/v1/tasks/{task}")).await.is_ok(),
        "cancel deleted it"
    );
    ctx.browser.click("#delete-task").await?;
    ctx.browser.click(".dialog .btn-danger").await?;
    eventually("the board", Duration::from_secs(10), || async {
        let url = ctx.browser.js("return location.pathname;", vec![]).await.ok()?;
        (url == json!(format!("/w/{ws}"))).then_some(())
    })
    .await?;
    ensure!(
        ctx.stack.get(&format!("/api/v1/tasks/{task}")).await.is_err(),
        "the task is still there"
    );
    Ok(())
}
scenario!(deleting_a_task_asks_first, super::delete_asks_first);

/// GIVEN a linked PR whose title changed on GitHub, WHEN the user taps
/// Refresh, THEN the page shows the new title without waiting for a sweep.
async fn refresh_pr(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let task = ctx.stack.task(&ws, "Refresh me", "running").await?;
    let (number, _) = ctx.stack.sim_pr("acme", "api", "Old title").await?;
    ctx.stack
        .post(
            &format!("/api/v1/tasks/{task}/prs"),
            json!({"owner": "acme", "repo": "api", "pr_number": number}),
        )
        .await?;
    ctx.browser.goto(&format!("/w/{ws}/tasks/{task}")).await?;
    ctx.browser.wait_text(".task-pr", "Old title").await?;
    ctx.stack
        .sim_patch(
            &format!("/_sim/repos/acme/api/pulls/{number}"),
            json!({"title": "New title"}),
        )
        .await
        .context("rename the PR in the simulator")?;
    // Live notices redraw the PR list (the link's own sync lands now too):
    // tap the current button until the new title shows.
    eventually("the new title after Refresh", Duration::from_secs(20), || async {
        ctx.browser
            .js(
                "document.querySelector('.task-pr .refresh-pr')?.click(); return null;",
                vec![],
            )
            .await
            .ok()?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let text = ctx.browser.text(".task-pr").await.ok()?;
        text.contains("New title").then_some(())
    })
    .await?;
    // The sweep (1 s here) would bring the title too: the toast is Refresh's own answer.
    ctx.browser.wait_text(".toast", "read again from GitHub").await?;
    Ok(())
}
scenario!(refresh_reads_a_linked_pr_again_now, super::refresh_pr);
