//! Hostile input never panics the parsers the server runs on stored or
//! received values: schedules, the interpolator, webhook bodies, PR references
//! and GitHub path segments. 100,000 cases each, in the normal test run.

use chrono::{DateTime, TimeZone, Utc};
use kandev_core::board::{PrRef, ci_wait_timeout_minutes, find_pr_url};
use kandev_core::cron::{Schedule, is_due, upcoming, validate_schedule};
use kandev_core::duration::parse_duration;
use kandev_core::interpolate::interpolate;
use kandev_core::webhook::{parse_github_delivery, webhook_data};
use proptest::prelude::*;
use serde_json::{Value, json};

const CASES: u32 = 100_000;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Times across the whole range chrono can represent, edges included.
fn any_time() -> impl Strategy<Value = DateTime<Utc>> {
    prop_oneof![
        Just(DateTime::<Utc>::MIN_UTC),
        Just(DateTime::<Utc>::MAX_UTC),
        (-8_000_000_000_000i64..8_000_000_000_000i64)
            .prop_map(|s| Utc.timestamp_opt(s, 0).single().unwrap_or(DateTime::<Utc>::MAX_UTC)),
    ]
}

/// Schedules that look like schedules, with hostile numbers and units.
fn schedule_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "@every [0-9.]{0,25}(ns|us|ms|s|m|h|x|)([0-9.]{0,5}(s|m|h))?",
        "(TZ=|CRON_TZ=)?[A-Za-z/_+-]{0,20} [0-9*/,-]{1,6} [0-9*/,-]{1,6} [0-9*/,-]{1,6} [0-9*/,A-Za-z-]{1,6} [0-9*/,A-Za-z-]{1,6}",
        "@[a-z]{0,12}",
        ".{0,40}",
    ]
}

/// JSON of any shape, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::Null)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_.]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn schedules_never_panic(expr in schedule_text(), tz in "[A-Za-z/_]{0,16}", anchor in any_time(), now in any_time()) {
        let _ = parse_duration(expr.trim_start_matches("@every"));
        if let Ok(s) = Schedule::parse(&expr, &tz) {
            let _ = s.next_after(anchor);
        }
        let _ = is_due(&expr, &tz, anchor, now);
        let _ = validate_schedule(&expr, &tz, now);
        let _ = upcoming(&expr, &tz, now, 3);
    }

    #[test]
    fn the_interpolator_never_panics(
        template in "([^{}]{0,6}(\\{\\{ ?[a-z_.]{0,20} ?\\}\\}|\\{\\{|\\}\\}|\\{)?){0,6}",
        kind in "(manual|scheduled|github_pr_merged|webhook|github_push|[a-z_]{0,10})",
        data in any_json(),
        now in any_time(),
    ) {
        let _ = interpolate(&template, &kind, &data, now);
    }

    #[test]
    fn webhook_bodies_never_panic(body in prop::collection::vec(any::<u8>(), 0..256), json_body in any_json(), event in "(pull_request|push|check_run|ping|[a-z_]{0,12})") {
        let _ = webhook_data(&body);
        let _ = parse_github_delivery(&event, &body);
        let text = json_body.to_string();
        let _ = webhook_data(text.as_bytes());
        let _ = parse_github_delivery(&event, text.as_bytes());
    }

    #[test]
    fn pr_references_never_panic(
        input in "(https?://(github\\.com|GitHub\\.COM|x)/)?[^\\s]{0,12}(/[^\\s]{0,10})?(/pull/|#)?[0-9]{0,25}[/?#]?.{0,8}",
        free in ".{0,80}",
    ) {
        if let Some(pr) = PrRef::parse(&input) {
            prop_assert!(pr.number > 0 || input.contains("/pull/"));
            let _ = pr.url();
        }
        let _ = find_pr_url(&free);
        let _ = find_pr_url(&input);
        let _ = ci_wait_timeout_minutes(&free, std::slice::from_ref(&input));
    }

    #[test]
    fn github_paths_never_panic_and_never_escape(owner in ".{0,12}", repo in ".{0,12}", branch in ".{0,24}") {
        if let Ok(p) = kandev_core::github_path::repo(&owner, &repo) {
            prop_assert!(!p.contains('?') && !p.contains('#') && p.matches('/').count() == 3);
        }
        if let Ok(r) = kandev_core::github_path::git_ref(&branch) {
            prop_assert!(!r.contains('?') && !r.contains('#'));
            prop_assert!(r.split('/').all(|seg| seg != ".." && seg != "." && !seg.is_empty()));
        }
    }
}
