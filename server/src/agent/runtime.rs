//! The ACP agent runtime: one agent process per turn, speaking the Agent
//! Client Protocol over stdio, with Kandev's MCP server bound to the session
//! by an unguessable token in its URL. A reply continues the conversation:
//! the agent loads its own session where it can, else the transcript is
//! replayed in the prompt (core's `resume` rules decide which).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, InitializeRequest, LoadSessionRequest, McpServer, McpServerHttp,
    NewSessionRequest, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SessionNotification, StopReason, TextContent,
};
use agent_client_protocol::{ByteStreams, Client};
use async_trait::async_trait;
use kandev_core::api::{AgentProfile, LIVE_SESSION_UPDATED, Task};
use kandev_core::confine::foreign_checkouts;
use kandev_core::firing::permission_refused;
use kandev_core::resume::{self, Opening};
use tokio::io::AsyncBufReadExt;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::confine::{CONFINE_SAYS, Confinement, inherited_env, start};
use super::group::{Launch, ProcessGroup, deadline_in};
use super::profiles;
use super::transcript::TranscriptWriter;
use super::workdir;
use crate::access::credentials::hash_secret;
use crate::board::TaskListener;
use crate::clock::Clock;
use crate::coord::lease;
use crate::error::{ServiceError, ServiceResult};
use crate::live::LiveHub;
use crate::orchestrator::{AgentRuntime, HANDED_OVER, Orchestrator, RunStart, TurnOutcome};
use crate::store::Store;
use crate::store::agents::{SessionRecord, session_state};

/// Why a replica that holds no lease now takes no reply.
pub const STANDING_DOWN: &str = "this replica holds no lease now (its clock disagrees with the database's, or another process runs under its name), so it takes no turn: try another replica";

/// How often a turn checks that this replica still drives its run.
const LEASE_CHECK: Duration = Duration::from_millis(500);

/// How the runtime launches agents.
#[derive(Debug, Clone)]
pub struct RuntimeSettings {
    pub default_agent: Option<String>,
    pub data_dir: PathBuf,
    pub turn_timeout: Duration,
    /// The `kandev` binary that `kandev mock-agent` runs from; `None` = this process's.
    pub mock_agent_bin: Option<PathBuf>,
    /// Agents start through `kandev confine`; `None`: as they are.
    pub confinement: Option<Confinement>,
}

struct LiveTurn {
    task_id: String,
    cancel: CancellationToken,
}

pub struct AcpRuntime {
    store: Store,
    clock: Arc<dyn Clock>,
    live: LiveHub,
    settings: RuntimeSettings,
    base_url: OnceLock<String>,
    orchestrator: RwLock<Weak<Orchestrator>>,
    turns: Mutex<HashMap<String, LiveTurn>>,
    tracker: TaskTracker,
}

fn new_token() -> Result<String, String> {
    crate::access::credentials::random_hex::<32>().map_err(|e| format!("no session token: {e}"))
}

/// The lease a turn goes on under: a run's first turn, its run's (this
/// replica drives the run); a reply's, its session's.
fn turn_lease(is_reply: bool, session_id: &str, task_id: &str) -> String {
    if is_reply {
        lease::session(session_id)
    } else {
        lease::run(task_id)
    }
}

/// The prompt the agent sees: Kandev's context block, then the run's prompt.
fn agent_prompt(task_id: &str, session_id: &str, prompt: &str) -> String {
    format!("<kandev-system>\nKandev Task ID: {task_id}\nKandev Session ID: {session_id}\n</kandev-system>\n\n{prompt}")
}

impl AcpRuntime {
    pub fn new(store: Store, clock: Arc<dyn Clock>, live: LiveHub, settings: RuntimeSettings) -> Self {
        AcpRuntime {
            store,
            clock,
            live,
            settings,
            base_url: OnceLock::new(),
            orchestrator: RwLock::new(Weak::new()),
            turns: Mutex::new(HashMap::new()),
            tracker: TaskTracker::new(),
        }
    }

