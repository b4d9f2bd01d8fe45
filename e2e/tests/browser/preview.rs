//! "Would this fire?" says exactly what the server would do, gate 7 included.

use std::time::Duration;

use anyhow::{Context, ensure};
use kandev_e2e::{Ctx, eventually, scenario};
use serde_json::json;

use crate::support::*;

/// A merged PR of `acme/api`, linked to `task`; returns its number.
async fn merged_pr_on(ctx: &Ctx, task: &str, title: &str) -> anyhow::Result<i64> {
    let (number, _) = ctx.stack.sim_pr("acme", "api", title).await?;
    ctx.stack
        .sim_post(&format!("/_sim/repos/acme/api/pulls/{number}/merge"), json!({}))
        .await?;
    ctx.stack
        .post(
            &format!("/api/v1/tasks/{task}/prs"),
            json!({"owner": "acme", "repo": "api", "pr_number": number}),
        )
        .await?;
    Ok(number)
}

/// GIVEN one merged PR on a person's task and one on an automation's run
/// task, WHEN the user picks "Pull request merged", THEN the preview says the
/// first would fire and the second is stopped because its task is a run.
async fn run_task_never_fires(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let task = ctx.stack.task(&ws, "Ship the fix", "review").await?;
    let person = merged_pr_on(&ctx, &task, "Fix").await?;
    let manual = ctx
        .stack
        .automation(&ws, json!({"name": "Manual", "prompt": "Say hello.", "triggers": []}))
        .await?;
    ctx.stack
        .post(&format!("/api/v1/automations/{manual}/run"), json!({}))
        .await?;
    let runs = ctx.stack.get(&format!("/api/v1/automations/{manual}/runs")).await?;
    let run_task = runs[0]["task_id"].as_str().context("the run's task")?.to_string();
    let robot = merged_pr_on(&ctx, &run_task, "Robot fix").await?;

    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, MERGED).await?;
    let verdict = |number: i64| {
        let browser = ctx.browser.clone();
        async move {
            browser
                .js(
                    "return [...document.querySelectorAll('.preview-item')]
                        .filter(li => li.textContent.includes('acme/api#' + arguments[0] + ' '))
                        .map(li => [li.dataset.verdict, li.textContent])[0] || null;",
                    vec![json!(number)],
                )
                .await
                .ok()
                .filter(|v| !v.is_null())
        }
    };
    let ok = eventually("the person's PR in the preview", Duration::from_secs(10), || {
        verdict(person)
    })
    .await?;
    ensure!(ok[0] == "ok", "person's PR: {ok}");
    let stop = eventually("the run task's PR in the preview", Duration::from_secs(10), || {
        verdict(robot)
    })
    .await?;
    ensure!(stop[0] == "stop", "run task's PR: {stop}");
    let text = stop[1].as_str().unwrap_or_default();
    ensure!(text.contains("the task is an automation run"), "the reason: {text:?}");
    Ok(())
}
scenario!(preview_says_a_run_tasks_pr_never_fires, super::run_task_never_fires);
