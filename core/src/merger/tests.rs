//! The merger's decisions, scenario by scenario.

use chrono::{DateTime, Duration, Utc};

use super::*;
use crate::checks::{Awaited, CiVerdict, from_check_run};

// The decisions below are read in English, byte for byte as the spec and
// the API have them; the sentences' ids are checked at the end.
const ALREADY_MERGED: &str = "PR already merged";
const CONFLICT: &str = "merge conflict, manual rebase needed";
const FELL_BEHIND_AGAIN: &str = "the branch fell behind its base again after 5 updates; update it and approve again";
const AWAITING_UPDATE: &str = "the branch update";

/// A decision with its sentences in English.
#[derive(Debug, PartialEq)]
enum Step {
    Complete(String),
    Block(String),
    Wait(Vec<String>),
    UpdateBranch { expected_head_sha: String },
    Merge { sha: String },
    Enqueue { sha: String },
}

fn decide(pr: &PrSnapshot, ci: &CiVerdict, facts: &Facts, job: &JobState, policy: &Policy, now: DateTime<Utc>) -> Step {
    match super::decide(pr, ci, facts, job, policy, now) {
        super::Step::Complete(s) => Step::Complete(s.english()),
        super::Step::Block(s) => Step::Block(s.english()),
        super::Step::Wait(w) => Step::Wait(w.iter().map(Said::english).collect()),
        super::Step::UpdateBranch { expected_head_sha } => Step::UpdateBranch { expected_head_sha },
        super::Step::Merge { sha } => Step::Merge { sha },
        super::Step::Enqueue { sha } => Step::Enqueue { sha },
    }
}

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn pr(state: &str, mergeable_state: &str) -> PrSnapshot {
    PrSnapshot {
        number: 7,
        state: state.into(),
        merged: false,
        draft: false,
        head_sha: "h1".into(),
        mergeable_state: mergeable_state.into(),
        fork_locked: false,
    }
}

const POLICY: Policy = Policy { timeout_minutes: 10 };

#[test]
fn terminal_states_come_first() {
    let now = t("2026-03-08T12:00:00Z");
    let mut merged = pr("closed", "unknown");
    merged.merged = true;
    assert_eq!(
        decide(
            &merged,
            &CiVerdict::Green,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            now
        ),
        Step::Complete("PR already merged".into())
    );
    assert_eq!(
        decide(
            &pr("closed", ""),
            &CiVerdict::Green,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            now
        ),
        Step::Block("PR closed without merge".into())
    );
    let mut draft = pr("open", "draft");
    draft.draft = true;
    assert_eq!(
        decide(
            &draft,
            &CiVerdict::Green,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            now
        ),
        Step::Block("PR is draft".into())
    );
}

#[test]
fn failing_required_check_blocks_naming_it() {
    let failed = CiVerdict::Failed(vec![from_check_run(
        "build",
        "completed",
        Some("failure"),
        "https://ci/1",
    )]);
    assert_eq!(
        decide(
            &pr("open", "blocked"),
            &failed,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            t("2026-03-08T12:00:00Z")
        ),
        Step::Block("CI failing: build https://ci/1".into())
    );
}

#[test]
fn conflicts_block_and_behind_updates_once() {
    let now = t("2026-03-08T12:00:00Z");
    assert_eq!(
        decide(
            &pr("open", "dirty"),
            &CiVerdict::Green,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            now
        ),
        Step::Block(CONFLICT.into())
    );
    assert_eq!(
        decide(
            &pr("open", "behind"),
            &CiVerdict::Green,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            now
        ),
        Step::UpdateBranch {
            expected_head_sha: "h1".into()
        }
    );
    let updated = JobState {
        branch_updates: MAX_BRANCH_UPDATES,
        ..Default::default()
    };
    assert!(matches!(
        decide(
            &pr("open", "behind"),
            &CiVerdict::Green,
            &Facts::default(),
            &updated,
            &POLICY,
            now
        ),
        Step::Block(_)
    ));
}

