//! The spec's Editor scenarios, one test each (desktop and phone).

use std::time::Duration;

use anyhow::ensure;
use kandev_e2e::{Ctx, Device, eventually, scenario};
use serde_json::json;

use crate::support::*;

/// GIVEN the condition picker, WHEN the user opens it, THEN "Pull request
/// merged" appears under the GitHub group and is selectable.
async fn picker_offers_pull_request_merged_under_github(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    ctx.browser.click("#add-condition").await?;
    let item = "#condition-picker .picker-group[data-category=github] .picker-item[data-trigger-type=github_pr_merged]";
    let label = ctx.browser.text(&format!("{item} .picker-label")).await?;
    ensure!(label == "Pull request merged", "label {label:?}");
    ensure!(
        ctx.browser.enabled(&format!("{item} .picker-choice")).await?,
        "not selectable"
    );
    ctx.browser.click(&format!("{item} .picker-choice")).await?;
    ctx.browser
        .wait_for(".trigger-card[data-trigger-type=github_pr_merged]")
        .await?;
    Ok(())
}
scenario!(
    picker_lists_pull_request_merged_under_github_and_it_is_selectable,
    super::picker_offers_pull_request_merged_under_github
);

/// GIVEN the condition is selected, WHEN the user expands its card, THEN they
/// can toggle "All repositories", pick repositories and type base branches;
/// the collapsed summary describes the condition.
async fn expanded_card(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, MERGED).await?;
    expand_card(&ctx, MERGED).await?;
    set_all_repos(&ctx, false).await?;
    ctx.browser.wait_for("#repo-search").await?;
    ctx.browser.wait_for(".org-badge[data-org=acme]").await?;
    ctx.browser.click(".org-badge[data-org=acme]").await?;
    ctx.browser.wait_for(".selected-repo[data-repo='acme/*']").await?;
    ctx.browser.type_into("#base-branches", "main,release/*").await?;
    set_all_repos(&ctx, true).await?;
    ctx.browser
        .click(".trigger-card[data-trigger-type=github_pr_merged] .summary")
        .await?;
    ctx.browser
        .wait_gone(".trigger-card[data-trigger-type=github_pr_merged] .card-body")
        .await?;
    let summary = ctx
        .browser
        .text(".trigger-card[data-trigger-type=github_pr_merged] .summary-text")
        .await?;
    ensure!(summary == "Pull request merged", "summary {summary:?}");
    ensure_no_raw_type(&summary)
}
scenario!(
    expanded_card_offers_all_repositories_repositories_and_base_branches,
    super::expanded_card
);

/// GIVEN the condition is selected, WHEN the user looks at the repository
/// picker in the configuration section, THEN it is enabled.
async fn picker_enabled(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, MERGED).await?;
    ensure!(
        ctx.browser.enabled("#repository-picker").await?,
        "the repository picker is disabled"
    );
    let repos = ctx.stack.get(&format!("/api/v1/workspaces/{ws}/repositories")).await?;
    let repo = repos[0]["id"].as_str().unwrap_or_default().to_string();
    ctx.browser.select("#repository-picker", &repo).await?;
    ensure!(
        ctx.browser.value("#repository-picker").await? == repo,
        "the repository could not be chosen"
    );
    Ok(())
}
scenario!(
    repository_picker_stays_enabled_for_the_merged_condition,
    super::picker_enabled
);

