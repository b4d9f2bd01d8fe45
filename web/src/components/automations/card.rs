//! A trigger card: icon, collapsed summary (a button that expands it), info
//! tooltip, enabled switch and remove; the body is the type's config panel.
//! Icon, colour, info and summary come from core's exhaustive tables.

use kandev_core::editor::{style, summary};
use kandev_core::registry;
use kandev_core::trigger::TriggerType;
use leptos::prelude::*;
use serde_json::Value;

use super::badge::color_class;
use super::panels::{PanelProps, TriggerConfigForm};
use crate::components::{Icon, IconSvg, Switch, trigger_icon};
use crate::i18n::{t, ta};

/// An info icon whose tooltip shows on hover and on keyboard focus.
#[component]
pub fn InfoTip(
    #[prop(into)] id: String,
    #[prop(into)] text: Signal<String>,
    #[prop(into)] label: Signal<String>,
) -> impl IntoView {
    view! {
        <span class="tip">
            <button type="button" class="tip-trigger icon-btn" aria-label=move || label.get() aria-describedby=id.clone()>
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
