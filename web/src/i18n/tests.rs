//! Fails when a message used in code is missing from a locale, when a Fluent
//! file does not parse, or when a spec-pinned English string changes.

use std::collections::BTreeSet;
use std::path::Path;

use kandev_core::TriggerType;
use kandev_core::board::TaskStatus;
use kandev_core::editor::{style, summary};
use kandev_core::gate::Gate;
use kandev_core::run_status::RunStatus;

use super::{LOCALES, format, said_in};

fn ids(source: &str) -> BTreeSet<String> {
    let resource = match fluent_syntax::parser::parse(source) {
        Ok(r) => r,
        Err((_, errors)) => panic!("a Fluent file does not parse: {errors:?}"),
    };
    resource
        .body
        .iter()
        .filter_map(|e| match e {
            fluent_syntax::ast::Entry::Message(m) => Some(m.id.name.to_string()),
            _ => None,
        })
        .collect()
}

fn locale_ids(locale: &str) -> BTreeSet<String> {
    LOCALES
        .iter()
        .find(|(l, _)| *l == locale)
        .expect("locale")
        .1
        .iter()
        .flat_map(|s| ids(s))
        .collect()
}

/// Message ids written literally in the web sources: `t("…")` and `ta("…", …)`.
fn ids_in_code() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).expect("src").flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") && !p.ends_with("tests.rs") {
                let text = std::fs::read_to_string(&p).expect("read");
                for marker in ["t(\"", "ta(\"", "tk(\""] {
                    let mut rest = text.as_str();
                    while let Some(at) = rest.find(marker) {
                        let before = rest[..at].chars().last();
                        rest = &rest[at + marker.len()..];
                        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                            continue;
                        }
                        if let Some(end) = rest.find('"') {
                            out.insert(rest[..end].to_string());
                        }
                    }
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out
}

/// Ids the app builds from core values.
/// A server text, the message id `explain` makes of it, and its arguments.
type Explained = (String, &'static str, Vec<(&'static str, String)>);

/// The server's own run texts, each with the message `explain` makes of it.
fn server_run_texts() -> Vec<Explained> {
    use kandev_core::editor::runs::{OutcomeText, explain};
    use kandev_core::firing::*;
    [
        FAIL_NO_REPOSITORY.to_string(),
        FAIL_AUTOMATION_NOT_FOUND.into(),
        FAIL_TASK_NOT_CREATED.into(),
        FAIL_NO_RUNTIME.into(),
        SKIP_AUTOMATION_MISSING.into(),
        SKIP_AUTOMATION_DISABLED.into(),
        SKIP_ALREADY_FIRED.into(),
        cap_reason(3),
    ]
    .into_iter()
    .map(|text| match explain(&text) {
        OutcomeText::Message(id, args) => (text, id, args),
        OutcomeText::Verbatim(_) => panic!("{text} is not explained"),
    })
    .collect()
}

#[test]
fn the_servers_run_texts_read_in_english_as_the_server_writes_them() {
    for (text, id, args) in server_run_texts() {
        assert_eq!(format("en-US", id, &args), text);
        assert_ne!(format("de", id, &args), text, "{id} is not translated");
    }
}

fn ids_from_core() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, id, _) in server_run_texts() {
        out.insert(id.to_string());
    }
    for t in TriggerType::ALL {
        out.insert(style(t).badge.to_string());
        out.insert(style(t).info.to_string());
        out.insert(summary(t, &serde_json::json!({})).id.to_string());
    }
    for cron in ["@hourly", "@daily", "@weekly", "", "5 4 * * *"] {
        out.insert(
            summary(TriggerType::Scheduled, &serde_json::json!({"cron_expression": cron}))
                .id
                .to_string(),
        );
    }
    out.insert(
        summary(TriggerType::GithubPr, &serde_json::json!({"events": ["opened"]}))
            .id
            .to_string(),
    );
    for g in [
        Gate::Payload,
        Gate::TaskId,
        Gate::MergedState,
        Gate::RepoIdentity,
        Gate::PrNumber,
        Gate::LookupWired,
        Gate::TaskResolvable,
        Gate::NotAutomationRun,
        Gate::Workspace,
        Gate::Repository,
        Gate::BaseBranch,
        Gate::FiredSet,
        Gate::Config,
        Gate::WorkspaceMembership,
        Gate::Branch,
        Gate::Conclusion,
        Gate::CheckName,
        Gate::Draft,
        Gate::Author,
        Gate::Label,
        Gate::AutomationExists,
        Gate::AutomationEnabled,
        Gate::Dedup,
        Gate::ConcurrencyCap,
    ] {
        out.insert(g.message_id());
    }
    for s in RunStatus::ALL {
        out.insert(format!("automations-run-status-{}", s.as_str()));
    }
    for s in TaskStatus::ALL {
        out.insert(format!("status-{}", s.as_str()));
    }
    for e in kandev_core::notify::EVENTS
        .into_iter()
        .chain([kandev_core::notify::TEST])
    {
        out.insert(format!("notify-event-{}", e.replace('.', "-")));
    }
    for k in ["webhook", "slack"] {
        out.insert(format!("notify-kind-{k}"));
    }
    for s in ["pending", "delivered", "failed"] {
        out.insert(format!("notify-status-{s}"));
    }
    for kind in [
        "created",
        "status_changed",
        "review_requested",
        "approved",
        "rejected",
        "merge_requested",
        "merge_cancelled",
        "merge_progress",
        "merged",
        "completed",
        "blocked",
        "archived",
        "unarchived",
    ] {
        out.insert(format!("event-{kind}"));
    }
    for (l, _) in LOCALES {
        out.insert(format!("lang-{l}"));
    }
    for s in kandev_core::merger::said_examples() {
        out.insert(format!("merger-{}", s.id));
    }
    for e in kandev_core::executors::known() {
        out.insert(format!("executor-kind-{}", e.kind));
    }
    for (_, id) in kandev_core::cron::PRESETS {
        out.insert(id.to_string());
    }
    for o in ["fired", "deduplicated", "capped", "stopped"] {
        out.insert(format!("automations-outcome-{o}"));
    }
    // Values the server sends, shown through Fluent, never raw.
    for code in kandev_core::api::ERROR_CODES {
        out.insert(format!("error-{code}"));
    }
    for s in ["open", "closed", "merged"] {
        out.insert(format!("pr-state-{s}"));
    }
    for s in ["success", "failure", "pending"] {
        out.insert(format!("checks-state-{s}"));
    }
    for s in [
        "STARTING",
        "RUNNING",
        "WAITING_FOR_INPUT",
        "COMPLETED",
        "FAILED",
        "CANCELLED",
    ] {
        out.insert(format!("session-state-{}", s.to_lowercase()));
    }
    out
}

