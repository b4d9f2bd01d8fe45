//! Every user-facing string comes from the Fluent files in `locales/`. The
//! language follows the browser and can be switched; the choice is kept.

use std::cell::RefCell;
use std::collections::HashMap;

use fluent_bundle::{FluentArgs, FluentBundle, FluentResource, FluentValue};
use leptos::prelude::*;
use unic_langid::LanguageIdentifier;

/// The locales we ship, with their Fluent files.
pub const LOCALES: &[(&str, &[&str])] = &[
    (
        "en-US",
        &[
            include_str!("../../locales/en-US/common.ftl"),
            include_str!("../../locales/en-US/board.ftl"),
            include_str!("../../locales/en-US/automations.ftl"),
        ],
    ),
    (
        "de",
        &[
            include_str!("../../locales/de/common.ftl"),
            include_str!("../../locales/de/board.ftl"),
            include_str!("../../locales/de/automations.ftl"),
        ],
    ),
];

pub const DEFAULT_LOCALE: &str = "en-US";
const STORAGE_KEY: &str = "kandev-locale";

fn bundle(locale: &str) -> FluentBundle<FluentResource> {
    let lang: LanguageIdentifier = locale.parse().unwrap_or_default();
    let mut bundle = FluentBundle::new(vec![lang]);
    // Isolation marks would show up in inputs and break text matching.
    bundle.set_use_isolating(false);
    let sources = LOCALES
        .iter()
        .find(|(l, _)| *l == locale)
        .map(|(_, s)| *s)
        .unwrap_or(&[]);
    for source in sources {
        let resource = FluentResource::try_new(source.to_string()).unwrap_or_else(|(r, _)| r);
        let _ = bundle.add_resource(resource);
    }
    bundle
}

thread_local! {
    // App-wide, not a context: messages are formatted after awaits too.
    static LOCALE: std::cell::Cell<Option<I18n>> = const { std::cell::Cell::new(None) };
    static BUNDLES: RefCell<HashMap<String, FluentBundle<FluentResource>>> = RefCell::new(HashMap::new());
}

/// Formats a message; a missing id shows the id itself (and the i18n test
/// makes sure none is missing).
pub fn format(locale: &str, id: &str, args: &[(&str, String)]) -> String {
    BUNDLES.with(|b| {
        let mut map = b.borrow_mut();
        let bundle = map.entry(locale.to_string()).or_insert_with(|| bundle(locale));
        let Some(msg) = bundle.get_message(id) else {
            return id.to_string();
        };
        let Some(pattern) = msg.value() else {
            return id.to_string();
        };
        let mut fargs = FluentArgs::new();
        for (k, v) in args {
            // Counts are numbers, so plural selection works.
            match v.parse::<f64>() {
                Ok(n) if matches!(*k, "count" | "n") => fargs.set(*k, FluentValue::from(n)),
                _ => fargs.set(*k, FluentValue::from(v.clone())),
            }
        }
        let mut errors = vec![];
        bundle.format_pattern(pattern, Some(&fargs), &mut errors).to_string()
    })
}

/// The current locale, provided at the root.
#[derive(Clone, Copy)]
pub struct I18n {
    pub locale: RwSignal<String>,
}

fn browser_locale() -> String {
    let stored = window()
        .local_storage()
        .ok()
        .flatten()
        .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten());
    if let Some(l) = stored.filter(|l| LOCALES.iter().any(|(x, _)| x == l)) {
        return l;
    }
    let nav = window().navigator().language().unwrap_or_default();
    if nav.to_lowercase().starts_with("de") {
        "de".into()
    } else {
        DEFAULT_LOCALE.into()
    }
}

pub fn provide_i18n() -> I18n {
    let i18n = I18n {
        locale: RwSignal::new(browser_locale()),
    };
    LOCALE.with(|c| c.set(Some(i18n)));
    Effect::new(move |_| {
        let l = i18n.locale.get();
        if let Some(doc) = document().document_element() {
            let _ = doc.set_attribute("lang", &l);
        }
    });
    i18n
}

pub fn set_locale(locale: &str) {
    if let Some(i18n) = global() {
        i18n.locale.set(locale.to_string());
    }
    if let Ok(Some(s)) = window().local_storage() {
        let _ = s.set_item(STORAGE_KEY, locale);
    }
}

fn global() -> Option<I18n> {
    LOCALE.with(std::cell::Cell::get)
}

fn current() -> String {
    global()
        .map(|i| i.locale.get())
        .unwrap_or_else(|| DEFAULT_LOCALE.into())
}

/// A message in the current locale (reactive).
pub fn t(id: &str) -> String {
    format(&current(), id, &[])
}

/// A message with arguments in the current locale (reactive).
pub fn ta(id: &str, args: &[(&str, String)]) -> String {
    format(&current(), id, args)
}

/// The current locale signal.
pub fn use_locale() -> RwSignal<String> {
    global()
        .map(|i| i.locale)
        .unwrap_or_else(|| RwSignal::new(DEFAULT_LOCALE.into()))
}

#[cfg(test)]
mod tests;
