//! `kandev mock-agent`: an ACP agent over stdio for tests and demos. It runs
//! inline `e2e:` scripts, making real MCP calls to the servers its session was
//! given, and always ends the turn with `end_turn` (or `cancelled`). Like a
//! real agent it keeps each session's prompts on disk and can `session/load`
//! them in a later process (unless started with `--no-load-session`).

pub mod memory;

pub mod mcp_call;
pub mod script;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, ContentChunk, InitializeRequest, InitializeResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse,
    PermissionOption, PermissionOptionKind, PromptRequest, PromptResponse, RequestPermissionOutcome,
    RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate, StopReason, TextContent, ToolCall,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use agent_client_protocol::{Agent, ByteStreams, Client};
use serde_json::json;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tokio_util::sync::CancellationToken;

use script::{Directive, Route, context_ids, route, substitute_ids};

#[derive(Clone, Default)]
struct SessionState {
    /// MCP server name → URL.
    mcp: HashMap<String, String>,
    cancel: CancellationToken,
    /// The earlier prompts of a loaded session, oldest first.
    earlier: Vec<String>,
}

/// `read <path>: ok`, `…: denied` (the system refused it), or the error.
fn outcome(what: &str, path: &str, r: std::io::Result<()>) -> String {
    match r {
        Ok(()) => format!("{what} {path}: ok"),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => format!("{what} {path}: denied"),
        Err(e) => format!("{what} {path}: {e}"),
    }
}

type Sessions = Arc<Mutex<HashMap<String, SessionState>>>;

fn prompt_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn text_update(session: &SessionId, thought: bool, text: &str) -> SessionNotification {
    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(text)));
    let update = if thought {
        SessionUpdate::AgentThoughtChunk(chunk)
    } else {
        SessionUpdate::AgentMessageChunk(chunk)
    };
    SessionNotification::new(session.clone(), update)
}

fn http_servers(servers: &[McpServer]) -> HashMap<String, String> {
    servers
        .iter()
        .filter_map(|s| match s {
            McpServer::Http(http) => Some((http.name.clone(), http.url.clone())),
            _ => None,
        })
        .collect()
}