#[test]
fn every_locale_parses_and_holds_the_same_messages() {
    let english = locale_ids("en-US");
    for (locale, _) in LOCALES {
        assert_eq!(locale_ids(locale), english, "{locale} is not complete");
    }
}

#[test]
fn every_message_used_in_code_exists_in_every_locale() {
    let used: BTreeSet<String> = ids_in_code().into_iter().chain(ids_from_core()).collect();
    assert!(used.len() > 100, "the scan found too few ids: {}", used.len());
    for (locale, _) in LOCALES {
        let have = locale_ids(locale);
        let missing: Vec<&String> = used.iter().filter(|id| !have.contains(*id)).collect();
        assert!(missing.is_empty(), "{locale} lacks {missing:?}");
    }
}

#[test]
fn spec_pinned_english_strings_are_exact() {
    let en = |id: &str| format("en-US", id, &[]);
    assert_eq!(en("automations-badge-github-pr-merged"), "GitHub PR Merged");
    assert_eq!(en("automations-badge-github-pr"), "GitHub PR");
    assert_eq!(en("automations-badge-github-push"), "GitHub Push");
    assert_eq!(en("automations-badge-github-ci"), "GitHub CI");
    assert_eq!(en("automations-summary-pr-merged"), "Pull request merged");
    assert_eq!(en("automations-base-branches-label"), "Base branches (comma-separated)");
    assert!(en("github-all-repositories").starts_with("All repositories"));
    let info = en("automations-info-github-pr-merged");
    assert!(
        info.contains("linked to a task in this workspace") && info.contains("minute"),
        "{info}"
    );
    assert!(!info.to_lowercase().contains("not implemented"));
    assert!(en("automations-pr-merged-never-fires").contains("never fire"));
    assert_eq!(
        format("en-US", "automations-recent-runs", &[("count", "1".into())]),
        "Recent run (1)"
    );
    assert_eq!(
        format("en-US", "automations-recent-runs", &[("count", "3".into())]),
        "Recent runs (3)"
    );
    assert_eq!(
        format("de", "automations-badge-github-pr-merged", &[]),
        "GitHub PR gemergt"
    );
}

#[test]
fn no_isolation_marks_in_formatted_text() {
    let s = format("en-US", "automations-toast-skipped", &[("reason", "capped".into())]);
    assert_eq!(s, "Skipped \u{2014} capped");
}

#[test]
fn the_mergers_sentences_read_as_the_server_writes_them_and_in_german() {
    for s in kandev_core::merger::said_examples() {
        assert_eq!(said_in("en-US", &s), s.english(), "{}", s.id);
    }
    let reviews = kandev_core::merger::Said::new("reviews-timeout")
        .with("minutes", 10)
        .list(
            "missing",
            vec![
                kandev_core::merger::Said::new("approvals-missing")
                    .with("count", 1)
                    .with("approvals", 0)
                    .with("required", 1),
                kandev_core::merger::Said::new("unresolved-threads").with("count", 2),
            ],
        );
    assert_eq!(
        said_in("de", &reviews),
        "Reviews fehlen nach 10 Min. noch: 1 weiteres zustimmendes Review (0 von 1 erforderlich); 2 offene Review-Diskussionen"
    );
    let unknown = kandev_core::merger::Said::new("from-a-newer-server");
    assert_eq!(
        said_in("de", &unknown),
        "from-a-newer-server",
        "unknown ids read as their English"
    );
}
