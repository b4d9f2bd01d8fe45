//! A page's code that fails to load — most often because Kandev was upgraded
//! while this tab stayed open, so its build's chunks are gone — loads the
//! app afresh at the page the user was going to, once, to pick up the new
//! build; if that fails too, it says so and offers a reload instead of
//! leaving a dead page.

use std::cell::RefCell;

use leptos::prelude::window;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// What the chunk loader panics with when a chunk cannot be fetched or run.
const CHUNK_FAILURE: &str = "load callback should succeed";
/// When the last automatic reload happened (session storage, ms since epoch).
const RELOADED_AT: &str = "kandev-chunk-reload";
/// Within this many ms of an automatic reload, another failure is shown, not reloaded.
const ONCE_PER_MS: i64 = 60_000;

/// Whether to reload now, given when the last automatic reload was.
fn should_reload(last: Option<i64>, now: i64) -> bool {
    last.is_none_or(|t| !(0..ONCE_PER_MS).contains(&(now - t)))
}

thread_local! {
    /// The link last followed: the router changes the address only once the
    /// page's code is loaded, so a failed load leaves the old address.
    static GOING_TO: RefCell<Option<String>> = const { RefCell::new(None) };
}

pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        if info.to_string().contains(CHUNK_FAILURE) {
            chunk_failed();
        }
    }));
    // Capture phase: seen before the router takes the click.
    let remember = Closure::<dyn Fn(web_sys::Event)>::new(|ev: web_sys::Event| {
        let link = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("a[href]").ok().flatten())
            .and_then(|a| a.get_attribute("href"));
        if let Some(href) = link.filter(|h| h.starts_with('/')) {
            GOING_TO.with(|g| *g.borrow_mut() = Some(href));
        }
    });
    if let Some(doc) = window().document() {
        let _ = doc.add_event_listener_with_callback_and_bool("click", remember.as_ref().unchecked_ref(), true);
    }
    remember.forget();
}

fn chunk_failed() {
    let current = window().location().href().unwrap_or_default();
    let target = GOING_TO.with(|g| g.borrow_mut().take()).unwrap_or(current);
    // Whole milliseconds: integers keep float parsing out of the first page.
    let now = js_sys::Date::now() as i64;
    let storage = window().session_storage().ok().flatten();
    let last = storage
        .as_ref()
        .and_then(|s| s.get_item(RELOADED_AT).ok().flatten())
        .and_then(|v| v.parse::<i64>().ok());
    if should_reload(last, now) {
        if let Some(s) = &storage {
            let _ = s.set_item(RELOADED_AT, &now.to_string());
        }
        let _ = window().location().assign(&target);
        return;
    }
    // The app's own code is no longer safe to run: plain DOM, escaped text,
    // and a plain link (`rel="external"` keeps the router's hands off it;
    // the page's policy runs no inline handler).
    let Some(body) = window().document().and_then(|d| d.body()) else {
        return;
    };
    let message = crate::i18n::t("load-failed");
    let reload = crate::i18n::t("load-failed-reload");
    let html = format!(
        r#"<div id="load-failed" class="load-failed" role="alert"><p>{}</p><a class="btn btn-primary" rel="external" href="{}">{}</a></div>"#,
        escape(&message),
        escape(&target),
        escape(&reload)
    );
    let _ = body.insert_adjacent_html("beforeend", &html);
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::should_reload;

    #[test]
    fn a_failed_chunk_reloads_once_a_minute_at_most() {
        assert!(should_reload(None, 1_000_000), "never reloaded: reload");
        assert!(!should_reload(Some(1_000_000), 1_030_000), "reloaded 30 s ago: show");
        assert!(should_reload(Some(1_000_000), 1_061_000), "reloaded 61 s ago: reload");
        assert!(should_reload(Some(2_000_000), 1_000_000), "a clock set back: reload");
    }
}
