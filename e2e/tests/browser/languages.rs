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
    // The choice is kept across a reload, and the page itself asks for the
    // German messages beside its script, once.
    ctx.browser
        .goto(&format!("/settings/workspace/{ws}/automations/new"))
        .await?;
    ctx.browser.wait_text("#when-title", "Wann").await?;
    let fetched = ctx
        .browser
        .js(
            "return performance.getEntriesByType('resource')\
             .filter((e) => e.name.includes('/locales/')).map((e) => [e.name.split('/').pop(), e.initiatorType])",
            vec![],
        )
        .await?;
    ensure!(
        fetched == serde_json::json!([["de.ftl", "link"]]),
        "the German messages were not preloaded once by the page: {fetched}"
    );
    ctx.browser.select("#language-picker", "en-US").await?;
    ctx.browser.wait_text("#when-title", "When").await?;
    Ok(())
}
scenario!(switching_to_german_shows_the_editor_in_german_and_back, super::switch);

/// GIVEN the German interface and a run that failed for want of a repository,
/// WHEN its automation is opened, THEN the run log says why in German, not in
/// the server's English.
async fn failure_in_german(ctx: Ctx) -> anyhow::Result<()> {
    let ws = ctx.stack.workspace("Leer").await?;
    let id = ctx
        .stack
        .automation(
            &ws,
            serde_json::json!({"name": "Nightly", "prompt": "x", "triggers": []}),
        )
        .await?;
    ctx.stack
        .post(&format!("/api/v1/automations/{id}/run"), serde_json::json!({}))
        .await?;
    open_editor(&ctx, &ws, &id).await?;
    ctx.browser.select("#language-picker", "de").await?;
    let row = ctx
        .browser
        .wait_text(".runs-table tr[data-status=failed]", "kein Repository verfügbar")
        .await?;
    ensure!(!row.contains("no repository available"), "row {row:?}");
    ctx.browser.select("#language-picker", "en-US").await?;
    ctx.browser
        .wait_text(
            ".runs-table tr[data-status=failed]",
            "no repository available \u{2014} add a repository to the workspace",
        )
        .await?;
    Ok(())
}
scenario!(a_runs_failure_reads_in_the_chosen_language, super::failure_in_german);
