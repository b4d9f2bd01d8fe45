//! A comma-separated list input committed on blur (split, trim, drop empties).

use kandev_core::editor::split_trimmed;
use leptos::prelude::*;
use serde_json::Value;

use super::PanelProps;

#[component]
pub fn ListInput(
    props: PanelProps,
    /// Config key the list is stored under.
    key: &'static str,
    id: &'static str,
    #[prop(into)] label: Signal<String>,
    placeholder: &'static str,
) -> impl IntoView {
    view! {
        <div class="field">
            <label for=id>{move || label.get()}</label>
            <input id=id type="text" placeholder=placeholder autocomplete="off"
                prop:value=move || props.list(key).join(", ")
                on:change=move |ev| {
                    let list = split_trimmed(&event_target_value(&ev)).into_iter().map(Value::String).collect();
                    props.set(key, Value::Array(list));
                }/>
        </div>
    }
}
