//! The merged loop in the browser: an automation made in the editor, a PR
//! linked on the task page, a merge in the simulator — then the run shows
//! as succeeded, the task leaves the board, and the transcript holds the
//! archive call.

use std::time::Duration;

use anyhow::ensure;
use kandev_e2e::{Ctx, eventually, scenario};

use crate::support::*;

/// Makes the automation through the editor; `prompt` replaces the default.
async fn automation_via_editor(ctx: &Ctx, ws: &str, prompt: Option<&str>) -> anyhow::Result<String> {
    start_merged(ctx, ws, "Archive merged work").await?;
    if let Some(p) = prompt {
        ctx.browser.type_into("#prompt", p).await?;
    }
    save_new(ctx, ws, "Archive merged work").await
}

async fn merged_loop(ctx: &Ctx, prompt: Option<&str>) -> anyhow::Result<()> {
    let ws = workspace(ctx).await?;
    let (number, _) = ctx.stack.sim_pr("acme", "api", "Add rate limiting").await?;
    let task = ctx.stack.task(&ws, "Rate limiting", "running").await?;
    let automation = automation_via_editor(ctx, &ws, prompt).await?;

    // Link the PR on the task page.
    ctx.browser.goto(&format!("/w/{ws}/tasks/{task}")).await?;
    ctx.browser
        .type_into("#link-pr", &format!("https://github.com/acme/api/pull/{number}"))
        .await?;
    ctx.browser.click("#link-pr ~ button").await?;
    ctx.browser.wait_text(".card", &format!("acme/api#{number}")).await?;

    // The board shows it until the merge.
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_for(&format!("[data-task-id='{task}']")).await?;
    ctx.browser
        .screenshot(&format!("board-before-merge-{}", ctx.device.as_str()))
        .await?;
    ctx.stack
        .sim_post(
            &format!("/_sim/repos/acme/api/pulls/{number}/merge"),
            serde_json::json!({}),
        )
        .await?;
    eventually("the task to leave the board", Duration::from_secs(30), || async {
        (!ctx.browser.exists(&format!("[data-task-id='{task}']")).await).then_some(())
    })
    .await?;
    let stored = ctx.stack.get(&format!("/api/v1/tasks/{task}")).await?;
    ensure!(!stored["archived_at"].is_null(), "the task is not archived: {stored}");

    // Recent runs shows the run as succeeded; its transcript has the call.
    open_editor(ctx, &ws, &automation).await?;
    ctx.browser.wait_for(".runs-table tr[data-status=succeeded]").await?;
    // Live notices may redraw the table under the tap: tap again until the
    // run page is there.
    let open = ".runs-table tr[data-status=succeeded] a.btn";
    eventually("the run page", Duration::from_secs(15), || async {
        if ctx.browser.exists(".transcript").await {
            return Some(());
        }
        let _ = ctx.browser.click(open).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        None
    })
    .await?;
    ctx.browser.wait_text(".msg-tool_call", "archive_task_kandev").await?;
    ctx.browser.wait_text(".transcript", &task).await?;
    ctx.browser
        .screenshot(&format!("run-transcript-{}", ctx.device.as_str()))
        .await?;
    Ok(())
}

async fn with_default_prompt(ctx: Ctx) -> anyhow::Result<()> {
    merged_loop(&ctx, None).await
}
scenario!(
    merged_pr_with_the_default_prompt_archives_its_task,
    super::with_default_prompt
);

async fn with_agent_script(ctx: Ctx) -> anyhow::Result<()> {
    merged_loop(
        &ctx,
        Some(r#"e2e:mcp:kandev:archive_task_kandev({"task_id":"{{data.task_id}}"})"#),
    )
    .await
}
scenario!(
    merged_pr_with_a_mock_agent_script_archives_its_task,
    super::with_agent_script
);
