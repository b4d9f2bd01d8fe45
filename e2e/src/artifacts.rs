//! Screenshots on every run, and the page and console on failure, under
//! `target/e2e-screenshots/`.

use std::path::PathBuf;

use crate::Browser;

pub fn dir() -> PathBuf {
    let root = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = root.join("e2e-screenshots");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

pub async fn on_failure(browser: &Browser, name: &str) {
    let dir = dir();
    let _ = browser
        .driver
        .screenshot(&dir.join(format!("{name}-failure.png")))
        .await;
    if let Ok(html) = browser.driver.source().await {
        let _ = std::fs::write(dir.join(format!("{name}-failure.html")), html);
    }
    let console = browser.console().await.join("\n");
    let _ = std::fs::write(dir.join(format!("{name}-console.log")), console);
}
