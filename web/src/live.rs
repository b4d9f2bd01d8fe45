//! Live updates: one `EventSource` per workspace; every notice bumps a
//! counter that pages read to refetch, and is kept whole (kind and id) for
//! pages that refetch only what changed.

use kandev_core::api::{LIVE_KINDS, LIVE_RESYNC, LiveUpdate};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{EventSource, MessageEvent};

/// Bumped on every live notice of the current workspace.
#[derive(Clone, Copy)]
pub struct LiveTick(pub RwSignal<u64>);

/// The latest notice itself; `resync` (the stream lost notices) has no id.
#[derive(Clone, Copy)]
pub struct LiveNotice(pub RwSignal<Option<LiveUpdate>>);

pub fn provide_live() -> LiveTick {
    let tick = LiveTick(RwSignal::new(0));
    provide_context(tick);
    provide_context(LiveNotice(RwSignal::new(None)));
    tick
}

pub fn use_notice() -> RwSignal<Option<LiveUpdate>> {
    use_context::<LiveNotice>()
        .map(|n| n.0)
        .unwrap_or_else(|| RwSignal::new(None))
}

pub fn use_live() -> RwSignal<u64> {
    use_context::<LiveTick>()
        .map(|t| t.0)
        .unwrap_or_else(|| RwSignal::new(0))
}

/// Follows a workspace's stream while the calling component lives.
pub fn follow(ws: String) {
    let tick = use_live();
    let notice = use_notice();
    let Ok(source) = EventSource::new(&format!("/api/v1/workspaces/{ws}/stream")) else {
        return;
    };
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let update = e
            .data()
            .as_string()
            .and_then(|d| serde_json::from_str::<LiveUpdate>(&d).ok())
            .unwrap_or_else(|| LiveUpdate {
                kind: e.type_(),
                id: String::new(),
            });
        notice.set(Some(update));
        tick.update(|n| *n += 1);
    });
    for kind in LIVE_KINDS.into_iter().chain([LIVE_RESYNC]) {
        let _ = source.add_event_listener_with_callback(kind, on_message.as_ref().unchecked_ref());
    }
    // Whatever changed between the page's first reads and the stream's
    // (re)connection reached no listener: read again once it is open.
    let on_open = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
        notice.set(Some(LiveUpdate::resync()));
        tick.update(|n| *n += 1);
    });
    let _ = source.add_event_listener_with_callback("open", on_open.as_ref().unchecked_ref());
    on_message.forget();
    on_open.forget();
    let holder = StoredValue::new_local(source);
    on_cleanup(move || holder.with_value(|s| s.close()));
}
