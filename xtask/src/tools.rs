//! Build tools, installed only when missing or at the wrong version, so a
//! repeat run costs nothing.

use std::path::Path;

use crate::sh;

/// The workspace root (xtask lives one level below it).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new("."))
}

/// The `wasm-bindgen` version pinned by Cargo.lock: the CLI must match it.
pub fn wasm_bindgen_version() -> Result<String, String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasm-bindgen\""
            && let Some(v) = lines.next().and_then(|l| l.trim().strip_prefix("version = \""))
        {
            return Ok(v.trim_end_matches('"').to_string());
        }
    }
    Err("wasm-bindgen is not in Cargo.lock".into())
}

pub fn wasm_opt() -> std::path::PathBuf {
    root().join("node_modules/.bin/wasm-opt")
}

pub fn setup() -> Result<(), String> {
    let targets = sh::output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    if !targets.lines().any(|t| t.trim() == "wasm32-unknown-unknown") {
        sh::step("adding the wasm32-unknown-unknown target");
        sh::run("rustup", &["target", "add", "wasm32-unknown-unknown"], &[])?;
    }
    let want = wasm_bindgen_version()?;
    let have = sh::output("wasm-bindgen", &["--version"]).unwrap_or_default();
    if !have.split_whitespace().any(|w| w == want) {
        sh::step(&format!("installing wasm-bindgen-cli {want} (a few minutes, once)"));
        // Not --locked: a locked dependency of the CLI is missing from this registry mirror.
        sh::run("cargo", &["install", "wasm-bindgen-cli", "--version", &want], &[])?;
    }
    let opt = sh::output(&wasm_opt().display().to_string(), &["--version"]).unwrap_or_default();
    if !opt.contains("version 132") || !root().join("node_modules/axe-core").exists() {
        sh::step("installing npm tools (binaryen wasm-opt 132, axe-core)");
        let prefix = root().display().to_string();
        sh::run("npm", &["install", "--no-audit", "--no-fund", "--prefix", &prefix], &[])?;
    }
    Ok(())
}