#[test]
fn a_branch_behind_in_a_fork_maintainers_cannot_edit_blocks_instead_of_updating() {
    let locked = PrSnapshot {
        fork_locked: true,
        ..pr("open", "behind")
    };
    let step = decide(
        &locked,
        &CiVerdict::Green,
        &Facts::default(),
        &JobState::default(),
        &POLICY,
        t("2026-03-08T12:00:00Z"),
    );
    assert_eq!(
        step,
        Step::Block(
            "the branch is behind its base and its fork does not allow edits from maintainers; \
             update it in the fork and approve again"
                .into()
        )
    );
    // Up to date, the lock does not matter.
    let clean = PrSnapshot {
        fork_locked: true,
        ..pr("open", "clean")
    };
    assert!(matches!(
        decide(
            &clean,
            &CiVerdict::Green,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            t("2026-03-08T12:00:00Z")
        ),
        Step::Merge { .. }
    ));
}

#[test]
fn pending_waits_until_the_timeout_then_blocks() {
    let start = t("2026-03-08T12:00:00Z");
    let pending = CiVerdict::Pending(vec!["build".into()]);
    let job = waiting(&JobState::default(), "h1", start);
    assert_eq!(
        decide(
            &pr("open", "blocked"),
            &pending,
            &Facts::default(),
            &job,
            &POLICY,
            start + Duration::minutes(9)
        ),
        Step::Wait(vec!["build".into()])
    );
    assert_eq!(
        decide(
            &pr("open", "blocked"),
            &pending,
            &Facts::default(),
            &job,
            &POLICY,
            start + Duration::minutes(10)
        ),
        Step::Block("checks still pending after 10 min: build".into())
    );
}

#[test]
fn a_pinned_check_reported_only_by_another_source_says_whose_report_counts() {
    let start = t("2026-03-08T12:00:00Z");
    let pending = CiVerdict::Pending(vec![Awaited {
        name: "build".into(),
        only_app: Some(15368),
    }]);
    let job = waiting(&JobState::default(), "h1", start);
    assert_eq!(
        decide(&pr("open", "clean"), &pending, &Facts::default(), &job, &POLICY, start),
        Step::Wait(vec!["build (only GitHub App 15368's report counts)".into()])
    );
}

#[test]
fn a_new_head_restarts_the_wait() {
    let start = t("2026-03-08T12:00:00Z");
    let job = waiting(&JobState::default(), "h1", start);
    let later = start + Duration::minutes(30);
    let moved = waiting(&job, "h2", later);
    assert_eq!(moved.wait_started_at, Some(later));
    let mut head2 = pr("open", "blocked");
    head2.head_sha = "h2".into();
    assert!(matches!(
        decide(
            &head2,
            &CiVerdict::Pending(vec!["ci".into()]),
            &Facts::default(),
            &moved,
            &POLICY,
            later
        ),
        Step::Wait(_)
    ));
    assert_eq!(
        waiting(&moved, "h2", later + Duration::minutes(1)).wait_started_at,
        Some(later),
        "same head keeps its start"
    );
}

#[test]
fn unknown_mergeability_waits_and_green_merges_the_pinned_head() {
    let now = t("2026-03-08T12:00:00Z");
    assert_eq!(
        decide(
            &pr("open", "unknown"),
            &CiVerdict::Green,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            now
        ),
        Step::Wait(vec!["mergeability".into()])
    );
    assert_eq!(
        decide(
            &pr("open", "clean"),
            &CiVerdict::Green,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            now
        ),
        Step::Merge { sha: "h1".into() }
    );
    assert_eq!(
        decide(
            &pr("open", "unstable"),
            &CiVerdict::Green,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            now
        ),
        Step::Merge { sha: "h1".into() },
        "optional checks failing do not block"
    );
    assert_eq!(merged_summary(7).english(), "Merged PR #7");
}

fn at(min: i64) -> DateTime<Utc> {
    t("2026-03-08T12:00:00Z") + Duration::minutes(min)
}

