//! Who is signed in (`GET /me`), for the header and for the controls a role
//! may use. The rule itself is `kandev_core::access::allows`, the same the
//! server's guard applies, so the page offers exactly what the server allows.

use kandev_core::access::{Level, allows};
use kandev_core::api::Me;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;

#[derive(Clone, Copy)]
struct Session(RwSignal<Option<Me>>);

/// Loads the signed-in user once for the whole app.
pub fn provide_session() {
    let me = RwSignal::new(None);
    provide_context(Session(me));
    refresh();
}

pub fn use_me() -> RwSignal<Option<Me>> {
    use_context::<Session>()
        .map(|s| s.0)
        .unwrap_or_else(|| RwSignal::new(None))
}

/// Reloads `/me` (after a workspace was created or a role changed).
pub fn refresh() {
    let me = use_me();
    spawn_local(async move {
        if let Ok(m) = api::me().await {
            me.set(Some(m));
        }
    });
}

/// Whether the signed-in user may act at `level` in workspace `ws`.
pub fn can(ws: Signal<String>, level: Level) -> Signal<bool> {
    let me = use_me();
    Signal::derive(move || me.with(|m| m.as_ref().is_some_and(|m| allows(m.admin, m.role_in(&ws.get()), level))))
}
