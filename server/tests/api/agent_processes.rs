//! What an agent starts ends with its turn, not just the agent (its keeper's
//! own tests are in `agent_keeper`).

use std::time::Duration;

use kandev_server::testkit::processes::{ends_within, running};

use crate::access_agents::agent_says;
use crate::support::{Db, spawn_app};

/// Whether what an agent started with `sh -c script` (left running) ends
/// with the agent's turn.
async fn ends_with_the_turn(script: &str) -> bool {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let prompt = format!("e2e:spawn(\"{script}\")\ne2e:message(\" done\")");
    let said = agent_says(&app, &ws, &prompt).await.concat();
    let pid = said
        .strip_prefix("spawned=")
        .and_then(|rest| rest.strip_suffix(" done"))
        .unwrap_or_else(|| panic!("the agent did not say what it started: {said}"))
        .to_string();
    let ended = ends_within(&pid, Duration::from_secs(10)).await && !running(&pid);
    app.stop().await;
    ended
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_an_agent_starts_in_the_background_ends_with_its_turn() {
    assert!(
        ends_with_the_turn("sleep 300").await,
        "the agent's background process outlived its turn"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_an_agent_starts_in_a_session_of_its_own_ends_with_its_turn() {
    assert!(
        ends_with_the_turn("exec setsid sleep 300").await,
        "a process in a session of its own outlived its turn"
    );
}
