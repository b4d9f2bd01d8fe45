//! "When": webhook mode (the webhook card and "Switch to scheduled"), or a
//! schedule plus at most one condition (its card, or the picker) and "Or use
//! a webhook instead". Every move is a core draft function.

use kandev_core::editor::draft::{
    add_trigger, condition_index, is_dirty, is_webhook_mode, remove_at, schedule_index, set_schedule,
    switch_to_scheduled, use_webhook_instead,
};
use kandev_core::trigger::TriggerType;
use leptos::prelude::*;
use serde_json::{Value, json};

use super::form::Form;
use crate::components::automations::panels::{PanelProps, SchedulePanel};
use crate::components::automations::{ConditionPicker, TriggerCard};
use crate::i18n::t;

/// A card bound to the draft trigger at `index`.
fn card(form: Form, index: usize, trigger_type: TriggerType, expanded: bool) -> impl IntoView {
    let draft = form.draft;
    let config =
        Signal::derive(move || draft.with(|d| d.get(index).map(|x| x.config.clone()).unwrap_or_else(|| json!({}))));
    let on_config = Callback::new(move |v: Value| {
        draft.update(|d| {
            if let Some(x) = d.get_mut(index) {
                x.config = v;
            }
        })
    });
    let enabled = Signal::derive(move || draft.with(|d| d.get(index).is_some_and(|x| x.enabled)));
    let dirty = Signal::derive(move || {
        let saved = form
            .saved
            .with(|s| s.as_ref().map(|a| a.triggers.clone()).unwrap_or_default());
        draft.with(|d| d.get(index).is_some_and(|x| is_dirty(&saved, x)))
    });
    view! {
        <TriggerCard
            trigger_type=trigger_type
            props=PanelProps { config, on_config }
            enabled=enabled
            on_enabled=Callback::new(move |on| draft.update(|d| if let Some(x) = d.get_mut(index) { x.enabled = on }))
            on_remove=Callback::new(move |_| draft.update(|d| *d = remove_at(d, index)))
            dirty=dirty
            workspace_id=form.ws
            automation_id=form.saved_id()
            expanded=expanded/>
    }
}

#[component]
pub fn WhenSection(form: Form) -> impl IntoView {
    let draft = form.draft;
    let webhook_mode = Memo::new(move |_| draft.with(|d| is_webhook_mode(d)));
    // (index, type, unsaved): the card is rebuilt only when these change.
    let condition =
        Memo::new(move |_| draft.with(|d| condition_index(d).map(|i| (i, d[i].trigger_type, d[i].id.is_none()))));
    let webhook = Memo::new(move |_| {
        draft.with(|d| {
            d.iter()
                .position(|x| x.trigger_type == TriggerType::Webhook)
                .map(|i| (i, d[i].id.is_none()))
        })
    });
    let schedule_active = Signal::derive(move || draft.with(|d| schedule_index(d).is_some()));
    let schedule_config = Signal::derive(move || {
        draft.with(|d| {
            schedule_index(d)
                .map(|i| d[i].config.clone())
                .unwrap_or_else(|| json!({}))
        })
    });
    let on_schedule = Callback::new(move |v: Value| {
        let patch = v.as_object().cloned().unwrap_or_default();
        draft.update(|d| *d = set_schedule(d, &patch));
    });
    let clear_schedule = Callback::new(move |_| {
        draft.update(|d| {
            if let Some(i) = schedule_index(d) {
                *d = remove_at(d, i);
            }
        })
    });
    view! {
        <section class="card section" aria-labelledby="when-title">
            <h2 id="when-title">{move || t("automations-when-title")}</h2>
            <p class="help">{move || t("automations-when-description")}</p>
            {move || if webhook_mode.get() {
                view! {
                    {move || webhook.get().map(|(i, _)| card(form, i, TriggerType::Webhook, true))}
                    <button type="button" class="btn" id="switch-to-scheduled" on:click=move |_| draft.update(|d| *d = switch_to_scheduled(d))>
                        {t("automations-switch-to-scheduled")}
                    </button>
                }.into_any()
            } else {
                view! {
                    <h3>{t("automations-schedule-label")}</h3>
                    <SchedulePanel props=PanelProps { config: schedule_config, on_config: on_schedule } active=schedule_active on_clear=clear_schedule/>
                    <h3>{t("automations-watch-for-label")}</h3>
                    {move || match condition.get() {
                        Some((i, ty, new)) => card(form, i, ty, new).into_any(),
                        None => view! { <ConditionPicker on_pick=Callback::new(move |ty| draft.update(|d| *d = add_trigger(d, ty)))/> }.into_any(),
                    }}
                    <button type="button" class="btn btn-link" id="use-webhook" on:click=move |_| draft.update(|d| *d = use_webhook_instead(d))>
                        {t("automations-use-webhook-instead")}
                    </button>
                }.into_any()
            }}
        </section>
    }
}
