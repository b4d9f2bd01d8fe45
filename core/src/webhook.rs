//! Inbound webhooks: the generic automation webhook's trigger data, and GitHub
//! deliveries decoded into the engine's events. Signatures are checked by the
//! server before any of this runs.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::events::{CheckRunCompleted, PushReceived};
use crate::read_lag::PrSeen;

/// Largest accepted webhook body: 1 MiB. Larger bodies are refused, never cut.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Trigger data for the generic webhook: the body when it is a JSON object,
/// otherwise `{"body": "<raw text>"}`.
pub fn webhook_data(body: &[u8]) -> Value {
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({"body": String::from_utf8_lossy(body)}),
    }
}

/// Longest delivery id a sender may name.
pub const MAX_DELIVERY_ID: usize = 255;

/// Said (400) of a delivery id Kandev cannot keep as given.
pub const BAD_DELIVERY_ID: &str =
    "the delivery id (Idempotency-Key or X-GitHub-Delivery) must be 1 to 255 visible ASCII characters";

/// The dedup key of an inbound webhook request: a sender that names its
/// delivery (`Idempotency-Key`, else GitHub's `X-GitHub-Delivery`, which a
/// redelivery repeats) fires at most one run per id, however often it sends
/// it; one that names none fires on every request (`""`). The name is the
/// sender's word, not a secret: it keeps honest retries apart, not replays.
pub fn delivery_key(idempotency_key: Option<&[u8]>, github_delivery: Option<&[u8]>) -> Result<String, &'static str> {
    let Some(id) = idempotency_key.or(github_delivery) else {
        return Ok(String::new());
    };
    let visible = |b: &u8| b.is_ascii_graphic();
    if id.is_empty() || id.len() > MAX_DELIVERY_ID || !id.iter().all(visible) {
        return Err(BAD_DELIVERY_ID);
    }
    Ok(format!("delivery:{}", String::from_utf8_lossy(id)))
}

/// What a GitHub delivery means to Kandev.
#[derive(Debug, Clone, PartialEq)]
pub enum GithubDelivery {
    /// A pull request changed: sync the linked rows now.
    PullRequest {
        owner: String,
        repo: String,
        number: i64,
        action: String,
        /// What the payload said of the PR, to tell a read that lags it.
        seen: PrSeen,
    },
    /// `workspace_ids` is left empty for the server to fill in.
    Push(PushReceived),
    CheckRun(CheckRunCompleted),
    /// A repository was renamed or transferred: what names it (registered
    /// repositories, trigger filters) follows it, and the links under its
    /// old name are read again (GitHub redirects the old name), which moves them.
    RepositoryMoved {
        old_owner: String,
        old_repo: String,
        new_owner: String,
        new_repo: String,
    },
    Ignored(String),
}

#[derive(Deserialize, Default)]
struct Owner {
    #[serde(default)]
    login: String,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize, Default)]
struct Repository {
    #[serde(default)]
    name: String,
    #[serde(default)]
    owner: Owner,
}

#[derive(Deserialize)]
struct PullRequestEvent {
    #[serde(default)]
    action: String,
    pull_request: PullRef,
    repository: Repository,
}

#[derive(Deserialize)]
struct PullRef {
    number: i64,
    #[serde(default)]
    merged: Option<bool>,
    #[serde(default)]
    updated_at: Option<String>,
}

#[derive(Deserialize)]
struct RepositoryEvent {
    #[serde(default)]
    action: String,
    #[serde(default)]
    changes: Value,
    repository: Repository,
}

#[derive(Deserialize)]
struct PushEvent {
    #[serde(rename = "ref")]
    git_ref: String,
    #[serde(default)]
    after: String,
    #[serde(default)]
    deleted: bool,
    repository: Repository,
    #[serde(default)]
    pusher: Option<Owner>,
    #[serde(default)]
    sender: Option<Owner>,
    #[serde(default)]
    head_commit: Option<HeadCommit>,
}

