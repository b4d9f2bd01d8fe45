//! `kandev serve --demo`: an in-process GitHub simulator and a seeded
//! workspace, so a newcomer sees the whole loop with no GitHub account.

use std::sync::Arc;

use kandev_core::api::{Actor, CreateAutomation, CreateTask, NewTrigger, Repository, ReviewRequest};
use kandev_core::board::PrRef;
use serde_json::json;

use crate::config::Settings;
use crate::github_sim::{NewPr, Simulator};
use crate::state::Services;

const DEMO_TOKEN: &str = "demo-token";
const DEMO_SECRET: &str = "demo-webhook-secret";

/// Starts the simulator and points the settings at it. The demo keeps its data
/// in a fresh temporary database unless one was given explicitly.
pub async fn prepare(settings: &mut Settings) -> std::io::Result<(Simulator, String)> {
    let sim = Simulator::new();
    let (addr, _task) = sim.serve("127.0.0.1:0").await?;
    let base = format!("http://{addr}");
    settings.github_api_url = base.clone();
    settings.github_token.get_or_insert_with(|| DEMO_TOKEN.into());
    settings.github_webhook_secret.get_or_insert_with(|| DEMO_SECRET.into());
    if settings.database_url == Settings::defaults().database_url {
        let dir = std::env::temp_dir().join(format!("kandev-demo-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        settings.database_url = format!("sqlite://{}/kandev.db", dir.display());
    }
    Ok((sim, base))
}

/// Seeds the simulator and Kandev with a small world, and wires the
/// simulator's webhooks to Kandev so merges are seen within seconds.
pub async fn seed(services: &Arc<Services>, sim: &Simulator, sim_base: &str, kandev_base: &str) -> Result<(), String> {
    let secret = services.settings.github_webhook_secret.clone().unwrap_or_default();
    sim.set_webhook(&format!("{kandev_base}/api/v1/github/webhook"), &secret);
    sim.add_org("acme");
    sim.add_repo("acme", "api", false);
    sim.add_repo("acme", "web", true);
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let now = services.clock.now();
    // The first-start admin owns the demo workspace.
    let owner = services
        .store
        .user_by_name(crate::access::bootstrap::FIRST_ADMIN)
        .await
        .map_err(|x| e(&x))?
        .map(|u| u.user.id);
    let ws = services
        .store
        .create_workspace("Demo", owner.as_deref(), now)
        .await
        .map_err(|x| e(&x))?;
    let repo = Repository {
        id: String::new(),
        workspace_id: ws.id.clone(),
        provider: "github".into(),
        owner: "acme".into(),
        name: "api".into(),
        default_branch: "main".into(),
        local_path: String::new(),
        ci_wait_timeout_minutes: None,
    };
    services.store.create_repository(&repo, now).await.map_err(|x| e(&x))?;
    let task = |title: &str| CreateTask {
        title: title.into(),
        description: None,
        status: None,
        repository_id: None,
    };

    let (n1, sha1) = sim
        .open_pr(
            "acme",
            "api",
            NewPr {
                title: "Add rate limiting".into(),
                ..Default::default()
            },
        )
        .map_err(|x| e(&x))?;
    sim.set_check_run("acme", "api", &sha1, "build", "completed", Some("success"))
        .map_err(|x| e(&x))?;
    let t1 = services
        .board
        .create(&ws.id, task("Add rate limiting to the API"), &Actor::System)
        .await
        .map_err(|x| e(&x))?;
    services
        .github
        .associate(&t1, &PrRef::new("acme", "api", n1))
        .await
        .map_err(|x| e(&x))?;

    let (n2, sha2) = sim
        .open_pr(
            "acme",
            "api",
            NewPr {
                title: "Fix login redirect".into(),
                ..Default::default()
            },
        )
        .map_err(|x| e(&x))?;
    sim.set_check_run("acme", "api", &sha2, "build", "in_progress", None)
        .map_err(|x| e(&x))?;
    let t2 = services
        .board
        .create(&ws.id, task("Fix the login redirect"), &Actor::System)
        .await
        .map_err(|x| e(&x))?;
    let review = ReviewRequest {
        summary: Some("Ready for review".into()),
        pr_url: Some(PrRef::new("acme", "api", n2).url()),
    };
    services
        .board
        .request_review(&t2.id, review, &Actor::System)
        .await
        .map_err(|x| e(&x))?;
    services
        .board
        .create(&ws.id, task("Write the onboarding guide"), &Actor::System)
        .await
        .map_err(|x| e(&x))?;

    let archive = NewTrigger {
        trigger_type: kandev_core::TriggerType::GithubPrMerged,
        config: json!({"all_repos": true}),
        enabled: None,
    };
    services
        .automation
        .create(
            &ws.id,
            CreateAutomation {
                name: "Archive tasks whose PR merged".into(),
                description: Some("Demo: the mock agent archives the task the merged PR was linked to.".into()),
                prompt: Some(r#"e2e:mcp:kandev:archive_task_kandev({"task_id":"{{data.task_id}}"})"#.into()),
                triggers: Some(vec![archive]),
                ..Default::default()
            },
        )
        .await
        .map_err(|x| e(&x))?;
    tracing::info!(
        simulator = %sim_base,
        "demo ready: merge PR #{n1} with `curl -X POST {sim_base}/_sim/repos/acme/api/pulls/{n1}/merge` and watch its task leave the board"
    );
    Ok(())
}
