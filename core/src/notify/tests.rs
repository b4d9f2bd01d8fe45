use super::*;

fn subject() -> Subject {
    Subject {
        workspace_id: "ws".into(),
        task_id: "t1".into(),
        task_title: "Ship <it> & more".into(),
        detail: "https://github.com/acme/api/pull/7".into(),
        data: json!({"number": 7}),
    }
}

#[test]
fn merge_requests_and_the_mergers_verdicts_raise_notifications() {
    let person = Actor::User {
        id: "u".into(),
        username: "ada".into(),
    };
    assert_eq!(for_task_event(EVENT_MERGE_REQUESTED, &person), Some(MERGE_TRIGGERED));
    assert_eq!(for_task_event(EVENT_COMPLETED, &Actor::Merger), Some(MERGED));
    assert_eq!(for_task_event(EVENT_BLOCKED, &Actor::Merger), Some(MERGE_BLOCKED));
    // A person blocking or completing a task is no merge verdict.
    assert_eq!(for_task_event(EVENT_BLOCKED, &person), None);
    assert_eq!(for_task_event(EVENT_COMPLETED, &person), None);
    assert_eq!(for_task_event("status_changed", &Actor::Merger), None);
}

#[test]
fn targets_get_what_they_subscribed_to_and_every_test() {
    let subscribed = vec![MERGED.to_string()];
    assert!(wants(&subscribed, MERGED));
    assert!(!wants(&subscribed, MERGE_BLOCKED));
    assert!(wants(&[], TEST));
}

#[test]
fn targets_need_an_http_url_and_known_events() {
    let ev = vec![MERGED.to_string()];
    assert!(validate_target("https://hooks.example.com/x", &ev, Some("s")).is_ok());
    assert!(validate_target("http://127.0.0.1:9000/hook", &ev, None).is_ok());
    for bad in [
        "",
        "ftp://x/y",
        "https://",
        "https:///x",
        "hooks.example.com",
        "https://a b/c",
        "https://:80/x",
    ] {
        assert!(validate_target(bad, &ev, None).is_err(), "{bad}");
    }
    assert!(
        validate_target("https://x/y", &[], None)
            .unwrap_err()
            .contains("at least one")
    );
    assert!(
        validate_target("https://x/y", &["pushed".into()], None)
            .unwrap_err()
            .contains("\"pushed\"")
    );
    assert!(validate_target("https://x/y", &ev, Some(&"k".repeat(257))).is_err());
    assert!(validate_target(&format!("https://x/{}", "a".repeat(2048)), &ev, None).is_err());
}

#[test]
fn the_webhook_body_names_the_event_delivery_task_and_detail() {
    let at = DateTime::parse_from_rfc3339("2026-03-08T12:00:00Z").unwrap().to_utc();
    assert_eq!(
        webhook_body(MERGED, "d1", &subject(), at),
        json!({
            "event": "merged", "delivery_id": "d1", "occurred_at": "2026-03-08T12:00:00.000Z",
            "workspace_id": "ws", "task": {"id": "t1", "title": "Ship <it> & more"},
            "detail": "https://github.com/acme/api/pull/7", "data": {"number": 7},
        })
    );
}

#[test]
fn the_slack_body_has_text_and_blocks_with_markup_escaped() {
    let body = slack_body(MERGE_BLOCKED, &subject());
    assert_eq!(
        body["text"],
        "Merge blocked for “Ship <it> & more” — https://github.com/acme/api/pull/7"
    );
    assert_eq!(
        body["blocks"][0]["text"]["text"],
        "Merge blocked for “Ship &lt;it&gt; &amp; more” — https://github.com/acme/api/pull/7"
    );
    assert_eq!(body["blocks"][1]["elements"][0]["text"], "Kandev · merge_blocked");
    let bare = Subject {
        detail: String::new(),
        ..subject()
    };
    assert_eq!(headline(TEST, &bare), "Kandev test notification");
}

#[test]
fn deliveries_back_off_then_give_up_after_six_attempts() {
    let now = DateTime::parse_from_rfc3339("2026-03-08T12:00:00Z").unwrap().to_utc();
    let waits: Vec<i64> = (1..MAX_ATTEMPTS)
        .map(|a| (retry_at(a, now).unwrap() - now).num_seconds())
        .collect();
    assert_eq!(waits, [10, 30, 120, 600, 1800]);
    assert_eq!(retry_at(MAX_ATTEMPTS, now), None);
    assert_eq!(retry_at(0, now).map(|t| (t - now).num_seconds()), Some(10));
    assert!(delivered(204) && !delivered(302) && !delivered(500));
}

#[test]
fn the_detail_is_the_reason_summary_error_or_pr_url() {
    assert_eq!(
        detail(&json!({"reason": "CI failing: build", "pr_url": "u"})),
        "CI failing: build"
    );
    assert_eq!(detail(&json!({"summary": "Merged PR #7"})), "Merged PR #7");
    assert_eq!(
        detail(&json!({"reason": "", "pr_url": "https://x/pull/1"})),
        "https://x/pull/1"
    );
    assert_eq!(detail(&json!({"reason": 5})), "");
}

#[test]
fn a_run_that_failed_before_its_task_names_no_task_and_headlines_its_automation() {
    let s = Subject {
        workspace_id: "w1".into(),
        task_id: String::new(),
        task_title: "Archive merged PRs".into(),
        detail: "no repository".into(),
        data: json!({"automation_id": "a1"}),
    };
    let at = chrono::DateTime::parse_from_rfc3339("2026-12-02T10:00:00Z")
        .expect("time")
        .with_timezone(&chrono::Utc);
    let body = webhook_body(RUN_FAILED, "d1", &s, at);
    assert_eq!(body["task"], Value::Null);
    assert_eq!(body["data"]["automation_id"], "a1");
    assert_eq!(
        headline(RUN_FAILED, &s),
        "Automation run failed: “Archive merged PRs” — no repository"
    );
}