/// GIVEN the condition is selected and the prompt is still the seeded
/// default, WHEN the user saves and reopens, THEN condition, config and
/// prompt round-trip unchanged.
async fn seeded_round_trip(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let default = registry_default_prompt(&ctx, MERGED).await?;
    start_merged(&ctx, &ws, "Archive merged").await?;
    ensure!(
        ctx.browser.value("#prompt").await? == default,
        "the prompt did not follow the condition's default"
    );
    set_all_repos(&ctx, false).await?;
    ctx.browser.click(".org-badge[data-org=acme]").await?;
    ctx.browser.type_into("#base-branches", " main , ").await?;
    let id = save_new(&ctx, &ws, "Archive merged").await?;
    let stored =
        json!({"all_repos": false, "repos": [{"owner": "acme", "name": ""}], "base_branches": [" main ", " "]});
    ensure!(
        trigger_config(&ctx, &id, MERGED).await? == stored,
        "stored {}",
        trigger_config(&ctx, &id, MERGED).await?
    );
    open_editor(&ctx, &ws, &id).await?;
    expand_card(&ctx, MERGED).await?;
    ensure!(
        !ctx.browser.checked("#all-repos-toggle").await?,
        "All repositories reopened checked"
    );
    ctx.browser.wait_for(".selected-repo[data-repo='acme/*']").await?;
    ensure!(
        ctx.browser.value("#base-branches").await? == " main , ",
        "base branches {:?}",
        ctx.browser.value("#base-branches").await?
    );
    ensure!(ctx.browser.value("#prompt").await? == default, "the prompt changed");
    save_existing(&ctx).await?;
    ensure!(
        trigger_config(&ctx, &id, MERGED).await? == stored,
        "a second save changed the config"
    );
    ensure!(
        automation(&ctx, &id).await?["prompt"] == default.as_str(),
        "the stored prompt is not the default"
    );
    Ok(())
}
scenario!(
    seeded_default_prompt_condition_and_config_round_trip_unchanged,
    super::seeded_round_trip
);

/// GIVEN the condition is selected, WHEN the user unchecks "All repositories"
/// and selects none, THEN the never-fires warning shows and saving succeeds.
async fn never_fires_warning(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    start_merged(&ctx, &ws, "Dead on purpose").await?;
    ensure!(!warning_shown(&ctx).await, "warning with All repositories on");
    set_all_repos(&ctx, false).await?;
    let text = ctx.browser.text("#never-fires-warning").await?;
    ensure!(text.contains("can never fire"), "warning {text:?}");
    let id = save_new(&ctx, &ws, "Dead on purpose").await?;
    ensure!(trigger_config(&ctx, &id, MERGED).await? == json!({"all_repos": false, "repos": [], "base_branches": []}));
    Ok(())
}
scenario!(
    no_repository_selected_shows_never_fire_warning_and_saving_succeeds,
    super::never_fires_warning
);

/// GIVEN the condition is selected, WHEN the user hovers its info icon, THEN
/// the tooltip names the workspace-linked task and the minute of lag.
async fn info_tooltip(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, MERGED).await?;
    let card = ".trigger-card[data-trigger-type=github_pr_merged]";
    ctx.browser
        .point_at(&format!("{card} .tip-trigger"), ctx.device)
        .await?;
    let tip = ctx.browser.wait_for(&format!("{card} .tip-body")).await?;
    eventually("the tooltip to show", Duration::from_secs(5), || async {
        tip.is_displayed().await.ok().filter(|d| *d)
    })
    .await?;
    let text = tip.text().await?;
    ensure!(text.contains("linked to a task in this workspace"), "tooltip {text:?}");
    ensure!(text.contains("minute"), "tooltip {text:?}");
    ensure!(
        !text.to_lowercase().contains("not implemented"),
        "placeholder copy: {text:?}"
    );
    Ok(())
}
scenario!(
    info_tooltip_names_the_linked_task_and_the_minute_of_lag,
    super::info_tooltip
);

/// GIVEN the condition is selected, WHEN the user taps its info icon, THEN the
/// tooltip opens (no hover on a phone) and a tap elsewhere closes it.
async fn tap_tooltip(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, MERGED).await?;
    let card = ".trigger-card[data-trigger-type=github_pr_merged]";
    ctx.browser.click(&format!("{card} .tip-trigger")).await?;
    let tip = ctx.browser.wait_for(&format!("{card} .tip-body")).await?;
    eventually("the tooltip to open on tap", Duration::from_secs(5), || async {
        tip.is_displayed().await.ok().filter(|d| *d)
    })
    .await?;
    let expanded = ctx
        .browser
        .js(
            &format!("return document.querySelector('{card} .tip-trigger').getAttribute('aria-expanded');"),
            vec![],
        )
        .await?;
    ensure!(expanded == json!("true"), "aria-expanded {expanded}");
    ctx.browser.click("#when-title").await?;
    eventually("the tooltip to close", Duration::from_secs(5), || async {
        tip.is_displayed().await.ok().filter(|d| !*d)
    })
    .await?;
    Ok(())
}
scenario!(
    info_tooltip_opens_on_tap_and_closes_on_a_tap_elsewhere,
    super::tap_tooltip
);

