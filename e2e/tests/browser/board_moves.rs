//! The board on a phone shows one column at a time with a switcher; cards
//! move through a "move to" menu (the keyboard path) or by drag and drop,
//! both offering only what the rules allow.

use std::time::Duration;

use anyhow::ensure;
use kandev_e2e::{Ctx, Device, eventually, scenario};
use serde_json::json;

use crate::support::*;

async fn displayed(ctx: &Ctx, css: &str) -> anyhow::Result<bool> {
    Ok(ctx.browser.wait_for(css).await?.is_displayed().await?)
}

async fn column_of(ctx: &Ctx, task: &str) -> Option<String> {
    let v = ctx
        .browser
        .js(
            "return document.querySelector(`[data-task-id='${arguments[0]}']`)?.closest('.column')?.dataset.status ?? null;",
            vec![json!(task)],
        )
        .await
        .ok()?;
    v.as_str().map(str::to_string)
}

/// The card shows in the Ready column and the server has it there.
async fn lands_in_ready(ctx: &Ctx, task: &str) -> anyhow::Result<()> {
    eventually("the card in Ready", Duration::from_secs(10), || async {
        (column_of(ctx, task).await.as_deref() == Some("ready")).then_some(())
    })
    .await?;
    let stored = ctx.stack.get(&format!("/api/v1/tasks/{task}")).await?;
    ensure!(stored["status"] == "ready", "{stored}");
    Ok(())
}

/// GIVEN a task in To do and one in Ready, WHEN the board opens on a phone,
/// THEN only To do shows until the switcher picks Ready (a desktop shows
/// both and no switcher); AND the To do card's menu moves it to Ready.
async fn switch_and_move(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let todo = ctx.stack.task(&ws, "Write the spec", "todo").await?;
    let ready = ctx.stack.task(&ws, "Ship it", "ready").await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    let ready_card = format!("[data-task-id='{ready}']");
    let todo_card = format!("[data-task-id='{todo}']");
    ensure!(displayed(&ctx, &todo_card).await?, "the To do card");
    match ctx.device {
        Device::Mobile => {
            ensure!(!displayed(&ctx, &ready_card).await?, "Ready shows before it is picked");
            ctx.browser.click(".column-switcher [data-status=ready]").await?;
            eventually("the Ready column", Duration::from_secs(5), || async {
                displayed(&ctx, &ready_card).await.ok().filter(|d| *d)
            })
            .await?;
            ensure!(!displayed(&ctx, &todo_card).await?, "To do still shows");
            ctx.browser.click(".column-switcher [data-status=todo]").await?;
        }
        Device::Desktop | Device::DarkDesktop => {
            ensure!(displayed(&ctx, &ready_card).await?, "every column shows on a desktop");
            ensure!(!displayed(&ctx, ".column-switcher").await?, "no switcher on a desktop");
        }
    }
    let offered = ctx
        .browser
        .js(
            "return [...document.querySelectorAll(`[data-task-id='${arguments[0]}'] .move-card option`)].map(o => o.value).filter(v => v);",
            vec![json!(todo)],
        )
        .await?;
    // Only an agent's review hand-off enters human review; the menu never offers it.
    ensure!(
        offered
            .as_array()
            .is_some_and(|l| l.contains(&json!("ready")) && !l.contains(&json!("human_review"))),
        "moves offered from To do: {offered}"
    );
    ctx.browser.select(&format!("{todo_card} .move-card"), "ready").await?;
    lands_in_ready(&ctx, &todo).await
}
scenario!(
    board_switches_columns_on_a_phone_and_moves_cards_from_a_menu,
    super::switch_and_move
);

/// Drags a card onto a column with the browser's own drag events; returns
/// whether the column accepted the drag (cancelled its `dragover`).
async fn drag(ctx: &Ctx, task: &str, to: &str) -> anyhow::Result<bool> {
    let accepted = ctx
        .browser
        .js(
            "return (async () => {
                const [id, to] = arguments;
                const card = document.querySelector(`[data-task-id='${id}']`);
                const column = document.querySelector(`.column[data-status='${to}']`);
                const dataTransfer = new DataTransfer();
                const fire = (el, type) => {
                    const ev = new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer});
                    el.dispatchEvent(ev);
                    return ev.defaultPrevented;
                };
                fire(card, 'dragstart');
                await new Promise(r => setTimeout(r, 50));
                const accepted = fire(column, 'dragover');
                fire(column, 'drop');
                fire(card, 'dragend');
                return accepted;
            })();",
            vec![json!(task), json!(to)],
        )
        .await?;
    Ok(accepted == json!(true))
}

/// GIVEN a task in To do, WHEN the user drags its card onto Human review,
/// THEN the column refuses it and nothing moves; WHEN onto Ready, THEN the
/// card moves there (the "move to" menu is the keyboard path to the same moves).
async fn drag_and_drop(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let todo = ctx.stack.task(&ws, "Drag me", "todo").await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    let card = format!("[data-task-id='{todo}']");
    ctx.browser.wait_for(&card).await?;
    let draggable = ctx
        .browser
        .js(
            "return document.querySelector(arguments[0]).getAttribute('draggable');",
            vec![json!(card)],
        )
        .await?;
    ensure!(draggable == json!("true"), "the card is not draggable: {draggable}");
    ensure!(
        !drag(&ctx, &todo, "human_review").await?,
        "Human review accepted a drag"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stored = ctx.stack.get(&format!("/api/v1/tasks/{todo}")).await?;
    ensure!(stored["status"] == "todo", "{stored}");
    ensure!(drag(&ctx, &todo, "ready").await?, "Ready refused the drag");
    lands_in_ready(&ctx, &todo).await
}
scenario!(
    board_cards_move_by_drag_and_drop_only_where_the_rules_allow,
    super::drag_and_drop
);
