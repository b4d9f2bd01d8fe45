//! What a base branch requires before a merge — classic protection and
//! rulesets together, as GitHub combines them — and what a PR still lacks.

use axum::http::StatusCode;
use chrono::Utc;

use super::check_apps::SimRequired;
use super::state::{SimPr, SimRepo};

/// A check's verdict as GitHub's rollup sees it, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Success,
    Pending,
    Failure,
}

/// The newest report of one check: a check run (by app and name) or a
/// commit status (by context, with no app).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    pub name: String,
    pub app: Option<i64>,
    pub verdict: Verdict,
}

/// How a requirement stands: the worst report it accepts, or `None` when
/// no source it accepts has reported.
pub fn requirement_verdict(reported: &[Reported], req: &SimRequired) -> Option<Verdict> {
    reported
        .iter()
        .filter(|c| req.accepts(&c.name, c.app))
        .map(|c| c.verdict)
        .max()
}

impl SimRepo {
    /// The checks of a commit, newest report of each.
    pub fn latest_checks(&self, sha: &str) -> Vec<Reported> {
        let mut out: Vec<Reported> = vec![];
        let mut push = |name: &str, app: Option<i64>, verdict: Verdict| match out
            .iter_mut()
            .find(|c| c.name == name && c.app == app)
        {
            Some(e) => e.verdict = verdict,
            None => out.push(Reported {
                name: name.to_string(),
                app,
                verdict,
            }),
        };
        for run in self.check_runs.get(sha).into_iter().flatten() {
            let verdict = if run.status != "completed" {
                Verdict::Pending
            } else {
                match run.conclusion.as_deref() {
                    Some("success" | "neutral" | "skipped") => Verdict::Success,
                    _ => Verdict::Failure,
                }
            };
            push(&run.name, Some(run.app), verdict);
        }
        for s in self.statuses.get(sha).into_iter().flatten() {
            let verdict = match s.state.as_str() {
                "success" => Verdict::Success,
                "pending" => Verdict::Pending,
                _ => Verdict::Failure,
            };
            push(&s.context, None, verdict);
        }
        out
    }

    fn applies(&self, base: &str) -> bool {
        base.eq_ignore_ascii_case(&self.default_branch)
    }

    /// Required checks from rulesets on `base` (protection's are separate:
    /// GitHub answers them from a different endpoint).
    pub fn ruleset_checks(&self, base: &str) -> Vec<SimRequired> {
        if !self.applies(base) {
            return vec![];
        }
        let mut out: Vec<SimRequired> = vec![];
        for req in self.rulesets.iter().flat_map(|r| r.required_checks.iter()) {
            if !out.contains(req) {
                out.push(req.clone());
            }
        }
        out
    }

    /// Every required check on `base`, from protection and rulesets.
    pub fn all_required_checks(&self, base: &str) -> Vec<SimRequired> {
        let mut out = self.required_checks.clone().unwrap_or_default();
        for req in self.ruleset_checks(base) {
            if !out.contains(&req) {
                out.push(req);
            }
        }
        out
    }

    pub fn required_approvals(&self, base: &str) -> u32 {
        let rules = if self.applies(base) {
            self.rulesets.iter().map(|r| r.required_approvals).max().unwrap_or(0)
        } else {
            0
        };
        rules.max(self.required_approvals)
    }

    /// A rule requires approving the newest push, and no approval by
    /// someone other than its pusher came since the head last moved.
    pub fn last_push_unapproved(&self, pr: &SimPr) -> bool {
        ((self.applies(&pr.base_ref) && self.rulesets.iter().any(|r| r.last_push_approval))
            || self.protection_last_push_approval)
            && !pr
                .reviews
                .iter()
                .skip(pr.reviews_at_last_push)
                .any(|r| r.state == "APPROVED" && r.user != pr.last_pusher)
    }

    /// A ruleset on `base` or classic protection requires a code owner's approval.
    fn code_owner_rule(&self, base: &str) -> bool {
        (self.applies(base) && self.rulesets.iter().any(|r| r.code_owner_review)) || self.protection_code_owner_review
    }

    /// A rule requires a code owner's approval, and no code owner's latest
    /// review approves.
    pub fn code_owner_unapproved(&self, pr: &SimPr) -> bool {
        self.code_owner_rule(&pr.base_ref)
            && !latest_reviews(pr)
                .iter()
                .any(|(user, state)| *state == "APPROVED" && self.code_owners.iter().any(|o| o == user))
    }