/// GIVEN the panel is open, WHEN the user unchecks "All repositories" and
/// opens the repository selector, THEN the search request carries this
/// workspace's id. The assertion is on the outbound request only.
async fn search_request(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, MERGED).await?;
    set_all_repos(&ctx, false).await?;
    ctx.browser.requests().await?;
    ctx.browser.click("#repo-search").await?;
    ctx.browser.wait_for("#repo-search").await?.send_keys("acme/").await?;
    let wanted = format!("/api/v1/github/repos/search?workspace_id={ws}&");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let found = eventually("the repository-search request", Duration::from_secs(10), || {
        let (browser, seen, wanted) = (ctx.browser.clone(), seen.clone(), wanted.clone());
        async move {
            let fresh = browser.requests().await.ok()?;
            let mut all = seen.lock().ok()?;
            all.extend(fresh);
            all.iter().find(|u| u.contains(&wanted)).cloned()
        }
    })
    .await;
    ensure!(
        found.is_ok(),
        "no search request carried workspace_id={ws}; requests seen: {:?}",
        seen.lock().map(|s| s.clone()).unwrap_or_default()
    );
    Ok(())
}
scenario!(
    repository_search_request_carries_this_workspace_id,
    super::search_request
);

/// GIVEN "All repositories" unchecked in a workspace whose scope is not
/// "repos", WHEN the user selects only an organisation badge, THEN no
/// warning shows and saving succeeds.
async fn org_badge_is_live(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.stack
        .put(
            &format!("/api/v1/github/workspace-settings?workspace_id={ws}"),
            json!({"repo_scope_mode": "orgs", "repo_scope_orgs": ["acme"]}),
        )
        .await?;
    start_merged(&ctx, &ws, "Org wide").await?;
    set_all_repos(&ctx, false).await?;
    ensure!(warning_shown(&ctx).await, "no warning before the badge");
    ctx.browser.click(".org-badge[data-org=acme]").await?;
    ctx.browser.wait_gone("#never-fires-warning").await?;
    let id = save_new(&ctx, &ws, "Org wide").await?;
    ensure!(trigger_config(&ctx, &id, MERGED).await?["repos"] == json!([{"owner": "acme", "name": ""}]));
    Ok(())
}
scenario!(
    organization_badge_alone_hides_the_warning_and_saves,
    super::org_badge_is_live
);

/// GIVEN an automation with this condition, WHEN the list renders it, THEN
/// its badge says "GitHub PR Merged" in the other GitHub types' purple.
async fn list_badge(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    stored_automation(
        &ctx,
        &ws,
        "Merged",
        json!([{"type": MERGED, "config": {"all_repos": true}}]),
    )
    .await?;
    stored_automation(&ctx, &ws, "Opened", json!([{"type": "github_pr", "config": {}}])).await?;
    ctx.browser
        .goto(&format!("/settings/workspace/{ws}/automations"))
        .await?;
    let merged = ctx
        .browser
        .wait_for(".badge[data-trigger-type=github_pr_merged]")
        .await?;
    ensure!(
        merged.text().await? == "GitHub PR Merged",
        "badge {:?}",
        merged.text().await?
    );
    let pr = ctx.browser.wait_for(".badge[data-trigger-type=github_pr]").await?;
    for prop in ["background-color", "color", "border-top-color"] {
        ensure!(
            merged.css_value(prop).await? == pr.css_value(prop).await?,
            "{prop} differs from the GitHub PR badge"
        );
    }
    ensure!(merged.class_name().await?.unwrap_or_default().contains("tint-purple"));
    ctx.browser.screenshot(&format!("list-{}", ctx.device.as_str())).await?;
    Ok(())
}
scenario!(
    list_badge_shows_github_pr_merged_in_the_github_purple,
    super::list_badge
);

