//! Access in the browser: signing out and back in (landing where one was),
//! a wrong password, API tokens shown once and revoked, and an owner adding a
//! viewer who then sees the board without the controls a viewer may not use.

use std::time::Duration;

use anyhow::{Context, ensure};
use kandev_e2e::{Ctx, E2E_USER, eventually, scenario, sign_in_here};

use crate::support::*;

async fn location(ctx: &Ctx) -> anyhow::Result<String> {
    let v = ctx
        .browser
        .js("return location.pathname + location.search", vec![])
        .await?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

async fn sign_out_and_back_in(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_text("#signed-in-user", E2E_USER).await?;
    ctx.browser.click("#sign-out").await?;
    ctx.browser.wait_for("#login-username").await?;
    // A page asked for while signed out sends the browser to sign in, then back.
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    eventually(
        "the sign-in page, remembering the board",
        Duration::from_secs(10),
        || async { location(&ctx).await.ok().filter(|l| l.starts_with("/login?next=")) },
    )
    .await?;
    ctx.browser.type_into("#login-username", E2E_USER).await?;
    ctx.browser.type_into("#login-password", "not the password").await?;
    ctx.browser.click("#login-submit").await?;
    ctx.browser
        .wait_text("[role=alert]", "Unknown username or wrong password")
        .await?;
    ctx.browser.type_into("#login-password", "e2e-password-1234").await?;
    ctx.browser.click("#login-submit").await?;
    eventually("the board again", Duration::from_secs(10), || async {
        location(&ctx).await.ok().filter(|l| *l == format!("/w/{ws}"))
    })
    .await?;
    ctx.browser.wait_text("#signed-in-user", E2E_USER).await?;
    Ok(())
}
scenario!(signing_out_and_back_in_returns_to_the_page, super::sign_out_and_back_in);

async fn tokens(ctx: Ctx) -> anyhow::Result<()> {
    ctx.browser.goto("/settings/tokens").await?;
    ctx.browser.type_into("#token-name", "laptop script").await?;
    ctx.browser.click("#token-create").await?;
    let token = ctx.browser.text("#new-token").await?;
    ensure!(token.starts_with("kdv_"), "not a token: {token:?}");
    ensure!(
        ctx.stack.status_with_token("/api/v1/me", &token).await? == 200,
        "the new token does not work"
    );
    ctx.browser.wait_text(".tokens", "laptop script").await?;
    // Shown once: a fresh visit lists the token by name only.
    ctx.browser.goto("/settings/tokens").await?;
    ctx.browser.wait_text(".tokens", "laptop script").await?;
    ensure!(!ctx.browser.exists("#new-token").await, "the token is shown again");
    ctx.browser.click(".token-revoke").await?;
    ctx.browser.wait_text(".card", "No tokens yet").await?;
    ensure!(
        ctx.stack.status_with_token("/api/v1/me", &token).await? == 401,
        "a revoked token still works"
    );
    Ok(())
}
scenario!(api_tokens_are_shown_once_and_revoked, super::tokens);

async fn viewer(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let task = ctx.stack.task(&ws, "Read me", "todo").await?;
    ctx.stack.user("vera", "vera-password-1").await?;
    ctx.browser.goto(&format!("/w/{ws}/members")).await?;
    ctx.browser.type_into("#member-user", "vera").await?;
    ctx.browser.select("#member-new-role", "viewer").await?;
    ctx.browser.click("#member-add").await?;
    ctx.browser.wait_text(".members", "vera").await?;
    let members = ctx.stack.get(&format!("/api/v1/workspaces/{ws}/members")).await?;
    let vera = members
        .as_array()
        .and_then(|m| m.iter().find(|m| m["username"] == "vera"))
        .context("vera is no member")?;
    ensure!(vera["role"] == "viewer", "{vera}");
    ctx.browser.click("#sign-out").await?;
    ctx.browser.wait_for("#login-username").await?;
    sign_in_here(&ctx.browser, "vera", "vera-password-1").await?;
    ctx.browser.goto(&format!("/w/{ws}/tasks/{task}")).await?;
    ctx.browser.wait_text("h1", "Read me").await?;
    ctx.browser.wait_text("#signed-in-user", "vera").await?;
    for control in ["#approve", ".actions", "#link-pr", "#new-comment"] {
        ensure!(!ctx.browser.exists(control).await, "a viewer sees {control}");
    }
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_text(".columns", "Read me").await?;
    ensure!(
        !ctx.browser.exists("#new-task-title").await,
        "a viewer sees the new-task form"
    );
    Ok(())
}
scenario!(an_owner_adds_a_viewer_who_sees_no_controls, super::viewer);
