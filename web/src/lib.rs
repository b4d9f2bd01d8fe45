//! Kandev's browser app (Leptos, client-side rendered). Pages gather data
//! and call `kandev-core` for every rule; nothing here decides on its own.

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{Lazy, path};

mod api;
mod components;
mod i18n;
mod live;
mod pages;
mod recover;
mod routes;
mod session;
#[cfg(test)]
mod style_tests;
mod time;

use pages::Home;
use pages::board::Board;
use routes::*;

#[component]
fn NotFound() -> impl IntoView {
    view! { <main id="main" class="page"><h1>{move || i18n::t("not-found")}</h1><a href="/">{move || i18n::t("nav-board")}</a></main> }
}

#[component]
fn App() -> impl IntoView {
    i18n::provide_i18n();
    live::provide_live();
    components::provide_toasts();
    session::provide_session();
    view! {
        <Router>
            <Routes fallback=NotFound>
                <Route path=path!("/") view=Home/>
                <Route path=path!("/login") view={Lazy::<LoginRoute>::new()}/>
                <Route path=path!("/settings/tokens") view={Lazy::<TokensRoute>::new()}/>
                <Route path=path!("/w/:ws/members") view={Lazy::<MembersRoute>::new()}/>
                <Route path=path!("/w/:ws/notifications") view={Lazy::<NotificationsRoute>::new()}/>
                <Route path=path!("/w/:ws") view=Board/>
                <Route path=path!("/w/:ws/tasks/:id") view={Lazy::<TaskDetailRoute>::new()}/>
                <Route path=path!("/w/:ws/runs/:id") view={Lazy::<RunViewRoute>::new()}/>
                <Route path=path!("/settings/automations") view={Lazy::<AutomationsHomeRoute>::new()}/>
                <Route path=path!("/automations") view={Lazy::<AutomationsOverviewRoute>::new()}/>
                <Route path=path!("/automations/:id") view={Lazy::<AutomationPageRoute>::new()}/>
                <Route path=path!("/settings/workspace/:ws/automations") view={Lazy::<AutomationsListRoute>::new()}/>
                <Route path=path!("/settings/workspace/:ws/automations/:id") view={Lazy::<AutomationEditorRoute>::new()}/>
            </Routes>
        </Router>
    }
}

pub fn start() {
    recover::install();
    // The chosen language's messages first, so nothing shows in English first.
    wasm_bindgen_futures::spawn_local(async {
        i18n::load(&i18n::browser_locale()).await;
        leptos::mount::mount_to_body(App);
    });
}
