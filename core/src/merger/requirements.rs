//! What the base branch requires beyond checks — approving reviews,
//! resolved conversations, the merge queue — folded from branch protection
//! and rulesets, and what a PR still lacks, in words for a block reason.

use super::method::restrict;
use super::said::Said;
use crate::checks::{Required, Requirement};

/// What GitHub says about a PR's reviews, its base branch's requirements and
/// its merge-queue entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Approving reviews the base branch requires (0: none).
    pub required_approvals: u32,
    /// GraphQL's `reviewDecision`: `APPROVED`, `CHANGES_REQUESTED`,
    /// `REVIEW_REQUIRED`, or `None` when no review is required.
    pub review_decision: Option<String>,
    /// Reviewers whose latest decisive review approves.
    pub approvals: u32,
    /// The base branch requires every conversation resolved.
    pub threads_must_resolve: bool,
    pub unresolved_threads: u32,
    /// The base branch requires GitHub's merge queue.
    pub merge_queue: bool,
    /// The PR's 1-based place in the queue while it is queued.
    pub queue_position: Option<u32>,
    /// Why GitHub last removed the PR from the queue, if it says.
    pub dequeued_reason: Option<String>,
    /// The branch requires approving the newest push ([`Rule::last_push_approval`]).
    pub last_push_approval: bool,
    /// Environments the branch requires a successful deployment of the
    /// head to, and that have none ([`undeployed`]).
    pub undeployed: Vec<String>,
    /// The branch requires an approval from a code owner of the changed files.
    pub code_owner_review: bool,
    /// The code owners GitHub still asks a review of (`@login`, `@org/team`).
    pub code_owners_asked: Vec<String>,
}

/// Of the environments the branch requires, those whose newest deployment
/// of the head has not succeeded: given each one with its newest
/// deployment's newest status (`None`: no deployment, or no status yet).
pub fn undeployed(newest: &[(String, Option<String>)]) -> Vec<String> {
    newest
        .iter()
        .filter(|(_, state)| state.as_deref() != Some("success"))
        .map(|(env, _)| env.clone())
        .collect()
}

/// Which review requirement is missing, in words; `None` when the reviews
/// Kandev can see satisfy the branch.
pub fn missing_reviews(f: &Facts) -> Option<Vec<Said>> {
    let mut missing = vec![];
    if f.review_decision.as_deref() == Some("CHANGES_REQUESTED") {
        missing.push(Said::new("changes-requested"));
    }
    if f.approvals < f.required_approvals {
        missing.push(
            Said::new("approvals-missing")
                .with("count", f.required_approvals - f.approvals)
                .with("approvals", f.approvals)
                .with("required", f.required_approvals),
        );
    } else if f.review_decision.as_deref() == Some("REVIEW_REQUIRED") {
        // Enough approvals, yet a review is required: the approvals predate
        // the newest push, or none is a code owner's. GitHub does not say
        // which, so each rule in force is named.
        if f.last_push_approval {
            missing.push(Said::new("last-push-review"));
        }
        if f.code_owner_review {
            missing.push(if f.code_owners_asked.is_empty() {
                Said::new("code-owner-review")
            } else {
                Said::new("code-owner-review-from").with("owners", f.code_owners_asked.join(", "))
            });
        }
        if !f.last_push_approval && !f.code_owner_review {
            missing.push(Said::new("review-required"));
        }
    }
    if f.threads_must_resolve && f.unresolved_threads > 0 {
        missing.push(Said::new("unresolved-threads").with("count", f.unresolved_threads));
    }
    (!missing.is_empty()).then_some(missing)
}

/// The checks that decide: protection's plus rulesets'. Protection that
/// could not be read (`None`) means every check counts — and the rulesets'
/// requirements still hold, pins and all. One name may be required twice,
/// once pinned to an app: both must be met.
pub fn required_checks(protection: Option<Vec<Requirement>>, rulesets: &[Requirement]) -> Required {
    let all_count = protection.is_none();
    let mut checks = protection.unwrap_or_default();
    for req in rulesets {
        if !checks.contains(req) {
            checks.push(req.clone());
        }
    }
    Required { all_count, checks }
}

