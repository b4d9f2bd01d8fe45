//! The automations home (agenda and feed across workspaces, with filters)
//! and one automation's page (Run now, triggers in words, reply composer).

use std::time::Duration;

use anyhow::{Context, ensure};
use kandev_e2e::{Ctx, eventually, scenario};
use serde_json::{Value, json};

use crate::support::*;

/// Waits until the automation has a succeeded run and returns it.
async fn succeeded_run(ctx: &Ctx, automation: &str) -> anyhow::Result<Value> {
    let run = eventually("a finished run", Duration::from_secs(20), || async {
        let runs = ctx
            .stack
            .get(&format!("/api/v1/automations/{automation}/runs"))
            .await
            .ok()?;
        let first = runs.as_array()?.first()?.clone();
        (first["status"] != "task_created" && first["status"] != "triggered").then_some(first)
    })
    .await?;
    ensure!(run["status"] == "succeeded", "{run}");
    Ok(run)
}

/// GIVEN automations in two workspaces, one on a schedule, both run once,
/// WHEN the user opens the automations home, THEN the agenda shows the
/// scheduled one's next runs and the feed shows both runs; filtering by
/// workspace or status narrows both.
async fn home(ctx: Ctx) -> anyhow::Result<()> {
    let mine = workspace(&ctx).await?;
    let ops = ctx.stack.workspace("Ops").await?;
    ctx.stack.repository(&ops, "acme", "api").await?;
    let hourly = ctx
        .stack
        .automation(
            &mine,
            json!({"name": "Hourly report", "prompt": "e2e:message(\"report ready\")",
                   "triggers": [{"type": "scheduled", "config": {"cron_expression": "@hourly", "timezone": "UTC"}}]}),
        )
        .await?;
    let hook = ctx
        .stack
        .automation(
            &ops,
            json!({"name": "Deploy hook", "prompt": "e2e:message(\"deployed\")",
                   "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await?;
    for a in [&hourly, &hook] {
        ctx.stack
            .post(&format!("/api/v1/automations/{a}/run"), json!({}))
            .await?;
        succeeded_run(&ctx, a).await?;
    }
    ctx.browser.goto("/automations").await?;
    let agenda = ctx.browser.wait_text("#agenda", "Hourly report").await?;
    ensure!(
        !agenda.contains("Deploy hook"),
        "only schedules are on the agenda: {agenda}"
    );
    let feed = ctx.browser.wait_text("#feed", "Deploy hook").await?;
    ensure!(feed.contains("Hourly report") && feed.contains("deployed"), "{feed}");
    ctx.browser
        .screenshot(&format!("automations-home-{}", ctx.device.as_str()))
        .await?;
    let current = current_nav(&ctx).await?;
    ensure!(current == ["Automations"], "current header links: {current:?}");

    ctx.browser.select("#filter-workspace", &ops).await?;
    eventually("the feed narrowed to Ops", Duration::from_secs(10), || async {
        let feed = ctx.browser.text("#feed").await.ok()?;
        (feed.contains("Deploy hook") && !feed.contains("Hourly report")).then_some(())
    })
    .await?;
    let agenda = ctx.browser.text("#agenda").await?;
    ensure!(agenda.contains("No scheduled runs"), "{agenda}");
    ctx.browser.select("#filter-workspace", "").await?;
    ctx.browser.select("#filter-status", "failed").await?;
    ctx.browser.wait_text("#feed", "No runs match").await?;
    ensure!(ctx.browser.no_horizontal_overflow().await?, "the home overflows");
    let violations = ctx.browser.axe_violations().await?;
    ensure!(violations.is_empty(), "{violations:?}");
    Ok(())
}
scenario!(
    automations_home_shows_the_agenda_and_a_filterable_feed_across_workspaces,
    super::home
);

/// GIVEN an automation, WHEN the user opens its page and taps Run now, THEN
/// the latest run's answer appears; a reply continues the same conversation
/// (the agent recalls the first prompt).
async fn page(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let id = ctx
        .stack
        .automation(
            &ws,
            json!({"name": "Chat", "prompt": "e2e:message(\"hello there\")",
                   "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await?;
    ctx.browser.goto(&format!("/automations/{id}")).await?;
    ctx.browser.wait_text("#automation-name", "Chat").await?;
    let words = ctx.browser.text(".trigger-words li[data-trigger-type=webhook]").await?;
    ensure_no_raw_type(&words)?;
    ctx.browser.click("#run-now").await?;
    let run = succeeded_run(&ctx, &id).await?;
    ctx.browser.wait_text("#latest-run", "hello there").await?;
    ctx.browser.wait_for("#reply-text").await?;
    ctx.browser.type_into("#reply-text", "e2e:recall()").await?;
    ctx.browser.click("#reply-send").await?;
    let task = run["task_id"].as_str().context("run task")?.to_string();
    let said = eventually("the agent's recall", Duration::from_secs(20), || async {
        let sessions = ctx.stack.get(&format!("/api/v1/tasks/{task}/sessions")).await.ok()?;
        let sid = sessions[0]["id"].as_str()?.to_string();
        let messages = ctx.stack.get(&format!("/api/v1/sessions/{sid}/messages")).await.ok()?;
        messages
            .as_array()?
            .iter()
            .filter_map(|m| m["content"].as_str())
            .find(|c| c.starts_with("recalled"))
            .map(str::to_string)
    })
    .await?;
    ensure!(said == "recalled via load: e2e:message(\"hello there\")", "{said}");
    ctx.browser.wait_text("#latest-run", "recalled via load").await?;
    ctx.browser
        .screenshot(&format!("automation-page-{}", ctx.device.as_str()))
        .await?;
    Ok(())
}
scenario!(
    automation_page_runs_now_and_a_reply_continues_the_conversation,
    super::page
);
