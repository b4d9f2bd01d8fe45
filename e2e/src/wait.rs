//! Waiting on conditions, never on fixed sleeps.

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::process::Child;

/// Polls `check` until it returns `Some`, or fails naming `what`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return Ok(v);
        }
        if Instant::now() > deadline {
            anyhow::bail!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The rest of the line a child printed after `prefix` once it listens on
/// port 0. The kernel picks the port at bind time, so no other process can
/// take it between choosing and listening, as a picked-then-released port can.
pub async fn announced(child: &mut Child, out: &Path, prefix: &str) -> anyhow::Result<String> {
    eventually(prefix, Duration::from_secs(30), || {
        let exited = child.try_wait().ok().flatten();
        let text = std::fs::read_to_string(out).unwrap_or_default();
        let rest = text
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .map(|r| r.trim().to_string());
        async move {
            match (rest, exited) {
                (Some(rest), _) => Some(Ok(rest)),
                (None, Some(status)) => Some(Err(anyhow::anyhow!("it exited ({status}): {text}"))),
                (None, None) => None,
            }
        }
    })
    .await?
}