#[derive(Deserialize)]
struct HeadCommit {
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct CheckRunEvent {
    #[serde(default)]
    action: String,
    check_run: CheckRun,
    repository: Repository,
}

#[derive(Deserialize)]
struct CheckRun {
    id: i64,
    #[serde(default)]
    name: String,
    #[serde(default)]
    conclusion: Option<String>,
    #[serde(default)]
    html_url: String,
    #[serde(default)]
    head_sha: String,
    #[serde(default)]
    check_suite: Option<CheckSuite>,
}

#[derive(Deserialize)]
struct CheckSuite {
    #[serde(default)]
    head_branch: Option<String>,
    #[serde(default)]
    head_sha: String,
}

const PR_ACTIONS: [&str; 6] = [
    "closed",
    "edited",
    "synchronize",
    "reopened",
    "opened",
    "ready_for_review",
];
const ZERO_SHA: &str = "0000000000000000000000000000000000000000";

/// Decodes a GitHub delivery by its `X-GitHub-Event` name, as GitHub documents
/// the payloads. Unknown events and actions are ignored with a reason.
pub fn parse_github_delivery(event: &str, body: &[u8]) -> Result<GithubDelivery, String> {
    let bad = |e: serde_json::Error| format!("malformed {event} payload: {e}");
    match event {
        "pull_request" | "pull_request_review" => {
            let ev: PullRequestEvent = serde_json::from_slice(body).map_err(bad)?;
            if event == "pull_request" && !PR_ACTIONS.contains(&ev.action.as_str()) {
                return Ok(GithubDelivery::Ignored(format!("pull_request action {}", ev.action)));
            }
            Ok(GithubDelivery::PullRequest {
                owner: ev.repository.owner.login,
                repo: ev.repository.name,
                number: ev.pull_request.number,
                action: ev.action,
                seen: PrSeen::new(
                    ev.pull_request.merged.unwrap_or(false),
                    ev.pull_request.updated_at.as_deref(),
                ),
            })
        }
        "push" => {
            let ev: PushEvent = serde_json::from_slice(body).map_err(bad)?;
            let Some(branch) = ev.git_ref.strip_prefix("refs/heads/") else {
                return Ok(GithubDelivery::Ignored(format!("ref {} is not a branch", ev.git_ref)));
            };
            if ev.deleted || ev.after.is_empty() || ev.after == ZERO_SHA {
                return Ok(GithubDelivery::Ignored("branch deletion".into()));
            }
            let pusher_login = ev
                .sender
                .map(|s| s.login)
                .filter(|l| !l.is_empty())
                .or_else(|| ev.pusher.and_then(|p| p.name))
                .unwrap_or_default();
            Ok(GithubDelivery::Push(PushReceived {
                workspace_ids: vec![],
                owner: ev.repository.owner.login,
                repo: ev.repository.name,
                branch: branch.to_string(),
                sha: ev.after,
                pusher_login,
                message: ev.head_commit.map(|c| c.message).unwrap_or_default(),
            }))
        }
        "check_run" => {
            let ev: CheckRunEvent = serde_json::from_slice(body).map_err(bad)?;
            if ev.action != "completed" {
                return Ok(GithubDelivery::Ignored(format!("check_run action {}", ev.action)));
            }
            let (branch, suite_sha) = ev
                .check_run
                .check_suite
                .map(|s| (s.head_branch.unwrap_or_default(), s.head_sha))
                .unwrap_or_default();
            let sha = if suite_sha.is_empty() {
                ev.check_run.head_sha
            } else {
                suite_sha
            };
            Ok(GithubDelivery::CheckRun(CheckRunCompleted {
                workspace_ids: vec![],
                owner: ev.repository.owner.login,
                repo: ev.repository.name,
                branch,
                sha,
                check_name: ev.check_run.name,
                conclusion: ev.check_run.conclusion.unwrap_or_default(),
                check_run_id: ev.check_run.id,
                html_url: ev.check_run.html_url,
            }))
        }
        "repository" => {
            let ev: RepositoryEvent = serde_json::from_slice(body).map_err(bad)?;
            let text = |path: &str| ev.changes.pointer(path).and_then(Value::as_str).map(str::to_string);
            let (old_owner, old_repo) = match ev.action.as_str() {
                "renamed" => (ev.repository.owner.login.clone(), text("/repository/name/from")),
                "transferred" => (
                    text("/owner/from/organization/login")
                        .or_else(|| text("/owner/from/user/login"))
                        .unwrap_or_default(),
                    Some(ev.repository.name.clone()),
                ),
                other => return Ok(GithubDelivery::Ignored(format!("repository action {other}"))),
            };
            let (new_owner, new_repo) = (ev.repository.owner.login, ev.repository.name);
            if new_owner.is_empty() || new_repo.is_empty() {
                return Err(format!("malformed repository {} payload: no current name", ev.action));
            }
            match old_repo.filter(|r| !r.is_empty() && !old_owner.is_empty()) {
                Some(old_repo) => Ok(GithubDelivery::RepositoryMoved {
                    old_owner,
                    old_repo,
                    new_owner,
                    new_repo,
                }),
                None => Err(format!("malformed repository {} payload: no former name", ev.action)),
            }
        }
        "ping" => Ok(GithubDelivery::Ignored("ping".into())),
        other => Ok(GithubDelivery::Ignored(format!("event {other} is not handled"))),
    }
}

/// The paths a sample payload offers as `{{webhook.…}}` placeholders, two
/// levels deep.
pub fn sample_paths(sample: &Value) -> Vec<String> {
    let mut out = vec![];
    if let Value::Object(top) = sample {
        for (k, v) in top {
            out.push(format!("webhook.{k}"));
            if let Value::Object(inner) = v {
                out.extend(inner.keys().map(|k2| format!("webhook.{k}.{k2}")));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_payload_paths_go_two_levels_deep() {
        let v = json!({"action": "x", "pull_request": {"number": 1, "head": {"ref": "main"}}});
        let paths = sample_paths(&v);
        assert!(paths.contains(&"webhook.action".to_string()));
        assert!(paths.contains(&"webhook.pull_request.number".to_string()));
        assert!(paths.contains(&"webhook.pull_request.head".to_string()));
        assert!(!paths.iter().any(|p| p.ends_with(".ref")));
        assert!(sample_paths(&json!([1])).is_empty());
    }

    #[test]
    fn generic_webhook_data_is_the_object_or_wrapped_text() {
        assert_eq!(webhook_data(br#"{"a":1}"#), json!({"a": 1}));
        assert_eq!(webhook_data(b"[1,2]"), json!({"body": "[1,2]"}));
        assert_eq!(webhook_data(b"hello"), json!({"body": "hello"}));
        assert_eq!(webhook_data(b""), json!({"body": ""}));
    }

    #[test]
    fn push_payload_as_github_sends_it() {
        let body = json!({
            "ref": "refs/heads/main", "before": "a", "after": "b1", "deleted": false,
            "repository": {"name": "api", "full_name": "acme/api", "owner": {"login": "acme", "name": "acme"}},
            "pusher": {"name": "alice", "email": "a@x"}, "sender": {"login": "alice"},
            "head_commit": {"id": "b1", "message": "feat: x"}
        });
        let d = parse_github_delivery("push", body.to_string().as_bytes()).unwrap();
        let GithubDelivery::Push(p) = d else { panic!("{d:?}") };
        assert_eq!(
            (p.owner.as_str(), p.repo.as_str(), p.branch.as_str(), p.sha.as_str()),
            ("acme", "api", "main", "b1")
        );
        assert_eq!(p.message, "feat: x");
        assert_eq!(p.pusher_login, "alice");
    }

    #[test]
    fn push_deletions_tags_and_zero_shas_are_ignored() {
        let mk = |r: &str, after: &str, deleted: bool| {
            json!({"ref": r, "after": after, "deleted": deleted, "repository": {"name": "a", "owner": {"login": "o"}}})
                .to_string()
        };
        for body in [
            mk("refs/tags/v1", "b", false),
            mk("refs/heads/x", ZERO_SHA, false),
            mk("refs/heads/x", "b", true),
        ] {
            assert!(matches!(
                parse_github_delivery("push", body.as_bytes()).unwrap(),
                GithubDelivery::Ignored(_)
            ));
        }
    }

    #[test]
    fn check_run_completed_only() {
        let body = |action: &str| {
            json!({"action": action, "check_run": {"id": 5, "name": "build", "status": "completed", "conclusion": "failure",
                "html_url": "https://github.com/acme/api/runs/5", "head_sha": "s",
                "check_suite": {"head_branch": "feat", "head_sha": "s"}},
                "repository": {"name": "api", "owner": {"login": "acme"}}})
            .to_string()
        };
        let GithubDelivery::CheckRun(c) = parse_github_delivery("check_run", body("completed").as_bytes()).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (c.check_run_id, c.branch.as_str(), c.conclusion.as_str()),
            (5, "feat", "failure")
        );
        assert!(matches!(
            parse_github_delivery("check_run", body("created").as_bytes()).unwrap(),
            GithubDelivery::Ignored(_)
        ));
    }

    fn moved(action: &str, changes: Value) -> Result<GithubDelivery, String> {
        let body = json!({"action": action, "changes": changes,
            "repository": {"name": "gadgets", "owner": {"login": "newco"}}})
        .to_string();
        parse_github_delivery("repository", body.as_bytes())
    }

    fn old(owner: &str, repo: &str) -> GithubDelivery {
        GithubDelivery::RepositoryMoved {
            old_owner: owner.into(),
            old_repo: repo.into(),
            new_owner: "newco".into(),
            new_repo: "gadgets".into(),
        }
    }

    #[test]
    fn a_renamed_repository_delivery_names_the_former_name_under_the_current_owner() {
        let d = moved("renamed", json!({"repository": {"name": {"from": "widgets"}}}));
        assert_eq!(d.unwrap(), old("newco", "widgets"));
    }

    #[test]
    fn a_transferred_repository_delivery_names_the_former_owner_organisation_or_user() {
        let org = moved(
            "transferred",
            json!({"owner": {"from": {"organization": {"login": "acme"}}}}),
        );
        assert_eq!(org.unwrap(), old("acme", "gadgets"));
        let user = moved(
            "transferred",
            json!({"owner": {"from": {"user": {"login": "octocat"}}}}),
        );
        assert_eq!(user.unwrap(), old("octocat", "gadgets"));
    }

    #[test]
    fn other_repository_actions_are_ignored_and_a_move_without_its_former_name_is_refused() {
        assert!(matches!(
            moved("archived", json!({})).unwrap(),
            GithubDelivery::Ignored(_)
        ));
        assert!(moved("renamed", json!({})).is_err());
        assert!(moved("transferred", json!({"owner": {"from": {}}})).is_err());
        assert!(moved("renamed", json!({"repository": {"name": {"from": 7}}})).is_err());
    }

    #[test]
    fn pull_request_and_review_deliveries_name_the_pr() {
        let body = json!({"action": "closed", "number": 7,
            "pull_request": {"number": 7, "merged": true, "updated_at": "2026-12-05T10:00:02Z"},
            "repository": {"name": "api", "owner": {"login": "acme"}}})
        .to_string();
        assert_eq!(
            parse_github_delivery("pull_request", body.as_bytes()).unwrap(),
            GithubDelivery::PullRequest {
                owner: "acme".into(),
                repo: "api".into(),
                number: 7,
                action: "closed".into(),
                seen: PrSeen::new(true, Some("2026-12-05T10:00:02Z")),
            }
        );
        // A review's payload carries no `merged`, and GitHub sends nulls.
        let review = json!({"action": "submitted", "review": {"state": "approved"},
            "pull_request": {"number": 7, "merged": null, "updated_at": null},
            "repository": {"name": "api", "owner": {"login": "acme"}}})
        .to_string();
        assert!(matches!(
            parse_github_delivery("pull_request_review", review.as_bytes()).unwrap(),
            GithubDelivery::PullRequest { .. }
        ));
        assert!(parse_github_delivery("push", b"not json").is_err());
    }

    #[test]
    fn a_named_delivery_is_its_own_dedup_key_and_an_unnamed_one_has_none() {
        assert_eq!(delivery_key(None, None), Ok(String::new()));
        let guid = b"72d3162e-cc78-11e3-81ab-4c9367dc0958";
        assert_eq!(
            delivery_key(None, Some(guid)),
            Ok("delivery:72d3162e-cc78-11e3-81ab-4c9367dc0958".into())
        );
        assert_eq!(
            delivery_key(Some(b"order-7"), Some(guid)),
            Ok("delivery:order-7".into()),
            "Idempotency-Key first"
        );
    }

    #[test]
    fn a_delivery_id_that_cannot_be_kept_as_given_is_refused() {
        let long = vec![b'a'; MAX_DELIVERY_ID + 1];
        for bad in [&b""[..], b"a b", b"tab\t", "é".as_bytes(), &long] {
            assert_eq!(delivery_key(Some(bad), None), Err(BAD_DELIVERY_ID), "{bad:?}");
            assert_eq!(delivery_key(None, Some(bad)), Err(BAD_DELIVERY_ID), "{bad:?}");
        }
        assert!(delivery_key(Some(&vec![b'a'; MAX_DELIVERY_ID]), None).is_ok());
    }
}
