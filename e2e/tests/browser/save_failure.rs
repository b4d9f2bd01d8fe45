//! A save made of several requests that fails part-way: the editor shows what
//! was saved, and the next save never sends a trigger twice.

use anyhow::{Context, ensure};
use kandev_e2e::{Ctx, scenario};
use serde_json::json;

use crate::support::*;

async fn trigger_types(ctx: &Ctx, id: &str) -> anyhow::Result<Vec<String>> {
    let a = automation(ctx, id).await?;
    Ok(a["triggers"]
        .as_array()
        .context("triggers")?
        .iter()
        .filter_map(|t| t["type"].as_str().map(str::to_string))
        .collect())
}

/// GIVEN a saved automation, WHEN the user adds "Pull request merged" and an
/// impossible schedule and saves, THEN the merged trigger and the prompt are
/// saved, the schedule is refused, the form reloads to exactly that, and
/// saving again adds no second merged trigger.
async fn half_saved(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let id = ctx
        .stack
        .automation(
            &ws,
            json!({"name": "Half saved", "prompt": "Old prompt", "triggers": []}),
        )
        .await?;
    open_editor(&ctx, &ws, &id).await?;
    pick_condition(&ctx, MERGED).await?;
    ctx.browser.type_into("#prompt", "New prompt").await?;
    ctx.browser.select("#cron-preset", "custom").await?;
    ctx.browser.type_into("#cron-expression", "61 * * * *").await?;
    ctx.browser.click("#save-automation").await?;
    ctx.browser.wait_for(".toast-error").await?;
    ensure!(
        trigger_types(&ctx, &id).await? == vec![MERGED.to_string()],
        "server after the failed save"
    );
    ensure!(automation(&ctx, &id).await?["prompt"] == "New prompt");
    // The form shows what the server holds: no schedule, the saved prompt.
    let preset = ctx.browser.value("#cron-preset").await?;
    ensure!(preset.is_empty(), "the refused schedule still shows: {preset:?}");
    ensure!(ctx.browser.value("#prompt").await? == "New prompt");
    ctx.browser.click("#save-automation").await?;
    ctx.browser.wait_text(".toast", "saved").await?;
    ensure!(
        trigger_types(&ctx, &id).await? == vec![MERGED.to_string()],
        "the second save duplicated a trigger"
    );
    Ok(())
}
scenario!(
    a_save_failing_part_way_reloads_what_was_saved_and_never_duplicates,
    super::half_saved
);

/// GIVEN an automation saved with two repositories, WHEN the user edits its
/// prompt and saves, THEN both repositories are kept; removing the second
/// one is a deliberate tap.
async fn keeps_every_repository(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.stack.sim_repo("acme", "web").await?;
    let api_repo = ctx.stack.get(&format!("/api/v1/workspaces/{ws}/repositories")).await?[0]["id"]
        .as_str()
        .context("repo")?
        .to_string();
    let web_repo = ctx.stack.repository(&ws, "acme", "web").await?;
    let id = ctx
        .stack
        .automation(
            &ws,
            json!({"name": "Two repos", "prompt": "Old", "repository_ids": [api_repo, web_repo], "triggers": []}),
        )
        .await?;
    open_editor(&ctx, &ws, &id).await?;
    ctx.browser.wait_text("#more-repositories", "acme/web").await?;
    ctx.browser.type_into("#prompt", "New").await?;
    ctx.browser.click("#save-automation").await?;
    ctx.browser.wait_text(".toast", "saved").await?;
    let saved = automation(&ctx, &id).await?;
    ensure!(saved["repository_ids"] == json!([api_repo, web_repo]), "{saved}");
    ctx.browser.click("#more-repositories button").await?;
    ctx.browser.click("#save-automation").await?;
    kandev_e2e::eventually("one repository left", std::time::Duration::from_secs(10), || async {
        let a = automation(&ctx, &id).await.ok()?;
        (a["repository_ids"] == json!([api_repo])).then_some(())
    })
    .await?;
    Ok(())
}
scenario!(
    editing_an_automation_keeps_all_its_repositories,
    super::keeps_every_repository
);
