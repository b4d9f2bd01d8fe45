//! `/w/{ws}/members`: who may see and change a workspace. Everyone in it sees
//! the list; owners add people (by username), change roles and remove them.

use kandev_core::access::{Level, Role};
use kandev_core::api::{Member, PutMember};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;

use crate::api;
use crate::components::{Layout, toast};
use crate::i18n::t;
use crate::session::{can, refresh};

fn role_label(r: Role) -> String {
    t(&format!("role-{}", r.as_str()))
}

#[component]
pub fn Members() -> impl IntoView {
    let params = use_params_map();
    let ws = Signal::derive(move || params.with(|p| p.get("ws").unwrap_or_default()));
    let owner = can(ws, Level::Manage);
    let reload = RwSignal::new(0u64);
    let members = LocalResource::new(move || {
        let (ws, _) = (ws.get(), reload.get());
        async move { api::get::<Vec<Member>>(&format!("/api/v1/workspaces/{ws}/members")).await }
    });
    let put = move |user: String, role: Role| {
        let ws = ws.get_untracked();
        spawn_local(async move {
            let path = format!("/api/v1/workspaces/{ws}/members/{}", api::enc(&user));
            match api::put::<_, Member>(&path, &PutMember { role }).await {
                Ok(_) => {
                    reload.update(|n| *n += 1);
                    refresh();
                }
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    let remove = move |user: String| {
        let ws = ws.get_untracked();
        spawn_local(async move {
            match api::delete(&format!("/api/v1/workspaces/{ws}/members/{}", api::enc(&user))).await {
                Ok(()) => reload.update(|n| *n += 1),
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    let new_user = RwSignal::new(String::new());
    let new_role = RwSignal::new(Role::Member);
    view! {
        <Layout ws=ws>
            <div class="page narrow">
                <h1>{move || t("members-title")}</h1>
                <section class="card">
                    {move || match members.get() {
                        None => view! { <p>{t("loading")}</p> }.into_any(),
                        Some(Err(e)) => view! { <p class="error" role="alert">{e.to_string()}</p> }.into_any(),
                        Some(Ok(list)) => view! {
                            <ul class="plain members">
                                {list.into_iter().map(|m| {
                                    let (a, b) = (m.user_id.clone(), m.user_id.clone());
                                    let select_id = format!("role-{}", m.user_id);
                                    view! {
                                        <li class="row wrap" data-username=m.username.clone()>
                                            <strong class="grow">{m.username.clone()}</strong>
                                            {move || if owner.get() {
                                                let a = a.clone();
                                                let b = b.clone();
                                                view! {
                                                    <label class="sr-only" for=select_id.clone()>{t("members-role-label")}</label>
                                                    <select id=select_id.clone() class="member-role" on:change=move |ev| {
                                                        if let Some(r) = Role::parse(&event_target_value(&ev)) { put(a.clone(), r) }
                                                    }>
                                                        {Role::ALL.into_iter().map(|r| view! { <option value=r.as_str() selected=r == m.role>{role_label(r)}</option> }).collect_view()}
                                                    </select>
                                                    <button class="btn btn-danger member-remove" on:click=move |_| remove(b.clone())>{t("members-remove")}</button>
                                                }.into_any()
                                            } else {
                                                view! { <span class="badge">{role_label(m.role)}</span> }.into_any()
                                            }}
                                        </li>
                                    }
                                }).collect_view()}
                            </ul>
                        }.into_any(),
                    }}
                </section>
                <Show when=move || owner.get()>
                    <form class="row wrap card" on:submit=move |ev: leptos::ev::SubmitEvent| {
                        ev.prevent_default();
                        put(new_user.get_untracked(), new_role.get_untracked());
                        new_user.set(String::new());
                    }>
                        <label for="member-user">{move || t("members-user-label")}</label>
                        <input id="member-user" class="grow" required prop:value=move || new_user.get()
                            on:input=move |ev| new_user.set(event_target_value(&ev))/>
                        <label for="member-new-role">{move || t("members-role-label")}</label>
                        <select id="member-new-role" on:change=move |ev| {
                            if let Some(r) = Role::parse(&event_target_value(&ev)) { new_role.set(r) }
                        }>
                            {Role::ALL.into_iter().map(|r| view! { <option value=r.as_str() selected=move || new_role.get() == r>{role_label(r)}</option> }).collect_view()}
                        </select>
                        <button id="member-add" class="btn btn-primary" type="submit">{move || t("members-add")}</button>
                    </form>
                </Show>
            </div>
        </Layout>
    }
}
