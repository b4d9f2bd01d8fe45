//! Every user-facing string comes from the Fluent files in `locales/`. The
//! language follows the browser and can be switched; the choice is kept.

use std::cell::RefCell;
use std::collections::HashMap;

use fluent_bundle::{FluentArgs, FluentBundle, FluentResource, FluentValue};
use kandev_core::merger::{Arg, Said, joiner};
use leptos::prelude::*;
use unic_langid::LanguageIdentifier;

/// The locales we ship. English is built in (the default, and what shows
/// while nothing else is loaded); any other is fetched once, when chosen, as
/// one file (`/locales/<locale>.ftl`, made by `cargo xtask web`), so the
/// first page carries one language, not all.
pub const LOCALE_NAMES: &[&str] = &["en-US", "de"];

const ENGLISH: &[&str] = &[
    include_str!("../../locales/en-US/common.ftl"),
    include_str!("../../locales/en-US/board.ftl"),
    include_str!("../../locales/en-US/automations.ftl"),
    include_str!("../../locales/en-US/merger.ftl"),
];

/// Every locale's files, for the tests that compare them.
#[cfg(test)]
pub const LOCALES: &[(&str, &[&str])] = &[
    ("en-US", ENGLISH),
    (
        "de",
        &[
            include_str!("../../locales/de/common.ftl"),
            include_str!("../../locales/de/board.ftl"),
            include_str!("../../locales/de/automations.ftl"),
            include_str!("../../locales/de/merger.ftl"),
        ],
    ),
];

pub const DEFAULT_LOCALE: &str = "en-US";
const STORAGE_KEY: &str = "kandev-locale";

/// A locale's Fluent sources: built in, fetched, or none yet.
fn sources(locale: &str) -> Vec<String> {
    #[cfg(test)]
    {
        LOCALES
            .iter()
            .find(|(l, _)| *l == locale)
            .map(|(_, s)| s.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default()
    }
    #[cfg(not(test))]
    {
        if locale == DEFAULT_LOCALE {
            ENGLISH.iter().map(|s| s.to_string()).collect()
        } else {
            FETCHED.with(|f| f.borrow().get(locale).cloned().into_iter().collect())
        }
    }
}

fn bundle(locale: &str) -> FluentBundle<FluentResource> {
    let lang: LanguageIdentifier = locale.parse().unwrap_or_default();
    let mut bundle = FluentBundle::new(vec![lang]);
    // Isolation marks would show up in inputs and break text matching.
    bundle.set_use_isolating(false);
    for source in sources(locale) {
        let resource = FluentResource::try_new(source).unwrap_or_else(|(r, _)| r);
        let _ = bundle.add_resource(resource);
    }
    bundle
}

/// Whether a locale's messages are at hand.
fn loaded(locale: &str) -> bool {
    locale == DEFAULT_LOCALE || FETCHED.with(|f| f.borrow().contains_key(locale))
}

/// Fetches a locale's messages unless they are at hand; `false` when they
/// could not be had (the caller stays in the language it has).
pub async fn load(locale: &str) -> bool {
    if loaded(locale) {
        return true;
    }
    if !LOCALE_NAMES.contains(&locale) {
        return false;
    }
    let url = format!("/locales/{locale}.ftl");
    let Ok(resp) = gloo_net::http::Request::get(&url).send().await else {
        return false;
    };
    let Ok(text) = resp.text().await else {
        return false;
    };
    // A missing file may come back as the app's own page (the SPA fallback).
    if !resp.ok() || text.trim_start().starts_with('<') {
        return false;
    }
    FETCHED.with(|f| f.borrow_mut().insert(locale.to_string(), text));
    BUNDLES.with(|b| b.borrow_mut().remove(locale));
    true
}

thread_local! {
    // App-wide, not a context: messages are formatted after awaits too.
    static LOCALE: std::cell::Cell<Option<I18n>> = const { std::cell::Cell::new(None) };
    static BUNDLES: RefCell<HashMap<String, FluentBundle<FluentResource>>> = RefCell::new(HashMap::new());
    static FETCHED: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
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
            // Counts are numbers, so plural selection works. (Whole ones:
            // float parsing would weigh on the first page for nothing.)
            match v.parse::<i64>() {
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

/// The locale the browser asks for: the kept choice, else its language.
pub fn browser_locale() -> String {
    let stored = window()
        .local_storage()
        .ok()
        .flatten()
        .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten());
    if let Some(l) = stored.filter(|l| LOCALE_NAMES.contains(&l.as_str())) {
        return l;
    }
    let nav = window().navigator().language().unwrap_or_default();
    if nav.to_ascii_lowercase().starts_with("de") {
        "de".into()
    } else {
        DEFAULT_LOCALE.into()
    }
}

pub fn provide_i18n() -> I18n {
    // `start` loaded the wanted locale first; if that failed, English.
    let wanted = browser_locale();
    let locale = if loaded(&wanted) { wanted } else { DEFAULT_LOCALE.into() };
    let i18n = I18n {
        locale: RwSignal::new(locale),
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

/// Switches the language once its messages are at hand, and keeps the choice.
pub fn set_locale(locale: &str) {
    let locale = locale.to_string();
    leptos::task::spawn_local(async move {
        if !load(&locale).await {
            return;
        }
        if let Some(i18n) = global() {
            i18n.locale.set(locale.clone());
        }
        if let Ok(Some(s)) = window().local_storage() {
            let _ = s.set_item(STORAGE_KEY, &locale);
        }
    });
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

/// One of the merger's sentences in `locale` (`merger-<id>`): list
/// arguments are said item by item and joined as core joins them; an id
/// this build does not know (a newer server) reads in English.
pub fn said_in(locale: &str, s: &Said) -> String {
    let id = format!("merger-{}", s.id);
    let args: Vec<(&str, String)> = s
        .args
        .iter()
        .map(|(name, value)| {
            let text = match value {
                Arg::Text(t) => t.clone(),
                Arg::List(items) => {
                    let parts: Vec<String> = items.iter().map(|i| said_in(locale, i)).collect();
                    parts.join(joiner(&s.id, name))
                }
            };
            (name.as_str(), text)
        })
        .collect();
    let text = format(locale, &id, &args);
    if text == id { s.english() } else { text }
}

/// One of the merger's sentences in the current locale (reactive).
pub fn said(s: &Said) -> String {
    said_in(&current(), s)
}

/// The current locale signal.
pub fn use_locale() -> RwSignal<String> {
    global()
        .map(|i| i.locale)
        .unwrap_or_else(|| RwSignal::new(DEFAULT_LOCALE.into()))
}

#[cfg(test)]
mod tests;
