//! The schedule panel: next runs come from the server's scheduler rule and
//! are written by the browser in the interface's language.

use std::time::Duration;

use anyhow::ensure;
use kandev_e2e::{Ctx, eventually, scenario};

use crate::support::*;

const GERMAN_WEEKDAYS: [&str; 7] = ["Mo.", "Di.", "Mi.", "Do.", "Fr.", "Sa.", "So."];

async fn next_runs(ctx: &Ctx) -> anyhow::Result<Vec<String>> {
    let texts = ctx
        .browser
        .js(
            "return [...document.querySelectorAll('.next-runs li')].map(li => li.textContent);",
            vec![],
        )
        .await?;
    Ok(serde_json::from_value(texts).unwrap_or_default())
}

/// GIVEN the editor in German, WHEN the user picks "every day" in
/// Europe/Berlin, THEN three next runs show with German weekdays, each at
/// 00:00 Berlin time beside its UTC time; an unknown zone says the schedule
/// cannot run.
async fn german_next_runs(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    ctx.browser.select("#language-picker", "de").await?;
    ctx.browser.wait_text("#when-title", "Wann").await?;
    ctx.browser.select("#cron-preset", "@daily").await?;
    ctx.browser.type_into("#timezone", "Europe/Berlin").await?;
    let runs = eventually("three next runs", Duration::from_secs(10), || async {
        next_runs(&ctx)
            .await
            .ok()
            .filter(|r| r.len() == 3 && r.iter().all(|t| t.contains("00:00")))
    })
    .await?;
    for run in &runs {
        ensure!(
            GERMAN_WEEKDAYS.iter().any(|d| run.starts_with(d)),
            "German weekday in {run:?}"
        );
        ensure!(run.contains("UTC"), "the UTC time beside it: {run:?}");
    }
    let options = ctx
        .browser
        .js(
            "return document.querySelectorAll('#timezone-list option').length;",
            vec![],
        )
        .await?;
    ensure!(options.as_u64().is_some_and(|n| n >= 1), "zone suggestions: {options}");
    ctx.browser.type_into("#timezone", "Mars/Olympus").await?;
    ctx.browser.wait_for(".next-runs .warning").await?;
    ensure!(next_runs(&ctx).await?.is_empty(), "no runs for an unknown zone");
    Ok(())
}
scenario!(
    schedule_preview_lists_next_runs_in_the_interface_language,
    super::german_next_runs
);