    /// The server's own address, for MCP URLs; known once the listener is bound.
    pub fn set_base_url(&self, url: String) {
        let _ = self.base_url.set(url);
    }

    pub fn set_orchestrator(&self, o: &Arc<Orchestrator>) {
        *self.orchestrator.write().unwrap_or_else(|p| p.into_inner()) = Arc::downgrade(o);
    }

    async fn profile(&self, profile_id: &str) -> ServiceResult<AgentProfile> {
        let mut p = profiles::resolve(&self.store, profile_id, self.settings.default_agent.as_deref()).await?;
        if p.id == kandev_core::api::MOCK_AGENT_PROFILE_ID
            && let Some(bin) = &self.settings.mock_agent_bin
        {
            p.command = bin.display().to_string();
        }
        Ok(p)
    }

    /// How an agent of `workspace_id`'s runs (and git in its checkouts) is
    /// confined: as the server says, hiding every other workspace's checkouts
    /// too. `Err` when those cannot be read: it starts so confined or not at all.
    async fn confinement_for(&self, workspace_id: &str) -> Result<Option<Confinement>, String> {
        let Some(base) = self.settings.confinement.as_ref() else {
            return Ok(None);
        };
        // As `kandev confine` will see them: resolved, else as the server names them.
        let resolved = |p: &std::path::Path| {
            std::fs::canonicalize(p)
                .or_else(|_| std::path::absolute(p))
                .unwrap_or_else(|_| p.into())
        };
        let own = self
            .store
            .list_repositories(workspace_id)
            .await
            .map_err(|e| e.to_string())?;
        // Its own checkouts, and what every agent needs, stay readable.
        let needed = [std::env::temp_dir(), self.settings.data_dir.clone()]
            .into_iter()
            .chain(std::env::var_os("HOME").map(PathBuf::from));
        let keep: Vec<PathBuf> = own
            .iter()
            .filter(|r| !r.local_path.is_empty())
            .map(|r| PathBuf::from(&r.local_path))
            .chain(needed)
            .map(|p| resolved(&p))
            .collect();
        let others = self
            .store
            .checkouts_outside(workspace_id)
            .await
            .map_err(|e| e.to_string())?;
        let others: Vec<PathBuf> = others.iter().map(|p| resolved(p.as_ref())).collect();
        // The agent reaches its MCP tools through the server's own port.
        let server_port = self
            .base_url
            .get()
            .and_then(|u| reqwest::Url::parse(u).ok())
            .and_then(|u| u.port_or_known_default());
        let confinement = base
            .also_hiding(foreign_checkouts(&keep, &others))
            .with_server_port(server_port)
            .for_workspace(workspace_id)?;
        Ok(Some(confinement))
    }

    /// The `.git` of the checkout a task's worktree was made from, which its
    /// agent commits into: from the registered repository, never from the
    /// worktree (whose `.git` file the agent can rewrite).
    async fn checkout_git_dir(&self, task: &Task) -> Option<PathBuf> {
        let repo = self.store.get_repository(task.repository_id.as_deref()?).await.ok()?;
        let dot_git = workdir::checkout(&repo.local_path).ok()??.join(".git");
        dot_git.is_dir().then_some(dot_git)
    }

    /// Sends a follow-up prompt to a session that waits for input.
    pub async fn reply(self: &Arc<Self>, session_id: &str, text: &str) -> ServiceResult<()> {
        let s = self
            .store
            .get_session(session_id)
            .await
            .map_err(ServiceError::not_found("session"))?;
        if resume::reply_state(&s.session.state) != resume::ReplyState::Open {
            return Err(ServiceError::Conflict(format!(
                "the session is {}, not waiting for input",
                s.session.state
            )));
        }
        let task = self.store.get_task(&s.session.task_id).await?;
        let profile = self.profile(&s.profile_id).await?;
        // Two replies at once (here or on another replica): one turn, not
        // two; claimed with its lease, so a replica stopping mid-turn is seen.
        let claimed = match self.orchestrator() {
            Some(o) if o.standing_down() => return Err(ServiceError::Unavailable(STANDING_DOWN.into())),
            Some(o) => o.claim_reply(session_id).await?,
            None => self.store.claim_waiting_session(session_id).await?,
        };
        if !claimed {
            return Err(ServiceError::Conflict(
                "the session is already answering a reply".into(),
            ));
        }
        self.spawn_turn(s, task, profile, text.to_string(), true);
        Ok(())
    }