fn snap(head: &str, mergeable_state: &str) -> PrSnapshot {
    PrSnapshot {
        head_sha: head.into(),
        ..pr("open", mergeable_state)
    }
}

#[test]
fn update_branch_with_a_delay_waits_for_the_new_head_instead_of_blocking() {
    let asked = update_requested(&JobState::default(), "h1", at(0));
    // GitHub accepted the update (202) but still shows the old head, behind.
    assert_eq!(
        decide(
            &snap("h1", "behind"),
            &CiVerdict::Green,
            &Facts::default(),
            &asked,
            &POLICY,
            at(1)
        ),
        Step::Wait(vec![AWAITING_UPDATE.into()])
    );
    // Still computing mergeability on the old head: still the update awaited.
    assert_eq!(
        decide(
            &snap("h1", "unknown"),
            &CiVerdict::Green,
            &Facts::default(),
            &asked,
            &POLICY,
            at(2)
        ),
        Step::Wait(vec![AWAITING_UPDATE.into()])
    );
    // The new head landed: wait for its checks, then merge it.
    let pending = CiVerdict::Pending(vec!["build".into()]);
    assert_eq!(
        decide(
            &snap("h2", "blocked"),
            &pending,
            &Facts::default(),
            &asked,
            &POLICY,
            at(3)
        ),
        Step::Wait(vec!["build".into()])
    );
    assert_eq!(
        decide(
            &snap("h2", "clean"),
            &CiVerdict::Green,
            &Facts::default(),
            &asked,
            &POLICY,
            at(4)
        ),
        Step::Merge { sha: "h2".into() }
    );
    // Behind again on the new head (the base moved again): updated again.
    assert_eq!(
        decide(
            &snap("h2", "behind"),
            &CiVerdict::Green,
            &Facts::default(),
            &asked,
            &POLICY,
            at(4)
        ),
        Step::UpdateBranch {
            expected_head_sha: "h2".into()
        }
    );
}

#[test]
fn a_branch_that_keeps_falling_behind_is_updated_a_bounded_number_of_times() {
    let mut job = JobState::default();
    for (i, head) in ["h1", "h2", "h3", "h4", "h5"].into_iter().enumerate() {
        assert_eq!(job.branch_updates, i as u32);
        let step = decide(
            &snap(head, "behind"),
            &CiVerdict::Green,
            &Facts::default(),
            &job,
            &POLICY,
            at(1),
        );
        assert_eq!(
            step,
            Step::UpdateBranch {
                expected_head_sha: head.into()
            }
        );
        job = update_requested(&job, head, at(1));
    }
    assert_eq!(job.branch_updates, MAX_BRANCH_UPDATES);
    assert_eq!(
        decide(
            &snap("h6", "behind"),
            &CiVerdict::Green,
            &Facts::default(),
            &job,
            &POLICY,
            at(2)
        ),
        Step::Block(FELL_BEHIND_AGAIN.into())
    );
}

#[test]
fn an_update_that_never_lands_blocks_after_the_timeout() {
    let asked = update_requested(&JobState::default(), "h1", at(0));
    let Step::Block(reason) = decide(
        &snap("h1", "behind"),
        &CiVerdict::Green,
        &Facts::default(),
        &asked,
        &POLICY,
        at(10),
    ) else {
        panic!("blocks")
    };
    assert!(reason.contains("had not updated the branch after 10 min"), "{reason}");
}

#[test]
fn every_failing_required_check_is_named_with_its_link() {
    let failed = CiVerdict::Failed(vec![
        from_check_run("build", "completed", Some("failure"), "https://ci/b"),
        from_check_run("lint", "completed", Some("cancelled"), ""),
    ]);
    assert_eq!(
        decide(
            &snap("h1", "blocked"),
            &failed,
            &Facts::default(),
            &JobState::default(),
            &POLICY,
            at(0)
        ),
        Step::Block("CI failing: build https://ci/b; lint".into())
    );
}

