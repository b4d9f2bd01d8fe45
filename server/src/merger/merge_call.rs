//! The merge call itself and what each of GitHub's answers to it means: a
//! merge, a head or base that moved, a method the repository forbids, a
//! refusal that stands, or an answer that was lost.

use kandev_core::api::{GithubWorkspaceSettings, Task};
use kandev_core::merger::{
    MergeCall, Refusal, Said, after_refusal, merge_method, merged_summary, refused_method, short,
};

use super::Merger;
use super::job::End;
use super::read::Reading;
use crate::github::GithubError;
use crate::store::MergerJob;

/// What one job learnt from GitHub's refusals so far; it lives as long as
/// the job's driver (a driver that takes over learns it again).
#[derive(Default)]
pub(super) struct Refusals {
    /// GitHub asked for the merge queue.
    pub queue_hint: bool,
    /// "Base branch was modified" answers so far.
    pub base_moves: u32,
    /// Methods GitHub refused as not allowed here, and its last such message.
    methods: Vec<&'static str>,
    last_method_refusal: Option<String>,
}

/// What the drive loop does after a merge call.
pub(super) enum AfterMerge {
    End(End),
    /// Read again at once (another method is to be tried).
    ReadAgain,
    /// Read again after one poll, when GitHub has caught up.
    Pause,
    /// GitHub did not take the call (a rate limit): wait as it says, then
    /// read again.
    Limited(GithubError),
}

impl Merger {
    /// Merges `sha` with the workspace's method, or the first other one the
    /// branch's rulesets allow (as `reading` found them) and GitHub has not
    /// refused.
    pub(super) async fn merge_call(
        &self,
        task: &Task,
        job: &MergerJob,
        settings: &GithubWorkspaceSettings,
        reading: &Reading,
        sha: &str,
        refusals: &mut Refusals,
    ) -> AfterMerge {
        let allowed = reading.merge_methods.as_deref();
        let Some(method) = merge_method(&settings.merge_method, allowed, &refusals.methods) else {
            let reason = match refusals.last_method_refusal.take() {
                Some(message) => Said::new("no-merge-method")
                    .with("refused", refusals.methods.join(", "))
                    .with("message", message),
                None => Said::new("rules-allow-no-method"),
            };
            return AfterMerge::End(End::Blocked(reason));
        };
        self.progress(
            task,
            "merging",
            Said::new("merging").with("method", method).with("sha", short(sha)),
        )
        .await;
        let call = self
            .github
            .client()
            .merge(&job.owner, &job.repo, job.pr_number, method, sha)
            .await;
        match call {
            Ok(resp) if resp.merged => {
                self.merged(task, &reading.pr, settings, method, &resp.sha).await;
                AfterMerge::End(End::Done(merged_summary(job.pr_number)))
            }
            Ok(resp) => AfterMerge::End(End::Blocked(Said::new("not-merged").with("message", &resp.message))),
            // The head moved after the checks were judged.
            Err(GithubError::Conflict(_)) => {
                self.progress(task, "head_moved", Said::new("head-moved")).await;
                AfterMerge::Pause
            }
            // A repository (its settings, a ruleset, linear history) that
            // forbids this method takes another one it allows.
            Err(GithubError::NotAllowed(m) | GithubError::Unprocessable(m)) if refused_method(&m).is_some() => {
                refusals.methods.push(method);
                refusals.last_method_refusal = Some(m);
                self.progress(
                    task,
                    "method_refused",
                    Said::new("method-refused").with("method", method),
                )
                .await;
                AfterMerge::ReadAgain
            }
            Err(GithubError::NotAllowed(m)) => match after_refusal(&m, refusals.queue_hint, refusals.base_moves) {
                Refusal::UseQueue => {
                    refusals.queue_hint = true;
                    AfterMerge::ReadAgain
                }
                // Decided again on a fresh read once GitHub has recomputed
                // mergeability against the new base.
                Refusal::BaseMoved => {
                    refusals.base_moves += 1;
                    self.progress(task, "base_moved", Said::new("base-moved")).await;
                    AfterMerge::Pause
                }
                // Already merged or closed (a read that lagged), or truly refused.
                Refusal::Stands => {
                    let refused = Said::new("merge-refused").with("message", m);
                    AfterMerge::End(
                        self.read_back(task, job, settings, method, MergeCall::Refused, refused)
                            .await,
                    )
                }
            },
            // Never retried blindly: read the PR back.
            Err(e) if e.is_uncertain() => AfterMerge::End(
                self.read_back(
                    task,
                    job,
                    settings,
                    method,
                    MergeCall::Lost,
                    Said::new("unknown-after-error"),
                )
                .await,
            ),
            // A rate-limited request was not processed: nothing to read back.
            Err(e) if e.is_rate_limit() => AfterMerge::Limited(e),
            Err(e) => AfterMerge::End(End::Blocked(Said::new("merge-failed").with("error", e))),
        }
    }
}