/// One active rule of a branch, as the rules endpoint reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rule {
    /// `required_status_checks`, `pull_request`, `merge_queue`, …
    pub kind: String,
    pub required_checks: Vec<Requirement>,
    pub required_approvals: u32,
    pub thread_resolution: bool,
    /// A `pull_request` rule's `allowed_merge_methods` (`None`: any).
    pub allowed_merge_methods: Option<Vec<String>>,
    /// A `pull_request` rule's `require_last_push_approval`: the newest push
    /// needs an approval from someone other than its pusher.
    pub last_push_approval: bool,
    /// A `required_deployments` rule's environments: the head must have
    /// deployed to each, successfully.
    pub required_deployments: Vec<String>,
    /// A `pull_request` rule's `require_code_owner_review`.
    pub code_owner_review: bool,
}

/// What a branch's rulesets require, all rules together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchRules {
    pub required_checks: Vec<Requirement>,
    pub required_approvals: u32,
    pub thread_resolution: bool,
    pub merge_queue: bool,
    /// The merge methods every rule allows (`None`: no rule restricts them).
    pub merge_methods: Option<Vec<String>>,
    /// Every push, the merger's branch update included, needs a new approval.
    pub last_push_approval: bool,
    /// Environments the head must have deployed to, in the rules' order.
    pub required_deployments: Vec<String>,
    /// A code owner of the changed files must approve.
    pub code_owner_review: bool,
}

/// What classic branch protection's review rule requires.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProtectionReviews {
    pub approvals: u32,
    pub last_push_approval: bool,
    pub code_owner_review: bool,
}