#[test]
fn a_missing_review_waits_then_blocks_naming_reviews() {
    let facts = Facts {
        required_approvals: 1,
        review_decision: Some("REVIEW_REQUIRED".into()),
        ..Default::default()
    };
    let job = waiting(&JobState::default(), "h1", at(0));
    let Step::Wait(what) = decide(&snap("h1", "blocked"), &CiVerdict::Green, &facts, &job, &POLICY, at(5)) else {
        panic!("waits")
    };
    assert_eq!(what, ["reviews: 1 more approving review (0 of 1 required)"]);
    assert_eq!(
        decide(&snap("h1", "blocked"), &CiVerdict::Green, &facts, &job, &POLICY, at(10)),
        Step::Block("reviews still missing after 10 min: 1 more approving review (0 of 1 required)".into())
    );
    let unnamed = decide(
        &snap("h1", "blocked"),
        &CiVerdict::Green,
        &Facts::default(),
        &job,
        &POLICY,
        at(10),
    );
    assert!(
        matches!(&unnamed, Step::Block(r) if r.contains("still reports the merge blocked")),
        "{unnamed:?}"
    );
}

#[test]
fn a_deployment_the_rules_require_waits_then_blocks_naming_it_beside_any_review() {
    let facts = Facts {
        undeployed: vec!["staging".into()],
        ..Default::default()
    };
    let job = waiting(&JobState::default(), "h1", at(0));
    let Step::Wait(what) = decide(&snap("h1", "blocked"), &CiVerdict::Green, &facts, &job, &POLICY, at(5)) else {
        panic!("waits")
    };
    assert_eq!(
        what,
        ["a successful deployment to staging (the branch's rules require one of the head)"]
    );
    let both = Facts {
        required_approvals: 1,
        review_decision: Some("REVIEW_REQUIRED".into()),
        ..facts
    };
    assert_eq!(
        decide(&snap("h1", "blocked"), &CiVerdict::Green, &both, &job, &POLICY, at(10)),
        Step::Block(
            "still missing after 10 min: 1 more approving review (0 of 1 required); \
             a successful deployment to staging (the branch's rules require one of the head)"
                .into()
        )
    );
}

#[test]
fn a_merge_queue_branch_enqueues_follows_the_entry_and_reports_its_removal() {
    let queue = Facts {
        merge_queue: true,
        ..Default::default()
    };
    assert_eq!(
        decide(
            &snap("h1", "clean"),
            &CiVerdict::Green,
            &queue,
            &JobState::default(),
            &POLICY,
            at(0)
        ),
        Step::Enqueue { sha: "h1".into() }
    );
    let job = enqueued(&JobState::default(), "h1", at(0));
    let queued = Facts {
        queue_position: Some(2),
        ..queue.clone()
    };
    assert_eq!(
        decide(&snap("h1", "clean"), &CiVerdict::Green, &queued, &job, &POLICY, at(1)),
        Step::Wait(vec!["the merge queue (position 2)".into()])
    );
    let removed = Facts {
        dequeued_reason: Some("Required status checks failed on the merge group: build".into()),
        ..queue.clone()
    };
    assert_eq!(
        decide(&snap("h1", "clean"), &CiVerdict::Green, &removed, &job, &POLICY, at(2)),
        Step::Block("removed from the merge queue: Required status checks failed on the merge group: build".into())
    );
    let mut merged = snap("h1", "unknown");
    (merged.state, merged.merged) = ("closed".into(), true);
    assert_eq!(
        decide(&merged, &CiVerdict::Green, &queued, &job, &POLICY, at(3)),
        Step::Complete("Merged PR #7 through the merge queue".into())
    );
    assert_eq!(
        decide(&merged, &CiVerdict::Green, &queue, &JobState::default(), &POLICY, at(3)),
        Step::Complete(ALREADY_MERGED.into())
    );
}

