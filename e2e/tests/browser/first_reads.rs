//! A page opened by its address starts its first API reads itself, beside
//! the main module's download, and the app's own requests take them over,
//! so each goes over the network once. The addresses are
//! `kandev_core::api::first_reads`, which the app builds its requests with.

use std::time::Duration;

use anyhow::ensure;
use kandev_core::api::first_reads;
use kandev_e2e::Ctx;
use kandev_e2e::scenario;
use serde_json::{Value, json};

use crate::support::*;

/// What Chromium logs for a preload nothing used (three seconds after load).
const UNUSED_PRELOAD: &str = "preloaded using link preload but not used";

/// Opens `address` (a page of the `page` pattern, `:name` filled from
/// `params`), waits for `ready`, and checks that every first read was
/// preloaded once by the page and then used.
async fn reads_start_early(ctx: &Ctx, page: &str, params: &[(&str, &str)], ready: &str) -> anyhow::Result<()> {
    let fill = |s: &str| {
        params
            .iter()
            .fold(s.to_string(), |s, (k, v)| s.replace(&format!(":{k}"), v))
    };
    let reads = first_reads::first_reads()
        .into_iter()
        .find(|(p, _)| *p == page)
        .map(|(_, reads)| reads)
        .ok_or_else(|| anyhow::anyhow!("no first reads for {page}"))?;
    let expected: Vec<String> = (first_reads::EVERY_PAGE.iter().map(|r| r.to_string()))
        .chain(reads.iter().map(|r| fill(r)))
        .collect();
    ctx.browser.requests().await?;
    ctx.browser.console().await;
    ctx.browser.goto(&fill(page)).await?;
    ctx.browser.wait_for(ready).await?;
    let preloaded = ctx
        .browser
        .js(
            "return performance.getEntriesByType('resource')\
             .filter((e) => e.initiatorType === 'link' && e.name.includes('/api/v1/'))\
             .map((e) => e.name.replace(location.origin, ''))",
            vec![],
        )
        .await?;
    let preloaded: Vec<&str> = preloaded
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for read in &expected {
        ensure!(
            preloaded.iter().filter(|p| **p == read).count() == 1,
            "{page}: {read} was not preloaded once by the page: {preloaded:?}"
        );
    }
    // Chromium's verdict on each preload comes three seconds after load.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let unused: Vec<String> = (ctx.browser.console().await.into_iter())
        .filter(|l| l.contains(UNUSED_PRELOAD))
        .collect();
    ensure!(unused.is_empty(), "{page}: preloads the app did not use: {unused:?}");
    let me: Vec<String> = (ctx.browser.requests().await?.into_iter())
        .filter(|u| u.ends_with(first_reads::ME))
        .collect();
    ensure!(
        me.len() == 1,
        "{page}: who is signed in was asked for {} times: {me:?}",
        me.len()
    );
    Ok(())
}

/// GIVEN the board opened by its address, THEN who is signed in and the
/// board's reads were started by the page (`link` preloads), the app took
/// every one over (Chromium warns of none unused), and who is signed in was
/// asked for once; GIVEN a task page, a run's conversation or an automation's
/// page opened by its address (a shared link, a notification, a reload),
/// THEN the same holds for its reads.
async fn pages_start_their_reads_before_their_code_runs(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let task = ctx.stack.task(&ws, "Read early", "todo").await?;
    let params = [("ws", ws.as_str()), ("id", task.as_str())];
    reads_start_early(&ctx, "/w/:ws", &params, "[data-task-id]").await?;
    reads_start_early(&ctx, "/w/:ws/tasks/:id", &params, "#delete-task").await?;
    reads_start_early(&ctx, "/w/:ws/runs/:id", &params, ".lead:not(:empty)").await?;
    let automation = stored_automation(&ctx, &ws, "Read early", json!([{"type": "github_pr", "config": {}}])).await?;
    let params = [("id", automation.as_str())];
    reads_start_early(&ctx, "/automations/:id", &params, "#automation-name").await?;
    Ok(())
}
scenario!(
    a_page_opened_by_its_address_starts_its_reads_before_its_code_runs,
    super::pages_start_their_reads_before_their_code_runs
);
