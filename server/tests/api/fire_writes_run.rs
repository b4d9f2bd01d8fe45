//! A firing writes its own run: the run task, its `task_created` row, its
//! lease and the firing's anchors land in one transaction, with no hop
//! through `automation.triggered`, and two writers firing one key make one run.

use kandev_core::api::{META_TARGET_TASK_ID, Origin};
use kandev_core::firing::SKIP_ALREADY_FIRED;
use kandev_core::gate::Gate;
use kandev_core::run_status::RunStatus;
use kandev_server::automation::{FireOutcome, FireRequest};
use serde_json::json;

use crate::on_both_databases;
use crate::support::{Db, spawn_app};

fn firing(automation: &str, trigger: &str, target: &str) -> FireRequest {
    FireRequest {
        automation_id: automation.into(),
        trigger_id: trigger.into(),
        trigger_type: "github_pr_merged".into(),
        data: json!({"task_id": target, "owner": "acme", "repo": "api", "pr_number": 7}),
        dedup_key: format!("pr_merged:{target}:acme/api#7"),
    }
}

/// With nobody subscribed to `automation.triggered`, a firing still has its
/// run the moment it returns: task, row, anchors, and no event left behind.
async fn a_firing_writes_its_run_task_and_row_before_it_returns(db: Db) {
    let app = spawn_app(db).await;
    let (a, trigger, target) = app.merged_firing_setup().await;
    app.services().orchestrator.stop().await;
    let backlog = app.services().store.outbox_backlog().await.unwrap();

    let outcome = app
        .services()
        .automation
        .fire_trigger(firing(&a, &trigger, &target))
        .await
        .unwrap();

    assert_eq!(outcome, FireOutcome::Fired);
    let runs = app.runs_of(&a).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].status, RunStatus::TaskCreated);
    let task = app.services().store.get_task(&runs[0].task_id).await.unwrap();
    assert_eq!(task.origin, Origin::AutomationRun);
    assert_eq!(task.metadata[META_TARGET_TASK_ID], json!(target));
    let automation = app.services().store.get_automation(&a).await.unwrap();
    assert!(automation.last_triggered_at.is_some(), "the automation's anchor moved");
    assert!(
        automation.triggers[0].last_evaluated_at.is_some(),
        "the trigger's anchor moved"
    );
    assert_eq!(
        app.services().store.outbox_backlog().await.unwrap(),
        backlog,
        "no automation.triggered event was needed"
    );
    app.settle().await;
    app.stop().await;
}
on_both_databases!(a_firing_writes_its_run_task_and_row_before_it_returns);

/// Two writers (replicas, or two triggers on one event) fire the same key at
/// the same moment: one run and one task, and the other is told it already
/// fired rather than that it fired.
async fn two_firings_of_one_key_at_once_make_one_run_and_one_dedup(db: Db) {
    let app = spawn_app(db).await;
    let (a, trigger, target) = app.merged_firing_setup().await;
    let engine = app.services().automation.clone();
    let (x, y) = tokio::join!(
        engine.fire_trigger(firing(&a, &trigger, &target)),
        engine.fire_trigger(firing(&a, &trigger, &target)),
    );
    let mut outcomes = [x.unwrap(), y.unwrap()];
    outcomes.sort_by_key(|o| o != &FireOutcome::Fired);
    assert_eq!(
        outcomes,
        [
            FireOutcome::Fired,
            FireOutcome::Skipped {
                reason: SKIP_ALREADY_FIRED.into(),
                gate: Gate::Dedup
            }
        ]
    );
    app.settle().await;
    assert_eq!(app.runs_of(&a).await.len(), 1);
    assert_eq!(app.run_task_count().await, 1, "no second run task");
    app.stop().await;
}
on_both_databases!(two_firings_of_one_key_at_once_make_one_run_and_one_dedup);
