//! The schedule editor: a preset sentence or a custom cron expression, a
//! searchable time zone, and the next runs in that zone and in UTC. The runs
//! come from the server (the scheduler's own rule); the browser's `Intl`
//! lists the zones and writes the times in the interface's language.

use chrono::{DateTime, Utc};
use gloo_timers::future::TimeoutFuture;
use kandev_core::cron::{PRESETS, matching_zones, preset_of};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;

use super::PanelProps;
use crate::api;
use crate::i18n::{t, use_locale};
use crate::time::{format_in_zone, zones};

/// How long typing must pause before the preview asks the server.
const DEBOUNCE_MS: u32 = 300;

/// The preview: runs, or the schedule is refused; `None` until answered.
type Next = Option<Result<Vec<DateTime<Utc>>, ()>>;

const CUSTOM: &str = "custom";
const NONE: &str = "";

#[component]
pub fn SchedulePanel(
    props: PanelProps,
    /// Whether a schedule trigger exists yet (it is created on first change).
    #[prop(optional, into)]
    active: Option<Signal<bool>>,
    /// Removes the schedule, when the section allows that.
    #[prop(optional)]
    on_clear: Option<Callback<()>>,
) -> impl IntoView {
    let config = props.config;
    let active = active.unwrap_or_else(|| Signal::derive(|| true));
    let expr = move || {
        config.with(|c| {
            c.get("cron_expression")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
    };
    let tz = move || {
        config.with(|c| {
            c.get("timezone")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
    };
    // "Custom" is sticky while the user types an expression that is a preset.
    let custom = RwSignal::new(false);
    let selected = move || {
        if !active.get() {
            NONE.to_string()
        } else if custom.get() {
            CUSTOM.to_string()
        } else {
            preset_of(&expr())
                .map(str::to_string)
                .unwrap_or_else(|| CUSTOM.to_string())
        }
    };
    let tz_query = RwSignal::new(String::new());
    let all_zones = StoredValue::new(zones());
    let locale = use_locale();
    let next = RwSignal::new(Next::None);
    let asked = StoredValue::new(0u64);
    Effect::new(move |_| {
        let (e, z) = (expr(), tz());
        if !active.get() {
            return;
        }
        let ticket = asked.get_value() + 1;
        asked.set_value(ticket);
        spawn_local(async move {
            TimeoutFuture::new(DEBOUNCE_MS).await;
            if asked.get_value() != ticket {
                return;
            }
            let answer = match api::schedule_preview(&e, &z).await {
                Ok(p) if p.error.is_some() => Some(Err(())),
                Ok(p) => Some(Ok(p.runs)),
                // Offline or the server busy: keep what is shown.
                Err(_) => return,
            };
            if asked.get_value() == ticket {
                next.set(answer);
            }
        });
    });
    view! {
        <div class="panel schedule-panel">
            <div class="field">
                <label for="cron-preset">{move || t("automations-cron-preset-label")}</label>
                <select id="cron-preset" on:change=move |ev| {
                    let v = event_target_value(&ev);
                    match v.as_str() {
                        NONE => if let Some(cb) = on_clear { cb.run(()) },
                        CUSTOM => { custom.set(true); if !active.get_untracked() { props.set("cron_expression", Value::String(expr())) } }
                        preset => { custom.set(false); props.set("cron_expression", Value::String(preset.to_string())) }
                    }
                }>
                    {on_clear.map(|_| view! { <option value=NONE selected=move || selected() == NONE>{move || t("automations-no-schedule")}</option> })}
                    {PRESETS.into_iter().map(|(value, label)| view! {
                        <option value=value selected=move || selected() == value>{move || t(label)}</option>
                    }).collect_view()}
                    <option value=CUSTOM selected=move || selected() == CUSTOM>{move || t("automations-cron-custom")}</option>
                </select>
            </div>
            <Show when=move || active.get()>
                <Show when=move || selected() == CUSTOM>
                    <div class="field">
                        <label for="cron-expression">{move || t("automations-cron-label")}</label>
                        <input id="cron-expression" class="mono" type="text" autocomplete="off" placeholder="0 9 * * 1-5"
                            aria-describedby="cron-help"
                            prop:value=expr on:input=move |ev| props.set("cron_expression", Value::String(event_target_value(&ev)))/>
                        <p class="help" id="cron-help">{move || t("automations-cron-help")}</p>
                    </div>
                </Show>
                <div class="field">
                    <label for="timezone">{move || t("automations-timezone-label")}</label>
                    <input id="timezone" type="text" list="timezone-list" autocomplete="off" placeholder="UTC"
                        prop:value=tz on:input=move |ev| {
                            let v = event_target_value(&ev);
                            tz_query.set(v.clone());
                            props.set("timezone", Value::String(v));
                        }/>
                    <datalist id="timezone-list">
                        {move || {
                            let q = tz_query.get();
                            let found: Vec<String> = all_zones.with_value(|all| {
                                matching_zones(all.iter().map(String::as_str), &q, 50).into_iter().map(str::to_string).collect()
                            });
                            found.into_iter().map(|z| view! { <option value=z></option> }).collect_view()
                        }}
                    </datalist>
                    <Show when=move || tz().trim().is_empty()>
                        <p class="help">{move || t("automations-timezone-utc-note")}</p>
                    </Show>
                </div>
                <div class="next-runs" aria-live="polite">
                    {move || match next.get() {
                        None => ().into_any(),
                        Some(Err(())) => view! { <p class="warning">{t("automations-cron-invalid")}</p> }.into_any(),
                        Some(Ok(list)) => {
                            let (zone, lang) = (tz(), locale.get());
                            view! {
                                <span class="label">{t("automations-next-runs")}</span>
                                <ul class="plain">
                                    {list.into_iter().map(|at| view! {
                                        <li><span>{format_in_zone(at, &zone, &lang)}</span> <span class="muted">{format!("({})", format_in_zone(at, "", &lang))}</span></li>
                                    }).collect_view()}
                                </ul>
                            }.into_any()
                        }
                    }}
                </div>
            </Show>
        </div>
    }
}