    /// Cancels every turn in progress and waits for the processes to be reaped.
    pub async fn shutdown(&self) {
        for turn in self.turns.lock().unwrap_or_else(|p| p.into_inner()).values() {
            turn.cancel.cancel();
        }
        self.wait_idle().await;
    }

    /// Waits for every turn started so far to end (tests).
    pub async fn wait_idle(&self) {
        self.tracker.close();
        self.tracker.wait().await;
        self.tracker.reopen();
    }

    fn spawn_turn(
        self: &Arc<Self>,
        session: SessionRecord,
        task: Task,
        profile: AgentProfile,
        prompt: String,
        is_reply: bool,
    ) {
        let cancel = CancellationToken::new();
        self.turns.lock().unwrap_or_else(|p| p.into_inner()).insert(
            session.session.id.clone(),
            LiveTurn {
                task_id: task.id.clone(),
                cancel: cancel.clone(),
            },
        );
        let me = self.clone();
        let lease = turn_lease(is_reply, &session.session.id, &task.id);
        // A start that waited (a slot, a worktree) while this replica lost
        // the lease is the holder's to make: no agent beside the holder's.
        let unheld = self.orchestrator().is_some_and(|o| !o.holds(&lease));
        let handed_over = self.watch_lease(lease, &cancel);
        self.tracker.spawn(async move {
            let outcome = if unheld {
                tracing::warn!(task_id = %task.id, "{HANDED_OVER}: its agent was not started");
                TurnOutcome::HandedOver
            } else {
                me.run_turn(&session, &task, &profile, &prompt, is_reply, cancel).await
            };
            let outcome = match handed_over {
                Some((watch, lost)) => {
                    watch.abort();
                    if lost.load(Ordering::SeqCst) {
                        tracing::warn!(task_id = %task.id, "{HANDED_OVER}: its agent was stopped");
                        TurnOutcome::HandedOver
                    } else {
                        outcome
                    }
                }
                None => outcome,
            };
            me.turns
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&session.session.id);
            let ended = match &outcome {
                TurnOutcome::Succeeded => Some((session_state::WAITING_FOR_INPUT, "end_turn", None)),
                TurnOutcome::Cancelled(m) => Some((session_state::CANCELLED, m.as_str(), Some(me.clock.now()))),
                TurnOutcome::Failed(m) => Some((session_state::FAILED, m.as_str(), Some(me.clock.now()))),
                // Whoever holds the lease now says how the session ends (run
                // recovery closes it, session recovery reopens it): not this turn.
                TurnOutcome::HandedOver => None,
            };
            if let Some((state, reason, at)) = ended
                && let Err(e) = me.store.set_session_state(&session.session.id, state, reason, at).await
            {
                tracing::error!(session_id = %session.session.id, error = %e, "could not record the session's end");
            }
            me.live
                .notify(&task.workspace_id, LIVE_SESSION_UPDATED, &session.session.id);
            if let Some(o) = me.orchestrator() {
                o.turn_over(&session.session.id).await;
                o.finish_turn(&task.id, outcome).await;
            }
        });
    }

    /// The turn goes on only while this replica holds `lease`: a run whose
    /// lease another replica took (this one stalled, or could not renew it)
    /// is that replica's to resume, and this agent is stopped, not left
    /// acting beside the new one. The watch, and whether it stopped the turn.
    fn watch_lease(
        &self,
        lease: String,
        cancel: &CancellationToken,
    ) -> Option<(tokio::task::JoinHandle<()>, Arc<AtomicBool>)> {
        let orchestrator = self.orchestrator()?;
        if !orchestrator.holds(&lease) {
            return None;
        }
        let lost = Arc::new(AtomicBool::new(false));
        let (said, cancel) = (lost.clone(), cancel.clone());
        let watch = tokio::spawn(async move {
            while orchestrator.holds(&lease) {
                tokio::time::sleep(LEASE_CHECK).await;
            }
            said.store(true, Ordering::SeqCst);
            cancel.cancel();
        });
        Some((watch, lost))
    }

    /// A confined turn's fence (`group::ProcessGroup::fence`): the deadline
    /// its keeper starts with, and how long its lease vouches for from now.
    fn fence_until(&self, lease: &str) -> Option<u64> {
        let left = self.orchestrator()?.lease_left(lease)?;
        deadline_in(left)
    }

    fn orchestrator(&self) -> Option<Arc<Orchestrator>> {
        self.orchestrator.read().unwrap_or_else(|p| p.into_inner()).upgrade()
    }

    async fn run_turn(
        &self,
        session: &SessionRecord,
        task: &Task,
        profile: &AgentProfile,
        prompt: &str,
        is_reply: bool,
        cancel: CancellationToken,
    ) -> TurnOutcome {
        let sid = session.session.id.clone();
        // Each turn its own token, stored only as its SHA-256: the database
        // (readable by any agent under the server's OS user) opens no tools.
        let token = match new_token() {
            Ok(t) => t,
            Err(e) => return TurnOutcome::Failed(e),
        };
        if let Err(e) = self.store.begin_turn(&sid, &hash_secret(&token)).await {
            return TurnOutcome::Failed(format!("could not start the session: {e}"));
        }
        self.live.notify(&task.workspace_id, LIVE_SESSION_UPDATED, &sid);
        // What came before this reply, in case the agent cannot load its session.
        let history = if is_reply {
            match self.store.list_messages(&sid).await {
                Ok(h) => resume::history_block(&h),
                Err(e) => return TurnOutcome::Failed(format!("could not read the transcript: {e}")),
            }
        } else {
            String::new()
        };
        let writer = Arc::new(TranscriptWriter::new(
            self.store.clone(),
            self.live.clone(),
            self.clock.clone(),
            &sid,
            &task.workspace_id,
        ));
        writer.write("user", "message", prompt.to_string(), None).await;
        let Some(base) = self.base_url.get() else {
            return TurnOutcome::Failed("the MCP endpoint is not available yet".into());
        };
        let mcp_url = format!("{base}/mcp/{token}");
        let cwd = PathBuf::from(&session.worktree_path);
        let confinement = match self.confinement_for(&task.workspace_id).await {
            Ok(c) => c,
            Err(e) => return TurnOutcome::Failed(format!("could not confine the agent: {e}")),
        };
        let confinement = confinement.as_ref();
        let dot_git = match confinement {
            Some(_) => self.checkout_git_dir(task).await,
            None => None,
        };
        let write: Vec<&std::path::Path> = dot_git.iter().map(PathBuf::as_path).collect();
        // Under a lease, the agent's keeper ends it when the lease stops
        // vouching for the turn, even if this process cannot (`fence`).
        let lease = turn_lease(is_reply, &sid, &task.id);
        let until = self.fence_until(&lease);
        let fenced = confinement.map(|c| c.until(until));
        let Launch { mut command, kept } = start(fenced.as_ref(), &cwd, &write, &profile.command, &profile.args);
        let mut child = match command
            // An agent gets no secret of the server's: an empty environment,
            // the four variables a shell needs, and its profile's own.
            .env_clear()
            .envs(inherited_env())
            .envs(&profile.env)
            .current_dir(&cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return TurnOutcome::Failed(format!("could not start the agent `{}`: {e}", profile.command)),
        };
        // Whatever the agent starts ends with its turn, even if this future is dropped.
        let group = ProcessGroup::of(&child, kept);
        let orchestrator = self.orchestrator.read().unwrap_or_else(|p| p.into_inner()).clone();
        let fence = group.fence(until, LEASE_CHECK, move || {
            orchestrator.upgrade().and_then(|o| o.lease_left(&lease))
        });
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return TurnOutcome::Failed("the agent's stdio is not available".into());
        };
        // What `kandev confine` said last: why the agent never started, if it did not.
        let confine_said = child.stderr.take().map(|stderr| {
            let sid = sid.clone();
            tokio::spawn(async move {
                let mut said = None;
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(rest) = line.strip_prefix(CONFINE_SAYS) {
                        tracing::warn!(session_id = %sid, "{line}");
                        said = Some(rest.trim().to_string());
                    } else {
                        tracing::debug!(session_id = %sid, "agent: {line}");
                    }
                }
                said
            })
        });
        let refused: Arc<Mutex<Option<String>>> = Arc::default();
        let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
        let fresh_text = agent_prompt(&task.id, &sid, prompt);
        let replay_text = agent_prompt(&task.id, &sid, &format!("{history}{prompt}"));
        let last_acp = session.acp_session_id.clone();
        let store = self.store.clone();
        let turn_sid = sid.clone();
        // A loading agent replays the conversation as updates: already in the transcript.
        let replaying = Arc::new(AtomicBool::new(false));
        let skip_updates = replaying.clone();
        let timeout = self.settings.turn_timeout;
        let on_update = writer.clone();
        let on_permission = refused.clone();
        let turn_cancel = cancel.clone();
        let result = Client
            .v1()
            .name("kandev")
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    if !skip_updates.load(Ordering::SeqCst) {
                        on_update.update(n.update).await;
                    }
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |req: RequestPermissionRequest, responder, _cx| {
                    // An automation run cannot answer prompts: refuse and end the turn.
                    let title = req.tool_call.fields.title.clone().unwrap_or_else(|| "a tool call".into());
                    *on_permission.lock().unwrap_or_else(|p| p.into_inner()) = Some(title);
                    turn_cancel.cancel();
                    responder.respond(RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_with(transport, async move |cx| {
                let init = cx.send_request(InitializeRequest::new(ProtocolVersion::V1)).block_task().await?;
                let servers = vec![McpServer::Http(McpServerHttp::new("kandev", mcp_url))];
                let mut text = fresh_text;
                let mut loaded = None;
                if let Opening::Load(id) = resume::opening(is_reply, &last_acp, init.agent_capabilities.load_session) {
                    replaying.store(true, Ordering::SeqCst);
                    let load = LoadSessionRequest::new(id.clone(), cwd.clone()).mcp_servers(servers.clone());
                    match cx.send_request(load).block_task().await {
                        Ok(_) => loaded = Some(id),
                        Err(e) => tracing::warn!(session_id = %turn_sid, error = %e, "the agent could not load its session; replaying the transcript instead"),
                    }
                    replaying.store(false, Ordering::SeqCst);
                }
                let acp_session = match loaded {
                    Some(id) => id.into(),
                    None => {
                        if is_reply {
                            text = replay_text;
                        }
                        cx.send_request(NewSessionRequest::new(cwd).mcp_servers(servers)).block_task().await?.session_id
                    }
                };
                if let Err(e) = store.set_acp_session_id(&turn_sid, &acp_session.to_string()).await {
                    tracing::warn!(session_id = %turn_sid, error = %e, "could not record the agent's session id");
                }
                let prompt = cx
                    .send_request(PromptRequest::new(acp_session.clone(), vec![ContentBlock::Text(TextContent::new(text))]))
                    .block_task();
                tokio::pin!(prompt);
                let ended: String = tokio::select! {
                    r = &mut prompt => return r.map(|p| Ok(p.stop_reason)),
                    _ = cancel.cancelled() => "cancelled".to_string(),
                    _ = tokio::time::sleep(timeout) => format!("the agent's turn timed out after {}s", timeout.as_secs()),
                };
                // Ask the agent to stop, give it a moment to answer `cancelled`.
                let _ = cx.send_notification(CancelNotification::new(acp_session));
                match tokio::time::timeout(Duration::from_secs(5), &mut prompt).await {
                    Ok(Ok(p)) if ended == "cancelled" => Ok(Ok(p.stop_reason)),
                    _ => Ok(Err(ended)),
                }
            })
            .await;
        writer.flush().await;
        // Always end the agent and what it started, then reap it.
        let status = group.end(&mut child).await;
        // What confine said matters only when the turn failed. All the agent
        // started is gone, so stderr ends soon; an unconfined agent's `setsid`
        // escapee holding it is not waited for.
        let confined = match confine_said {
            Some(said) if result.is_err() => tokio::time::timeout(Duration::from_secs(1), said)
                .await
                .ok()
                .and_then(Result::ok)
                .flatten(),
            Some(said) => {
                said.abort();
                None
            }
            None => None,
        };
        // Whatever the agent said last, its keeper ended it: the turn is the
        // lease's next holder's to resume, not this replica's to judge.
        if fence.is_some_and(|f| f.ended_it(status)) {
            tracing::warn!(session_id = %sid, "{HANDED_OVER}: its lease lapsed and its keeper ended the agent");
            return TurnOutcome::HandedOver;
        }
        let refused = refused.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(title) = refused {
            return TurnOutcome::Failed(permission_refused(&title));
        }
        match result {
            Ok(Ok(StopReason::Cancelled)) => TurnOutcome::Cancelled("cancelled".into()),
            Ok(Ok(StopReason::Refusal)) => TurnOutcome::Failed("the agent refused the prompt".into()),
            Ok(Ok(_)) => TurnOutcome::Succeeded,
            Ok(Err(m)) if m == "cancelled" => TurnOutcome::Cancelled(m),
            Ok(Err(m)) => TurnOutcome::Failed(m),
            Err(e) => {
                // 126: confine did not start the agent (refused, or could not exec it).
                if let (Some(said), Some(126)) = (confined, status.and_then(|s| s.code())) {
                    return TurnOutcome::Failed(format!("{CONFINE_SAYS} {said}"));
                }
                let exit = status
                    .map(|s| format!(" (agent process exited: {s})"))
                    .unwrap_or_default();
                TurnOutcome::Failed(format!("agent error: {e}{exit}"))
            }
        }
    }
}

