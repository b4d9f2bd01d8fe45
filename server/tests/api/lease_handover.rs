//! A lease is this replica's only while no other can have taken it: a
//! database error shorter than its TTL does not give it up, a renewal that
//! never comes back does, and a run whose lease another replica took is
//! that replica's alone — this one's agent is stopped and its outcome is
//! not the run's.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use kandev_server::clock::ManualClock;
use kandev_server::config::AgentsConfinement;
use kandev_server::coord::{LEASE_TTL, Leases};
use kandev_server::orchestrator::{AgentRuntime, RunStart};
use kandev_server::testkit::processes::{ends_within, running, written_line};
use sqlx::Connection;

use crate::access_agents::run_by_hand;
use crate::support::{Db, Spawn, TestApp, spawn_app};

/// The database cannot be asked about leases until `back` (a transient
/// error: a restart, a pool exhausted), as a missing table makes it.
async fn leases_unreachable(app: &TestApp) {
    app.exec("ALTER TABLE leases RENAME TO leases_away").await;
}

async fn back(app: &TestApp) {
    app.exec("ALTER TABLE leases_away RENAME TO leases").await;
}

/// `Leases` of a replica "a" on `app`'s database, on a clock of their own,
/// holding `name` through one renewal pass the database could not answer.
async fn held_through_a_failed_renewal(app: &TestApp, name: &str) -> (Leases, Arc<ManualClock>) {
    let start = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).single().expect("a time");
    let clock = Arc::new(ManualClock::new(start));
    let leases = Leases::new(app.services().store.clone(), clock.clone(), "replica-a".into());
    assert!(leases.try_hold(name).await);
    leases_unreachable(app).await;
    clock.advance(chrono::Duration::seconds(3));
    leases.renew().await;
    assert!(leases.holds(name), "one failed renewal gave the lease up");
    (leases, clock)
}

async fn a_lease_outlives_a_database_error_shorter_than_its_ttl(db: Db) {
    let app = spawn_app(db).await;
    let (leases, clock) = held_through_a_failed_renewal(&app, "run:blip").await;
    back(&app).await;
    clock.advance(chrono::Duration::seconds(3));
    leases.renew().await;
    assert!(leases.holds("run:blip"));
    // Renewed from the second pass: it now runs out a TTL after that.
    let other = Leases::new(app.services().store.clone(), clock.clone(), "replica-b".into());
    clock.advance(chrono::Duration::seconds(8));
    assert!(
        !other.try_hold("run:blip").await,
        "the lease was not renewed after the error"
    );
    app.stop().await;
}
crate::on_both_databases!(a_lease_outlives_a_database_error_shorter_than_its_ttl);

async fn a_lease_the_database_cannot_renew_before_it_runs_out_is_dropped_first(db: Db) {
    let app = spawn_app(db).await;
    let (leases, clock) = held_through_a_failed_renewal(&app, "run:outage").await;
    // It would run out before the next pass: what runs under it stops
    // now, before another replica can take it.
    clock.advance(chrono::Duration::seconds(3));
    leases.renew().await;
    assert!(
        !leases.holds("run:outage"),
        "held up to the point another replica could take it"
    );
    back(&app).await;
    app.stop().await;
}
crate::on_both_databases!(a_lease_the_database_cannot_renew_before_it_runs_out_is_dropped_first);

async fn a_lease_whose_renewal_never_came_back_is_not_held_once_it_no_longer_vouches(db: Db) {
    let app = spawn_app(db).await;
    let start = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).single().expect("a time");
    let clock = Arc::new(ManualClock::new(start));
    let leases = Leases::new(app.services().store.clone(), clock.clone(), "replica-a".into());
    assert!(leases.try_hold("run:hung").await);
    // No renewal pass returns (one hangs on the database): only time passes.
    clock.advance(chrono::Duration::milliseconds(6_999));
    assert!(leases.holds("run:hung"));
    clock.advance(chrono::Duration::milliseconds(1));
    assert!(!leases.holds("run:hung"), "held on the word of a renewal 7 s old");
    assert_eq!(leases.left("run:hung"), None);
    app.stop().await;
}
crate::on_both_databases!(a_lease_whose_renewal_never_came_back_is_not_held_once_it_no_longer_vouches);

