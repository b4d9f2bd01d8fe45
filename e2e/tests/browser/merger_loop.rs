//! The merger loop in the browser: hand a task to review with its PR,
//! approve it, and watch it finish (green checks) or block (a failing
//! required check), with the outcome on the task page.

use anyhow::ensure;
use kandev_e2e::{Ctx, scenario};
use serde_json::json;

use crate::receiver::Receiver;
use crate::support::*;

/// Review with the PR URL and approve, through the task page.
async fn review_and_approve(ctx: &Ctx, ws: &str, task: &str, number: i64) -> anyhow::Result<()> {
    ctx.browser.goto(&format!("/w/{ws}/tasks/{task}")).await?;
    ctx.browser.type_into("#review-summary", "Ready to ship").await?;
    ctx.browser
        .type_into("#review-pr", &format!("https://github.com/acme/api/pull/{number}"))
        .await?;
    ctx.browser.click("#review-pr ~ button").await?;
    ctx.browser.wait_text(".status-line", "Human review").await?;
    ctx.browser.click("#approve").await?;
    ctx.browser.wait_gone("#approve").await?;
    Ok(())
}

/// Whether the simulator has merged acme/api's PR `number`.
async fn merged(ctx: &Ctx, number: i64) -> anyhow::Result<bool> {
    let pr = ctx
        .stack
        .sim_get(&format!("/_sim/repos/acme/api/pulls/{number}"))
        .await?;
    Ok(pr["merged"] == true)
}

/// Adds a webhook target for every event through the notifications page.
async fn add_notification_target(ctx: &Ctx, ws: &str, url: &str) -> anyhow::Result<()> {
    ctx.browser.goto(&format!("/w/{ws}/notifications")).await?;
    ctx.browser.wait_text(".card", "No targets yet").await?;
    ctx.browser.type_into("#target-url", url).await?;
    ctx.browser.type_into("#target-secret", "e2e-signing-secret").await?;
    ctx.browser.click("#target-add").await?;
    ctx.browser.wait_text(".targets", url).await?;
    Ok(())
}

async fn green(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let receiver = Receiver::start().await?;
    add_notification_target(&ctx, &ws, &receiver.url).await?;
    let (number, sha) = ctx.stack.sim_pr("acme", "api", "Ship the feature").await?;
    ctx.stack
        .sim_put("/_sim/repos/acme/api/protection", json!({"required_checks": ["build"]}))
        .await?;
    let task = ctx.stack.task(&ws, "Ship the feature", "running").await?;
    review_and_approve(&ctx, &ws, &task, number).await?;
    ctx.browser.wait_text(".outcome", "Merging").await?;
    // The audit trail names the person who approved the merge.
    ctx.browser.wait_text("#approved-by", "Approved by e2e").await?;
    ctx.stack
        .sim_post(
            &format!("/_sim/repos/acme/api/commits/{sha}/check-runs"),
            json!({"name": "build", "status": "completed", "conclusion": "success"}),
        )
        .await?;
    ctx.browser
        .wait_text(".outcome", &format!("Merged PR #{number}"))
        .await?;
    ctx.browser.wait_text(".status-line", "Done").await?;
    ensure!(merged(&ctx, number).await?, "the simulator's PR is not merged");
    ctx.browser
        .screenshot(&format!("task-merged-{}", ctx.device.as_str()))
        .await?;
    // The notification log shows both deliveries, and the receiver got them.
    ctx.browser.goto(&format!("/w/{ws}/notifications")).await?;
    ctx.browser
        .wait_text(".delivery[data-event='merged'][data-status='delivered']", "Delivered")
        .await?;
    ctx.browser
        .wait_text(
            ".delivery[data-event='merge_triggered'][data-status='delivered']",
            "answered 200",
        )
        .await?;
    let got = receiver.events();
    ensure!(
        got.contains(&"merge_triggered".to_string()) && got.contains(&"merged".to_string()),
        "the receiver got {got:?}"
    );
    ctx.browser
        .screenshot(&format!("notifications-{}", ctx.device.as_str()))
        .await?;
    Ok(())
}
scenario!(approved_task_merges_on_green_checks_and_is_done, super::green);

