//! An agent reads no other workspace's checkouts: its run's workspace is all
//! its MCP tools reach, and all of the server's disk it may read of theirs.

use crate::access_agents::{agent_says, landlock_here, register_checkout};
use crate::support::{Db, spawn_app};

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_reads_its_own_workspace_s_checkouts_and_no_other_s() {
    if !landlock_here() {
        return;
    }
    let app = spawn_app(Db::Sqlite).await;
    let (ours, theirs) = (app.workspace("Ours").await, app.workspace("Theirs").await);
    let (api, tools) = (app.dir.path().join("src/api"), app.dir.path().join("src/tools"));
    let billing = app.dir.path().join("src/billing");
    register_checkout(&app, &ours, "api", &api).await;
    register_checkout(&app, &ours, "tools", &tools).await;
    register_checkout(&app, &theirs, "billing", &billing).await;
    let (api, tools, billing) = (
        api.join("a.txt").display().to_string(),
        tools.join("a.txt").display().to_string(),
        billing.join("a.txt").display().to_string(),
    );
    let said = agent_says(
        &app,
        &ours,
        &[
            "e2e:read(\"a.txt\")".to_string(),
            format!("e2e:read(\"{api}\")"),
            format!("e2e:read(\"{tools}\")"),
            format!("e2e:read(\"{billing}\")"),
        ]
        .join("\n"),
    )
    .await;
    assert_eq!(
        said.concat(),
        [
            "read a.txt: ok".to_string(),
            format!("read {api}: ok"),
            format!("read {tools}: ok"),
            format!("read {billing}: denied"),
        ]
        .concat(),
        "{said:?}"
    );
    app.stop().await;
}

/// A checkout registered where every agent must reach (here: one holding
/// the data directory, as a checkout at `~` holds `HOME`) is not hidden.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_checkout_holding_what_agents_need_stays_readable() {
    if !landlock_here() {
        return;
    }
    let app = spawn_app(Db::Sqlite).await;
    let (ours, theirs) = (app.workspace("Ours").await, app.workspace("Theirs").await);
    let elsewhere = tempfile::tempdir().expect("temp dir");
    register_checkout(&app, &ours, "api", &elsewhere.path().join("api")).await;
    register_checkout(&app, &theirs, "home", app.dir.path()).await;
    let theirs_file = app.dir.path().join("a.txt").display().to_string();
    let said = agent_says(
        &app,
        &ours,
        &format!("e2e:read(\"a.txt\")\ne2e:read(\"{theirs_file}\")"),
    )
    .await;
    assert_eq!(said.concat(), format!("read a.txt: okread {theirs_file}: ok"));
    app.stop().await;
}
