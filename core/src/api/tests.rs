use super::*;
use serde_json::json;

#[test]
fn error_body_shape() {
    let e = ApiError::new("not_found", "task not found");
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"error": {"code": "not_found", "message": "task not found"}})
    );
}

#[test]
fn archive_result_omits_false_already_archived() {
    let fresh = ArchiveResult {
        success: true,
        already_archived: false,
    };
    assert_eq!(serde_json::to_value(&fresh).unwrap(), json!({"success": true}));
    let again = ArchiveResult {
        success: true,
        already_archived: true,
    };
    assert_eq!(
        serde_json::to_value(&again).unwrap(),
        json!({"success": true, "already_archived": true})
    );
}

#[test]
fn new_trigger_uses_type_key_and_defaults_config() {
    let t: NewTrigger = serde_json::from_value(json!({"type": "github_pr_merged"})).unwrap();
    assert_eq!(t.trigger_type, crate::TriggerType::GithubPrMerged);
    assert_eq!(t.config, json!({}));
    assert!(serde_json::from_value::<NewTrigger>(json!({"type": "nope"})).is_err());
}

#[test]
fn created_automation_flattens_the_secret() {
    let now = chrono::DateTime::parse_from_rfc3339("2026-03-08T12:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let a = Automation {
        id: "a".into(),
        workspace_id: "w".into(),
        name: "n".into(),
        description: String::new(),
        prompt: String::new(),
        task_title_template: String::new(),
        agent_profile_id: String::new(),
        executor_profile_id: String::new(),
        repository_ids: vec![],
        no_repository: false,
        enabled: true,
        max_concurrent_runs: 1,
        last_triggered_at: None,
        created_at: now,
        updated_at: now,
        triggers: vec![],
    };
    let v = serde_json::to_value(CreatedAutomation {
        automation: a,
        webhook_secret: "s".into(),
    })
    .unwrap();
    assert_eq!(v["webhook_secret"], "s");
    assert_eq!(v["name"], "n");
}

#[test]
fn scope_rules_for_selectors() {
    let mut s = GithubWorkspaceSettings::default();
    assert!(s.allows_org("any") && s.shows_org_badges());
    s.repo_scope_mode = RepoScopeMode::Orgs;
    s.repo_scope_orgs = vec!["acme".into()];
    assert!(s.allows_repo("ACME", "x") && !s.allows_repo("other", "x"));
    s.repo_scope_mode = RepoScopeMode::Repos;
    s.repo_scope_repos = vec![crate::trigger::config::RepoFilter::new("acme", "api")];
    assert!(!s.shows_org_badges());
    assert!(s.allows_repo("acme", "api") && !s.allows_repo("acme", "web"));
}

#[test]
fn actors_serialise_with_their_kind() {
    let user = Actor::User {
        id: "u1".into(),
        username: "alice".into(),
    };
    assert_eq!(
        serde_json::to_value(&user).unwrap(),
        json!({"kind": "user", "id": "u1", "username": "alice"})
    );
    assert_eq!(
        serde_json::to_value(Actor::Automation { id: "a1".into() }).unwrap(),
        json!({"kind": "automation", "id": "a1"})
    );
    assert_eq!(serde_json::to_value(Actor::Merger).unwrap(), json!({"kind": "merger"}));
    assert_eq!(serde_json::to_value(Actor::System).unwrap(), json!({"kind": "system"}));
    assert_eq!(user.display_name(), "alice");
    assert_eq!(Actor::admin_token().display_name(), "admin-token");
}

#[test]
fn access_requests_refuse_unknown_fields() {
    assert!(serde_json::from_value::<LoginRequest>(json!({"username": "a", "password": "b", "x": 1})).is_err());
    assert!(serde_json::from_value::<PutMember>(json!({"role": "viewer"})).is_ok());
    assert!(serde_json::from_value::<PutMember>(json!({"role": "admin"})).is_err());
}

#[test]
fn nested_request_structs_must_be_objects() {
    assert!(serde_json::from_value::<GithubWorkspaceSettings>(json!({"repo_scope_repos": [[null, null]]})).is_err());
    assert!(serde_json::from_value::<GithubWorkspaceSettings>(json!({"repo_scope_repos": [{"owner": null}]})).is_ok());
    assert!(
        serde_json::from_value::<CreateAutomation>(json!({"name": "a", "triggers": [["webhook", {}, null]]})).is_err()
    );
    assert!(serde_json::from_value::<CreateAutomation>(json!({"name": "a", "triggers": null})).is_ok());
    assert!(
        serde_json::from_value::<CreateAutomation>(json!({"name": "a", "triggers": [{"type": "webhook"}]})).is_ok()
    );
}

#[test]
fn a_repository_patch_tells_absent_from_null() {
    let absent: UpdateRepository = serde_json::from_str("{}").unwrap();
    assert_eq!(absent.ci_wait_timeout_minutes, None);
    let cleared: UpdateRepository = serde_json::from_str(r#"{"ci_wait_timeout_minutes":null}"#).unwrap();
    assert_eq!(cleared.ci_wait_timeout_minutes, Some(None));
    let set: UpdateRepository = serde_json::from_str(r#"{"ci_wait_timeout_minutes":15}"#).unwrap();
    assert_eq!(set.ci_wait_timeout_minutes, Some(Some(15)));
    assert!(serde_json::from_str::<UpdateRepository>(r#"{"name":"x"}"#).is_err());
    // JSON Schema's integer admits 15.0; a fraction is refused.
    let float: UpdateRepository = serde_json::from_str(r#"{"ci_wait_timeout_minutes":15.0}"#).unwrap();
    assert_eq!(float.ci_wait_timeout_minutes, Some(Some(15)));
    assert!(serde_json::from_str::<UpdateRepository>(r#"{"ci_wait_timeout_minutes":1.5}"#).is_err());
    assert!(serde_json::from_str::<UpdateRepository>(r#"{"ci_wait_timeout_minutes":1e300}"#).is_err());
    let settings: GithubWorkspaceSettings = serde_json::from_str(r#"{"ci_wait_timeout_minutes":229.0}"#).unwrap();
    assert_eq!(settings.ci_wait_timeout_minutes, Some(229));
}