/// Folds the active rules: the strictest of each requirement wins.
pub fn branch_rules(rules: &[Rule]) -> BranchRules {
    let mut out = BranchRules::default();
    for r in rules {
        match r.kind.as_str() {
            "required_status_checks" => {
                for c in &r.required_checks {
                    if !out.required_checks.contains(c) {
                        out.required_checks.push(c.clone());
                    }
                }
            }
            "pull_request" => {
                out.required_approvals = out.required_approvals.max(r.required_approvals);
                out.thread_resolution |= r.thread_resolution;
                out.last_push_approval |= r.last_push_approval;
                out.code_owner_review |= r.code_owner_review;
                if let Some(allowed) = &r.allowed_merge_methods {
                    out.merge_methods = restrict(out.merge_methods.take(), allowed);
                }
            }
            // Linear history forbids merge commits.
            "required_linear_history" => {
                let linear = ["squash".to_string(), "rebase".to_string()];
                out.merge_methods = restrict(out.merge_methods.take(), &linear);
            }
            // GitHub signs squash and merge commits, never a rebase's.
            "required_signatures" => {
                let signable = ["squash".to_string(), "merge".to_string()];
                out.merge_methods = restrict(out.merge_methods.take(), &signable);
            }
            "merge_queue" => out.merge_queue = true,
            "required_deployments" => {
                for env in &r.required_deployments {
                    if !out.required_deployments.contains(env) {
                        out.required_deployments.push(env.clone());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

impl BranchRules {
    /// Adds classic branch protection's required approving reviews: the
    /// stricter of it and the rulesets wins.
    pub fn with_protection_approvals(mut self, approvals: u32) -> Self {
        self.required_approvals = self.required_approvals.max(approvals);
        self
    }

    /// Adds all of classic protection's review rule: its approvals, and its
    /// last-push and code-owner requirements, to the rulesets' own.
    pub fn with_protection_reviews(self, p: ProtectionReviews) -> Self {
        let mut out = self.with_protection_approvals(p.approvals);
        out.last_push_approval |= p.last_push_approval;
        out.code_owner_review |= p.code_owner_review;
        out
    }
}

/// Review threads still open, from GraphQL's `isResolved` of each.
pub fn unresolved_threads(resolved: impl IntoIterator<Item = bool>) -> u32 {
    resolved
        .into_iter()
        .filter(|r| !r)
        .count()
        .try_into()
        .unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protection_and_rulesets_require_the_stricter_review_count() {
        let rule = |n| Rule {
            kind: "pull_request".into(),
            required_approvals: n,
            ..Default::default()
        };
        assert_eq!(
            branch_rules(&[rule(1)]).with_protection_approvals(2).required_approvals,
            2
        );
        assert_eq!(
            branch_rules(&[rule(3)]).with_protection_approvals(2).required_approvals,
            3
        );
        assert_eq!(branch_rules(&[]).with_protection_approvals(0).required_approvals, 0);
        assert_eq!(unresolved_threads([true, false, false]), 2);
        assert_eq!(unresolved_threads([]), 0);
    }

    /// The missing requirements as the English block reason lists them.
    fn words(f: &Facts) -> Option<String> {
        missing_reviews(f).map(|m| m.iter().map(Said::english).collect::<Vec<_>>().join("; "))
    }

    #[test]
    fn names_every_missing_review_requirement() {
        let f = Facts {
            required_approvals: 2,
            approvals: 1,
            review_decision: Some("REVIEW_REQUIRED".into()),
            threads_must_resolve: true,
            unresolved_threads: 3,
            ..Default::default()
        };
        assert_eq!(
            words(&f).as_deref(),
            Some("1 more approving review (1 of 2 required); 3 unresolved review threads")
        );
        let changes = Facts {
            review_decision: Some("CHANGES_REQUESTED".into()),
            ..Default::default()
        };
        assert_eq!(words(&changes).as_deref(), Some("a reviewer requested changes"));
        let satisfied = Facts {
            required_approvals: 1,
            approvals: 1,
            review_decision: Some("APPROVED".into()),
            threads_must_resolve: true,
            ..Default::default()
        };
        assert_eq!(missing_reviews(&satisfied), None);
    }

    #[test]
    fn ruleset_checks_join_protections_unless_protection_is_unreadable() {
        let pinned = Requirement::new("build", Some(15368));
        let r = vec![Requirement::from("lint"), Requirement::from("build"), pinned.clone()];
        assert_eq!(
            required_checks(Some(vec!["build".into()]), &r),
            Required::only(vec!["build".into(), "lint".into(), pinned]),
            "a pinned duplicate of a name is a second requirement"
        );
        assert_eq!(
            required_checks(None, &r),
            Required {
                all_count: true,
                checks: r.clone()
            },
            "every check counts, and the rulesets' still hold"
        );
    }

    #[test]
    fn enough_approvals_before_the_newest_push_under_last_push_approval_ask_for_its_review() {
        let rule = Rule {
            kind: "pull_request".into(),
            required_approvals: 1,
            last_push_approval: true,
            ..Default::default()
        };
        assert!(branch_rules(&[rule]).last_push_approval);
        let facts = |last_push_approval| Facts {
            required_approvals: 1,
            approvals: 1,
            review_decision: Some("REVIEW_REQUIRED".into()),
            last_push_approval,
            ..Default::default()
        };
        assert_eq!(missing_reviews(&facts(true)), Some(vec![Said::new("last-push-review")]));
        assert_eq!(missing_reviews(&facts(false)), Some(vec![Said::new("review-required")]));
    }

    #[test]
    fn rules_fold_to_the_strictest_requirement() {
        let rule = |kind: &str, checks: &[&str], approvals: u32, threads: bool| Rule {
            kind: kind.into(),
            required_checks: checks.iter().map(|s| Requirement::from(*s)).collect(),
            required_approvals: approvals,
            thread_resolution: threads,
            ..Default::default()
        };
        let deploys = |envs: &[&str]| Rule {
            kind: "required_deployments".into(),
            required_deployments: envs.iter().map(|e| e.to_string()).collect(),
            ..Default::default()
        };
        let folded = branch_rules(&[
            rule("required_status_checks", &["build"], 0, false),
            rule("pull_request", &[], 1, false),
            rule("pull_request", &[], 2, true),
            rule("required_status_checks", &["build", "lint"], 0, false),
            rule("merge_queue", &[], 0, false),
            rule("non_fast_forward", &[], 0, false),
            deploys(&["staging", "production"]),
            deploys(&["production"]),
        ]);
        assert_eq!(
            folded,
            BranchRules {
                required_checks: vec!["build".into(), "lint".into()],
                required_approvals: 2,
                thread_resolution: true,
                merge_queue: true,
                merge_methods: None,
                last_push_approval: false,
                required_deployments: vec!["staging".into(), "production".into()],
                code_owner_review: false,
            }
        );
    }

    #[test]
    fn classic_protections_review_rule_adds_to_the_rulesets() {
        let rules = branch_rules(&[Rule {
            kind: "pull_request".into(),
            required_approvals: 2,
            code_owner_review: true,
            ..Default::default()
        }]);
        let folded = rules.clone().with_protection_reviews(ProtectionReviews {
            approvals: 1,
            last_push_approval: true,
            code_owner_review: false,
        });
        assert_eq!(
            (
                folded.required_approvals,
                folded.last_push_approval,
                folded.code_owner_review
            ),
            (2, true, true)
        );
        assert_eq!(
            rules.clone().with_protection_reviews(ProtectionReviews::default()),
            rules
        );
    }

    #[test]
    fn a_review_required_despite_approvals_names_each_rule_that_may_want_it() {
        let facts = |last_push_approval, code_owner_review| Facts {
            required_approvals: 1,
            approvals: 1,
            review_decision: Some("REVIEW_REQUIRED".into()),
            last_push_approval,
            code_owner_review,
            ..Default::default()
        };
        assert_eq!(
            missing_reviews(&facts(false, true)),
            Some(vec![Said::new("code-owner-review")])
        );
        assert_eq!(
            missing_reviews(&facts(true, true)),
            Some(vec![Said::new("last-push-review"), Said::new("code-owner-review")])
        );
        assert_eq!(
            missing_reviews(&facts(false, false)),
            Some(vec![Said::new("review-required")])
        );
    }

    #[test]
    fn an_environment_counts_as_deployed_only_when_its_newest_deployment_succeeded() {
        let newest = |env: &str, state: Option<&str>| (env.to_string(), state.map(str::to_string));
        assert_eq!(
            undeployed(&[
                newest("staging", Some("success")),
                newest("production", None),
                newest("qa", Some("in_progress")),
                newest("canary", Some("failure")),
            ]),
            ["production", "qa", "canary"]
        );
        assert!(undeployed(&[]).is_empty());
    }

    #[test]
    fn rules_allowing_methods_and_linear_history_narrow_the_merge_methods() {
        let allows = |methods: &[&str]| Rule {
            kind: "pull_request".into(),
            allowed_merge_methods: Some(methods.iter().map(|m| m.to_string()).collect()),
            ..Default::default()
        };
        let linear = Rule {
            kind: "required_linear_history".into(),
            ..Default::default()
        };
        let methods = |rules: &[Rule]| branch_rules(rules).merge_methods;
        assert_eq!(methods(&[]), None);
        assert_eq!(
            methods(&[allows(&["merge", "squash"])]),
            Some(vec!["merge".into(), "squash".into()])
        );
        assert_eq!(
            methods(&[allows(&["merge", "squash"]), linear.clone()]),
            Some(vec!["squash".into()])
        );
        assert_eq!(
            methods(std::slice::from_ref(&linear)),
            Some(vec!["squash".into(), "rebase".into()])
        );
        let signed = Rule {
            kind: "required_signatures".into(),
            ..Default::default()
        };
        assert_eq!(
            methods(std::slice::from_ref(&signed)),
            Some(vec!["squash".into(), "merge".into()])
        );
        assert_eq!(methods(&[signed, linear]), Some(vec!["squash".into()]));
        assert_eq!(methods(&[allows(&["merge"]), allows(&["rebase"])]), Some(vec![]));
    }
}
