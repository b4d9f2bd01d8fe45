//! How a reply continues an agent's conversation. Each turn runs a fresh
//! agent process (so a replica can die between turns and another can answer),
//! so the conversation must be carried over: through the agent's own
//! `session/load` where it advertises it, else by replaying the transcript.

use crate::api::TranscriptMessage;

/// The most transcript text a replayed prompt carries; older messages are
/// left out (an agent's context window is finite, and so is our memory).
pub const HISTORY_LIMIT_BYTES: usize = 64 * 1024;

/// The tags around a replayed history in the prompt.
pub const HISTORY_OPEN: &str = "<kandev-history>";
pub const HISTORY_CLOSE: &str = "</kandev-history>";

/// How a turn opens its ACP session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opening {
    /// The first turn: a new session with the run's prompt.
    Fresh,
    /// A reply to an agent that can load sessions: load this ACP session.
    Load(String),
    /// A reply to an agent that cannot (or whose load failed): a new session
    /// whose prompt carries the earlier conversation.
    Replay,
}

/// The opening for a turn. `acp_session_id` is the ACP session the previous
/// turn used (empty when none was recorded).
pub fn opening(is_reply: bool, acp_session_id: &str, agent_can_load: bool) -> Opening {
    match (is_reply, acp_session_id.is_empty(), agent_can_load) {
        (false, _, _) => Opening::Fresh,
        (true, false, true) => Opening::Load(acp_session_id.to_string()),
        _ => Opening::Replay,
    }
}

/// Whether a session can take a reply now (the composer and the server agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyState {
    /// Its last turn ended well: it waits for input.
    Open,
    /// A turn is starting or running.
    Busy,
    /// It failed, was cancelled or completed: no more turns.
    Closed,
}

pub fn reply_state(session_state: &str) -> ReplyState {
    match session_state {
        "WAITING_FOR_INPUT" => ReplyState::Open,
        "STARTING" | "RUNNING" => ReplyState::Busy,
        _ => ReplyState::Closed,
    }
}

fn line_of(m: &TranscriptMessage) -> Option<String> {
    let label = match (m.role.as_str(), m.kind.as_str()) {
        (_, "thought") => return None,
        (_, "tool_call") => "tool call",
        (_, "tool_result") => "tool result",
        ("user", _) => "user",
        (_, "error") => "error",
        _ => "agent",
    };
    Some(format!("[{label}] {}\n", m.content.trim_end()))
}

/// The earlier conversation as a block for the reply's prompt: the newest
/// messages that fit in [`HISTORY_LIMIT_BYTES`], oldest first, thoughts left
/// out. Empty when there is nothing to carry over.
pub fn history_block(history: &[TranscriptMessage]) -> String {
    let mut kept: Vec<String> = vec![];
    let mut size = 0;
    let lines: Vec<String> = history.iter().filter_map(line_of).collect();
    for line in lines.iter().rev() {
        if size + line.len() > HISTORY_LIMIT_BYTES {
            break;
        }
        size += line.len();
        kept.push(line.clone());
    }
    if kept.is_empty() {
        return String::new();
    }
    kept.reverse();
    let omitted = lines.len() - kept.len();
    let mut out = format!("{HISTORY_OPEN}\nThe conversation so far in this session, oldest first");
    if omitted > 0 {
        out.push_str(&format!(" ({omitted} earlier messages left out)"));
    }
    out.push_str(":\n");
    out.extend(kept);
    out.push_str(HISTORY_CLOSE);
    out.push_str("\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn msg(role: &str, kind: &str, content: &str) -> TranscriptMessage {
        TranscriptMessage {
            role: role.into(),
            kind: kind.into(),
            content: content.into(),
            tool: None,
            created_at: DateTime::default(),
        }
    }

    #[test]
    fn first_turn_is_fresh_and_a_reply_loads_only_when_it_can() {
        assert_eq!(opening(false, "acp-1", true), Opening::Fresh);
        assert_eq!(opening(true, "acp-1", true), Opening::Load("acp-1".into()));
        assert_eq!(opening(true, "acp-1", false), Opening::Replay);
        assert_eq!(opening(true, "", true), Opening::Replay, "no recorded session to load");
    }

    #[test]
    fn only_a_session_waiting_for_input_takes_a_reply() {
        assert_eq!(reply_state("WAITING_FOR_INPUT"), ReplyState::Open);
        assert_eq!(reply_state("RUNNING"), ReplyState::Busy);
        assert_eq!(reply_state("STARTING"), ReplyState::Busy);
        for s in ["FAILED", "CANCELLED", "COMPLETED", ""] {
            assert_eq!(reply_state(s), ReplyState::Closed, "{s}");
        }
    }

    #[test]
    fn history_keeps_order_roles_and_leaves_thoughts_out() {
        let h = [
            msg("user", "message", "Fix the build"),
            msg("agent", "thought", "hmm"),
            msg("agent", "tool_call", "shell: cargo build"),
            msg("agent", "tool_result", "ok"),
            msg("agent", "message", "Done.\n"),
        ];
        assert_eq!(
            history_block(&h),
            "<kandev-history>\nThe conversation so far in this session, oldest first:\n\
             [user] Fix the build\n[tool call] shell: cargo build\n[tool result] ok\n[agent] Done.\n\
             </kandev-history>\n\n"
        );
        assert_eq!(history_block(&[]), "");
        assert_eq!(history_block(&[msg("agent", "thought", "x")]), "");
    }

    #[test]
    fn a_long_history_keeps_the_newest_messages_within_the_limit() {
        let big = "x".repeat(HISTORY_LIMIT_BYTES / 3);
        let h: Vec<_> = (0..5).map(|_| msg("agent", "message", &big)).collect();
        let block = history_block(&h);
        assert!(block.len() < HISTORY_LIMIT_BYTES + 200, "{}", block.len());
        assert!(block.contains("(3 earlier messages left out)"), "{}", &block[..120]);
        assert_eq!(block.matches("[agent]").count(), 2);
    }
}