/// GIVEN "All repositories" unchecked and one repository selected, WHEN the
/// user checks it, saves, reopens and unchecks it, THEN repos is empty and
/// the warning shows (checking cleared the list).
async fn clear_on_check(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    start_merged(&ctx, &ws, "Cycle").await?;
    set_all_repos(&ctx, false).await?;
    ctx.browser.wait_for("#repo-search").await?.send_keys("acme/ap").await?;
    ctx.browser.click("#repo-search-results .result").await?;
    ctx.browser.wait_for(".selected-repo[data-repo='acme/api']").await?;
    set_all_repos(&ctx, true).await?;
    let id = save_new(&ctx, &ws, "Cycle").await?;
    ensure!(
        trigger_config(&ctx, &id, MERGED).await?["repos"] == json!([]),
        "checking did not clear repos"
    );
    open_editor(&ctx, &ws, &id).await?;
    expand_card(&ctx, MERGED).await?;
    set_all_repos(&ctx, false).await?;
    ensure!(
        !ctx.browser.exists(".selected-repo").await,
        "the old selection came back"
    );
    ensure!(warning_shown(&ctx).await, "no never-fires warning after unchecking");
    Ok(())
}
scenario!(
    checking_all_repositories_clears_the_list_across_save_and_reopen,
    super::clear_on_check
);

/// GIVEN the server's executors, WHEN the user picks one in the editor and
/// saves, THEN the automation keeps it and the editor shows it on reopening.
async fn executor_choice(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    start_merged(&ctx, &ws, "On this host").await?;
    let options = ctx
        .browser
        .js(
            "return [...document.querySelectorAll('#executor-profile option')].map(o => o.value + '=' + o.textContent);",
            vec![],
        )
        .await?;
    ensure!(
        options == json!(["=Default executor", "local=Local process on the Kandev server"]),
        "executor options: {options}"
    );
    ctx.browser.select("#executor-profile", "local").await?;
    let id = save_new(&ctx, &ws, "On this host").await?;
    ensure!(
        automation(&ctx, &id).await?["executor_profile_id"] == "local",
        "not saved"
    );
    open_editor(&ctx, &ws, &id).await?;
    let chosen = ctx
        .browser
        .js("return document.querySelector('#executor-profile').value;", vec![])
        .await?;
    ensure!(chosen == "local", "reopened with {chosen}");
    Ok(())
}
scenario!(
    the_editor_offers_the_servers_executors_and_keeps_the_choice,
    super::executor_choice
);

/// GIVEN a stored trigger whose config is {}, WHEN the user opens its card,
/// THEN "All repositories" is unchecked and the warning shows.
async fn empty_config(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let id = stored_automation(&ctx, &ws, "Empty", json!([{"type": MERGED, "config": {}}])).await?;
    ensure!(
        trigger_config(&ctx, &id, MERGED).await? == json!({}),
        "the fixture is not {{}}"
    );
    open_editor(&ctx, &ws, &id).await?;
    expand_card(&ctx, MERGED).await?;
    ensure!(
        !ctx.browser.checked("#all-repos-toggle").await?,
        "All repositories renders checked for {{}}"
    );
    ensure!(warning_shown(&ctx).await, "no warning for {{}}");
    Ok(())
}
scenario!(
    stored_empty_config_opens_unchecked_with_the_warning,
    super::empty_config
);