/// GIVEN a PR whose required check failed, WHEN its task is approved, THEN
/// the task is blocked naming the check — in German too.
async fn red(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let (number, sha) = ctx.stack.sim_pr("acme", "api", "Risky change").await?;
    ctx.stack
        .sim_put("/_sim/repos/acme/api/protection", json!({"required_checks": ["build"]}))
        .await?;
    ctx.stack
        .sim_post(
            &format!("/_sim/repos/acme/api/commits/{sha}/check-runs"),
            json!({"name": "build", "status": "completed", "conclusion": "failure"}),
        )
        .await?;
    let task = ctx.stack.task(&ws, "Risky change", "running").await?;
    review_and_approve(&ctx, &ws, &task, number).await?;
    let outcome = ctx.browser.wait_text(".outcome", "Blocked").await?;
    ensure!(
        outcome.contains("CI failing: build"),
        "the reason does not name the failing check: {outcome:?}"
    );
    ctx.browser.wait_text(".status-line", "Blocked").await?;
    // The merger's reason is said in the reader's language, not the server's.
    ctx.browser.select("#language-picker", "de").await?;
    let outcome = ctx.browser.wait_text(".outcome", "CI schlägt fehl: build").await?;
    ensure!(
        !outcome.contains("CI failing"),
        "English in the German outcome: {outcome:?}"
    );
    ctx.browser.select("#language-picker", "en-US").await?;
    ensure!(!merged(&ctx, number).await?, "a red PR was merged");
    Ok(())
}
scenario!(
    approved_task_with_a_failing_required_check_is_blocked_with_the_reason,
    super::red
);

async fn cancelled(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let (number, _) = ctx.stack.sim_pr("acme", "api", "Not yet").await?;
    // A required check that never reports: the merger waits.
    ctx.stack
        .sim_put("/_sim/repos/acme/api/protection", json!({"required_checks": ["build"]}))
        .await?;
    let task = ctx.stack.task(&ws, "Not yet", "running").await?;
    review_and_approve(&ctx, &ws, &task, number).await?;
    ctx.browser.wait_text(".outcome", "Merging").await?;
    ctx.browser.click("#cancel-merge").await?;
    ctx.browser.wait_text(".status-line", "Human review").await?;
    ctx.browser.wait_for("#approve").await?;
    ctx.browser.wait_text(".events", "Merge cancelled").await?;
    ensure!(!merged(&ctx, number).await?, "a cancelled merge merged");
    Ok(())
}
scenario!(
    a_merge_cancelled_from_the_task_page_returns_it_to_review_unmerged,
    super::cancelled
);

async fn repository_wait(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.click("details.card > summary").await?;
    ctx.browser.wait_for(".repository .ci-wait").await?;
    ctx.browser.type_into(".repository .ci-wait", "15\n").await?;
    ctx.browser
        .screenshot(&format!("repositories-{}", ctx.device.as_str()))
        .await?;
    // Leaving the field saves it.
    ctx.browser.click("details.card > summary").await?;
    let repos = kandev_e2e::eventually("the wait to be stored", std::time::Duration::from_secs(10), || async {
        let repos = ctx
            .stack
            .get(&format!("/api/v1/workspaces/{ws}/repositories"))
            .await
            .ok()?;
        (repos[0]["ci_wait_timeout_minutes"] == 15).then_some(repos)
    })
    .await?;
    ensure!(repos[0]["ci_wait_timeout_minutes"] == 15, "{repos}");
    Ok(())
}
scenario!(a_repositorys_merge_wait_is_set_from_the_board, super::repository_wait);

/// GIVEN a task with two linked PRs whose hand-off bound the second, and the
/// page showing that PR's head, WHEN the agent pushes before the person clicks
/// Approve, THEN the approval names the head the page showed: the pushed code
/// nobody saw is not merged and the task blocks naming both heads.
async fn approves_the_head_it_showed(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let (side, _) = ctx.stack.sim_pr("acme", "api", "Side fix").await?;
    let (number, seen) = ctx.stack.sim_pr("acme", "api", "Reviewed change").await?;
    let task = ctx.stack.task(&ws, "Reviewed change", "running").await?;
    ctx.stack
        .post(
            &format!("/api/v1/tasks/{task}/prs"),
            json!({"owner": "acme", "repo": "api", "pr_number": side}),
        )
        .await?;
    ctx.stack
        .post(
            &format!("/api/v1/tasks/{task}/review"),
            json!({"summary": "ready", "pr_url": format!("https://github.com/acme/api/pull/{number}")}),
        )
        .await?;
    ctx.browser.goto(&format!("/w/{ws}/tasks/{task}")).await?;
    ctx.browser.wait_text(".head-sha", &seen[..7]).await?;
    ctx.browser.wait_for("#approve").await?;
    // The page keeps what it showed: the push's refresh has not reached it
    // when the person clicks.
    ctx.browser.hold_requests("*/api/v1/tasks/*/prs").await?;
    let pushed = ctx
        .stack
        .sim_post(&format!("/_sim/repos/acme/api/pulls/{number}/push"), json!({}))
        .await?;
    ctx.browser.click("#approve").await?;
    let outcome = ctx.browser.wait_text(".outcome", "Blocked").await?;
    ctx.browser.release_requests().await?;
    ensure!(
        outcome.contains(&format!("approved {}", &seen[..7])),
        "the block does not name the head the page showed ({seen}): {outcome:?}, pushed {pushed}"
    );
    ensure!(!merged(&ctx, number).await?, "code nobody saw was merged");
    Ok(())
}
scenario!(
    approve_names_the_head_the_page_showed_of_the_bound_pr,
    super::approves_the_head_it_showed
);
