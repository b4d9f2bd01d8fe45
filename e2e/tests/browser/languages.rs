//! Switching the interface language and back.

use anyhow::ensure;
use kandev_e2e::{Ctx, scenario};

use crate::support::*;

async fn switch(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    ensure!(ctx.browser.text("#when-title").await? == "When");
    ctx.browser.select("#language-picker", "de").await?;
    ctx.browser.wait_text("#when-title", "Wann").await?;
    ctx.browser.wait_text("#then-title", "Dann").await?;
    pick_condition(&ctx, MERGED).await?;
    let label = ctx.browser.accessible_name("#base-branches").await?;
    ensure!(
        label == "Ziel-Branches (durch Kommas getrennt)",
        "German label {label:?}"
    );
    let lang = ctx.browser.js("return document.documentElement.lang;", vec![]).await?;
    ensure!(lang == "de", "html lang {lang}");
    ctx.browser
        .screenshot(&format!("editor-de-{}", ctx.device.as_str()))
        .await?;
    // The choice is kept across a reload.
    ctx.browser
        .goto(&format!("/settings/workspace/{ws}/automations/new"))
        .await?;
    ctx.browser.wait_text("#when-title", "Wann").await?;
    ctx.browser.select("#language-picker", "en-US").await?;
    ctx.browser.wait_text("#when-title", "When").await?;
    Ok(())
}
scenario!(switching_to_german_shows_the_editor_in_german_and_back, super::switch);