/// Runs the agent on stdin/stdout until the client hangs up.
pub async fn run(load_session: bool) -> Result<(), String> {
    let sessions: Sessions = Arc::default();
    let for_new = sessions.clone();
    let for_load = sessions.clone();
    let for_prompt = sessions.clone();
    let for_cancel = sessions.clone();
    let transport = ByteStreams::new(tokio::io::stdout().compat_write(), tokio::io::stdin().compat());
    Agent
        .v1()
        .name("kandev-mock-agent")
        .on_receive_request(
            async move |req: InitializeRequest, responder, _cx| {
                let caps = AgentCapabilities::new()
                    .mcp_capabilities(McpCapabilities::new().http(true))
                    .load_session(load_session);
                responder.respond(InitializeResponse::new(req.protocol_version).agent_capabilities(caps))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder, _cx| {
                let id = uuid::Uuid::new_v4().to_string();
                let state = SessionState {
                    mcp: http_servers(&req.mcp_servers),
                    ..SessionState::default()
                };
                for_new
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(id.clone(), state);
                responder.respond(NewSessionResponse::new(id))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest, responder, cx: ConnectionTo<Client>| {
                let id = req.session_id.to_string();
                let Some(earlier) = memory::read(&id).filter(|_| load_session) else {
                    return responder.respond_with_error(
                        agent_client_protocol::Error::invalid_params().data(format!("no session {id}")),
                    );
                };
                // As ACP asks: replay the conversation before answering.
                for prompt in &earlier {
                    let chunk = ContentChunk::new(ContentBlock::Text(TextContent::new(prompt.clone())));
                    let _ = cx.send_notification(SessionNotification::new(
                        req.session_id.clone(),
                        SessionUpdate::UserMessageChunk(chunk),
                    ));
                }
                let state = SessionState {
                    mcp: http_servers(&req.mcp_servers),
                    earlier,
                    ..SessionState::default()
                };
                for_load.lock().unwrap_or_else(|p| p.into_inner()).insert(id, state);
                responder.respond(LoadSessionResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let id = req.session_id.to_string();
                let state = {
                    let mut all = for_prompt.lock().unwrap_or_else(|p| p.into_inner());
                    let entry = all.entry(id.clone()).or_default();
                    // A fresh token per turn: an earlier cancel must not end this one.
                    entry.cancel = CancellationToken::new();
                    entry.clone()
                };
                let text = prompt_text(&req.prompt);
                let session = req.session_id.clone();
                // The turn runs off the dispatch loop so `session/cancel` still arrives.
                cx.clone().spawn(async move {
                    let stop = run_turn(&cx, &session, &state, &text).await;
                    if load_session {
                        let mut prompts = state.earlier.clone();
                        prompts.push(script::strip_system_blocks(&text).trim().to_string());
                        memory::write(&id, &prompts);
                    }
                    responder.respond(PromptResponse::new(stop))
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| {
                if let Some(s) = for_cancel
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&n.session_id.to_string())
                {
                    s.cancel.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
        .map_err(|e| e.to_string())
}

async fn run_turn(cx: &ConnectionTo<Client>, session: &SessionId, state: &SessionState, prompt: &str) -> StopReason {
    let directives = match route(prompt) {
        Route::Script(d) => d,
        Route::Scenario(name) => {
            let _ = cx.send_notification(text_update(session, false, &format!("Mock scenario {name} finished.")));
            return StopReason::EndTurn;
        }
        Route::Plain => {
            let _ = cx.send_notification(text_update(
                session,
                false,
                "Mock agent here: I read your prompt and have nothing to do.",
            ));
            return StopReason::EndTurn;
        }
    };
    let (task_id, session_id) = context_ids(prompt);
    for (n, directive) in directives.into_iter().enumerate() {
        if state.cancel.is_cancelled() {
            return StopReason::Cancelled;
        }
        match directive {
            Directive::Message(t) => {
                let _ = cx.send_notification(text_update(session, false, &t));
            }
            Directive::Thinking(t) => {
                let _ = cx.send_notification(text_update(session, true, &t));
            }
            Directive::Recall => {
                let said = recall(&state.earlier, prompt);
                let _ = cx.send_notification(text_update(session, false, &said));
            }
            Directive::Pid => {
                let _ = cx.send_notification(text_update(session, false, &format!("pid={}", std::process::id())));
            }
            Directive::Crash => std::process::exit(70),
            Directive::Read(path) => {
                let said = outcome("read", &path, std::fs::read(&path).map(drop));
                let _ = cx.send_notification(text_update(session, false, &said));
            }
            Directive::Write(path) => {
                let said = outcome("write", &path, std::fs::write(&path, "written by an agent\n"));
                let _ = cx.send_notification(text_update(session, false, &said));
            }
            Directive::Env(name) => {
                let value = std::env::var_os(&name).unwrap_or_default();
                let said = format!("{name}={}", value.to_string_lossy());
                let _ = cx.send_notification(text_update(session, false, &said));
            }
            Directive::Connect(name) => {
                let said = outcome("connect", &name, connect(&name));
                let _ = cx.send_notification(text_update(session, false, &said));
            }
            Directive::Spawn(script) => {
                let said = match spawn_in_background(&script) {
                    Ok(pid) => format!("spawned={pid}"),
                    Err(e) => format!("spawn: {e}"),
                };
                let _ = cx.send_notification(text_update(session, false, &said));
            }
            Directive::McpUrl => {
                let url = state.mcp.get("kandev").cloned().unwrap_or_default();
                let _ = cx.send_notification(text_update(session, false, &format!("mcp={url}")));
            }
            Directive::Permission(title) => {
                let fields = ToolCallUpdateFields::new().title(title);
                let options = vec![PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce)];
                let request = RequestPermissionRequest::new(
                    session.clone(),
                    ToolCallUpdate::new(format!("perm-{n}"), fields),
                    options,
                );
                match cx.send_request(request).block_task().await {
                    Ok(resp) if matches!(resp.outcome, RequestPermissionOutcome::Selected(_)) => {}
                    _ => return StopReason::Cancelled,
                }
            }
            Directive::Delay(ms) => {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                    _ = state.cancel.cancelled() => return StopReason::Cancelled,
                }
            }
            Directive::Mcp { server, tool, args } => {
                let args = match args {
                    Ok(a) => substitute_ids(&a, &task_id, &session_id),
                    Err(e) => {
                        let _ = cx.send_notification(text_update(
                            session,
                            false,
                            &format!("Script error: bad MCP args JSON: {e}"),
                        ));
                        continue;
                    }
                };
                let call_id = format!("mcp-{n}");
                let call = ToolCall::new(call_id.clone(), format!("{server}: {tool}"))
                    .name(tool.clone())
                    .kind(ToolKind::Other)
                    .status(ToolCallStatus::InProgress)
                    .raw_input(args.clone());
                let _ = cx.send_notification(SessionNotification::new(session.clone(), SessionUpdate::ToolCall(call)));
                let outcome = match state.mcp.get(&server) {
                    Some(url) => mcp_call::call(url, &tool, args).await,
                    None => Err(format!("no MCP server named {server}")),
                };
                let (status, output) = match outcome {
                    Ok(text) => (ToolCallStatus::Completed, json!({"result": text})),
                    Err(e) => (ToolCallStatus::Failed, json!({"error": format!("MCP error: {e}")})),
                };
                let fields = ToolCallUpdateFields::new()
                    .status(status)
                    .raw_output(output.clone())
                    .content(vec![ContentBlock::Text(TextContent::new(output.to_string())).into()]);
                let update = ToolCallUpdate::new(call_id, fields);
                let _ = cx.send_notification(SessionNotification::new(
                    session.clone(),
                    SessionUpdate::ToolCallUpdate(update),
                ));
            }
        }
    }
    StopReason::EndTurn
}

/// Connects to the abstract unix socket `@name`, or to TCP `host:port`.
fn connect(name: &str) -> std::io::Result<()> {
    if name.starts_with('@') {
        return connect_abstract(name);
    }
    #[cfg(unix)]
    if name.starts_with('/') {
        return std::os::unix::net::UnixStream::connect(name).map(drop);
    }
    std::net::TcpStream::connect_timeout(
        &name
            .parse()
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not host:port"))?,
        std::time::Duration::from_secs(5),
    )
    .map(drop)
}

/// Connects to the abstract unix socket `@name` (Linux's own namespace).
#[cfg(target_os = "linux")]
fn connect_abstract(name: &str) -> std::io::Result<()> {
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.trim_start_matches('@'))?;
    std::os::unix::net::UnixStream::connect_addr(&addr).map(drop)
}

#[cfg(not(target_os = "linux"))]
fn connect_abstract(_name: &str) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// `sh -c script`, left running (its exit reaped in the background): what an
/// agent's build watcher or dev server is.
fn spawn_in_background(script: &str) -> std::io::Result<u32> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let pid = child.id().unwrap_or_default();
    tokio::spawn(async move { child.wait().await });
    Ok(pid)
}

/// What the agent knows of the conversation before this prompt: the prompts
/// of a loaded session, else the user lines of a replayed history block.
fn recall(earlier: &[String], prompt: &str) -> String {
    if !earlier.is_empty() {
        return format!("recalled via load: {}", earlier.join(" | "));
    }
    let replayed: Vec<&str> = script::history_of(prompt)
        .lines()
        .filter_map(|l| l.strip_prefix("[user] "))
        .collect();
    if replayed.is_empty() {
        "recalled nothing".into()
    } else {
        format!("recalled via replay: {}", replayed.join(" | "))
    }
}

/// The protocol version the mock agent answers with when asked.
pub fn protocol_version() -> ProtocolVersion {
    ProtocolVersion::V1
}
