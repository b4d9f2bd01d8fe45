//! What the merger says — progress, what it waits for, why it blocked, how
//! it finished — as a message id with arguments. The API and the logs keep
//! the English (the spec pins some of it); the web renders the id through
//! Fluent (`merger-<id>`), so a German screen reads German.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Said {
    pub id: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, Arg>,
}

/// An argument: text as it came (a check's name, GitHub's own words), or
/// a list of sentences, each said in the reader's language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Arg {
    Text(String),
    List(Vec<Said>),
}

impl Said {
    pub fn new(id: &str) -> Said {
        Said {
            id: id.into(),
            args: BTreeMap::new(),
        }
    }

    pub fn with(mut self, name: &str, value: impl ToString) -> Said {
        self.args.insert(name.into(), Arg::Text(value.to_string()));
        self
    }

    pub fn list(mut self, name: &str, items: Vec<Said>) -> Said {
        self.args.insert(name.into(), Arg::List(items));
        self
    }

    fn text(&self, name: &str) -> String {
        match self.args.get(name) {
            Some(Arg::Text(t)) => t.clone(),
            Some(Arg::List(items)) => {
                let parts: Vec<String> = items.iter().map(Said::english).collect();
                parts.join(joiner(&self.id, name))
            }
            None => String::new(),
        }
    }

