//! An accessible on/off switch: a real checkbox with role="switch".

use leptos::prelude::*;

#[component]
pub fn Switch(
    /// Element id, so a `<label for>` can name it.
    #[prop(into)]
    id: String,
    #[prop(into)] checked: Signal<bool>,
    #[prop(into)] label: Signal<String>,
    on_change: impl Fn(bool) + 'static,
    #[prop(optional, into)] disabled: Signal<bool>,
) -> impl IntoView {
    view! {
        <span class="switch">
            <input
                type="checkbox"
                role="switch"
                id=id
                prop:checked=move || checked.get()
                aria-checked=move || checked.get().to_string()
                aria-label=move || label.get()
                disabled=move || disabled.get()
                on:change=move |ev| on_change(event_target_checked(&ev))
            />
            <span class="switch-track" aria-hidden="true"></span>
        </span>
    }
}
