//! Gathering what GitHub says before a decision: the PR, its checks against
//! the branch's required checks (protection and rulesets), and — when the
//! PR is blocked or the branch uses a merge queue — reviews, conversations
//! and the queue entry.

use kandev_core::checks::{CiVerdict, approvals, ci_verdict};
use kandev_core::merger::{
    BranchRules, Digests, Facts, PrSnapshot, Said, branch_rules, diff_digest, diff_digest_before_modes, fork_locked,
    listed, mode_dirs, needs_approved_diff, needs_diff, required_checks, short, tree_digest, undeployed,
    unresolved_threads,
};

use super::Merger;
use crate::github::GithubError;
use crate::github::model::PullRequest;
use crate::store::MergerJob;

/// One reading of GitHub, whole.
pub(super) struct Reading {
    pub pr: PullRequest,
    pub snapshot: PrSnapshot,
    pub verdict: CiVerdict,
    pub facts: Facts,
    /// The merge methods the branch's rulesets allow (`None`: any).
    pub merge_methods: Option<Vec<String>>,
    /// The head's diff digest, read when the head is not the bound one
    /// (`Some(None)`: too large to compare).
    pub diff: Option<Option<String>>,
    /// The approved head's diff digest, read when the approval named a head
    /// the PR has since left and nothing read it yet.
    pub approved_diff: Option<Option<String>>,
}

/// A read that failed, and what was being read (for the reason).
pub(super) struct ReadError {
    pub error: GithubError,
    pub what: Said,
}

fn failed(what: &str, the_pr: &str) -> impl FnOnce(GithubError) -> ReadError {
    let what = Said::new(what).with("pr", the_pr);
    move |error| ReadError { error, what }
}

pub(super) fn snapshot(pr: &PullRequest) -> PrSnapshot {
    PrSnapshot {
        number: pr.number,
        state: pr.state.clone(),
        merged: pr.merged || pr.merged_at.is_some(),
        draft: pr.draft,
        head_sha: pr.head.sha.clone(),
        mergeable_state: pr.mergeable_state.clone(),
        fork_locked: fork_locked(
            pr.base.repo_full_name(),
            pr.head.repo_full_name(),
            pr.maintainer_can_modify.unwrap_or(true),
        ),
    }
}

impl Merger {
    /// Reads everything a decision needs. `queue_hint`: GitHub refused a
    /// direct merge for want of the merge queue, whatever the rules said.
    pub(super) async fn read(&self, job: &MergerJob, queue_hint: bool) -> Result<Reading, ReadError> {
        let client = self.github.client();
        let the_pr = format!("{}/{}#{}", job.owner, job.repo, job.pr_number);
        let pr = client
            .pull(&job.owner, &job.repo, job.pr_number)
            .await
            .map_err(failed("reading-pr", &the_pr))?;
        let snapshot = snapshot(&pr);
        if snapshot.merged || snapshot.state != "open" {
            return Ok(Reading {
                pr,
                snapshot,
                verdict: CiVerdict::Green,
                facts: Facts::default(),
                merge_methods: None,
                diff: None,
                approved_diff: None,
            });
        }
        // Pinned to the head's SHA, so a lagging read cannot mix two heads.
        let approved_diff = if needs_approved_diff(&job.memory, &pr.head.sha) {
            let approved = short(&job.memory.approved_sha);
            let what = Said::new("reading-approved")
                .with("approved", approved)
                .with("pr", &the_pr);
            let fail = move |error| ReadError { error, what };
            Some(
                self.digest(job, &pr.base.branch, &job.memory.approved_sha)
                    .await
                    .map_err(fail)?
                    .now,
            )
        } else {
            None
        };
        let diff = if needs_diff(&job.memory, &pr.head.sha) {
            let digests = self.digest(job, &pr.base.branch, &pr.head.sha).await;
            let digests = digests.map_err(failed("reading-diff", &the_pr))?;
            Some(digests.for_binding(&job.memory.approved_diff))
        } else {
            None
        };
        let protection = client
            .required_checks(&job.owner, &job.repo, &pr.base.branch)
            .await
            .map_err(failed("reading-protection", &the_pr))?;
        let rules: BranchRules = branch_rules(
            &client
                .branch_rules(&job.owner, &job.repo, &pr.base.branch)
                .await
                .map_err(failed("reading-rulesets", &the_pr))?
                .iter()
                .map(|r| r.core())
                .collect::<Vec<_>>(),
        )
        .with_protection_reviews(
            client
                .required_reviews(&job.owner, &job.repo, &pr.base.branch)
                .await
                .map_err(failed("reading-protection", &the_pr))?,
        );
        let checks = client
            .commit_checks(&job.owner, &job.repo, &pr.head.sha)
            .await
            .map_err(failed("reading-checks", &the_pr))?;
        let required = required_checks(protection, &rules.required_checks);
        let verdict = ci_verdict(&checks, &required);
        let mut facts = Facts {
            required_approvals: rules.required_approvals,
            threads_must_resolve: rules.thread_resolution,
            last_push_approval: rules.last_push_approval,
            code_owner_review: rules.code_owner_review,
            merge_queue: rules.merge_queue || queue_hint,
            ..Default::default()
        };
        let mut snapshot = snapshot;
        let needs_gate = job.memory.queued || facts.merge_queue || snapshot.mergeable_state == "blocked";
        if needs_gate {
            self.read_gate(job, &the_pr, &mut facts, &mut snapshot).await?;
        }
        if snapshot.mergeable_state == "blocked" && !rules.required_deployments.is_empty() {
            facts.undeployed = self
                .read_deployments(job, &the_pr, &pr.head.sha, &rules.required_deployments)
                .await?;
        }
        Ok(Reading {
            pr,
            snapshot,
            verdict,
            facts,
            merge_methods: rules.merge_methods,
            diff,
            approved_diff,
        })
    }