    /// The English sentence, exactly as the API and the spec have it.
    pub fn english(&self) -> String {
        let a = |name: &str| self.text(name);
        let plural = |n: &str, one: &str, many: &str| if a(n) == "1" { one.to_string() } else { many.to_string() };
        match self.id.as_str() {
            // How a merge ended.
            "already-merged" => "PR already merged".into(),
            "merged" => format!("Merged PR #{}", a("number")),
            "queue-merged" => format!("Merged PR #{} through the merge queue", a("number")),
            // Why it blocked.
            "closed-unmerged" => "PR closed without merge".into(),
            "draft" => "PR is draft".into(),
            "conflict" => "merge conflict, manual rebase needed".into(),
            "unknown-after-error" => "merge state unknown after a GitHub error; check the PR".into(),
            "fell-behind-again" => format!(
                "the branch fell behind its base again after {} {}; update it and approve again",
                a("count"),
                plural("count", "update", "updates")
            ),
            "fork-locked" => "the branch is behind its base and its fork does not allow edits from maintainers; \
                              update it in the fork and approve again"
                .into(),
            "changed-after-approval" => format!(
                "the PR changed after approval (approved {}, now {}); review it and approve again",
                a("approved"),
                a("head")
            ),
            "changed-too-large" => format!(
                "the PR's head moved after approval (approved {}, now {}) and its diff is too large to compare; \
                 review it and approve again",
                a("approved"),
                a("head")
            ),
            "ci-failing" => format!("CI failing: {}", a("checks")),
            "queue-timeout" => format!(
                "still in the merge queue after {} min (position {})",
                a("minutes"),
                a("position")
            ),
            "dequeued" => format!("removed from the merge queue: {}", a("reason")),
            "dequeued-silently" => "removed from the merge queue: GitHub gave no reason".into(),
            "update-timeout" => format!(
                "GitHub had not updated the branch after {} min; update it and approve again",
                a("minutes")
            ),
            "checks-timeout" => format!("checks still pending after {} min: {}", a("minutes"), a("pending")),
            "reviews-timeout" => format!("reviews still missing after {} min: {}", a("minutes"), a("missing")),
            "blocked-timeout" => format!(
                "GitHub still reports the merge blocked after {} min, by a requirement GitHub does not name (blocked)",
                a("minutes")
            ),
            "requirements-timeout" => format!("still missing after {} min: {}", a("minutes"), a("missing")),
            "kept-failing" => format!(
                "GitHub kept failing for {} min (last: {}); check the PR",
                a("minutes"),
                a("last")
            ),
            "token-refused" => format!("GitHub answered 401 reading {}: the token was refused", a("reading")),
            "forbidden" => format!("GitHub answered 403 reading {}: {}", a("reading"), a("message")),
            "not-found" => format!(
                "GitHub answered 404 reading {}: it does not exist, or the token cannot see it",
                a("reading")
            ),
            "not-configured" => "GitHub is not configured: set GITHUB_TOKEN".into(),
            "unusable" => format!("GitHub's answer reading {} was unusable: {}", a("reading"), a("error")),
            "update-failed" => format!("could not update the branch: {}", a("error")),
            "not-merged" => format!("GitHub did not merge the PR: {}", a("message")),
            "merge-refused" => format!("GitHub refused the merge: {}", a("message")),
            "no-merge-method" => format!(
                "GitHub allows none of the merge methods here (it refused {}): {}",
                a("refused"),
                a("message")
            ),
            "rules-allow-no-method" => "the branch's rulesets together allow no merge method".into(),
            "merge-failed" => format!("merge failed: {}", a("error")),
            "enqueue-refused" => format!("GitHub refused to add the PR to the merge queue: {}", a("message")),
            "enqueue-failed" => format!("could not add the PR to the merge queue: {}", a("error")),
            // What it waits for, and each missing requirement.
            "check" => a("name"),
            "check-link" => format!("{} {}", a("name"), a("url")),
            "check-only-app" => format!("{} (only GitHub App {}'s report counts)", a("name"), a("app")),
            "mergeability" => "mergeability".into(),
            "awaiting-update" => "the branch update".into(),
            "queue-position" => format!("the merge queue (position {})", a("position")),
            "reviews" => format!("reviews: {}", a("missing")),
            "reviews-unnamed" => "reviews: a requirement GitHub does not name (blocked)".into(),
            "changes-requested" => "a reviewer requested changes".into(),
            "code-owner-review" => {
                "an approval from a code owner of the files it changes (the branch's rules require one)".into()
            }
            "code-owner-review-from" => format!(
                "an approval from a code owner of the files it changes, asked of {} (the branch's rules require one)",
                a("owners")
            ),
            "deployment" => format!(
                "a successful deployment to {} (the branch's rules require one of the head)",
                a("environment")
            ),
            "approvals-missing" => format!(
                "{} more {} ({} of {} required)",
                a("count"),
                plural("count", "approving review", "approving reviews"),
                a("approvals"),
                a("required")
            ),
            "review-required" => "an approving review (GitHub reports review required)".into(),
            "last-push-review" => "an approval of the latest push, by someone other than its pusher \
                                   (the branch's rules require one after every push, a branch update included)"
                .into(),
            "unresolved-threads" => format!(
                "{} {}",
                a("count"),
                plural("count", "unresolved review thread", "unresolved review threads")
            ),
            // What was being read when GitHub failed.
            "reading-pr" => format!("the PR {}", a("pr")),
            "reading-protection" => format!("the branch protection of {}", a("pr")),
            "reading-rulesets" => format!("the rulesets of {}", a("pr")),
            "reading-checks" => format!("the checks of {}", a("pr")),
            "reading-queue" => format!("the merge queue of {}", a("pr")),
            "reading-reviews" => format!("the reviews of {}", a("pr")),
            "reading-deployments" => format!("the deployments of {}", a("pr")),
            "reading-diff" => format!("the diff of {}", a("pr")),
            "reading-approved" => format!("the approved commit {} of {}", a("approved"), a("pr")),
            "reading-update" => "an update of the branch".into(),
            // Progress.
            "waiting" => format!("waiting for {} on {}", a("pending"), a("sha")),
            "updating-branch" => format!("bringing {} up to date with {}", a("head"), a("base")),
            "head-moved" => "the head moved; checking again".into(),
            "base-moved" => "the base branch moved during the merge; checking again".into(),
            "method-refused" => format!("{} merges are not allowed here; trying another method", a("method")),
            "merging" => format!("{} merge of {}", a("method"), a("sha")),
            "enqueuing" => format!("adding {} to the merge queue", a("sha")),
            "queued" => format!("in the merge queue at position {}", a("position")),
            other => other.to_string(),
        }
    }
}

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.english())
    }
}

/// How a list argument's items are joined, in every language.
pub fn joiner(id: &str, arg: &str) -> &'static str {
    match (id, arg) {
        ("waiting" | "checks-timeout", "pending") => ", ",
        _ => "; ",
    }
}

