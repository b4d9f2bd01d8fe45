//! The first page carries only the board: the editor's code is a separate
//! chunk, fetched when the editor is first opened, and the editor then works.

use anyhow::ensure;
use kandev_e2e::{Ctx, scenario};

use crate::support::*;

/// The app's wasm files the page fetched since the last call.
async fn wasm_fetched(ctx: &Ctx) -> anyhow::Result<Vec<String>> {
    Ok(ctx
        .browser
        .requests()
        .await?
        .into_iter()
        .filter(|u| u.ends_with(".wasm"))
        .collect())
}

/// GIVEN the built app, WHEN the board is opened, THEN only the main module
/// is fetched; WHEN the editor is opened, THEN its chunk is fetched and the
/// editor renders.
async fn board_first_editor_on_demand(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.stack.task(&ws, "Split me", "todo").await?;
    wasm_fetched(&ctx).await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_text(".columns", "Split me").await?;
    let board = wasm_fetched(&ctx).await?;
    ensure!(
        board.len() == 1 && board[0].ends_with("/kandev_web_bg.wasm"),
        "the board fetched more than the main module: {board:?}"
    );
    open_new_editor(&ctx, &ws).await?;
    let editor = wasm_fetched(&ctx).await?;
    ensure!(
        editor.iter().any(|u| u.contains("automation_editor_route")),
        "the editor's chunk was not fetched: {editor:?}"
    );
    pick_condition(&ctx, "github_pr_merged").await?;
    // API refusals before sign-in are expected; a script or wasm error is not.
    let errors: Vec<String> = (ctx.browser.console().await.into_iter())
        .filter(|l| l.contains("SEVERE") && !l.contains("/api/v1/"))
        .collect();
    ensure!(errors.is_empty(), "console errors: {errors:?}");
    Ok(())
}
scenario!(
    the_board_loads_without_the_editor_and_the_editor_loads_on_demand,
    super::board_first_editor_on_demand
);
