//! Pages loaded on demand. Each is split out of the first download by
//! `cargo xtask web` (wasm-split), so the board arrives without the editor,
//! the automation pages and the settings it does not need.

use std::cell::Cell;

use leptos::prelude::*;
use leptos_router::{LazyRoute, lazy_route};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

use crate::pages::automations::{AutomationEditor, AutomationPage, AutomationsList, AutomationsOverview};
use crate::pages::board::TaskDetail;
use crate::pages::{AutomationsHome, Login, Members, Notifications, RunView, Tokens};

/// A route whose page code is its own chunk: `data()` is nothing (pages load
/// their own data), `view()` is the lazily loaded component.
macro_rules! lazy_page {
    ($route:ident, $page:ident) => {
        pub struct $route;

        #[lazy_route]
        impl LazyRoute for $route {
            fn data() -> Self {
                $route
            }

            fn view(_this: Self) -> AnyView {
                view! { <$page/> }.into_any()
            }
        }
    };
}

lazy_page!(LoginRoute, Login);
lazy_page!(TaskDetailRoute, TaskDetail);
lazy_page!(RunViewRoute, RunView);
lazy_page!(TokensRoute, Tokens);
lazy_page!(MembersRoute, Members);
lazy_page!(NotificationsRoute, Notifications);
lazy_page!(AutomationsHomeRoute, AutomationsHome);
lazy_page!(AutomationsOverviewRoute, AutomationsOverview);
lazy_page!(AutomationPageRoute, AutomationPage);
lazy_page!(AutomationsListRoute, AutomationsList);
lazy_page!(AutomationEditorRoute, AutomationEditor);

thread_local! {
    static TASK_PAGE_ASKED: Cell<bool> = const { Cell::new(false) };
}

/// Fetches the task page's code once the board has shown its cards and the
/// browser is idle, so the first card opened shows at once while the board's
/// own download stays the main module alone. Once per page; never when the
/// browser asks to save data.
pub fn prefetch_task_page() {
    if TASK_PAGE_ASKED.with(|asked| asked.replace(true)) || saves_data() {
        return;
    }
    let Some(window) = web_sys::window() else { return };
    let load = Closure::once_into_js(|| {
        leptos::task::spawn_local(<TaskDetailRoute as LazyRoute>::preload());
    });
    let load: &js_sys::Function = load.unchecked_ref();
    // `requestIdleCallback` where the browser has it (Safari has not), else a
    // timeout: either way after the board's own work.
    let idle = js_sys::Reflect::get(&window, &"requestIdleCallback".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    match idle {
        Some(request_idle) => {
            let options = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&options, &"timeout".into(), &3000.into());
            let _ = request_idle.call2(&window, load, &options);
        }
        None => {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(load, 1500);
        }
    }
}

/// `navigator.connection.saveData`, where the browser reports it.
fn saves_data() -> bool {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w.navigator(), &"connection".into()).ok())
        .and_then(|c| js_sys::Reflect::get(&c, &"saveData".into()).ok())
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}
