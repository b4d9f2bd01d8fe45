//! Time in the browser: `SystemTime::now()` panics on wasm, so "now" comes
//! from JavaScript and every rule takes it as a parameter.

use chrono::{DateTime, TimeZone, Utc};
use kandev_core::text::{Age, age};
use wasm_bindgen::{JsCast, JsValue};

use crate::i18n::{t, ta};

pub fn now() -> DateTime<Utc> {
    Utc.timestamp_millis_opt(js_sys::Date::now() as i64)
        .single()
        .unwrap_or_default()
}

/// "5 min ago", localised.
pub fn relative(then: DateTime<Utc>) -> String {
    match age(then, now()) {
        Age::JustNow => t("time-just-now"),
        Age::Minutes(n) => ta("time-minutes-ago", &[("n", n.to_string())]),
        Age::Hours(n) => ta("time-hours-ago", &[("n", n.to_string())]),
        Age::Days(n) => ta("time-days-ago", &[("n", n.to_string())]),
    }
}

/// A time in an IANA zone (blank: UTC) in the interface's language, with the
/// zone's abbreviation, so German shows German weekdays. The browser's `Intl`
/// does the work: the zone database stays out of the bundle. A zone the
/// browser does not know shows as UTC rather than failing.
pub fn format_in_zone(at: DateTime<Utc>, zone: &str, locale: &str) -> String {
    let zone = match zone.trim() {
        "" => "UTC",
        z => z,
    };
    let date = js_sys::Date::new(&JsValue::from_f64(at.timestamp_millis() as f64));
    let Ok(to_locale) = js_sys::Reflect::get(&date, &"toLocaleString".into()) else {
        return at.to_rfc3339();
    };
    let to_locale: js_sys::Function = to_locale.unchecked_into();
    let format = |zone: &str| {
        let options = js_sys::Object::new();
        for (key, value) in [
            ("weekday", "short"),
            ("year", "numeric"),
            ("month", "2-digit"),
            ("day", "2-digit"),
            ("hour", "2-digit"),
            ("minute", "2-digit"),
            ("hourCycle", "h23"),
            ("timeZoneName", "short"),
            ("timeZone", zone),
        ] {
            let _ = js_sys::Reflect::set(&options, &key.into(), &value.into());
        }
        // `call` catches the RangeError an unknown zone throws.
        to_locale
            .call2(&date, &locale.into(), &options)
            .ok()
            .and_then(|s| s.as_string())
    };
    format(zone)
        .or_else(|| format("UTC"))
        .unwrap_or_else(|| at.to_rfc3339())
}

/// The browser's own IANA zone ("" when it cannot say: shown as UTC).
pub fn local_zone() -> String {
    let get = |v: &JsValue, k: &str| js_sys::Reflect::get(v, &k.into()).unwrap_or(JsValue::UNDEFINED);
    let intl = get(&js_sys::global(), "Intl");
    let Ok(ctor) = get(&intl, "DateTimeFormat").dyn_into::<js_sys::Function>() else {
        return String::new();
    };
    let Ok(formatter) = ctor.call0(&intl) else {
        return String::new();
    };
    let Ok(resolved) = get(&formatter, "resolvedOptions").dyn_into::<js_sys::Function>() else {
        return String::new();
    };
    resolved
        .call0(&formatter)
        .map(|o| get(&o, "timeZone").as_string().unwrap_or_default())
        .unwrap_or_default()
}

/// The browser's IANA zone names (UTC first), for the time-zone combobox.
pub fn zones() -> Vec<String> {
    let mut out = vec!["UTC".to_string()];
    let intl = js_sys::Reflect::get(&js_sys::global(), &"Intl".into()).unwrap_or(JsValue::UNDEFINED);
    let has = js_sys::Reflect::has(&intl, &"supportedValuesOf".into()).unwrap_or(false);
    if has {
        let all = js_sys::Intl::supported_values_of(js_sys::Intl::SupportedValuesKey::TimeZone);
        out.extend(all.iter().filter_map(|z| z.as_string()).filter(|z| z != "UTC"));
    }
    out
}
