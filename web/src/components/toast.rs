//! Toast messages, announced to screen readers.

use std::cell::Cell;

use leptos::prelude::*;

#[derive(Clone, Copy)]
pub struct Toasts(pub RwSignal<Vec<(u64, String, bool)>>);

thread_local! {
    // App-wide rather than a context: toasts are raised after awaits, when
    // the component that started the work may already be gone.
    static TOASTS: Cell<Option<Toasts>> = const { Cell::new(None) };
}

pub fn provide_toasts() -> Toasts {
    let t = Toasts(RwSignal::new(vec![]));
    TOASTS.with(|c| c.set(Some(t)));
    t
}

/// Shows a message for a few seconds. `error` styles it as a failure.
pub fn toast(message: String, error: bool) {
    let Some(Toasts(list)) = TOASTS.with(Cell::get) else {
        return;
    };
    let id = js_sys::Date::now() as u64;
    list.update(|l| l.push((id, message, error)));
    set_timeout(
        move || list.update(|l| l.retain(|(i, _, _)| *i != id)),
        std::time::Duration::from_secs(5),
    );
}

#[component]
pub fn ToastRegion() -> impl IntoView {
    let list = TOASTS
        .with(Cell::get)
        .map(|t| t.0)
        .unwrap_or_else(|| RwSignal::new(vec![]));
    view! {
        <div class="toasts" role="status" aria-live="polite">
            <For each=move || list.get() key=|(id, _, _)| *id let:item>
                <div class=if item.2 { "toast toast-error" } else { "toast" }>{item.1.clone()}</div>
            </For>
        </div>
    }
}