/// GIVEN the picker, WHEN the GitHub group renders, THEN "Pull request
/// merged" sits right after "New pull requests" and before "Push to branch".
async fn adjacency(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    ctx.browser.click("#add-condition").await?;
    ctx.browser
        .wait_for("#condition-picker .picker-group[data-category=github]")
        .await?;
    let labels = ctx
        .browser
        .js(
            "return [...document.querySelectorAll('#condition-picker .picker-group[data-category=github] .picker-label')].map(e => e.textContent);",
            vec![],
        )
        .await?;
    let labels: Vec<String> = serde_json::from_value(labels)?;
    let at = labels.iter().position(|l| l == "Pull request merged");
    ensure!(at.is_some() && at.unwrap() >= 1, "labels {labels:?}");
    let at = at.unwrap_or_default();
    ensure!(labels[at - 1] == "New pull requests", "before it: {labels:?}");
    ensure!(
        labels.get(at + 1).map(String::as_str) == Some("Push to branch"),
        "after it: {labels:?}"
    );
    Ok(())
}
scenario!(
    picker_places_pull_request_merged_right_after_new_pull_requests,
    super::adjacency
);

/// GIVEN github_pr before github_pr_merged, WHEN the configuration section
/// renders, THEN the repository picker is disabled (the pinned gap).
async fn mixed_conditions(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let id = stored_automation(
        &ctx,
        &ws,
        "Mixed",
        json!([{"type": "github_pr", "config": {}}, {"type": MERGED, "config": {}}]),
    )
    .await?;
    open_editor(&ctx, &ws, &id).await?;
    ctx.browser
        .wait_for(".trigger-card[data-trigger-type=github_pr]")
        .await?;
    ensure!(
        !ctx.browser.enabled("#repository-picker").await?,
        "the picker is enabled"
    );
    let help = ctx.browser.text("#repository-help").await?;
    ensure!(help.contains("pull request decides"), "help {help:?}");
    Ok(())
}
scenario!(
    github_pr_ahead_of_merged_disables_the_repository_picker,
    super::mixed_conditions
);

/// GIVEN assistive technology focuses the base-branch field, WHEN its
/// accessible name is computed, THEN it is the localized label.
async fn accessible_name(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, MERGED).await?;
    let name = ctx.browser.accessible_name("#base-branches").await?;
    ensure!(name == "Base branches (comma-separated)", "accessible name {name:?}");
    Ok(())
}
scenario!(
    base_branch_field_is_named_by_its_localized_label,
    super::accessible_name
);

/// GIVEN the settings flow, WHEN the user selects the trigger, changes
/// repository and base-branch settings, saves and reopens, THEN it round-trips,
/// nothing scrolls sideways, and every control is visible and tappable.
async fn round_trip_fits(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    start_merged(&ctx, &ws, "On the go").await?;
    set_all_repos(&ctx, false).await?;
    ctx.browser.click(".org-badge[data-org=acme]").await?;
    ctx.browser.type_into("#base-branches", "main,release/*").await?;
    check_fit(&ctx).await?;
    ctx.browser
        .screenshot(&format!("editor-merged-{}", ctx.device.as_str()))
        .await?;
    let id = save_new(&ctx, &ws, "On the go").await?;
    open_editor(&ctx, &ws, &id).await?;
    expand_card(&ctx, MERGED).await?;
    ensure!(!ctx.browser.checked("#all-repos-toggle").await?);
    ctx.browser.wait_for(".selected-repo[data-repo='acme/*']").await?;
    ensure!(ctx.browser.value("#base-branches").await? == "main,release/*");
    check_fit(&ctx).await?;
    let config = trigger_config(&ctx, &id, MERGED).await?;
    ensure!(config["base_branches"] == json!(["main", "release/*"]), "{config}");
    Ok(())
}

async fn check_fit(ctx: &Ctx) -> anyhow::Result<()> {
    ensure!(ctx.browser.no_horizontal_overflow().await?, "the page scrolls sideways");
    let small = ctx.browser.small_or_hidden_controls().await?;
    ensure!(
        small.is_empty(),
        "controls too small or off-screen on {}: {small:?}",
        ctx.device.as_str()
    );
    if ctx.device == Device::Mobile {
        let width = ctx.browser.js("return window.innerWidth;", vec![]).await?;
        ensure!(width == json!(390), "not a 390 px phone: {width}");
    }
    Ok(())
}
scenario!(
    settings_round_trip_fits_the_screen_and_stays_touch_operable,
    super::round_trip_fits
);