#[async_trait]
impl AgentRuntime for Arc<AcpRuntime> {
    async fn start_run(&self, req: RunStart) -> Result<String, String> {
        let profile = self.profile(&req.agent_profile_id).await.map_err(|e| e.to_string())?;
        let confinement = self.confinement_for(&req.task.workspace_id).await?;
        let cwd = workdir::prepare(
            &self.settings.data_dir,
            &req.task.id,
            req.repository.as_ref(),
            confinement.as_ref(),
        )
        .await?;
        let session = self
            .store
            .create_session(&req.task.id, &profile.id, &cwd.display().to_string(), self.clock.now())
            .await
            .map_err(|e| e.to_string())?;
        let id = session.session.id.clone();
        if let Some(o) = self.orchestrator() {
            o.hold_turn(&id).await;
        }
        self.spawn_turn(session, req.task, profile, req.prompt, false);
        Ok(id)
    }

    async fn reclaim_worktree(&self, task_id: &str) -> Result<(), String> {
        let (repo, confinement) = match self.store.get_task(task_id).await {
            Ok(t) => {
                let repo = match &t.repository_id {
                    Some(r) => self.store.get_repository(r).await.ok(),
                    None => None,
                };
                (repo, self.confinement_for(&t.workspace_id).await?)
            }
            Err(_) => (None, None),
        };
        workdir::remove(
            &self.settings.data_dir,
            task_id,
            repo.as_ref().map(|r| r.local_path.as_str()),
            confinement.as_ref(),
        )
        .await
    }
}

impl TaskListener for AcpRuntime {
    /// An archived or deleted task's turns are cancelled.
    fn task_closed(&self, task_id: &str) {
        for turn in self.turns.lock().unwrap_or_else(|p| p.into_inner()).values() {
            if turn.task_id == task_id {
                turn.cancel.cancel();
            }
        }
    }
}