    /// The reviews asked of someone, and whether CODEOWNERS asked it: those
    /// requested by hand, then, under a code-owner rule, each owner who has
    /// not reviewed yet (GitHub drops a request once it is answered).
    pub fn review_requests(&self, pr: &SimPr) -> Vec<(String, bool)> {
        let owners_rule = self.code_owner_rule(&pr.base_ref);
        let mut out: Vec<(String, bool)> = pr
            .requested_reviewers
            .iter()
            .map(|l| (l.clone(), owners_rule && self.code_owners.contains(l)))
            .collect();
        if owners_rule {
            for owner in &self.code_owners {
                let reviewed = pr.reviews.iter().any(|r| &r.user == owner);
                if !reviewed && owner != &pr.author && !out.iter().any(|(l, _)| l == owner) {
                    out.push((owner.clone(), true));
                }
            }
        }
        out
    }

    pub fn thread_resolution(&self, base: &str) -> bool {
        self.applies(base) && self.rulesets.iter().any(|r| r.thread_resolution)
    }

    pub fn merge_queue(&self, base: &str) -> bool {
        self.applies(base) && self.rulesets.iter().any(|r| r.merge_queue)
    }

    /// The first required check on `sha` that is not green, as GitHub words it.
    pub fn failing_required(&self, base: &str, sha: &str) -> Option<String> {
        let checks = self.latest_checks(sha);
        self.all_required_checks(base)
            .into_iter()
            .find_map(|req| match requirement_verdict(&checks, &req) {
                Some(Verdict::Success) => None,
                Some(_) => Some(format!(
                    "Required status check \"{}\" is failing or pending.",
                    req.context
                )),
                None => Some(format!("Required status check \"{}\" is expected.", req.context)),
            })
    }

    /// What the reviews still lack, as GitHub words it.
    pub fn review_blocker(&self, pr: &SimPr) -> Option<String> {
        if review_decision(pr) == Some("CHANGES_REQUESTED") {
            return Some("Changes must be addressed: a reviewer requested changes.".into());
        }
        let need = self.required_approvals(&pr.base_ref);
        if approvals(pr) < need {
            return Some(format!(
                "At least {need} approving review{} required by reviewers with write access.",
                if need == 1 { " is" } else { "s are" }
            ));
        }
        if self.last_push_unapproved(pr) {
            return Some("Approval of the most recent reviewable push is required.".into());
        }
        if self.code_owner_unapproved(pr) {
            let owners: Vec<String> = self.code_owners.iter().map(|o| format!("@{o}")).collect();
            return Some(format!("Waiting on code owner review from {}.", owners.join(", ")));
        }
        if self.thread_resolution(&pr.base_ref) && pr.threads.iter().any(|t| !t.resolved) {
            return Some("All comments must be resolved.".into());
        }
        None
    }

    /// Whether a head must be up to date with `base` to merge: strict
    /// required checks, from classic protection or a ruleset.
    pub fn up_to_date_required(&self, base: &str) -> bool {
        self.applies(base)
            && ((self.strict && self.required_checks.is_some())
                || self.rulesets.iter().any(|r| r.strict && !r.required_checks.is_empty()))
    }

    /// Why GitHub refuses a merge into `base` by `method`, whatever the PR:
    /// the repository's settings, then the rulesets' allowed methods, then
    /// linear history. The rulesets' status is not documented; GitHub
    /// answers other ruleset violations 422, so the simulator does too.
    pub fn method_refusal(&self, base: &str, method: &str) -> Option<(StatusCode, String)> {
        let refused = |status, m: &str| Some((status, m.to_string()));
        if self.forbidden_methods.iter().any(|m| m == method) {
            return refused(
                StatusCode::METHOD_NOT_ALLOWED,
                match method {
                    "merge" => "Merge commits are not allowed on this repository.",
                    "squash" => "Squash merges are not allowed on this repository.",
                    _ => "Rebase merges are not allowed on this repository.",
                },
            );
        }
        let rulesets = || self.rulesets.iter().filter(|_| self.applies(base));
        if rulesets().any(|r| {
            r.allowed_merge_methods
                .as_ref()
                .is_some_and(|a| !a.iter().any(|m| m.eq_ignore_ascii_case(method)))
        }) {
            let mut word = method.to_string();
            word[..1].make_ascii_uppercase();
            return refused(
                StatusCode::UNPROCESSABLE_ENTITY,
                &format!("{word} is not an allowed merge method in this repository."),
            );
        }
        if method == "rebase" && (self.signed_commits && self.applies(base) || rulesets().any(|r| r.signatures)) {
            return refused(
                StatusCode::METHOD_NOT_ALLOWED,
                "Base branch requires signed commits. Rebase merges cannot be automatically signed by GitHub",
            );
        }
        if method == "merge" && rulesets().any(|r| r.linear_history) {
            return refused(
                StatusCode::METHOD_NOT_ALLOWED,
                "The base branch does not accept merge commits.",
            );
        }
        None
    }

