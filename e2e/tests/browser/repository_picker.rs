//! The editor's repository choice: several repositories added one below the
//! other, and "None — no repository", each saved and shown again on reopen.

use std::time::Duration;

use anyhow::{Context, ensure};
use kandev_e2e::{Ctx, eventually, scenario};
use serde_json::json;

use crate::support::*;

/// GIVEN a workspace with two repositories, WHEN the user picks one and adds
/// the other below it, THEN both are saved in that order; WHEN they then pick
/// "None — no repository", THEN the list is cleared, the add row goes away,
/// and the reopened editor shows "None".
async fn several_then_none(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.stack.sim_repo("acme", "web").await?;
    let web = ctx.stack.repository(&ws, "acme", "web").await?;
    let repos = ctx.stack.get(&format!("/api/v1/workspaces/{ws}/repositories")).await?;
    let api = repos
        .as_array()
        .and_then(|l| l.iter().find(|r| r["name"] == "api"))
        .and_then(|r| r["id"].as_str())
        .context("acme/api")?
        .to_string();
    start_merged(&ctx, &ws, "Two repositories").await?;
    ensure!(
        !ctx.browser.exists("#repository-add").await,
        "an add row is offered under \"Auto\""
    );
    ctx.browser.select("#repository-picker", &api).await?;
    ctx.browser.wait_for("#repository-add").await?;
    ctx.browser.select("#repository-add", &web).await?;
    ctx.browser.wait_text("#more-repositories", "acme/web").await?;
    ctx.browser.wait_gone("#repository-add").await?;
    let id = save_new(&ctx, &ws, "Two repositories").await?;
    let saved = automation(&ctx, &id).await?;
    ensure!(saved["repository_ids"] == json!([api, web]), "{saved}");
    ensure!(saved["no_repository"] == false, "{saved}");

    open_editor(&ctx, &ws, &id).await?;
    ctx.browser.wait_text("#more-repositories", "acme/web").await?;
    ctx.browser.select("#repository-picker", "none").await?;
    ctx.browser.wait_gone("#more-repositories").await?;
    ensure!(
        !ctx.browser.exists("#repository-add").await,
        "an add row is offered under \"None\""
    );
    ctx.browser.wait_text("#repository-help", "no checkout").await?;
    save_existing(&ctx).await?;
    eventually("None to be saved", Duration::from_secs(10), || async {
        let a = automation(&ctx, &id).await.ok()?;
        (a["no_repository"] == true && a["repository_ids"] == json!([])).then_some(())
    })
    .await?;
    open_editor(&ctx, &ws, &id).await?;
    eventually("the reopened picker to show None", Duration::from_secs(10), || async {
        (ctx.browser.value("#repository-picker").await.ok()? == "none").then_some(())
    })
    .await?;
    Ok(())
}
scenario!(
    repositories_are_added_one_below_another_and_none_saves_no_repository,
    super::several_then_none
);
