//! Automations out as YAML and back in, from the automations page.

use anyhow::{Context, ensure};
use kandev_e2e::{Ctx, scenario};
use serde_json::json;

use crate::support::*;

/// GIVEN a workspace with one automation, WHEN the user exports it, edits the
/// prompt, adds a second automation and imports the file, THEN the page shows
/// the diff first (one change, one new) and writes only on "Apply".
async fn yaml_round_trip(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.stack
        .automation(
            &ws,
            json!({"name": "Nightly", "prompt": "Tidy up",
            "triggers": [{"type": "scheduled", "config": {"cron_expression": "0 2 * * *"}}]}),
        )
        .await?;
    ctx.browser
        .goto(&format!("/settings/workspace/{ws}/automations"))
        .await?;
    ctx.browser.wait_for("#export-automations").await?;
    // The link the button downloads, fetched as the page would.
    let yaml = ctx
        .browser
        .js(
            "return fetch(document.querySelector('#export-automations').href).then(r => r.text());",
            vec![],
        )
        .await?;
    let yaml = yaml.as_str().context("the export")?.to_string();
    ensure!(yaml.contains("name: Nightly") && yaml.contains("Tidy up"), "{yaml}");
    let edited =
        yaml.replace("Tidy up", "Tidy up thoroughly") + "- name: Weekly report\n  prompt: Summarise the week\n";
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("automations.yaml");
    std::fs::write(&path, edited)?;
    ctx.browser
        .wait_for("#import-automations")
        .await?
        .send_keys(path.display().to_string())
        .await?;
    ctx.browser.wait_for("#import-preview").await?;
    let nightly = ctx.browser.text(".import-change[data-action=update]").await?;
    ensure!(nightly.contains("Nightly") && nightly.contains("prompt"), "{nightly}");
    let weekly = ctx.browser.text(".import-change[data-action=create]").await?;
    ensure!(weekly.contains("Weekly report"), "{weekly}");
    let before = ctx.stack.get(&format!("/api/v1/workspaces/{ws}/automations")).await?;
    ensure!(
        before.as_array().map(Vec::len) == Some(1),
        "the dry run wrote: {before}"
    );
    ctx.browser.click("#import-apply").await?;
    ctx.browser.wait_gone("#import-preview").await?;
    ctx.browser.wait_text(".automations-table", "Weekly report").await?;
    let after = ctx.stack.get(&format!("/api/v1/workspaces/{ws}/automations")).await?;
    let prompt = after
        .as_array()
        .and_then(|l| l.iter().find(|a| a["name"] == "Nightly"))
        .map(|a| a["prompt"].clone());
    ensure!(prompt == Some(json!("Tidy up thoroughly")), "{after}");
    Ok(())
}
scenario!(
    automations_export_to_yaml_and_import_with_a_diff_first,
    super::yaml_round_trip
);

/// GIVEN the German interface, WHEN the server refuses an import, THEN the
/// page says so in German (the error code's message), never in the server's
/// English.
async fn refused_in_german(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.browser
        .goto(&format!("/settings/workspace/{ws}/automations"))
        .await?;
    ctx.browser.select("#language-picker", "de").await?;
    ctx.browser
        .wait_text("label[for=import-automations]", "YAML importieren")
        .await?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("broken.yaml");
    std::fs::write(
        &path,
        "version: 1\nautomations:\n  - name: X\n    repositories: [acme/nowhere]\n",
    )?;
    ctx.browser
        .wait_for("#import-automations")
        .await?
        .send_keys(path.display().to_string())
        .await?;
    let text = ctx.browser.wait_text("#import-refused", "abgelehnt").await?;
    ensure!(text.starts_with("Die Datei wurde nicht importiert"), "{text}");
    ensure!(
        !text.contains("is not in this workspace"),
        "server English shown: {text}"
    );
    Ok(())
}
scenario!(a_refused_import_is_explained_in_german, super::refused_in_german);
