//! Shared set-up for the benchmarks: a constructed server over a temporary
//! SQLite file. Figures are printed, never asserted.

// Each bench uses its own part of this.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use kandev_core::api::{CreateAutomation, CreateTask, NewTrigger, Repository};
use kandev_server::app::{BuildOptions, Services, construct};
use kandev_server::config::Settings;
use serde_json::Value;

pub async fn services(dir: &std::path::Path, tweak: impl FnOnce(&mut Settings)) -> Arc<Services> {
    let mut settings = Settings::defaults();
    settings.database_url = format!("sqlite://{}/bench.db", dir.display());
    settings.data_dir = dir.join("data");
    tweak(&mut settings);
    construct(
        settings,
        BuildOptions {
            // The bench binary is not an agent: run turns with the real one.
            mock_agent_bin: Some(env!("CARGO_BIN_EXE_kandev").into()),
            ..Default::default()
        },
    )
    .await
    .expect("services")
}

pub async fn workspace(s: &Services, name: &str) -> String {
    let now = s.clock.now();
    let w = s.store.create_workspace(name, None, now).await.expect("workspace");
    let repo = Repository {
        id: String::new(),
        workspace_id: w.id.clone(),
        provider: "github".into(),
        owner: "acme".into(),
        name: "api".into(),
        default_branch: "main".into(),
        local_path: String::new(),
        ci_wait_timeout_minutes: None,
    };
    s.store.create_repository(&repo, now).await.expect("repository");
    w.id
}

pub async fn task(s: &Services, ws: &str, title: &str) -> String {
    let t = CreateTask {
        title: title.into(),
        description: None,
        status: None,
        repository_id: None,
    };
    s.board
        .create(ws, t, &kandev_core::api::Actor::System)
        .await
        .expect("task")
        .id
}

pub async fn merged_automation(s: &Services, ws: &str, name: &str, configs: Vec<Value>, max_runs: i64) -> String {
    let triggers = configs
        .into_iter()
        .map(|config| NewTrigger {
            trigger_type: kandev_core::TriggerType::GithubPrMerged,
            config,
            enabled: None,
        })
        .collect();
    let req = CreateAutomation {
        name: name.into(),
        prompt: Some("e2e:message(\"bench\")".into()),
        max_concurrent_runs: Some(max_runs),
        triggers: Some(triggers),
        ..Default::default()
    };
    s.automation.create(ws, req).await.expect("automation").automation.id
}

pub fn rate(n: usize, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64().max(1e-9)
}

pub fn report(label: &str, n: usize, started: Instant) {
    let d = started.elapsed();
    println!(
        "{label:<58} {n:>6} in {:>8.1} ms  = {:>10.1}/s",
        d.as_secs_f64() * 1000.0,
        rate(n, d)
    );
}

/// One line `cargo xtask bench` gathers into its table: the figure, its
/// goal, and the same run's raw baseline when there is one.
pub fn figure(name: &str, value: f64, unit: &str, goal: &str, baseline: Option<(f64, &str)>) {
    let (b, label) = baseline
        .map(|(v, n)| (format!("{v:.1}"), n.to_string()))
        .unwrap_or(("-".into(), String::new()));
    println!("@figure {name}|{value:.3}|{unit}|{goal}|{b}|{label}");
}
