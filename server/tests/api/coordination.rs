//! Coordination in one process: what a crash leaves behind is finished by
//! the upkeep (the outbox relay, run recovery, merge-job takeover), and a
//! firing delivered twice or raced by a second writer produces one run.

use std::time::Duration;

use chrono::Utc;
use kandev_core::api::{META_AUTOMATION_ID, META_TARGET_TASK_ID, META_TRIGGER_ID, META_TRIGGER_TYPE, Origin};
use kandev_core::board::TaskStatus;
use kandev_core::events::{AUTOMATION_TRIGGERED, AutomationTriggered, Event, Payload, SOURCE_AUTOMATION};
use kandev_core::run_status::RunStatus;
use kandev_server::coord::Leases;
use kandev_server::store::{NewRun, NewTask};
use serde_json::json;

use crate::engine::{ARCHIVE_PROMPT, Form, merged_pr};
use crate::github_support::{fast, simulator};
use crate::support::{Db, TestApp, eventually, spawn_app};

/// A run task and its `task_created` row as a replica that died right after
/// writing them would leave: no lease, no agent.
async fn orphaned_merged_run(
    app: &TestApp,
    ws: &str,
    automation: &str,
    target: &str,
    recoveries: i64,
) -> (String, String) {
    let s = app.services();
    let a = s.store.get_automation(automation).await.unwrap();
    let repo = app.get(&format!("/api/v1/workspaces/{ws}/repositories")).await.body[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let prompt = format!(r#"e2e:mcp:kandev:archive_task_kandev({{"task_id":"{target}"}})"#);
    let task = s
        .store
        .create_task(
            &NewTask {
                workspace_id: ws.into(),
                title: "run".into(),
                description: prompt,
                status: TaskStatus::Running,
                origin: Origin::AutomationRun,
                repository_id: Some(repo),
                base_branch: "main".into(),
                metadata: json!({META_AUTOMATION_ID: automation, META_TRIGGER_ID: a.triggers[0].id,
                                 META_TRIGGER_TYPE: "github_pr_merged", META_TARGET_TASK_ID: target}),
            },
            Utc::now(),
        )
        .await
        .unwrap();
    let run = s
        .store
        .insert_run(
            &NewRun {
                automation_id: automation.into(),
                trigger_id: a.triggers[0].id.clone(),
                trigger_type: "github_pr_merged".into(),
                task_id: task.id.clone(),
                status: RunStatus::TaskCreated,
                dedup_key: format!("pr_merged:{target}:acme/api#7"),
                trigger_data: json!({"task_id": target}),
                error_message: String::new(),
                event_id: String::new(),
            },
            Utc::now(),
        )
        .await
        .unwrap();
    app.exec(&format!(
        "UPDATE automation_runs SET recoveries = {recoveries} WHERE id = '{run}'"
    ))
    .await;
    (task.id, run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_replica_died_is_resumed_once_on_the_same_run_task() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    let (run_task, _) = orphaned_merged_run(&app, &ws, &a, &target, 0).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    assert_eq!(run.task_id, run_task, "resumed on the same run task");
    assert!(
        app.task_json(&target).await["archived_at"].is_string(),
        "the bound target was archived"
    );
    let recoveries = sqlx::query("SELECT recoveries FROM automation_runs WHERE task_id = $1")
        .bind(&run_task)
        .fetch_one(app.services().store.pool())
        .await
        .unwrap();
    assert_eq!(sqlx::Row::try_get::<i64, _>(&recoveries, "recoveries").unwrap(), 1);
    let metrics = reqwest::get(format!("{}/metrics", app.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("kandev_runs_recovered_total{outcome=\"resumed\"} 1"),
        "{metrics}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_lost_a_second_time_is_finished_as_failed_with_the_reason() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    // A session the dead replica left "running".
    let (run_task, _) = orphaned_merged_run(&app, &ws, &a, &target, 1).await;
    let dead = app
        .services()
        .store
        .create_session(&run_task, "mock", "", Utc::now())
        .await
        .unwrap();
    app.exec(&format!(
        "UPDATE agent_sessions SET state = 'RUNNING' WHERE id = '{}'",
        dead.session.id
    ))
    .await;
    let run = app.wait_for_run_status(&a, "failed").await;
    let shown = app.get(&format!("/api/v1/automations/{a}/runs")).await.body;
    assert_eq!(
        shown[0]["error_message"],
        "the agent's session was lost with its replica twice; the run is not resumed again"
    );
    assert_eq!(run.task_id, run_task);
    let sessions = app.get(&format!("/api/v1/tasks/{run_task}/sessions")).await.body;
    assert_eq!(sessions[0]["state"], "FAILED", "the dead session is closed: {sessions}");
    assert!(app.task_json(&target).await["archived_at"].is_null());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_a_crash_left_in_the_outbox_is_relayed() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let target = app.task(&ws, "target").await;
    let a = app
        .merged_automation(&ws, json!({"all_repos": true}), ARCHIVE_PROMPT, 1)
        .await;
    // Written with its state, never published: the writer died on the next line.
    let event = Event {
        id: "left-behind".into(),
        subject: kandev_core::events::TASK_PR_UPDATED.into(),
        source: "github".into(),
        timestamp: Utc::now() - chrono::Duration::seconds(5),
        data: Payload::TaskPr(merged_pr(&target, "acme", "api", 7)),
    };
    let mut tx = app.services().store.write_tx().await.unwrap();
    kandev_server::store::outbox::enqueue(&mut tx, &event).await.unwrap();
    tx.commit().await.unwrap();
    app.wait_for_run_status(&a, "succeeded").await;
    assert!(app.task_json(&target).await["archived_at"].is_string());
    eventually("the event to be marked published", Duration::from_secs(5), || async {
        app.services().store.outbox_backlog().await.unwrap() == 0
    })
    .await;
    app.stop().await;
}

fn triggered(id: &str, automation: &str, trigger: &str, target: &str) -> Event {
    Event {
        id: id.into(),
        subject: AUTOMATION_TRIGGERED.into(),
        source: SOURCE_AUTOMATION.into(),
        timestamp: Utc::now(),
        data: Payload::AutomationTriggered(AutomationTriggered {
            automation_id: automation.into(),
            trigger_id: trigger.into(),
            trigger_type: "github_pr_merged".into(),
            trigger_data: json!({"task_id": target, "owner": "acme", "repo": "api", "pr_number": 7}),
            dedup_key: format!("pr_merged:{target}:acme/api#7"),
        }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_firing_delivered_twice_or_raced_by_another_writer_makes_one_run() {
    let app = spawn_app(Db::Sqlite).await;
    let (a, trigger, target) = app.merged_firing_setup().await;
    let bus = app.services().bus.clone();
    // The same event twice (a redelivery), and a second event for the same
    // key (another replica's firing), all at once.
    let sends = [
        triggered("event-1", &a, &trigger, &target),
        triggered("event-1", &a, &trigger, &target),
        triggered("event-2", &a, &trigger, &target),
    ]
    .map(|e| {
        let bus = bus.clone();
        tokio::spawn(async move { bus.publish_event(e).await })
    });
    for s in sends {
        s.await.unwrap().unwrap();
    }
    app.settle().await;
    let runs = app.runs_of(&a).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(app.run_task_count().await, 1, "no second run task");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_has_one_holder_and_passes_on_when_its_holder_stops_renewing() {
    let app = spawn_app(Db::Sqlite).await;
    let (store, clock) = (app.services().store.clone(), app.services().clock.clone());
    let a = Leases::new(store.clone(), clock.clone(), "replica-a".into());
    let b = Leases::new(store.clone(), clock.clone(), "replica-b".into());
    let (x, y) = tokio::join!(a.try_hold("job"), b.try_hold("job"));
    assert!(x ^ y, "exactly one of two racing replicas wins");
    let (holder, other) = if x { (&a, &b) } else { (&b, &a) };
    assert!(holder.try_hold("job").await, "the holder renews");
    assert!(!other.try_hold("job").await);
    // The holder dies: its lease expires, and the other takes it.
    app.exec("UPDATE leases SET expires_at = '2000-01-01T00:00:00.000000Z' WHERE name = 'job'")
        .await;
    assert!(other.try_hold("job").await);
    holder.renew().await;
    assert!(!holder.holds("job"), "the stalled holder learns it lost the lease");
    app.stop().await;
}

/// A replica holding many leases (one per running agent turn) renews them
/// together: every one it still holds moves on, expired or not, and the one
/// another replica took over while it stalled is dropped, not taken back.
async fn many_leases_renew_together_and_a_lost_one_is_dropped(db: Db) {
    let app = spawn_app(db).await;
    let (store, clock) = (app.services().store.clone(), app.services().clock.clone());
    let holder = Leases::new(store.clone(), clock.clone(), "replica-a".into());
    let other = Leases::new(store.clone(), clock.clone(), "replica-b".into());
    let names: Vec<String> = (0..150).map(|i| format!("run:many-{i}")).collect();
    for name in &names {
        assert!(holder.try_hold(name).await);
    }
    // The holder stalls past the expiry of all of them; another replica
    // takes one over meanwhile.
    app.exec("UPDATE leases SET expires_at = '2000-01-01T00:00:00.000000Z' WHERE name LIKE 'run:many-%'")
        .await;
    assert!(other.try_hold("run:many-70").await);
    holder.renew().await;
    let now = kandev_server::store::time_to_text(clock.now());
    for name in &names {
        if name == "run:many-70" {
            assert!(!holder.holds(name), "the lease taken over is dropped");
            assert!(other.holds(name));
        } else {
            assert!(holder.holds(name), "{name} is still held");
        }
    }
    let row = sqlx::query(
        "SELECT COUNT(*) AS n FROM leases WHERE name LIKE 'run:many-%' AND owner = 'replica-a' AND expires_at > $1",
    )
    .bind(&now)
    .fetch_one(app.services().store.pool())
    .await
    .unwrap();
    assert_eq!(
        sqlx::Row::try_get::<i64, _>(&row, "n").unwrap(),
        149,
        "every kept lease renewed"
    );
    app.stop().await;
}
crate::on_both_databases!(many_leases_renew_together_and_a_lost_one_is_dropped);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_job_nobody_drives_is_taken_over() {
    let gh = simulator().await;
    let (n, sha) = gh.open("Ship");
    gh.green_build(&sha);
    let app = fast(&gh, Db::Sqlite).start().await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "Ship").await;
    app.patch(&format!("/api/v1/tasks/{t}"), json!({"status": "running"}))
        .await;
    // What a replica that died mid-merge leaves: a running task, its job, no lease.
    app.exec(&format!(
        "INSERT INTO merger_jobs (task_id, owner, repo, pr_number, state, timeout_minutes, wait_started_at, updated_branch, created_at, updated_at) \
         VALUES ('{t}', 'acme', 'api', {n}, 'running', 10, NULL, 0, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')"
    ))
    .await;
    eventually("the orphaned merge to finish", Duration::from_secs(20), || async {
        app.task_json(&t).await["status"] == "done"
    })
    .await;
    assert_eq!(gh.sim.counters().merges, 1);
    app.stop().await;
}

/// The metric an operator watches for "nothing lost": events written but
/// not yet published, and the oldest one's age; both back to 0 once sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outbox_backlog_and_its_age_are_measured() {
    let app = spawn_app(Db::Sqlite).await;
    let s = app.services();
    // Written a moment ago and not yet published (the relay waits 1.5 s for
    // its writer): the backlog is one event.
    let event = s.outbox.event("test.nobody_listens", "test", Payload::Other(json!({})));
    let mut tx = s.store.write_tx().await.unwrap();
    kandev_server::store::outbox::enqueue(&mut tx, &event).await.unwrap();
    tx.commit().await.unwrap();
    s.outbox.measure().await;
    let text = app.metrics().await;
    assert!(text.contains("kandev_outbox_waiting_events 1\n"), "{text}");
    let age = metric_value(&text, "kandev_outbox_oldest_waiting_seconds");
    assert!((0.0..1.5).contains(&age), "{age}");
    s.outbox.committed(&event).await;
    s.outbox.flush_marks().await;
    s.outbox.measure().await;
    let text = app.metrics().await;
    assert!(text.contains("kandev_outbox_waiting_events 0\n"), "{text}");
    assert_eq!(metric_value(&text, "kandev_outbox_oldest_waiting_seconds"), 0.0);
    app.stop().await;
}

fn metric_value(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{name} missing from {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_row_is_written_with_its_event_in_one_transaction() {
    use kandev_server::board::PrLinker;
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let t = app.task(&ws, "T").await;
    let task = app.services().board.get(&t).await.unwrap();
    let pr = kandev_core::board::PrRef::new("acme", "api", 7);
    // The event cannot be written: the row must not be either, or a change
    // would be stored and never announced (and the next sync would see it
    // as old news).
    app.exec("CREATE TRIGGER refuse_events BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'injected'); END")
        .await;
    assert!(app.services().github.link(&task, &pr).await.is_err());
    assert_eq!(app.count("task_prs").await, 0, "no row without its event");
    app.exec("DROP TRIGGER refuse_events").await;
    app.services().github.link(&task, &pr).await.unwrap();
    assert_eq!(app.count("task_prs").await, 1);
    assert_eq!(app.count("outbox").await, 1, "the row's event");
    // Published at once; marked so with the next upkeep tick's batch.
    app.services().outbox.flush_marks().await;
    assert_eq!(
        app.services().store.outbox_backlog().await.unwrap(),
        0,
        "published after the commit"
    );
    let _ = Form::Typed;
    app.stop().await;
}

/// The orchestrator loads a firing's automation and its redelivery check in
/// one read: the repositories in their order, no triggers, and the run
/// already written for the event.
async fn one_read_gives_a_run_its_automation_and_its_event_s_run(db: Db) {
    let app = spawn_app(db).await;
    let ws = app.workspace("W").await;
    let (first, second) = (
        app.repository(&ws, "acme", "web").await,
        app.repository(&ws, "acme", "api").await,
    );
    let a = app
        .automation(
            &ws,
            json!({"name": "Two repos", "repository_ids": [second, first],
                   "triggers": [{"type": "github_pr_merged", "config": {"all_repos": true}}]}),
        )
        .await;
    let id = a["id"].as_str().expect("id");
    let store = &app.services().store;
    let (automation, answered) = store.automation_for_run(id, "event-1").await.unwrap();
    assert_eq!(
        automation.repository_ids,
        vec![second.clone(), first.clone()],
        "in the saved order"
    );
    assert_eq!(automation.name, "Two repos");
    assert!(automation.triggers.is_empty(), "a run needs no triggers");
    assert_eq!(answered, None);
    let run = NewRun {
        automation_id: id.into(),
        trigger_id: a["triggers"][0]["id"].as_str().expect("trigger").into(),
        trigger_type: "github_pr_merged".into(),
        task_id: String::new(),
        status: RunStatus::Failed,
        dedup_key: String::new(),
        trigger_data: json!({}),
        error_message: "x".into(),
        event_id: "event-1".into(),
    };
    let run_id = store.insert_run(&run, Utc::now()).await.unwrap();
    let (_, answered) = store.automation_for_run(id, "event-1").await.unwrap();
    assert_eq!(answered, Some(run_id), "a redelivered event finds its run");
    let (_, other) = store.automation_for_run(id, "event-2").await.unwrap();
    assert_eq!(other, None);
    assert!(matches!(
        store.automation_for_run("missing", "event-1").await,
        Err(kandev_server::store::StoreError::NotFound)
    ));
    app.stop().await;
}
crate::on_both_databases!(one_read_gives_a_run_its_automation_and_its_event_s_run);
