//! A trigger card: icon, collapsed summary (a button that expands it), info
//! tooltip, enabled switch and remove; the body is the type's config panel.
//! Icon, colour, info and summary come from core's exhaustive tables.

use kandev_core::editor::{style, summary};
use kandev_core::registry;
use kandev_core::trigger::TriggerType;
use leptos::prelude::*;
use serde_json::Value;
use wasm_bindgen::JsCast;

use super::badge::color_class;
use super::panels::{PanelProps, TriggerConfigForm};
use crate::components::{Icon, IconSvg, Switch, trigger_icon};
use crate::i18n::{t, ta};

/// An info icon whose tooltip shows on hover, on keyboard focus and on tap
/// (phones have no hover, and Safari does not focus a tapped button). A tap
/// elsewhere, Escape or focus moving on closes it.
#[component]
pub fn InfoTip(
    #[prop(into)] id: String,
    #[prop(into)] text: Signal<String>,
    #[prop(into)] label: Signal<String>,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let root = NodeRef::<leptos::html::Span>::new();
    let outside = window_event_listener(leptos::ev::pointerdown, move |ev| {
        if !open.get_untracked() {
            return;
        }
        let target = ev.target().and_then(|t| t.dyn_into::<web_sys::Node>().ok());
        let inside = root.get_untracked().is_some_and(|r| r.contains(target.as_ref()));
        if !inside {
            open.set(false);
        }
    });
    on_cleanup(move || outside.remove());
    view! {
        <span class="tip" node_ref=root class:open=move || open.get()
            on:focusin=move |_| open.set(true) on:focusout=move |_| open.set(false)
            on:keydown=move |ev| if ev.key() == "Escape" { open.set(false) }>
            <button type="button" class="tip-trigger icon-btn" aria-label=move || label.get() aria-describedby=id.clone()
                aria-expanded=move || open.get().to_string() on:click=move |_| open.set(true)>
                <IconSvg icon=Icon::Info/>
            </button>
            <span class="tip-body" role="tooltip" id=id>{move || text.get()}</span>
        </span>
    }
}

#[component]
pub fn TriggerCard(
    trigger_type: TriggerType,
    props: PanelProps,
    enabled: Signal<bool>,
    on_enabled: Callback<bool>,
    on_remove: Callback<()>,
    dirty: Signal<bool>,
    workspace_id: Signal<String>,
    automation_id: Signal<Option<String>>,
    /// New cards open expanded; saved ones start collapsed.
    expanded: bool,
) -> impl IntoView {
    let s = style(trigger_type);
    let open = RwSignal::new(expanded);
    let label = registry::entry(trigger_type).label;
    let kind = trigger_type.as_str();
    let body_id = format!("trigger-body-{kind}");
    let config = props.config;
    let summary_text = move || {
        config.with(|c: &Value| {
            let sm = summary(trigger_type, c);
            ta(sm.id, &sm.args)
        })
    };
    view! {
        <div class="trigger-card" data-trigger-type=kind class:dirty=move || dirty.get()>
            <div class="card-head">
                <span class=format!("trigger-icon {}", color_class(s.color))><IconSvg icon=trigger_icon(s.icon)/></span>
                <button type="button" class="summary" aria-expanded=move || open.get().to_string() aria-controls=body_id.clone()
                    on:click=move |_| open.update(|o| *o = !*o)>
                    <span class="summary-text">{summary_text}</span>
                    <span class="chevron" class:open=move || open.get()><IconSvg icon=Icon::Chevron/></span>
                </button>
                <InfoTip id=format!("info-{kind}") text=Signal::derive(move || t(s.info))
                    label=Signal::derive(move || ta("automations-info-label", &[("label", label.to_string())]))/>
                <Switch id=format!("trigger-enabled-{kind}") checked=enabled label=Signal::derive(|| t("automations-trigger-enabled"))
                    on_change=move |on| on_enabled.run(on)/>
                <button type="button" class="btn icon-btn btn-danger" aria-label=move || t("automations-trigger-delete")
                    title=move || t("automations-trigger-delete") on:click=move |_| on_remove.run(())>
                    <IconSvg icon=Icon::Trash/>
                </button>
            </div>
            <Show when=move || open.get()>
                <div class="card-body" id=format!("trigger-body-{kind}")>
                    <TriggerConfigForm trigger_type=trigger_type props=props workspace_id=workspace_id automation_id=automation_id/>
                </div>
            </Show>
        </div>
    }
}
