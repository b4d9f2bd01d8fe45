//! The app runs under its content security policy (`kandev_core::page_policy`,
//! written into `index.html` by the build): every page works with only its
//! own scripts, the page's hashed inline ones and WebAssembly, and no page
//! may frame it.

use std::time::Duration;

use anyhow::ensure;
use kandev_e2e::Ctx;
use kandev_e2e::scenario;
use serde_json::{Value, json};

use crate::support::*;

/// What the browser said of the policy since it was last asked.
async fn policy_said(ctx: &Ctx) -> Vec<String> {
    (ctx.browser.console().await.into_iter())
        .filter(|l| l.contains("Content Security Policy"))
        .collect()
}

/// GIVEN the board, a task page, an automation's page and the editor, each
/// opened by its address, THEN each works and the browser refused nothing
/// under the page's policy; WHEN a page frames the app (even its own
/// origin), THEN the frame shows nothing of it.
async fn pages_work_within_their_policy(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let task = ctx.stack.task(&ws, "Within policy", "todo").await?;
    let automation =
        stored_automation(&ctx, &ws, "Within policy", json!([{"type": "github_pr", "config": {}}])).await?;
    policy_said(&ctx).await;
    let pages = [
        (format!("/w/{ws}"), "[data-task-id]"),
        (format!("/w/{ws}/tasks/{task}"), "#delete-task"),
        (format!("/automations/{automation}"), "#automation-name"),
    ];
    for (address, ready) in &pages {
        ctx.browser.goto(address).await?;
        ctx.browser.wait_for(ready).await?;
        let policy = ctx
            .browser
            .js(
                "const m = document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]'); \
                 return m ? m.content : '';",
                vec![],
            )
            .await?;
        ensure!(
            policy
                .as_str()
                .is_some_and(|p| p.contains("script-src 'self' 'wasm-unsafe-eval' 'sha256-")),
            "{address}: the page has no script policy: {policy}"
        );
    }
    open_new_editor(&ctx, &ws).await?;
    let refused = policy_said(&ctx).await;
    ensure!(refused.is_empty(), "the policy refused what the app does: {refused:?}");

    let framed = ctx
        .browser
        .js(
            "const f = document.createElement('iframe'); f.src = '/'; document.body.append(f); \
             window.__framed = f; return true;",
            vec![],
        )
        .await?;
    ensure!(framed == Value::Bool(true));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let shown = ctx
        .browser
        .js(
            "const d = window.__framed.contentDocument; return d ? d.querySelectorAll('script').length : -1;",
            vec![],
        )
        .await?;
    ensure!(
        shown.as_i64().is_some_and(|n| n <= 0),
        "a frame showed the app ({shown} scripts)"
    );
    let said = policy_said(&ctx).await;
    ensure!(
        said.iter().any(|l| l.contains("frame-ancestors 'none'")),
        "the browser did not refuse the frame: {said:?}"
    );
    Ok(())
}
scenario!(
    every_page_works_within_its_policy_and_none_can_be_framed,
    super::pages_work_within_their_policy
);
