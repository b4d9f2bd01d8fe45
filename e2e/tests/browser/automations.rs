//! The rest of a person's automation work: Run now from the list, the
//! prompt's placeholder completion, and a webhook automation end to end.

use std::time::Duration;

use anyhow::ensure;
use kandev_e2e::{Ctx, eventually, scenario};
use serde_json::json;
use thirtyfour::Key;

use crate::support::*;

/// Run now reports a skip with its reason, and a start once enabled.
async fn run_now(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let id = ctx
        .stack
        .automation(
            &ws,
            json!({"name": "Nightly", "enabled": false, "prompt": "e2e:message(\"done\")"}),
        )
        .await?;
    ctx.browser
        .goto(&format!("/settings/workspace/{ws}/automations"))
        .await?;
    let row = format!("tr[data-automation-id='{id}']");
    ensure!(
        ctx.browser.text(&row).await?.contains("Never"),
        "last triggered is not Never"
    );
    ctx.browser
        .click(&format!("{row} button[aria-label='Run now']"))
        .await?;
    ctx.browser
        .wait_text(".toast", "Skipped — automation is disabled")
        .await?;
    toggle(&ctx, &format!("enabled-{id}")).await?;
    eventually("the automation to be enabled", Duration::from_secs(10), || async {
        (automation(&ctx, &id).await.ok()?["enabled"] == true).then_some(())
    })
    .await?;
    ctx.browser
        .click(&format!("{row} button[aria-label='Run now']"))
        .await?;
    ctx.browser.wait_text(".toast", "Automation triggered.").await?;
    eventually("last triggered to update", Duration::from_secs(15), || async {
        let text = ctx.browser.text(&row).await.ok()?;
        (!text.contains("Never")).then_some(())
    })
    .await?;
    Ok(())
}
scenario!(run_now_reports_the_skip_reason_and_then_starts_a_run, super::run_now);

/// Typing `{{` offers the condition's placeholders; Enter inserts one; a
/// chip inserts at the cursor.
async fn completion(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    start_merged(&ctx, &ws, "Completion").await?;
    ctx.browser.type_into("#prompt", "Archive {{data.ta").await?;
    ctx.browser.wait_text("#prompt-completion", "{{data.task_id}}").await?;
    ctx.browser.wait_for("#prompt").await?.send_keys(Key::Enter).await?;
    eventually("the placeholder to be inserted", Duration::from_secs(5), || async {
        (ctx.browser.value("#prompt").await.ok()? == "Archive {{data.task_id}}").then_some(())
    })
    .await?;
    ctx.browser.wait_gone("#prompt-completion:not([hidden])").await?;
    ctx.browser
        .click(".chips .chip[aria-label='Insert data.pr_number']")
        .await?;
    let value = ctx.browser.value("#prompt").await?;
    ensure!(value.contains("{{data.pr_number}}"), "chip did not insert: {value:?}");
    Ok(())
}
scenario!(
    prompt_completion_offers_and_inserts_registry_placeholders,
    super::completion
);

/// A webhook automation: its URL and secret are shown once after saving, a
/// POST with the secret starts a run, and Recent runs shows it.
async fn webhook(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    name(&ctx, "Inbound").await?;
    ctx.browser.click("#use-webhook").await?;
    ctx.browser.wait_for(".trigger-card[data-trigger-type=webhook]").await?;
    ctx.browser
        .type_into("#prompt", "e2e:message(\"got {{webhook.action}}\")")
        .await?;
    ctx.browser.click("#save-automation").await?;
    let url = eventually("the webhook URL", Duration::from_secs(10), || async {
        ctx.browser
            .value("#created-webhook-url")
            .await
            .ok()
            .filter(|v| v.contains("/api/v1/automations/webhook/"))
    })
    .await?;
    let secret = ctx.browser.value("#created-webhook-secret").await?;
    ensure!(secret.len() == 32, "secret {secret:?}");
    ctx.browser.click(".dialog button").await?;
    ctx.browser.wait_for(".webhook-panel #webhook-url").await?;
    let http = reqwest::Client::new();
    let resp = http
        .post(&url)
        .header("X-Webhook-Secret", &secret)
        .json(&json!({"action": "opened"}))
        .send()
        .await?;
    ensure!(resp.status() == 202, "webhook answered {}", resp.status());
    ctx.browser.wait_for(".runs-table tr[data-status=succeeded]").await?;
    ensure!(ctx.browser.text(".runs-table").await?.contains("webhook"));
    Ok(())
}
scenario!(
    webhook_automation_shows_its_secret_once_and_runs_on_a_post,
    super::webhook
);
