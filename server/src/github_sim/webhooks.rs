//! Signed deliveries in GitHub's documented payload shapes.

use serde_json::{Value, json};

use super::Simulator;
use super::state::SimState;
use crate::signature::sign;

fn repository(s: &SimState, owner: &str, name: &str) -> Value {
    match s.repo(owner, name) {
        Some(r) => r.json(),
        None => super::shapes::repository(owner, name, 0, false, "main", false),
    }
}

pub fn pull_request(s: &SimState, owner: &str, name: &str, number: i64, action: &str) -> Option<Value> {
    let repo = s.repo(owner, name)?;
    let pr = repo.prs.get(&number)?;
    Some(
        json!({"action": action, "number": number, "pull_request": repo.pull_json(pr), "repository": repository(s, owner, name),
                "sender": super::shapes::user(&pr.author)}),
    )
}

pub fn review(s: &SimState, owner: &str, name: &str, number: i64, user: &str, state: &str) -> Option<Value> {
    let repo = s.repo(owner, name)?;
    let pr = repo.prs.get(&number)?;
    Some(
        json!({"action": "submitted", "review": {"user": super::shapes::user(user), "state": state.to_lowercase()},
                "pull_request": repo.pull_json(pr), "repository": repository(s, owner, name),
                "sender": super::shapes::user(user)}),
    )
}

pub fn push(s: &SimState, owner: &str, name: &str, branch: &str, before: &str, after: &str) -> Option<Value> {
    Some(
        json!({"ref": format!("refs/heads/{branch}"), "before": before, "after": after, "deleted": false, "created": false,
                "repository": repository(s, owner, name), "pusher": {"name": "octocat", "email": "octocat@example.com"},
                "sender": {"login": "octocat"}, "head_commit": {"id": after, "message": format!("Update {branch}")}}),
    )
}

pub fn check_run(s: &SimState, owner: &str, name: &str, sha: &str, branch: &str, id: i64) -> Option<Value> {
    let run = s
        .repo(owner, name)?
        .check_runs
        .get(sha)?
        .iter()
        .find(|r| r.id == id)?
        .clone();
    let repo = s.repo(owner, name)?;
    let mut check_run = repo.check_run_json(sha, &run);
    check_run["check_suite"] = json!({"id": run.id / 2 + 1, "head_branch": branch, "head_sha": sha});
    Some(json!({"action": "completed", "check_run": check_run,
                "repository": repository(s, owner, name), "sender": super::shapes::user("github-actions[bot]")}))
}

impl Simulator {
    /// Posts a signed delivery to the configured URL, if any, off the caller's path.
    pub(super) fn deliver(&self, event: &str, payload: Option<Value>) {
        let (Some(payload), Some((url, secret))) = (payload, self.lock().webhook.clone()) else {
            return;
        };
        let body = payload.to_string().into_bytes();
        let signature = sign(&secret, &body);
        let http = self.http.clone();
        let event = event.to_string();
        tokio::spawn(async move {
            let sent = http
                .post(&url)
                .header("content-type", "application/json")
                .header("x-github-event", &event)
                .header("x-github-delivery", uuid::Uuid::new_v4().to_string())
                .header("x-hub-signature-256", signature)
                .body(body)
                .send()
                .await;
            if let Err(e) = sent {
                tracing::warn!(error = %e, event, "simulator could not deliver a webhook");
            }
        });
    }
}