/// One example of every sentence, for checking that each language has it
/// and that English reads the same through Fluent as here.
pub fn examples() -> Vec<Said> {
    let reading = |id: &str| Said::new(id).with("pr", "acme/api#7");
    let check = Said::new("check").with("name", "build");
    let threads = Said::new("unresolved-threads").with("count", 2);
    let approvals = Said::new("approvals-missing")
        .with("count", 1)
        .with("approvals", 0)
        .with("required", 1);
    let plain = [
        "already-merged",
        "closed-unmerged",
        "draft",
        "conflict",
        "unknown-after-error",
        "dequeued-silently",
        "not-configured",
        "mergeability",
        "awaiting-update",
        "reviews-unnamed",
        "changes-requested",
        "review-required",
        "last-push-review",
        "code-owner-review",
        "head-moved",
        "base-moved",
        "rules-allow-no-method",
    ];
    let mut all: Vec<Said> = plain.iter().map(|id| Said::new(id)).collect();
    all.extend([
        Said::new("merged").with("number", 7),
        Said::new("queue-merged").with("number", 7),
        Said::new("ci-failing").list(
            "checks",
            vec![
                Said::new("check-link")
                    .with("name", "build")
                    .with("url", "https://ci/1"),
                check.clone(),
            ],
        ),
        Said::new("queue-timeout").with("minutes", 10).with("position", 2),
        Said::new("dequeued").with("reason", "checks failed"),
        Said::new("update-timeout").with("minutes", 10),
        Said::new("fell-behind-again").with("count", 5),
        Said::new("fell-behind-again").with("count", 1),
        Said::new("fork-locked"),
        Said::new("code-owner-review-from").with("owners", "@lead, @acme/core"),
        Said::new("checks-timeout")
            .with("minutes", 10)
            .list("pending", vec![check.clone(), Said::new("mergeability")]),
        Said::new("reviews-timeout")
            .with("minutes", 10)
            .list("missing", vec![approvals.clone(), threads.clone()]),
        Said::new("blocked-timeout").with("minutes", 10),
        Said::new("requirements-timeout").with("minutes", 10).list(
            "missing",
            vec![threads.clone(), Said::new("deployment").with("environment", "staging")],
        ),
        Said::new("kept-failing").with("minutes", 10).with("last", "502"),
        Said::new("token-refused").list("reading", vec![reading("reading-pr")]),
        Said::new("forbidden")
            .list("reading", vec![reading("reading-protection")])
            .with("message", "no"),
        Said::new("not-found").list("reading", vec![reading("reading-rulesets")]),
        Said::new("unusable")
            .list("reading", vec![reading("reading-checks")])
            .with("error", "bad json"),
        reading("reading-queue"),
        reading("reading-reviews"),
        reading("reading-deployments"),
        reading("reading-diff"),
        reading("reading-approved").with("approved", "abc1234"),
        Said::new("changed-after-approval")
            .with("approved", "abc1234")
            .with("head", "def5678"),
        Said::new("changed-too-large")
            .with("approved", "abc1234")
            .with("head", "def5678"),
        Said::new("reading-update"),
        Said::new("update-failed").with("error", "boom"),
        Said::new("not-merged").with("message", "no"),
        Said::new("merge-refused").with("message", "no"),
        Said::new("no-merge-method")
            .with("refused", "squash, merge")
            .with("message", "no"),
        Said::new("method-refused").with("method", "squash"),
        Said::new("merge-failed").with("error", "boom"),
        Said::new("enqueue-refused").with("message", "no"),
        Said::new("enqueue-failed").with("error", "boom"),
        check.clone(),
        Said::new("check-link")
            .with("name", "build")
            .with("url", "https://ci/1"),
        Said::new("check-only-app").with("name", "build").with("app", 15368),
        Said::new("queue-position").with("position", 2),
        Said::new("reviews").list("missing", vec![Said::new("changes-requested")]),
        approvals,
        Said::new("approvals-missing")
            .with("count", 2)
            .with("approvals", 0)
            .with("required", 2),
        threads,
        Said::new("unresolved-threads").with("count", 1),
        Said::new("waiting")
            .list("pending", vec![check, Said::new("awaiting-update")])
            .with("sha", "abc1234"),
        Said::new("updating-branch").with("head", "feat").with("base", "main"),
        Said::new("merging").with("method", "squash").with("sha", "abc1234"),
        Said::new("enqueuing").with("sha", "abc1234"),
        Said::new("queued").with("position", 2),
    ]);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_has_its_own_english() {
        // An unknown id reads as itself; only "mergeability" may too.
        for s in examples().into_iter().filter(|s| s.id != "mergeability") {
            assert_ne!(s.english(), s.id, "{} has no English", s.id);
        }
    }

    #[test]
    fn lists_join_per_sentence_and_round_trip_as_json() {
        let s = Said::new("checks-timeout").with("minutes", 10).list(
            "pending",
            vec![Said::new("check").with("name", "a, b"), Said::new("mergeability")],
        );
        assert_eq!(s.english(), "checks still pending after 10 min: a, b, mergeability");
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["args"]["minutes"], "10");
        assert_eq!(json["args"]["pending"][1]["id"], "mergeability");
        assert_eq!(serde_json::from_value::<Said>(json).unwrap(), s);
    }

    #[test]
    fn plurals_follow_the_count() {
        assert_eq!(
            Said::new("unresolved-threads").with("count", 1).english(),
            "1 unresolved review thread"
        );
        assert_eq!(
            Said::new("approvals-missing")
                .with("count", 2)
                .with("approvals", 0)
                .with("required", 2)
                .english(),
            "2 more approving reviews (0 of 2 required)"
        );
    }
}
