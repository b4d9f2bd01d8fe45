//! A trigger type's list badge: label message and colour from core's table.

use kandev_core::editor::{TriggerColor, style};
use kandev_core::trigger::TriggerType;
use leptos::prelude::*;

use crate::i18n::t;

pub fn color_class(c: TriggerColor) -> &'static str {
    match c {
        TriggerColor::Blue => "tint-blue",
        TriggerColor::Purple => "tint-purple",
        TriggerColor::Orange => "tint-orange",
    }
}

#[component]
pub fn TriggerBadge(trigger_type: TriggerType) -> impl IntoView {
    let s = style(trigger_type);
    view! {
        <span class=format!("badge {}", color_class(s.color)) data-trigger-type=trigger_type.as_str()>{move || t(s.badge)}</span>
    }
}
