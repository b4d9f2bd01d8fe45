//! Helpers for engine-level tests: automations, linked PRs and events
//! published straight onto the bus.

use std::time::Duration;

use kandev_core::events::{Payload, SOURCE_GITHUB, TASK_PR_UPDATED};
use kandev_core::task_pr::TaskPr;
use kandev_server::store::RunRecord;
use serde_json::{Value, json};

use crate::support::{TestApp, eventually};

/// A prompt that keeps the agent's turn open, so its run stays in flight.
pub const HOLD_PROMPT: &str = "e2e:delay(600000)";
/// A prompt whose agent archives exactly the id the trigger resolved.
pub const ARCHIVE_PROMPT: &str = r#"e2e:mcp:kandev:archive_task_kandev({"task_id":"{{data.task_id}}"})"#;

/// Which form the event travels in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Typed,
    Json,
}

pub fn merged_pr(task_id: &str, owner: &str, repo: &str, number: i64) -> TaskPr {
    TaskPr {
        task_id: task_id.into(),
        owner: owner.into(),
        repo: repo.into(),
        pr_number: number,
        pr_url: format!("https://github.com/{owner}/{repo}/pull/{number}"),
        pr_title: "Fix the thing".into(),
        head_branch: "feature".into(),
        base_branch: "main".into(),
        author_login: "alice".into(),
        state: "merged".into(),
        ..Default::default()
    }
}

impl TestApp {
    /// An automation with one `github_pr_merged` trigger.
    pub async fn merged_automation(&self, ws: &str, config: Value, prompt: &str, max_runs: i64) -> String {
        let a = self
            .automation(
                ws,
                json!({"name": "Archive merged", "prompt": prompt, "max_concurrent_runs": max_runs,
                       "triggers": [{"type": "github_pr_merged", "config": config}]}),
            )
            .await;
        a["id"].as_str().expect("id").to_string()
    }

    /// A workspace with a repository, a target task and a merged automation
    /// whose agent only answers: (automation, its trigger, the target).
    pub async fn merged_firing_setup(&self) -> (String, String, String) {
        let ws = self.workspace_with_repo("W").await;
        let target = self.task(&ws, "target").await;
        let a = self
            .merged_automation(&ws, json!({"all_repos": true}), "e2e:message(\"ok\")", 10)
            .await;
        let trigger = self
            .services()
            .store
            .get_automation(&a)
            .await
            .expect("automation")
            .triggers[0]
            .id
            .clone();
        (a, trigger, target)
    }

    /// How many hidden run tasks exist.
    pub async fn run_task_count(&self) -> i64 {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM tasks WHERE origin = 'automation_run'")
            .fetch_one(self.services().store.pool())
            .await
            .expect("count");
        sqlx::Row::try_get::<i64, _>(&row, "n").expect("n")
    }

    /// A workspace with one repository, ready for run tasks.
    pub async fn workspace_with_repo(&self, name: &str) -> String {
        let ws = self.workspace(name).await;
        self.repository(&ws, "acme", "api").await;
        ws
    }

    /// Publishes `github.task_pr.updated` as the given bus form.
    pub async fn publish_pr(&self, pr: &TaskPr, form: Form) {
        let data = match form {
            Form::Typed => Payload::TaskPr(pr.clone()),
            Form::Json => Payload::Json(serde_json::to_value(pr).expect("json")),
        };
        self.publish_raw(data).await;
    }

    pub async fn publish_raw(&self, data: Payload) {
        let bus = &self.services().bus;
        bus.publish(TASK_PR_UPDATED, SOURCE_GITHUB, data)
            .await
            .expect("publish");
        bus.flush().await.expect("flush");
    }

    /// Waits until every task creation started so far is done.
    pub async fn settle(&self) {
        self.services().orchestrator.wait_idle().await;
    }

    pub async fn runs_of(&self, automation_id: &str) -> Vec<RunRecord> {
        self.services()
            .store
            .list_run_records(automation_id)
            .await
            .expect("runs")
    }

    /// Waits until an automation has `n` run rows.
    pub async fn wait_for_runs(&self, automation_id: &str, n: usize) -> Vec<RunRecord> {
        eventually(
            &format!("{n} run(s) of {automation_id}"),
            Duration::from_secs(20),
            || async {
                self.settle().await;
                self.runs_of(automation_id).await.len() >= n
            },
        )
        .await;
        self.runs_of(automation_id).await
    }

    /// Waits until a run reaches a terminal stored status.
    pub async fn wait_for_run_status(&self, automation_id: &str, status: &str) -> RunRecord {
        eventually(
            &format!("a {status} run of {automation_id}"),
            Duration::from_secs(30),
            || async {
                self.settle().await;
                self.runs_of(automation_id)
                    .await
                    .iter()
                    .any(|r| r.status.as_str() == status)
            },
        )
        .await;
        self.runs_of(automation_id)
            .await
            .into_iter()
            .find(|r| r.status.as_str() == status)
            .expect("run")
    }

    pub async fn task_json(&self, id: &str) -> Value {
        self.get(&format!("/api/v1/tasks/{id}")).await.body
    }
}

impl TestApp {
    /// Runs raw SQL against the app's database (fault injection in tests).
    pub async fn exec(&self, sql: &str) {
        sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
            .execute(self.services().store.pool())
            .await
            .expect("exec");
    }

    /// An automation whose run stays in flight, holding its one concurrency slot.
    pub async fn in_flight_run(&self, automation_id: &str, other_task: &str) -> RunRecord {
        self.publish_pr(&merged_pr(other_task, "acme", "api", 900), Form::Typed)
            .await;
        let runs = self.wait_for_runs(automation_id, 1).await;
        let run = runs
            .into_iter()
            .find(|r| r.status.as_str() == "task_created")
            .expect("in-flight run");
        // the agent must actually be running, so the run is open
        eventually("the held agent session to run", Duration::from_secs(20), || async {
            let s = self.get(&format!("/api/v1/tasks/{}/sessions", run.task_id)).await;
            s.body[0]["state"] == "RUNNING"
        })
        .await;
        run
    }

    /// The run task's description: its interpolated prompt.
    pub async fn run_prompt(&self, run: &RunRecord) -> String {
        self.task_json(&run.task_id).await["description"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// In-process delivery is synchronous: once `publish` returns, the subscriber
/// has run and any firing's task creation is tracked, so settling suffices to
/// observe that nothing happened.
pub async fn quiet(app: &TestApp) {
    assert_eq!(app.services().bus.kind(), "in-process", "use a sentinel event on NATS");
    app.settle().await;
}
