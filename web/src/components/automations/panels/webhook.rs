//! The webhook panel: the URL (once saved), the secret behind a reveal, how
//! to call it, and the placeholder paths a sample payload offers.

use kandev_core::api::WebhookSecret;
use kandev_core::webhook::sample_paths;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;

use crate::api;
use crate::components::toast;
use crate::i18n::t;

pub fn webhook_url(id: &str) -> String {
    let origin = window().location().origin().unwrap_or_default();
    format!("{origin}/api/v1/automations/webhook/{id}")
}

#[component]
pub fn WebhookPanel(automation_id: Signal<Option<String>>) -> impl IntoView {
    let secret = RwSignal::new(None::<String>);
    let sample = RwSignal::new(String::new());
    let reveal = move |_| {
        let Some(id) = automation_id.get_untracked() else {
            return;
        };
        spawn_local(async move {
            match api::get::<WebhookSecret>(&format!("/api/v1/automations/{id}/webhook-secret")).await {
                Ok(s) => secret.set(Some(s.webhook_secret)),
                Err(e) => toast(e.to_string(), true),
            }
        });
    };
    let paths = move || {
        serde_json::from_str::<Value>(&sample.get())
            .map(|v| sample_paths(&v))
            .unwrap_or_default()
    };
    view! {
        <div class="panel webhook-panel">
            {move || match automation_id.get() {
                None => view! { <p class="help">{t("automations-webhook-url-after-save")}</p> }.into_any(),
                Some(id) => view! {
                    <div class="field">
                        <label for="webhook-url">{t("automations-webhook-url-label")}</label>
                        <input id="webhook-url" class="mono" readonly prop:value=webhook_url(&id)/>
                    </div>
                    <div class="field">
                        <label for="webhook-secret">{t("automations-webhook-secret-label")}</label>
                        <div class="row">
                            <input id="webhook-secret" class="mono grow" readonly
                                prop:type=move || if secret.get().is_some() { "text" } else { "password" }
                                prop:value=move || secret.get().unwrap_or_else(|| "••••••••••••".into())/>
                            <button type="button" class="btn" on:click=reveal>{t("automations-webhook-reveal")}</button>
                        </div>
                    </div>
                }.into_any(),
            }}
            <p class="help">{move || t("automations-webhook-usage-help")}</p>
            <div class="field">
                <label for="sample-payload">{move || t("automations-sample-payload-label")}</label>
                <textarea id="sample-payload" class="mono" rows="4" placeholder="{\"action\": \"opened\"}"
                    prop:value=move || sample.get() on:input=move |ev| sample.set(event_target_value(&ev))></textarea>
                <ul class="plain chips">
                    {move || paths().into_iter().map(|p| view! { <li><code>{format!("{{{{{p}}}}}")}</code></li> }).collect_view()}
                </ul>
            </div>
        </div>
    }
}
