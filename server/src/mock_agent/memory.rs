//! The mock agent's session memory: each session's prompts in a JSON file
//! under the temporary directory, so a later process can load the session.

use std::path::PathBuf;

fn path(session_id: &str) -> Option<PathBuf> {
    // Session ids are ours (UUIDs); anything else could name a path.
    uuid::Uuid::parse_str(session_id).ok()?;
    Some(
        std::env::temp_dir()
            .join("kandev-mock-agent")
            .join(format!("{session_id}.json")),
    )
}

/// The session's prompts, oldest first; `None` when it was never saved.
pub fn read(session_id: &str) -> Option<Vec<String>> {
    let raw = std::fs::read(path(session_id)?).ok()?;
    serde_json::from_slice(&raw).ok()
}

/// Saves the session's prompts; a failure only costs a later load.
pub fn write(session_id: &str, prompts: &[String]) {
    let Some(path) = path(session_id) else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(raw) = serde_json::to_vec(prompts) {
        let _ = std::fs::write(path, raw);
    }
}
