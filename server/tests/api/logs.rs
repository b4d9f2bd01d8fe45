//! Captures `tracing` output of the current thread, so log-level contracts can
//! be asserted. Use with a current-thread runtime: every task then logs here.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing::subscriber::DefaultGuard;
use tracing_subscriber::fmt::MakeWriter;

#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Captured {
    pub fn lines(&self) -> Vec<String> {
        let bytes = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        String::from_utf8_lossy(&bytes).lines().map(str::to_string).collect()
    }

    /// Lines at `level` (e.g. "WARN") containing every needle.
    pub fn at(&self, level: &str, needles: &[&str]) -> Vec<String> {
        self.lines()
            .into_iter()
            .filter(|l| l.split_whitespace().nth(1) == Some(level))
            .filter(|l| needles.iter().all(|n| l.contains(n)))
            .collect()
    }

    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// Starts capturing every level for this thread until the guard drops.
pub fn capture() -> (Captured, DefaultGuard) {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(captured.clone())
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_target(true)
        .finish();
    (captured.clone(), tracing::subscriber::set_default(subscriber))
}