#[test]
fn the_ci_wait_is_the_tasks_then_the_repositorys_then_the_workspaces_then_the_default() {
    assert_eq!(ci_wait_minutes(Some(5), Some(10), Some(20), 30), 5);
    assert_eq!(ci_wait_minutes(None, Some(10), Some(20), 30), 10);
    assert_eq!(ci_wait_minutes(None, None, Some(20), 30), 20);
    assert_eq!(ci_wait_minutes(None, None, None, 30), 30);
    // Whatever is stored is pulled into 1 to 1440 minutes.
    assert_eq!(ci_wait_minutes(None, Some(0), Some(20), 30), 1);
    assert_eq!(ci_wait_minutes(None, None, Some(i64::MAX), 30), 1440);
    assert_eq!(ci_wait_minutes(Some(u64::MAX), None, None, 30), 1440);
    assert_eq!(ci_wait_minutes(None, None, None, i64::MIN), 1);
}

#[test]
fn decisions_carry_message_ids_for_every_language() {
    let now = t("2026-03-08T12:00:00Z");
    let failing = CiVerdict::Failed(vec![from_check_run(
        "build",
        "completed",
        Some("failure"),
        "https://ci/1",
    )]);
    let super::Step::Block(said) = super::decide(
        &pr("open", "clean"),
        &failing,
        &Facts::default(),
        &JobState::default(),
        &POLICY,
        now,
    ) else {
        panic!("blocks")
    };
    assert_eq!(said.id, "ci-failing");
    let Some(Arg::List(checks)) = said.args.get("checks") else {
        panic!("{said:?}")
    };
    assert_eq!(
        checks[0],
        Said::new("check-link")
            .with("name", "build")
            .with("url", "https://ci/1")
    );
    let super::Step::Wait(what) = super::decide(
        &pr("open", "unknown"),
        &CiVerdict::Green,
        &Facts::default(),
        &JobState::default(),
        &POLICY,
        now,
    ) else {
        panic!("waits")
    };
    assert_eq!(what, [Said::new("mergeability")]);
}

/// A decision on green CI and no gate facts, at a fixed moment.
fn decide_green(pr: &PrSnapshot, job: &JobState) -> Step {
    decide(
        pr,
        &CiVerdict::Green,
        &Facts::default(),
        job,
        &POLICY,
        t("2026-03-08T12:00:00Z"),
    )
}

fn approved(sha: &str, diff: &str) -> JobState {
    JobState {
        approved_sha: sha.into(),
        approved_diff: diff.into(),
        ..Default::default()
    }
}

#[test]
fn a_head_other_than_the_approved_one_blocks_before_anything_is_merged() {
    let clean = pr("open", "clean");
    assert_eq!(
        decide_green(&clean, &approved("h1", "d")),
        Step::Merge { sha: "h1".into() }
    );
    assert_eq!(
        decide_green(&clean, &approved("a0a0a0a0a0", "d")),
        Step::Block("the PR changed after approval (approved a0a0a0a, now h1); review it and approve again".into())
    );
    // Even a queued PR: GitHub ejects a new head, and nobody approved it.
    let queued = JobState {
        queued: true,
        ..approved("a0", "d")
    };
    assert!(matches!(
        decide_green(&clean, &queued),
        Step::Block(s) if s.starts_with("the PR changed after approval")
    ));
    assert_eq!(
        decide_green(&clean, &approved("a0", "")),
        Step::Block(
            "the PR's head moved after approval (approved a0, now h1) and its diff is too large to compare; \
             review it and approve again"
                .into()
        )
    );
}

#[test]
fn a_merged_or_closed_pr_ends_the_job_whatever_head_it_has() {
    let mut merged = pr("closed", "unknown");
    merged.merged = true;
    assert_eq!(
        decide_green(&merged, &approved("a0", "d")),
        Step::Complete(ALREADY_MERGED.into())
    );
    assert_eq!(
        decide_green(&pr("closed", ""), &approved("a0", "d")),
        Step::Block("PR closed without merge".into())
    );
}

#[test]
fn an_unbound_job_from_before_bindings_decides_as_before() {
    assert_eq!(
        decide_green(&pr("open", "clean"), &JobState::default()),
        Step::Merge { sha: "h1".into() }
    );
}
