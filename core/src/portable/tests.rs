use chrono::{DateTime, Utc};
use serde_json::json;

use super::*;
use crate::api::Trigger;

fn at() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn repo(id: &str, owner: &str, name: &str) -> Repository {
    Repository {
        id: id.into(),
        workspace_id: "W".into(),
        provider: "github".into(),
        owner: owner.into(),
        name: name.into(),
        default_branch: "main".into(),
        local_path: String::new(),
        ci_wait_timeout_minutes: None,
    }
}

fn automation(id: &str, name: &str, repos: &[&str], triggers: Vec<(TriggerType, Value)>) -> Automation {
    Automation {
        id: id.into(),
        workspace_id: "W".into(),
        name: name.into(),
        description: String::new(),
        prompt: "Archive {{task_id}}".into(),
        task_title_template: String::new(),
        agent_profile_id: String::new(),
        executor_profile_id: String::new(),
        repository_ids: repos.iter().map(|r| r.to_string()).collect(),
        no_repository: false,
        enabled: true,
        max_concurrent_runs: 1,
        last_triggered_at: None,
        created_at: at(),
        updated_at: at(),
        triggers: triggers
            .into_iter()
            .enumerate()
            .map(|(i, (t, config))| Trigger {
                id: format!("{id}-t{i}"),
                automation_id: id.into(),
                trigger_type: t,
                config,
                enabled: true,
                last_evaluated_at: None,
                created_at: at(),
                updated_at: at(),
            })
            .collect(),
    }
}

fn repos() -> Vec<Repository> {
    vec![repo("r1", "acme", "api"), repo("r2", "acme", "web")]
}

#[test]
fn export_names_repositories_sorts_by_name_and_omits_defaults() {
    let a = automation(
        "a1",
        "Zeta",
        &["r2"],
        vec![(TriggerType::Scheduled, json!({"cron_expression": "@daily"}))],
    );
    let b = automation("a2", "Alpha", &["r1", "gone"], vec![]);
    let doc = export(&[a, b], &repos());
    assert_eq!(doc.version, VERSION);
    assert_eq!(doc.automations[0].name, "Alpha");
    assert_eq!(
        doc.automations[0].repositories,
        vec!["acme/api"],
        "an unknown id is dropped"
    );
    assert_eq!(doc.automations[1].repositories, vec!["acme/web"]);
    let text = serde_json::to_value(&doc.automations[1]).unwrap();
    assert_eq!(
        text,
        json!({"name": "Zeta", "prompt": "Archive {{task_id}}", "repositories": ["acme/web"],
               "triggers": [{"type": "scheduled", "config": {"cron_expression": "@daily"}}]})
    );
}

#[test]
fn an_exported_document_imports_back_as_unchanged() {
    let list = vec![
        automation(
            "a1",
            "Archive merged",
            &["r1"],
            vec![(TriggerType::GithubPrMerged, json!({"all_repos": true}))],
        ),
        automation(
            "a2",
            "Nightly",
            &[],
            vec![(TriggerType::Scheduled, json!({"cron_expression": "@daily"}))],
        ),
    ];
    let doc = export(&list, &repos());
    let steps = plan(&doc, &list, &repos()).unwrap();
    assert!(
        steps
            .iter()
            .all(|(c, s)| c.action == ImportAction::Unchanged && *s == Step::Unchanged)
    );
}

