//! What an agent starts ends with its turn, not just the agent (its keeper's
//! own tests are in `agent_keeper`).

use std::time::Duration;

use kandev_server::testkit::processes::{ends_within, running};

use crate::access_agents::agent_says;
use crate::support::{Db, spawn_app};

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_an_agent_starts_in_the_background_ends_with_its_turn() {
    let app = spawn_app(Db::Sqlite).await;
    let ws = app.workspace_with_repo("W").await;
    let said = agent_says(&app, &ws, "e2e:spawn(\"sleep 300\")\ne2e:message(\" done\")").await;
    let said = said.concat();
    let pid = said
        .strip_prefix("spawned=")
        .and_then(|rest| rest.strip_suffix(" done"))
        .unwrap_or_else(|| panic!("the agent did not say what it started: {said}"))
        .to_string();
    assert!(
        ends_within(&pid, Duration::from_secs(10)).await,
        "the agent's background process outlived its turn"
    );
    assert!(!running(&pid));
    app.stop().await;
}