/// A run by hand whose agent appends its pid to `agents` and then works a
/// minute: the automation, and the first agent's pid once it is mid-turn.
async fn slow_run(app: &TestApp, agents: &std::path::Path) -> (String, String) {
    let ws = app.workspace_with_repo("W").await;
    let prompt = format!("e2e:spawn(\"echo $PPID >> {}\")\ne2e:delay(60000)", agents.display());
    let a = run_by_hand(app, &ws, &prompt).await;
    let pid = written_line(agents, Duration::from_secs(30))
        .await
        .expect("the agent's pid");
    (a, pid)
}

#[tokio::test]
async fn a_turn_whose_run_another_replica_took_is_stopped_and_does_not_end_the_run() {
    let (logs, _guard) = crate::logs::capture();
    let app = spawn_app(Db::Sqlite).await;
    let out = tempfile::tempdir().expect("out");
    let agents = out.path().join("agents");
    let (a, pid) = slow_run(&app, &agents).await;
    assert!(running(&pid), "the premise: the agent is mid-turn");
    let run = app.runs_of(&a).await.pop().expect("a run");
    // Another replica resumed the run while this one stalled.
    app.exec(&format!(
        "UPDATE leases SET owner = 'replica-b' WHERE name = 'run:{}'",
        run.task_id
    ))
    .await;
    assert!(
        ends_within(&pid, Duration::from_secs(15)).await,
        "the agent went on beside the other replica's"
    );
    app.services().runtime.wait_idle().await;
    let after = app.runs_of(&a).await.pop().expect("the run");
    assert_eq!(after.status, run.status, "this replica's turn ended the other's run");
    let moved = "this replica no longer holds the run's lease";
    assert_eq!(logs.at("WARN", &[&format!("{moved}: its agent was stopped")]).len(), 1);
    let not_the_run_s = format!("{moved}: its turn's outcome is not the run's");
    assert_eq!(logs.at("WARN", &[&not_the_run_s]).len(), 1);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_whose_lease_the_database_could_not_renew_stops_before_its_run_is_resumed() {
    let app = spawn_app(Db::Sqlite).await;
    let out = tempfile::tempdir().expect("out");
    let agents = out.path().join("agents");
    let (a, first) = slow_run(&app, &agents).await;
    leases_unreachable(&app).await;
    // After some seconds of failed renewals, its lease would run out
    // before the next one.
    assert!(
        ends_within(&first, Duration::from_secs(15)).await,
        "the agent went on under a lease that ran out"
    );
    back(&app).await;
    // Its lease runs out; the run is resumed once, by a new agent.
    let pids = || std::fs::read_to_string(&agents).unwrap_or_default();
    crate::support::eventually("a resumed agent", Duration::from_secs(40), || async {
        pids().lines().count() >= 2
    })
    .await;
    let second = pids().lines().nth(1).unwrap_or_default().to_string();
    assert_ne!(second, first);
    assert!(!running(&first), "two agents at once on one run");
    assert_eq!(app.runs_of(&a).await.len(), 1, "one run, resumed");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_whose_lease_renewal_hangs_stops_before_its_lease_could_run_out() {
    // Unconfined: no keeper's deadline, only this replica's own check.
    let app = Spawn::new(Db::Postgres)
        .settings(|s| s.agents_confinement = AgentsConfinement::Off)
        .start()
        .await;
    let out = tempfile::tempdir().expect("out");
    let agents = out.path().join("agents");
    let (a, first) = slow_run(&app, &agents).await;
    // Another session holds the leases table: this replica's next renewal
    // waits on it and does not come back (as over a connection that hangs).
    let mut holder = sqlx::PgConnection::connect(&app.database_url)
        .await
        .expect("a connection");
    sqlx::query("BEGIN").execute(&mut holder).await.expect("begin");
    sqlx::query("LOCK TABLE leases IN ACCESS EXCLUSIVE MODE")
        .execute(&mut holder)
        .await
        .expect("lock");
    // Last renewed before the lock, its lease runs out within a TTL of it.
    assert!(
        ends_within(&first, LEASE_TTL).await,
        "the agent went on under a lease whose renewal never came back"
    );
    sqlx::query("ROLLBACK").execute(&mut holder).await.expect("rollback");
    let pids = || std::fs::read_to_string(&agents).unwrap_or_default();
    crate::support::eventually("a resumed agent", Duration::from_secs(40), || async {
        pids().lines().count() >= 2
    })
    .await;
    assert!(!running(&first), "two agents at once on one run");
    assert_eq!(app.runs_of(&a).await.len(), 1, "one run, resumed");
    app.stop().await;
}

#[tokio::test]
async fn a_start_made_after_its_run_s_lease_was_lost_starts_no_agent() {
    let (logs, _guard) = crate::logs::capture();
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let out = tempfile::tempdir().expect("out");
    let started = out.path().join("started");
    let prompt = format!("e2e:spawn(\"echo $PPID >> {}\")", started.display());
    let a = run_by_hand(&app, &ws, &prompt).await;
    let run = app.wait_for_run_status(&a, "succeeded").await;
    // The run's first start, made again once its lease is gone: as a start
    // that waited for a slot while this replica lost the run to another.
    let services = app.services();
    let task = services.store.get_task(&run.task_id).await.expect("the run's task");
    let again = RunStart {
        task,
        prompt,
        agent_profile_id: String::new(),
        executor_profile_id: String::new(),
        repository: None,
        automation_id: a.clone(),
    };
    services.runtime.start_run(again).await.expect("handled");
    services.runtime.wait_idle().await;
    let lines = std::fs::read_to_string(&started).unwrap_or_default().lines().count();
    assert_eq!(lines, 1, "an agent started for a run this replica does not hold");
    let not_started = "this replica no longer holds the run's lease: its agent was not started";
    assert_eq!(logs.at("WARN", &[not_started]).len(), 1);
    app.stop().await;
}

/// What a queued start leaves once the run's lease went to another replica
/// while it waited: hold every start slot, lose the lease, let it go on.
async fn queued_start_after_the_lease_went(app: &TestApp, ws: &str) -> String {
    let services = app.services();
    let slots = services
        .orchestrator
        .start_slots()
        .acquire_many(kandev_server::orchestrator::CONCURRENT_STARTS as u32)
        .await
        .expect("every start slot");
    let a = run_by_hand(app, ws, "e2e:message(\"hi\")").await;
    let task = app.runs_of(&a).await.first().expect("its run").task_id.clone();
    let lease = format!("run:{task}");
    app.exec(&format!(
        "UPDATE leases SET owner = 'another-replica' WHERE name = '{lease}'"
    ))
    .await;
    let leases = services.leases.clone();
    crate::support::eventually("the lease to go", Duration::from_secs(10), || {
        let (leases, lease) = (leases.clone(), lease.clone());
        async move { !leases.holds(&lease) }
    })
    .await;
    drop(slots);
    task
}

#[tokio::test]
async fn a_start_that_waited_its_turn_while_its_run_s_lease_was_lost_makes_nothing() {
    let (logs, _guard) = crate::logs::capture();
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let task = queued_start_after_the_lease_went(&app, &ws).await;
    let not_started = "this replica no longer holds the run's lease: its agent was not started";
    crate::support::eventually("the start to be left", Duration::from_secs(10), || {
        let said = logs.at("WARN", &[not_started]).len();
        async move { said == 1 }
    })
    .await;
    let sessions = app.count(&format!("agent_sessions WHERE task_id = '{task}'")).await;
    assert_eq!(sessions, 0, "a session beside the holder's");
    let worktrees = app.services().settings.data_dir.join("worktrees").join(&task);
    assert!(!worktrees.exists(), "a worktree beside the holder's");
    let untouched = format!("automation_runs WHERE task_id = '{task}' AND status = 'task_created'");
    assert_eq!(app.count(&untouched).await, 1, "the run is the holder's to start");
    app.stop().await;
}

/// A start that fails once its lease is gone (a worktree that took longer
/// than the lease, and then failed, while another replica took the run).
struct FailingAfterTheLeaseWent(Arc<kandev_server::state::Services>);

#[async_trait::async_trait]
impl AgentRuntime for FailingAfterTheLeaseWent {
    async fn start_run(&self, req: RunStart) -> Result<String, String> {
        let lease = format!("run:{}", req.task.id);
        sqlx::query("UPDATE leases SET owner = 'another-replica' WHERE name = $1")
            .bind(&lease)
            .execute(self.0.store.pool())
            .await
            .map_err(|e| e.to_string())?;
        while self.0.leases.holds(&lease) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err("could not make the worktree".into())
    }
    async fn reclaim_worktree(&self, _task_id: &str) -> Result<(), String> {
        Ok(())
    }
}

#[tokio::test]
async fn a_start_or_resumption_that_failed_after_its_run_s_lease_was_lost_leaves_the_run_to_its_holder() {
    let (logs, _guard) = crate::logs::capture();
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let services = app.services();
    services
        .orchestrator
        .set_runtime(Arc::new(FailingAfterTheLeaseWent(services.clone())));
    let a = run_by_hand(&app, &ws, "e2e:message(\"hi\")").await;
    let left = "this replica no longer holds the run's lease: its start's failure is not the run's";
    crate::support::eventually("the first start to be left", Duration::from_secs(10), || {
        let n = logs.at("WARN", &[left]).len();
        async move { n == 1 }
    })
    .await;
    let runs = app.runs_of(&a).await;
    assert_eq!(
        runs.first().map(|r| r.status.as_str()),
        Some("task_created"),
        "the run is the holder's to start"
    );
    // The other replica's lease lapses: this one's recovery resumes the run,
    // and loses it again while the resumption fails.
    app.exec("UPDATE leases SET expires_at = '2000-01-01T00:00:00Z' WHERE owner = 'another-replica'")
        .await;
    let said = "this replica no longer holds the run's lease: its resumption's failure is not the run's";
    crate::support::eventually("the resumption to be left", Duration::from_secs(15), || {
        let n = logs.at("WARN", &[said]).len();
        async move { n >= 1 }
    })
    .await;
    let runs = app.runs_of(&a).await;
    assert_eq!(
        runs.first().map(|r| r.status.as_str()),
        Some("task_created"),
        "the run is the holder's to end"
    );
    app.stop().await;
}

/// A run is let go only once it reads as ended: a run still open without
/// its lease is what recovery resumes. Here the run's end is held up (its
/// table locked against writes, reads still allowed) while the turn ends
/// and recovery passes; the run ends once, with one session.
#[tokio::test]
async fn a_run_ending_keeps_its_lease_until_it_reads_as_ended() {
    let (logs, _guard) = crate::logs::capture();
    let app = spawn_app(Db::Postgres).await;
    let ws = app.workspace_with_repo("W").await;
    let a = run_by_hand(&app, &ws, "e2e:delay(1500)\ne2e:message(\"done\")").await;
    let task = app.runs_of(&a).await.first().expect("its run").task_id.clone();
    let mut holder = sqlx::PgConnection::connect(&app.database_url)
        .await
        .expect("a connection");
    sqlx::query("BEGIN").execute(&mut holder).await.expect("begin");
    sqlx::query("LOCK TABLE automation_runs IN EXCLUSIVE MODE")
        .execute(&mut holder)
        .await
        .expect("lock");
    // The turn ends (1.5 s) and recovery passes (every second) meanwhile.
    tokio::time::sleep(Duration::from_secs(4)).await;
    sqlx::query("ROLLBACK").execute(&mut holder).await.expect("unlock");
    let run = app.wait_for_run_status(&a, "succeeded").await;
    assert_eq!(run.task_id, task);
    let sessions = app.count(&format!("agent_sessions WHERE task_id = '{task}'")).await;
    assert_eq!(sessions, 1, "the ending run was started again");
    assert!(logs.at("INFO", &["resumed a run whose replica stopped"]).is_empty());
    app.stop().await;
}