#[test]
fn import_creates_new_names_and_updates_only_what_differs() {
    let current = automation(
        "a1",
        "Archive merged",
        &["r1"],
        vec![(TriggerType::GithubPrMerged, json!({"all_repos": true}))],
    );
    let mut doc = export(std::slice::from_ref(&current), &repos());
    doc.automations[0].prompt = "New prompt".into();
    doc.automations[0].repositories = vec!["ACME/Web".into()];
    doc.automations.push(PortableAutomation {
        name: "Fresh".into(),
        ..doc.automations[0].clone()
    });
    let steps = plan(&doc, &[current], &repos()).unwrap();
    assert_eq!(
        steps[0].0,
        ImportChange {
            name: "Archive merged".into(),
            action: ImportAction::Update,
            fields: vec!["prompt".into(), "repositories".into()],
        }
    );
    match &steps[0].1 {
        Step::Update { id, patch, triggers } => {
            assert_eq!(id, "a1");
            assert_eq!(patch.prompt.as_deref(), Some("New prompt"));
            assert_eq!(patch.repository_ids, Some(vec!["r2".to_string()]));
            assert_eq!(patch.description, None, "unchanged fields are not sent");
            assert_eq!(*triggers, None);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(steps[1].0.action, ImportAction::Create);
    match &steps[1].1 {
        Step::Create(c) => assert_eq!(c.repository_ids, Some(vec!["r2".to_string()])),
        other => panic!("{other:?}"),
    }
}

#[test]
fn changed_triggers_are_replaced_whole() {
    let current = automation(
        "a1",
        "CI",
        &[],
        vec![(TriggerType::GithubCi, json!({"conclusions": ["failure"]}))],
    );
    let mut doc = export(std::slice::from_ref(&current), &repos());
    doc.automations[0].triggers[0].enabled = false;
    let steps = plan(&doc, &[current], &repos()).unwrap();
    assert_eq!(steps[0].0.fields, vec!["triggers"]);
    match &steps[0].1 {
        Step::Update { triggers: Some(t), .. } => assert_eq!(t[0].enabled, Some(false)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_problem_is_reported_and_nothing_is_planned() {
    let twins = [
        automation("a1", "Twin", &[], vec![]),
        automation("a2", "Twin", &[], vec![]),
    ];
    let doc = Document {
        version: VERSION,
        automations: vec![
            PortableAutomation {
                repositories: vec!["acme/nope".into()],
                ..export(&twins[..1], &repos()).automations[0].clone()
            },
            PortableAutomation {
                name: "Dup".into(),
                ..export(&twins[..1], &repos()).automations[0].clone()
            },
            PortableAutomation {
                name: " Dup ".into(),
                ..export(&twins[..1], &repos()).automations[0].clone()
            },
            PortableAutomation {
                name: "  ".into(),
                ..export(&twins[..1], &repos()).automations[0].clone()
            },
        ],
    };
    let problems = plan(&doc, &twins, &repos()).unwrap_err();
    assert_eq!(
        problems,
        vec![
            "\"Twin\": repository acme/nope is not in this workspace (add it first)",
            "several automations in this workspace are named \"Twin\": rename them before importing",
            "\"Dup\" appears twice in the document",
            "an automation has no name",
        ]
    );
}

#[test]
fn another_version_is_refused() {
    let doc = Document {
        version: 2,
        automations: vec![],
    };
    assert_eq!(
        plan(&doc, &[], &repos()).unwrap_err(),
        vec!["unsupported document version 2: this server reads version 1"]
    );
}

#[test]
fn unknown_fields_and_trigger_types_are_refused_by_the_reader() {
    let extra =
        serde_json::from_value::<Document>(json!({"version": 1, "automations": [{"name": "A", "secret": "x"}]}));
    assert!(extra.is_err());
    let bad_type = serde_json::from_value::<Document>(
        json!({"version": 1, "automations": [{"name": "A", "triggers": [{"type": "nope"}]}]}),
    );
    assert!(bad_type.is_err());
    let minimal = serde_json::from_value::<Document>(json!({"version": 1, "automations": [{"name": "A"}]})).unwrap();
    assert!(minimal.automations[0].enabled);
    assert_eq!(minimal.automations[0].max_concurrent_runs, 1);
}

#[test]
fn none_no_repository_round_trips_and_an_older_document_reads_as_auto() {
    let mut current = automation("a1", "Nightly", &[], vec![(TriggerType::Scheduled, json!({}))]);
    current.no_repository = true;
    let doc = export(std::slice::from_ref(&current), &repos());
    let text = serde_json::to_value(&doc).unwrap();
    assert_eq!(text["automations"][0]["no_repository"], true, "{text}");
    let back: Document = serde_json::from_value(text).unwrap();
    assert_eq!(back, doc);
    assert_eq!(
        plan(&back, std::slice::from_ref(&current), &repos()).unwrap()[0].1,
        Step::Unchanged
    );
    // A document written before the field existed means "Auto": the import says it changes.
    let old: Document = serde_json::from_value(json!({
        "version": 1,
        "automations": [{"name": "Nightly", "prompt": current.prompt, "triggers": [{"type": "scheduled"}]}]
    }))
    .unwrap();
    let steps = plan(&old, &[current], &repos()).unwrap();
    assert_eq!(steps[0].0.fields, vec!["no_repository"]);
    match &steps[0].1 {
        Step::Update { patch, .. } => assert_eq!(patch.no_repository, Some(false)),
        other => panic!("{other:?}"),
    }
}
