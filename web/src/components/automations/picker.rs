//! The condition picker: the registry minus `schedule`, grouped by category
//! in registry order (core decides), searchable, with info tooltips and
//! disabled "coming soon" entries.

use kandev_core::editor::{picker_groups, picker_matches, style};
use kandev_core::registry::{CATEGORY_GITHUB, CATEGORY_WEBHOOK};
use kandev_core::trigger::TriggerType;
use leptos::prelude::*;

use super::badge::color_class;
use super::card::InfoTip;
use crate::components::{IconSvg, trigger_icon};
use crate::i18n::{t, ta};

fn heading(category: &str) -> String {
    match category {
        CATEGORY_GITHUB => t("automations-category-github"),
        CATEGORY_WEBHOOK => t("automations-category-webhook"),
        other => other.to_string(),
    }
}

#[component]
pub fn ConditionPicker(on_pick: Callback<TriggerType>) -> impl IntoView {
    let open = RwSignal::new(false);
    let query = RwSignal::new(String::new());
    view! {
        <div class="picker">
            <button type="button" class="btn" id="add-condition" aria-expanded=move || open.get().to_string() aria-controls="condition-picker"
                on:click=move |_| open.update(|o| *o = !*o)>
                {move || t("automations-add-condition")}
            </button>
            <Show when=move || open.get()>
                <div class="picker-panel" id="condition-picker">
                    <label for="condition-search" class="sr-only">{move || t("automations-search-conditions")}</label>
                    <input id="condition-search" type="search" autocomplete="off" placeholder=move || t("automations-search-conditions")
                        prop:value=move || query.get() on:input=move |ev| query.set(event_target_value(&ev))/>
                    {move || picker_groups().into_iter().map(|(category, entries)| {
                        let q = query.get();
                        let items: Vec<_> = entries.into_iter().filter(|e| picker_matches(e, &q)).collect();
                        (!items.is_empty()).then(|| {
                            let heading_id = format!("picker-group-{category}");
                            let labelled_by = heading_id.clone();
                            view! {
                                <div class="picker-group" role="group" aria-labelledby=labelled_by data-category=category>
                                    <h4 id=heading_id>{heading(category)}</h4>
                                    <ul class="plain">
                                        {items.into_iter().map(|e| {
                                            let s = style(e.trigger_type);
                                            let kind = e.trigger_type.as_str();
                                            let label = if e.enabled { e.label.to_string() } else { ta("automations-coming-soon-suffix", &[("label", e.label.to_string())]) };
                                            let t_type = e.trigger_type;
                                            view! {
                                                <li class="picker-item" data-trigger-type=kind>
                                                    <button type="button" class="picker-choice" disabled=!e.enabled
                                                        on:click=move |_| { open.set(false); query.set(String::new()); on_pick.run(t_type) }>
                                                        <span class=format!("trigger-icon {}", color_class(s.color))><IconSvg icon=trigger_icon(s.icon)/></span>
                                                        <span class="picker-label">{label}</span>
                                                    </button>
                                                    <InfoTip id=format!("picker-info-{kind}") text=Signal::derive(move || e.description.to_string())
                                                        label=Signal::derive(move || ta("automations-info-label", &[("label", e.label.to_string())]))/>
                                                </li>
                                            }
                                        }).collect_view()}
                                    </ul>
                                </div>
                            }
                        })
                    }).collect_view()}
                </div>
            </Show>
        </div>
    }
}