    /// Why GitHub refuses a direct merge of `pr` now, if it does.
    pub fn merge_refusal(&self, pr: &SimPr) -> Option<String> {
        if pr.state != "open" || pr.conflict {
            return Some("Pull Request is not mergeable".into());
        }
        if pr.draft {
            return Some("Pull Request is still a draft".into());
        }
        if self.merge_queue(&pr.base_ref) {
            return Some("Changes must be made through the merge queue".into());
        }
        if let Some(m) = self.failing_required(&pr.base_ref, &pr.head_sha) {
            return Some(m);
        }
        self.review_blocker(pr).or_else(|| self.undeployed(pr))
    }

    /// GitHub's `mergeable_state` for a PR.
    pub fn mergeable_state(&self, pr: &SimPr) -> &'static str {
        if pr.state != "open" || !mergeable_known(pr) {
            return "unknown";
        }
        if pr.draft {
            return "draft";
        }
        if pr.conflict {
            return "dirty";
        }
        if pr.behind {
            return "behind";
        }
        if self.failing_required(&pr.base_ref, &pr.head_sha).is_some()
            || self.review_blocker(pr).is_some()
            || self.undeployed(pr).is_some()
        {
            return "blocked";
        }
        if self
            .latest_checks(&pr.head_sha)
            .iter()
            .any(|c| c.verdict != Verdict::Success)
        {
            return "unstable";
        }
        "clean"
    }
}

/// Whether GitHub has finished computing mergeability.
pub fn mergeable_known(pr: &SimPr) -> bool {
    pr.mergeable_known && pr.mergeable_unknown_until.is_none_or(|t| Utc::now() >= t)
}

/// Each reviewer's latest decisive review.
fn latest_reviews(pr: &SimPr) -> Vec<(&str, &str)> {
    let mut latest: Vec<(&str, &str)> = vec![];
    for r in &pr.reviews {
        if !matches!(r.state.as_str(), "APPROVED" | "CHANGES_REQUESTED" | "DISMISSED") {
            continue;
        }
        match latest.iter_mut().find(|(u, _)| *u == r.user) {
            Some(e) => e.1 = &r.state,
            None => latest.push((&r.user, &r.state)),
        }
    }
    latest
}

pub fn approvals(pr: &SimPr) -> u32 {
    latest_reviews(pr).iter().filter(|(_, s)| *s == "APPROVED").count() as u32
}

/// GraphQL's `reviewDecision`, before requirements: `None` when nobody
/// decided. [`SimRepo::review_decision`] folds in the requirement.
fn review_decision(pr: &SimPr) -> Option<&'static str> {
    let latest = latest_reviews(pr);
    if latest.iter().any(|(_, s)| *s == "CHANGES_REQUESTED") {
        Some("CHANGES_REQUESTED")
    } else if latest.iter().any(|(_, s)| *s == "APPROVED") {
        Some("APPROVED")
    } else {
        None
    }
}

impl SimRepo {
    /// GraphQL's `reviewDecision`: `null` when the branch requires no review.
    pub fn review_decision(&self, pr: &SimPr) -> Option<&'static str> {
        let need = self.required_approvals(&pr.base_ref);
        let wanting = self.last_push_unapproved(pr) || self.code_owner_unapproved(pr);
        let rule = need > 0 || self.code_owner_rule(&pr.base_ref);
        if !rule && !wanting {
            return None;
        }
        match review_decision(pr) {
            Some("CHANGES_REQUESTED") => Some("CHANGES_REQUESTED"),
            _ if approvals(pr) >= need && !wanting => Some("APPROVED"),
            _ => Some("REVIEW_REQUIRED"),
        }
    }
}
