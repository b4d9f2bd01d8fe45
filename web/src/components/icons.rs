//! Inline SVG icons (no icon font to download).

use kandev_core::editor::TriggerIcon;
use leptos::prelude::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Icon {
    Clock,
    Github,
    Webhook,
    Info,
    Chevron,
    Trash,
    Play,
}

fn path(i: Icon) -> &'static str {
    match i {
        Icon::Clock => "M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm1 5h-2v6l5 3 1-1.7-4-2.3z",
        Icon::Github => {
            "M12 2a10 10 0 0 0-3.2 19.5c.5.1.7-.2.7-.5v-1.7c-2.8.6-3.4-1.3-3.4-1.3-.5-1.2-1.1-1.5-1.1-1.5-.9-.6.1-.6.1-.6 1 .1 1.5 1 1.5 1 .9 1.5 2.4 1.1 2.9.8.1-.7.4-1.1.6-1.3-2.2-.3-4.6-1.1-4.6-5 0-1.1.4-2 1-2.7-.1-.3-.4-1.3.1-2.7 0 0 .8-.3 2.7 1a9.4 9.4 0 0 1 5 0c1.9-1.3 2.7-1 2.7-1 .5 1.4.2 2.4.1 2.7.6.7 1 1.6 1 2.7 0 3.9-2.4 4.7-4.6 5 .4.3.7.9.7 1.9v2.8c0 .3.2.6.7.5A10 10 0 0 0 12 2z"
        }
        Icon::Webhook => {
            "M10 4a4 4 0 0 1 3.5 5.9l3 5.1H19v2h-3.6l-3.6-6.1A2 2 0 1 0 9 9.5l-1.7 1A4 4 0 0 1 10 4zM6 13l1.7 1A2 2 0 1 0 11 16h6v2h-6.3A4 4 0 1 1 6 13z"
        }
        Icon::Info => "M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm1 15h-2v-6h2zm0-8h-2V7h2z",
        Icon::Chevron => "M7 10l5 5 5-5z",
        Icon::Trash => "M6 7h12l-1 14H7zm3-4h6l1 2h4v2H4V5h4z",
        Icon::Play => "M8 5v14l11-7z",
    }
}

#[component]
pub fn IconSvg(icon: Icon) -> impl IntoView {
    view! {
        <svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
            <path d=path(icon) fill="currentColor"></path>
        </svg>
    }
}

pub fn trigger_icon(i: TriggerIcon) -> Icon {
    match i {
        TriggerIcon::Clock => Icon::Clock,
        TriggerIcon::Github => Icon::Github,
        TriggerIcon::Webhook => Icon::Webhook,
    }
}
