//! Worktree retention reads only the runs it can act on, however many runs an
//! automation has had (it runs after every finished turn).

use chrono::Duration;
use kandev_core::run_status::{RunStatus, worktrees_to_reclaim};
use kandev_server::store::NewRun;
use kandev_server::store::agents::session_state;
use serde_json::json;

use crate::on_both_databases;
use crate::support::{Db, spawn_app};

async fn retention_reads_only_the_newest_ten_finished_runs_and_those_holding_a_worktree(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace_with_repo("W").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"x\")", 1)
        .await;
    let store = &app.services().store;
    let t0 = chrono::Utc::now() - Duration::hours(1);
    // Forty finished runs, oldest first (every seventh failed); only runs 2
    // and 25 still hold a worktree. Run 40 is still going, in its worktree.
    let mut tasks = vec![];
    for n in 0..=40_i64 {
        let task = app.task(&ws, &format!("run {n}")).await;
        let status = match n {
            40 => RunStatus::TaskCreated,
            n if n % 7 == 3 => RunStatus::Failed,
            _ => RunStatus::Succeeded,
        };
        let at = t0 + Duration::seconds(n);
        let run = NewRun {
            automation_id: a.clone(),
            trigger_id: String::new(),
            trigger_type: "github_pr_merged".into(),
            task_id: task.clone(),
            status,
            dedup_key: format!("key-{n}"),
            trigger_data: json!({}),
            error_message: String::new(),
            event_id: String::new(),
        };
        store.insert_run(&run, at).await.expect("run");
        let worktree = if [2, 25, 40].contains(&n) {
            format!("/worktrees/{n}")
        } else {
            String::new()
        };
        let session = store.create_session(&task, "", &worktree, at).await.expect("session");
        if n != 40 {
            store
                .set_session_state(&session.session.id, session_state::COMPLETED, "end_turn", Some(at))
                .await
                .expect("ended");
        }
        tasks.push(task);
    }

    let got = store.retention_candidates(&a).await.expect("candidates");
    let order: Vec<&str> = got.iter().map(|c| c.run_id.as_str()).collect();
    // Newest first: the open run (it holds a worktree), the ten newest
    // finished runs, then the two older ones that still hold a worktree.
    let mut want: Vec<&str> = vec![&tasks[40]];
    want.extend((30..=39).rev().map(|n| tasks[n].as_str()));
    want.extend([tasks[25].as_str(), tasks[2].as_str()]);
    assert_eq!(order, want, "{} rows read for {} runs", got.len(), tasks.len());
    assert!(got[0].in_use && !got[0].terminal && got[0].has_worktree);
    assert_eq!(
        worktrees_to_reclaim(&got),
        vec![tasks[25].clone(), tasks[2].clone()],
        "the same verdict as over every run"
    );
    app.stop().await;
}
on_both_databases!(retention_reads_only_the_newest_ten_finished_runs_and_those_holding_a_worktree);
