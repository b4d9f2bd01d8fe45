//! Whether a process still runs, for tests of what outlives whom.

use std::time::{Duration, Instant};

/// Whether `pid` runs: a killed process lingers as a zombie until its parent
/// (often init, which some containers lack) reaps it, and that is not running.
pub fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
        let state = stat.rsplit(')').next().unwrap_or_default().trim_start();
        !state.starts_with('Z') && !state.starts_with('X')
    })
}

/// Whether `pid` stops running within `limit` (a kill takes a moment).
pub async fn ends_within(pid: &str, limit: Duration) -> bool {
    let started = Instant::now();
    while running(pid) {
        if started.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// The first line written to `file` by a background process (its pid), once it is there.
pub async fn written_line(file: &std::path::Path, limit: Duration) -> Option<String> {
    let started = Instant::now();
    loop {
        match std::fs::read_to_string(file) {
            Ok(s) if s.ends_with('\n') => return Some(s.trim().to_string()),
            _ if started.elapsed() > limit => return None,
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}
