//! Leases are timed by each replica's clock: a replica whose clock is off
//! the database's takes and renews none (handing over what it held) until
//! they agree again, so two replicas never hold one lease for the skew.

use std::sync::Arc;

use kandev_server::clock::{Clock, OffsetClock, SystemClock};
use kandev_server::coord::{ClockCheck, Leases, off_by};

use serde_json::json;

use crate::support::{Db, Spawn, TestApp, spawn_app};

#[tokio::test]
async fn a_replica_whose_clock_is_off_the_database_s_hands_its_leases_over_and_takes_none_until_it_agrees() {
    let (logs, _guard) = crate::logs::capture();
    let app = spawn_app(Db::Postgres).await;
    let store = app.services().store.clone();
    let leases = Arc::new(Leases::new(store.clone(), Arc::new(SystemClock), "replica-a".into()));
    let wall = Arc::new(OffsetClock::new(chrono::Duration::zero()));
    let check = ClockCheck::new(store.clone(), wall.clone(), leases.clone());
    check.check().await;
    assert!(
        leases.try_hold("run:skew").await,
        "the premise: agreeing, it takes a lease"
    );
    for (off, way) in [(10, "ahead of"), (-10, "behind")] {
        wall.set(chrono::Duration::seconds(off));
        check.check().await;
        assert!(!leases.holds("run:skew"), "{way}: it still holds its lease");
        let other = Leases::new(store.clone(), Arc::new(SystemClock), "replica-b".into());
        assert!(
            other.try_hold("run:skew").await,
            "{way}: it did not hand its lease over"
        );
        other.release("run:skew").await;
        assert!(!leases.try_hold("run:skew").await, "{way}: it took a lease");
        let held = app.count("leases WHERE owner = 'replica-a'").await;
        assert_eq!(held, 0, "{way}: it wrote a lease");
        let said = logs.at(
            "ERROR",
            &[
                "this replica's clock is",
                way,
                "the database's: it takes and renews no lease",
            ],
        );
        assert_eq!(said.len(), 1, "{way}: {said:?}");
        // Back in agreement: it takes leases again, and says so.
        wall.set(chrono::Duration::zero());
        check.check().await;
        assert!(
            leases.try_hold("run:skew").await,
            "{way}: agreeing again, it took no lease"
        );
    }
    let again = logs.at("WARN", &["this replica's clock agrees with the database's again"]);
    assert_eq!(again.len(), 2);
    app.stop().await;
}

#[tokio::test]
async fn a_replica_started_with_its_clock_off_takes_no_lease() {
    let wall: Arc<dyn Clock> = Arc::new(OffsetClock::new(chrono::Duration::seconds(30)));
    let app = Spawn::new(Db::Postgres).wall(wall).start().await;
    let leases = &app.services().leases;
    assert!(leases.standing_down());
    assert!(!leases.try_hold("run:started-off").await);
    // Its claim on its own name aside (`replica_names`).
    let taken = app.count("leases WHERE name NOT LIKE 'replica:%'").await;
    assert_eq!(taken, 0, "it took a lease before its first check");
    assert_eq!(standing_down(&app).await, (json!(["clock"]), 1, 0));
    app.stop().await;
}

/// What `/healthz` says the replica stands down for, and the metric's
/// value for the clock and for the name.
pub(crate) async fn standing_down(app: &TestApp) -> (serde_json::Value, i64, i64) {
    let health: serde_json::Value = reqwest::get(format!("{}/healthz", app.base))
        .await
        .expect("healthz")
        .json()
        .await
        .expect("its body");
    assert_eq!(health["status"], "ok", "it serves all the same: {health}");
    let metrics = app.metrics().await;
    let gauge = |reason: &str| {
        let line = format!("kandev_replica_standing_down{{reason=\"{reason}\"}} ");
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(&line))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {line} in {metrics}"))
    };
    (health["standing_down"].clone(), gauge("clock"), gauge("name"))
}

#[tokio::test]
async fn a_replica_whose_clock_agrees_says_it_stands_down_for_nothing() {
    let app = spawn_app(Db::Postgres).await;
    assert_eq!(standing_down(&app).await, (serde_json::Value::Null, 0, 0));
    app.stop().await;
}

#[test]
fn what_an_off_replica_says_names_the_bound() {
    assert_eq!(
        off_by(10_000, "ahead of"),
        "this replica's clock is 10000 ms ahead of the database's: it takes and renews no lease until they agree within 500 ms (keep every replica's clock and the database's synchronised, by NTP)"
    );
}
