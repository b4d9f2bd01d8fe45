//! axe-core on the board, the list, the editor (merged panel open) and the
//! notifications page, in the light theme on a desktop and a phone and in the
//! dark theme: no serious or critical violations, nothing scrolling sideways,
//! and every control at least 44 px. Screenshots of each page.

use anyhow::ensure;
use kandev_e2e::{Ctx, scenario};
use serde_json::json;

use crate::support::*;

async fn check(ctx: &Ctx, page: &str) -> anyhow::Result<()> {
    let violations = ctx.browser.axe_violations().await?;
    ctx.browser
        .screenshot(&format!("{page}-{}", ctx.device.as_str()))
        .await?;
    ensure!(violations.is_empty(), "{page}: {violations:#?}");
    Ok(())
}

async fn axe(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.stack.task(&ws, "Write the docs", "todo").await?;
    ctx.stack.task(&ws, "Ship it", "human_review").await.ok();
    stored_automation(
        &ctx,
        &ws,
        "Archive merged",
        json!([{"type": MERGED, "config": {"all_repos": true}}]),
    )
    .await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_text(".columns", "Write the docs").await?;
    check(&ctx, "board").await?;
    ctx.browser
        .goto(&format!("/settings/workspace/{ws}/automations"))
        .await?;
    ctx.browser.wait_text(".automations-table", "Archive merged").await?;
    check(&ctx, "list-axe").await?;
    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, MERGED).await?;
    set_all_repos(&ctx, false).await?;
    ctx.browser.wait_for(".org-badge").await?;
    check(&ctx, "editor").await?;
    ctx.browser.goto(&format!("/w/{ws}/notifications")).await?;
    ctx.browser.wait_text(".card", "No targets yet").await?;
    let current = current_nav(&ctx).await?;
    ensure!(current == ["Notifications"], "current header links: {current:?}");
    check(&ctx, "notifications-axe").await?;
    ensure!(
        ctx.browser.no_horizontal_overflow().await?,
        "the notifications page scrolls sideways"
    );
    let small = ctx.browser.small_or_hidden_controls().await?;
    ensure!(
        small.is_empty(),
        "controls under 44 px on the notifications page: {small:?}"
    );
    Ok(())
}
scenario!(
    axe_finds_no_serious_violations_on_board_list_editor_and_notifications,
    super::axe
);

/// The same pages, plus the automations home, in the dark theme: the system
/// prefers dark, the stylesheet follows, and axe still finds nothing serious.
async fn axe_dark(ctx: Ctx) -> anyhow::Result<()> {
    ctx.browser.goto("/").await?;
    let dark = ctx
        .browser
        .js("return matchMedia('(prefers-color-scheme: dark)').matches;", vec![])
        .await?;
    ensure!(dark == json!(true), "the browser does not prefer dark");
    let background = ctx
        .browser
        .js("return getComputedStyle(document.body).backgroundColor;", vec![])
        .await?;
    ensure!(
        background == json!("rgb(15, 18, 22)"),
        "not the dark theme: {background}"
    );
    axe(ctx.clone()).await?;
    ctx.browser.goto("/automations").await?;
    ctx.browser.wait_for("#agenda").await?;
    check(&ctx, "automations-home-axe").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axe_finds_no_serious_violations_in_the_dark_theme() {
    kandev_e2e::run("axe_dark_theme", kandev_e2e::Device::DarkDesktop, axe_dark).await
}
