//! The shared repository-filter selector. With a workspace id it lists
//! organisations and searches repositories; without one (the `github_pr`
//! panel, by the spec) it makes no request at all.

use gloo_timers::future::TimeoutFuture;
use kandev_core::api::{GithubWorkspaceSettings, RepoHit};
use kandev_core::editor::{
    MAX_SEARCH_RESULTS, SEARCH_DEBOUNCE_MS, add_repo, search_request, show_org_badges, toggle_org,
};
use kandev_core::trigger::config::RepoFilter;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::super::Switch;
use crate::api;
use crate::i18n::{t, ta};

#[derive(Clone, PartialEq)]
enum SearchState {
    Idle,
    Searching,
    Done(Vec<RepoHit>),
}

#[component]
pub fn RepoSelector(
    /// `None` hides the "All repositories" switch (push and CI have none).
    #[prop(into)]
    all_repos: Option<Signal<bool>>,
    #[prop(into)] repos: Signal<Vec<RepoFilter>>,
    #[prop(optional)] on_all_repos: Option<Callback<bool>>,
    on_repos: Callback<Vec<RepoFilter>>,
    /// Threaded by the dispatcher; `None` keeps the selector inert.
    #[prop(into)]
    workspace_id: Option<Signal<String>>,
    /// Organisation wildcards are live only for the merged condition.
    allow_orgs: bool,
) -> impl IntoView {
    let ws = move || workspace_id.map(|w| w.get()).filter(|w| !w.is_empty());
    let scope = LocalResource::new(move || {
        let ws = ws();
        async move {
            match ws {
                Some(ws) => api::github_settings(&ws).await.ok(),
                None => None::<GithubWorkspaceSettings>,
            }
        }
    });
    let orgs = LocalResource::new(move || {
        let ws = ws();
        async move {
            match ws {
                Some(ws) => Some(api::orgs(&ws).await.map(|o| o.orgs).unwrap_or_default()),
                None => None,
            }
        }
    });
    let query = RwSignal::new(String::new());
    let search = RwSignal::new(SearchState::Idle);
    let generation = StoredValue::new(0u64);
    let on_query = move |text: String| {
        query.set(text.clone());
        generation.update_value(|g| *g += 1);
        let mine = generation.get_value();
        let Some((org, q)) = search_request(ws().as_deref(), &text) else {
            search.set(SearchState::Idle);
            return;
        };
        let ws = ws().unwrap_or_default();
        search.set(SearchState::Searching);
        spawn_local(async move {
            TimeoutFuture::new(SEARCH_DEBOUNCE_MS).await;
            if generation.get_value() != mine {
                return;
            }
            let hits = api::search_repos(&ws, &org, &q)
                .await
                .map(|r| r.repos)
                .unwrap_or_default();
            if generation.get_value() == mine {
                search.set(SearchState::Done(hits.into_iter().take(MAX_SEARCH_RESULTS).collect()));
            }
        });
    };
    let show_all = all_repos.is_some();
    let all_on = move || all_repos.map(|s| s.get()).unwrap_or(false);
    view! {
        <div class="repo-selector">
            <span class="label" id="repos-label">{move || t("github-repositories-label")}</span>
            <p class="help">{move || t("github-repositories-help")}</p>
            {show_all.then(|| view! {
                <label class="switch-row" for="all-repos-toggle">
                    <Switch id="all-repos-toggle" checked=Signal::derive(all_on) label=Signal::derive(move || t("github-all-repositories"))
                        on_change=move |on| if let Some(cb) = on_all_repos { cb.run(on) }/>
                    <span>{move || t("github-all-repositories")}</span>
                </label>
            })}
            <Show when=move || !all_on()>
                {move || (allow_orgs && show_org_badges(scope.get().flatten().as_ref())).then(|| view! {
                    <div class="orgs">
                        <span class="label">{t("github-organizations")}</span>
                        {match orgs.get() {
                            None if workspace_id.is_some() => view! { <p class="muted">{t("github-orgs-loading")}</p> }.into_any(),
                            Some(Some(list)) => view! {
                                <div class="badges">
                                    {list.into_iter().map(|o| {
                                        let login = o.login.clone();
                                        let pressed = {
                                            let login = login.clone();
                                            move || repos.get().contains(&RepoFilter::new(&login, ""))
                                        };
                                        view! {
                                            <button type="button" class="badge badge-btn org-badge" data-org=o.login.clone()
                                                aria-pressed=move || pressed().to_string()
                                                on:click=move |_| on_repos.run(toggle_org(&repos.get_untracked(), &login))>
                                                {format!("{}/*", o.login)}
                                            </button>
                                        }
                                    }).collect_view()}
                                </div>
                            }.into_any(),
                            _ => ().into_any(),
                        }}
                    </div>
                })}
                <div class="combobox">
                    <label for="repo-search">{move || t("github-add-repository")}</label>
                    <input id="repo-search" type="search" autocomplete="off" role="combobox" aria-autocomplete="list"
                        aria-controls="repo-search-results" aria-expanded=move || matches!(search.get(), SearchState::Done(_)).to_string()
                        placeholder=move || t("github-search-placeholder")
                        prop:value=move || query.get() on:input=move |ev| on_query(event_target_value(&ev))/>
                    <ul id="repo-search-results" class="plain results" role="listbox" aria-labelledby="repos-label">
                        {move || match search.get() {
                            SearchState::Idle => (!query.get().is_empty() || workspace_id.is_none())
                                .then(|| view! { <li class="muted">{t("github-type-owner-repo")}</li> }).into_any(),
                            SearchState::Searching => view! { <li class="muted">{t("github-searching")}</li> }.into_any(),
                            SearchState::Done(hits) if hits.is_empty() => view! { <li class="muted">{t("github-no-results")}</li> }.into_any(),
                            SearchState::Done(hits) => hits.into_iter().map(|h| {
                                let (owner, name) = (h.owner.clone(), h.name.clone());
                                view! {
                                    <li role="option" aria-selected="false">
                                        <button type="button" class="result" on:click=move |_| {
                                            on_repos.run(add_repo(&repos.get_untracked(), &owner, &name));
                                            query.set(String::new());
                                            search.set(SearchState::Idle);
                                        }>
                                            {format!("{}/{}", h.owner, h.name)}
                                            {h.private.then(|| view! { <span class="badge badge-muted">{t("github-private")}</span> })}
                                        </button>
                                    </li>
                                }
                            }).collect_view().into_any(),
                        }}
                    </ul>
                </div>
                <ul class="plain badges selected-repos" aria-label=move || t("github-selected")>
                    {move || repos.get().into_iter().map(|r| {
                        let shown = r.display();
                        let entry = r.clone();
                        view! {
                            <li class="badge selected-repo" data-repo=shown.clone()>
                                {shown.clone()}
                                <button type="button" class="remove" aria-label=ta("github-remove", &[("name", shown.clone())])
                                    on:click=move |_| on_repos.run(repos.get_untracked().into_iter().filter(|x| *x != entry).collect())>"×"</button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </Show>
        </div>
    }
}