    /// The digests of `sha`'s diff against `base` (`now: None`: too large
    /// to compare). Compare lists 300 files at most, none of a diff it could
    /// not compute, and no modes: the modes of the files it lists are read
    /// from their directories, and a diff it cannot state is read as the
    /// merge base's and the head's whole trees.
    async fn digest(&self, job: &MergerJob, base: &str, sha: &str) -> Result<Digests, GithubError> {
        let client = self.github.client();
        let comparison = client.compare(&job.owner, &job.repo, base, sha).await?;
        let files: Option<Vec<_>> = comparison.files.map(|l| l.iter().map(|f| f.core()).collect());
        if let Some(listed) = listed(files.as_deref()) {
            let modes = client.modes(&job.owner, &job.repo, sha, &mode_dirs(listed)).await?;
            if let Some(now) = diff_digest(base, Some(listed), &modes) {
                let before_modes = diff_digest_before_modes(base, Some(listed));
                return Ok(Digests {
                    now: Some(now),
                    before_modes,
                });
            }
        }
        let merge_base = &comparison.merge_base_commit.commit.tree.sha;
        if merge_base.is_empty() {
            return Ok(Digests::default());
        }
        let before = client.tree(&job.owner, &job.repo, merge_base).await?;
        let after = client.tree(&job.owner, &job.repo, sha).await?;
        let now = tree_digest(base, &before.core(), &after.core());
        Ok(Digests {
            now,
            before_modes: None,
        })
    }

    /// The environments of `required` that `head` has not deployed to
    /// successfully. A token that may not read deployments (403, 404) only
    /// leaves them unnamed: the block reason then says GitHub did not name it.
    async fn read_deployments(
        &self,
        job: &MergerJob,
        the_pr: &str,
        head: &str,
        required: &[String],
    ) -> Result<Vec<String>, ReadError> {
        let client = self.github.client();
        let mut newest = vec![];
        for env in required {
            match client.newest_deployment_state(&job.owner, &job.repo, head, env).await {
                Ok(state) => newest.push((env.clone(), state)),
                Err(e @ (GithubError::Forbidden(_) | GithubError::NotFound)) => {
                    tracing::info!(task_id = %job.task_id, error = %e, "could not read deployments");
                    return Ok(vec![]);
                }
                Err(e) => return Err(failed("reading-deployments", the_pr)(e)),
            }
        }
        Ok(undeployed(&newest))
    }

    /// Reviews, conversations and the queue entry (GraphQL), and approvals
    /// (REST). Without the queue at stake a GraphQL failure only leaves the
    /// review facts unknown: the block reason then says GitHub did not name it.
    /// The queue may merge the PR between the REST read and this one: a
    /// later read saying merged or closed wins, or a merged PR would look
    /// like one taken out of the queue.
    async fn read_gate(
        &self,
        job: &MergerJob,
        the_pr: &str,
        facts: &mut Facts,
        snapshot: &mut PrSnapshot,
    ) -> Result<(), ReadError> {
        let client = self.github.client();
        match client.gate(&job.owner, &job.repo, job.pr_number).await {
            Ok(gate) => {
                if gate.merged || gate.state == "MERGED" {
                    snapshot.merged = true;
                    snapshot.state = "closed".into();
                } else if gate.state == "CLOSED" {
                    snapshot.state = "closed".into();
                }
                facts.review_decision = gate.review_decision.clone();
                facts.unresolved_threads = unresolved_threads(gate.review_threads.nodes.iter().map(|t| t.is_resolved));
                facts.queue_position = gate.merge_queue_entry.as_ref().map(|e| e.position.max(1));
                facts.dequeued_reason = gate.timeline_items.nodes.iter().rev().find_map(|n| n.reason.clone());
                facts.code_owners_asked = gate.code_owners_asked();
            }
            Err(e) if job.memory.queued || facts.merge_queue => return Err(failed("reading-queue", the_pr)(e)),
            Err(e) => tracing::info!(task_id = %job.task_id, error = %e, "could not read reviews over GraphQL"),
        }
        let reviews = client
            .reviews(&job.owner, &job.repo, job.pr_number)
            .await
            .map_err(failed("reading-reviews", the_pr))?;
        let pairs: Vec<(String, String)> = reviews
            .iter()
            .map(|r| (r.user.login.clone(), r.state.clone()))
            .collect();
        facts.approvals = approvals(&pairs);
        Ok(())
    }
}
