//! "Configuration" (agent, executor, repository — the picker's state comes
//! from the resolved condition via core) and "Settings" (enabled, max runs).

use kandev_core::api::Repository;
use kandev_core::editor::{parse_max_runs, repository_picker_enabled};
use kandev_core::repository_choice::{PICK_NONE, add_repository, addable, pick_first, picker_value};
use leptos::prelude::*;

use super::form::Form;
use crate::api;
use crate::components::Switch;
use crate::i18n::{t, ta};

#[component]
pub fn ConfigurationSection(form: Form) -> impl IntoView {
    let profiles = LocalResource::new(api::agent_profiles);
    let repos = LocalResource::new(move || {
        let ws = form.ws.get();
        async move { api::repositories(&ws).await }
    });
    view! {
        <section class="card section" aria-labelledby="configuration-title">
            <h2 id="configuration-title">{move || t("automations-configuration-label")}</h2>
            <div class="grid-2">
                <div class="field">
                    <label for="agent-profile">{move || t("automations-agent-profile-label")}</label>
                    <select id="agent-profile" on:change=move |ev| form.agent.set(event_target_value(&ev))>
                        <option value="" selected=move || form.agent.get().is_empty()>{move || t("automations-agent-profile-default")}</option>
                        {move || profiles.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|p| {
                            let id = p.id.clone();
                            view! { <option value=p.id.clone() selected=move || form.agent.get() == id>{p.name.clone()}</option> }
                        }).collect_view()}
                    </select>
                </div>
                <div class="field">
                    <label for="executor-profile">{move || t("automations-executor-profile-label")}</label>
                    <select id="executor-profile" on:change=move |ev| form.executor.set(event_target_value(&ev))>
                        <option value="" selected=move || form.executor.get().is_empty()>{move || t("automations-executor-default")}</option>
                        {move || {
                            // The app ships inside the server binary, so core's list is the server's.
                            let known = kandev_core::executors::known();
                            let current = form.executor.get();
                            // One saved before the server dropped it stays visible, as saved.
                            let stale = (!current.is_empty() && !known.iter().any(|e| e.id == current))
                                .then(|| view! { <option value=current.clone() selected=true>{current.clone()}</option> });
                            let listed = known.into_iter().map(|e| {
                                let id = e.id.clone();
                                let name = format!("executor-kind-{}", e.kind);
                                view! { <option value=e.id.clone() selected=move || form.executor.get() == id>{move || t(&name)}</option> }
                            }).collect_view();
                            view! { {listed} {stale} }
                        }}
                    </select>
                </div>
            </div>
            <RepositoryField form=form repos=repos/>
        </section>
    }
}

type Repos = LocalResource<crate::api::ApiResult<Vec<Repository>>>;

/// The repository choice: "Auto", "None — no repository" or repositories,
/// the first in the dropdown and the others added below it (rules in core's
/// `repository_choice`).
#[component]
fn RepositoryField(form: Form, repos: Repos) -> impl IntoView {
    let picker_enabled = move || repository_picker_enabled(form.condition.get());
    let picked = move || {
        form.repositories
            .with(|ids| picker_value(form.no_repository.get(), ids))
    };
    let known = move || repos.get().and_then(Result::ok).unwrap_or_default();
    let name_of = move |id: &str| {
        known()
            .iter()
            .find(|r| r.id == id)
            .map(|r| format!("{}/{}", r.owner, r.name))
            .unwrap_or_else(|| id.to_string())
    };
    view! {
        <div class="field">
            <label for="repository-picker">{move || t("automations-repository-label")}</label>
            <select id="repository-picker" disabled=move || !picker_enabled() aria-describedby="repository-help"
                on:change=move |ev| {
                    let (none, ids) = pick_first(&form.repositories.get_untracked(), &event_target_value(&ev));
                    form.no_repository.set(none);
                    form.repositories.set(ids);
                }>
                <option value="" selected=move || picked().is_empty()>{move || t("automations-repository-auto")}</option>
                <option value=PICK_NONE selected=move || picked() == PICK_NONE>{move || t("automations-repository-none")}</option>
                {move || known().into_iter().map(|r| {
                    let id = r.id.clone();
                    view! { <option value=r.id.clone() selected=move || picked() == id>{format!("{}/{}", r.owner, r.name)}</option> }
                }).collect_view()}
            </select>
            // Saved with several repositories: the others are shown and kept.
            {move || {
                let extra: Vec<String> = form.repositories.with(|ids| ids.iter().skip(1).cloned().collect());
                (!extra.is_empty()).then(|| view! {
                    <ul class="plain chips" id="more-repositories" aria-label=move || t("automations-repository-more")>
                        {extra.into_iter().map(|id| {
                            let name = name_of(&id);
                            let remove_label = ta("automations-repository-remove", &[("repo", name.clone())]);
                            view! {
                                <li class="chip">{name}
                                    <button type="button" class="btn btn-link" aria-label=remove_label
                                        on:click=move |_| form.repositories.update(|ids| ids.retain(|x| *x != id))>"×"</button>
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                })
            }}
            // Rebuilt on every change, so it always reads "Choose…" again.
            {move || {
                let all: Vec<String> = known().into_iter().map(|r| r.id).collect();
                let offer: Vec<String> = form.repositories.with(|ids| {
                    addable(&all, form.no_repository.get(), ids).into_iter().cloned().collect()
                });
                (picker_enabled() && !offer.is_empty()).then(|| view! {
                    <div class="field">
                        <label for="repository-add">{t("automations-repository-add")}</label>
                        <select id="repository-add"
                            on:change=move |ev| form.repositories.update(|ids| *ids = add_repository(ids, &event_target_value(&ev)))>
                            <option value="" selected=true>{t("automations-repository-add-choose")}</option>
                            {offer.into_iter().map(|id: String| view! { <option value=id.clone()>{name_of(&id)}</option> }).collect_view()}
                        </select>
                    </div>
                })
            }}
            <p class="help" id="repository-help">
                {move || if !picker_enabled() {
                    t("automations-repository-help-pr")
                } else if form.no_repository.get() {
                    t("automations-repository-help-nothing")
                } else {
                    t("automations-repository-help-none")
                }}
            </p>
        </div>
    }
}

#[component]
pub fn SettingsSection(form: Form) -> impl IntoView {
    view! {
        <section class="card section" aria-labelledby="settings-title">
            <h2 id="settings-title">{move || t("automations-settings-label")}</h2>
            <label class="switch-row" for="automation-enabled">
                <Switch id="automation-enabled" checked=form.enabled label=Signal::derive(|| t("automations-enabled-label"))
                    on_change=move |on| form.enabled.set(on)/>
                <span>{move || t("automations-enabled-label")}</span>
            </label>
            <div class="field narrow-field">
                <label for="max-runs">{move || t("automations-max-concurrent-runs")}</label>
                <input id="max-runs" type="number" min="1" inputmode="numeric"
                    prop:value=move || form.max_runs.get()
                    on:input=move |ev| form.max_runs.set(event_target_value(&ev))
                    on:blur=move |_| form.max_runs.set(parse_max_runs(&form.max_runs.get_untracked()).to_string())/>
            </div>
        </section>
    }
}
