//! Steps the scenarios share, written the way a person uses the editor.

use std::time::Duration;

use anyhow::{Context, ensure};
use kandev_e2e::{Ctx, eventually};
use serde_json::{Value, json};

pub const MERGED: &str = "github_pr_merged";

/// A workspace with `acme/api` known to Kandev and to the simulator.
pub async fn workspace(ctx: &Ctx) -> anyhow::Result<String> {
    ctx.stack.sim_repo("acme", "api").await?;
    let ws = ctx.stack.workspace("E2E").await?;
    ctx.stack.repository(&ws, "acme", "api").await?;
    Ok(ws)
}

pub async fn open_new_editor(ctx: &Ctx, ws: &str) -> anyhow::Result<()> {
    ctx.browser
        .goto(&format!("/settings/workspace/{ws}/automations/new"))
        .await?;
    ctx.browser.wait_for("#automation-name").await?;
    Ok(())
}

pub async fn open_editor(ctx: &Ctx, ws: &str, id: &str) -> anyhow::Result<()> {
    ctx.browser
        .goto(&format!("/settings/workspace/{ws}/automations/{id}"))
        .await?;
    ctx.browser.wait_for("#automation-name").await?;
    eventually("the saved automation to load", Duration::from_secs(10), || async {
        ctx.browser
            .value("#automation-name")
            .await
            .ok()
            .filter(|v| !v.is_empty())
    })
    .await?;
    Ok(())
}

/// Opens the condition picker and chooses a trigger type.
pub async fn pick_condition(ctx: &Ctx, kind: &str) -> anyhow::Result<()> {
    ctx.browser.click("#add-condition").await?;
    ctx.browser
        .click(&format!(
            "#condition-picker .picker-item[data-trigger-type={kind}] .picker-choice"
        ))
        .await?;
    ctx.browser
        .wait_for(&format!(".trigger-card[data-trigger-type={kind}]"))
        .await?;
    Ok(())
}

/// A new automation, named, with the "Pull request merged" condition picked.
pub async fn start_merged(ctx: &Ctx, ws: &str, automation_name: &str) -> anyhow::Result<()> {
    open_new_editor(ctx, ws).await?;
    name(ctx, automation_name).await?;
    pick_condition(ctx, MERGED).await
}

/// Expands a (saved, so collapsed) condition card.
pub async fn expand_card(ctx: &Ctx, kind: &str) -> anyhow::Result<()> {
    let card = format!(".trigger-card[data-trigger-type={kind}]");
    if !ctx.browser.exists(&format!("{card} .card-body")).await {
        ctx.browser.click(&format!("{card} .summary")).await?;
    }
    ctx.browser.wait_for(&format!("{card} .card-body")).await?;
    Ok(())
}

/// Flips a switch by tapping it, as a person would.
pub async fn toggle(ctx: &Ctx, id: &str) -> anyhow::Result<()> {
    let before = ctx.browser.checked(&format!("#{id}")).await?;
    ctx.browser.click(&format!(".switch:has(#{id})")).await?;
    eventually(&format!("#{id} to flip"), Duration::from_secs(5), || async {
        (ctx.browser.checked(&format!("#{id}")).await.ok()? != before).then_some(())
    })
    .await
}

pub async fn set_all_repos(ctx: &Ctx, on: bool) -> anyhow::Result<()> {
    if ctx.browser.checked("#all-repos-toggle").await? != on {
        toggle(ctx, "all-repos-toggle").await?;
    }
    Ok(())
}

pub async fn name(ctx: &Ctx, name: &str) -> anyhow::Result<()> {
    ctx.browser.type_into("#automation-name", name).await
}

/// Saves a new automation: the editor returns to the list, which shows it.
pub async fn save_new(ctx: &Ctx, ws: &str, name: &str) -> anyhow::Result<String> {
    ctx.browser.click("#save-automation").await?;
    ctx.browser.wait_text(".toast", "Automation created").await?;
    ctx.browser.wait_text(".automations-table", name).await?;
    let list = ctx.stack.get(&format!("/api/v1/workspaces/{ws}/automations")).await?;
    list.as_array()
        .and_then(|l| l.iter().find(|a| a["name"] == name))
        .and_then(|a| a["id"].as_str())
        .map(str::to_string)
        .context("the saved automation is not listed")
}

/// Saves an existing automation.
pub async fn save_existing(ctx: &Ctx) -> anyhow::Result<()> {
    ctx.browser.click("#save-automation").await?;
    ctx.browser.wait_text(".toast", "Automation saved").await?;
    Ok(())
}

pub async fn automation(ctx: &Ctx, id: &str) -> anyhow::Result<Value> {
    ctx.stack.get(&format!("/api/v1/automations/{id}")).await
}

pub async fn trigger_config(ctx: &Ctx, id: &str, kind: &str) -> anyhow::Result<Value> {
    let a = automation(ctx, id).await?;
    a["triggers"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["type"] == kind))
        .map(|t| t["config"].clone())
        .context("no such trigger")
}

pub async fn registry_default_prompt(ctx: &Ctx, kind: &str) -> anyhow::Result<String> {
    let reg = ctx.stack.get("/api/v1/automation-trigger-types").await?;
    reg.as_array()
        .and_then(|r| r.iter().find(|e| e["type"] == kind))
        .and_then(|e| e["default_prompt"].as_str())
        .map(str::to_string)
        .context("no registry entry")
}

/// An automation stored through the API with the given triggers.
pub async fn stored_automation(ctx: &Ctx, ws: &str, name: &str, triggers: Value) -> anyhow::Result<String> {
    ctx.stack
        .automation(ws, json!({"name": name, "triggers": triggers}))
        .await
}

pub async fn warning_shown(ctx: &Ctx) -> bool {
    ctx.browser.exists("#never-fires-warning").await
}

pub fn ensure_no_raw_type(text: &str) -> anyhow::Result<()> {
    ensure!(!text.contains(MERGED), "the raw type id is shown: {text:?}");
    Ok(())
}

/// The header links marked as the current page.
pub async fn current_nav(ctx: &Ctx) -> anyhow::Result<Vec<String>> {
    let v = ctx
        .browser
        .js(
            "return [...document.querySelectorAll('.top nav a[aria-current=page]')].map(a => a.textContent.trim());",
            vec![],
        )
        .await?;
    Ok(serde_json::from_value(v)?)
}
