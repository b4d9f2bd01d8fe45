//! A replica's name owns its leases, so one process at a time runs under
//! it: a second does not start while the first renews its claim, a process
//! restarted after a crash takes its name over at once, and a process whose
//! name another took lets go of every lease under it.

use std::time::Duration;

use kandev_server::coord::{NAME_TAKEN, taken_by};
use kandev_server::testkit::{Replica, shared_env};

use crate::support::{Db, Spawn, TestApp, eventually};

const KANDEV: &str = env!("CARGO_BIN_EXE_kandev");

async fn named(db: Db, name: &str) -> TestApp {
    let name = name.to_string();
    Spawn::new(db)
        .settings(move |s| s.replica_id = Some(name))
        .start()
        .await
}

async fn held_by(app: &TestApp, owner: &str) -> i64 {
    app.count(&format!("leases WHERE owner = '{owner}'")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_under_a_replica_s_name_does_not_start_and_leaves_its_leases_alone() {
    let first = named(Db::Postgres, "twin").await;
    eventually("the first server's leases", Duration::from_secs(10), || async {
        held_by(&first, "twin").await > 0
    })
    .await;
    let before = held_by(&first, "twin").await;
    let url = first.database_url.clone();
    let second = Spawn::new(Db::Postgres)
        .settings(move |s| {
            s.replica_id = Some("twin".into());
            s.database_url = url;
        })
        .try_start()
        .await;
    let Err(why) = second else {
        panic!("a second server started under the first's name")
    };
    assert_eq!(why, taken_by("twin"));
    assert!(
        held_by(&first, "twin").await >= before,
        "the second released the first's leases"
    );
    first.stop().await;
}

#[tokio::test]
async fn a_server_whose_name_another_process_took_lets_go_of_its_leases_and_says_so() {
    let (logs, _guard) = crate::logs::capture();
    let app = named(Db::Sqlite, "taken").await;
    eventually("its leases", Duration::from_secs(10), || async {
        held_by(&app, "taken").await > 0
    })
    .await;
    // As a process started under its name while this one stalled.
    app.exec("UPDATE leases SET owner = 'another-process' WHERE name = 'replica:taken'")
        .await;
    let leases = app.services().leases.clone();
    eventually("it to let go", Duration::from_secs(10), || {
        let leases = leases.clone();
        async move { leases.standing_down() }
    })
    .await;
    assert!(
        !leases.try_hold("run:after").await,
        "it took a lease under a name not its own"
    );
    assert!(
        held_by(&app, "taken").await > 0,
        "it deleted the leases now the other process's"
    );
    assert_eq!(logs.at("ERROR", &[NAME_TAKEN]).len(), 1);
    let said = crate::clock_skew::standing_down(&app).await;
    assert_eq!(said, (serde_json::json!(["name"]), 0, 1));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_after_a_kill_takes_its_name_over_at_once() {
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("sqlite://{}/kandev.db", dir.path().display());
    let env = shared_env(&url, "http://127.0.0.1:9", None);
    kandev_server::tls::install_crypto_provider();
    let mut kandev = Replica::start(KANDEV.as_ref(), "solo", dir.path(), &env).await;
    kandev.restart().await;
    let took = "took over this replica's name from a process that ended";
    assert!(kandev.log_text().contains(took), "{}", kandev.log_tail());
    kandev.kill().await;
}
