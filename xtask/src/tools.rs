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

pub fn terser() -> std::path::PathBuf {
    root().join("node_modules/.bin/terser")
}

pub fn setup() -> Result<(), String> {
    let targets = sh::output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    if !targets.lines().any(|t| t.trim() == "wasm32-unknown-unknown") {
        sh::step("adding the wasm32-unknown-unknown target");
        sh::run("rustup", &["target", "add", "wasm32-unknown-unknown"], &[])?;
    }
    cargo_install(
        "wasm-bindgen",
        "wasm-bindgen-cli",
        &wasm_bindgen_version()?,
        "a few minutes",
    )?;
    let opt = sh::output(&wasm_opt().display().to_string(), &["--version"]).unwrap_or_default();
    if !opt.contains("version 132") || !root().join("node_modules/axe-core").exists() || !terser().exists() {
        sh::step("installing npm tools (binaryen wasm-opt 132, terser, axe-core)");
        let prefix = root().display().to_string();
        sh::run("npm", &["install", "--no-audit", "--no-fund", "--prefix", &prefix], &[])?;
    }
    Ok(())
}

/// Installs `krate` at `version` with cargo unless `binary --version`
/// already names that version; `takes` says how long the first time is.
pub fn cargo_install(binary: &str, krate: &str, version: &str, takes: &str) -> Result<(), String> {
    let have = sh::output(binary, &["--version"]).unwrap_or_default();
    if !have.split_whitespace().any(|w| w == version) {
        sh::step(&format!("installing {krate} {version} ({takes}, once)"));
        // Not --locked: a locked dependency of wasm-bindgen-cli is missing from this registry mirror.
        sh::run("cargo", &["install", krate, "--version", version], &[])?;
    }
    Ok(())
}

/// The `@octokit/openapi` release whose GitHub description the simulator's
/// answers are validated against.
const OCTOKIT_OPENAPI: &str = "@octokit/openapi@23.0.2";

/// GitHub's OpenAPI description, fetched from the npm registry once into
/// `target/octokit-openapi/` (only the one file the tests read is kept).
pub fn github_openapi() -> Result<std::path::PathBuf, String> {
    let dir = root().join("target/octokit-openapi");
    let file = dir.join("api.github.com.json");
    let stamp = dir.join("version");
    if file.exists() && std::fs::read_to_string(&stamp).unwrap_or_default() == OCTOKIT_OPENAPI {
        return Ok(file);
    }
    sh::step(&format!("fetching GitHub's OpenAPI description ({OCTOKIT_OPENAPI})"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let d = dir.display().to_string();
    sh::run(
        "npm",
        &["pack", OCTOKIT_OPENAPI, "--pack-destination", &d, "--silent"],
        &[],
    )?;
    let tarball = std::fs::read_dir(&dir)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "tgz"))
        .ok_or("npm pack left no tarball")?;
    let t = tarball.display().to_string();
    sh::run(
        "tar",
        &[
            "xzf",
            &t,
            "-C",
            &d,
            "--strip-components=2",
            "package/generated/api.github.com.json",
        ],
        &[],
    )?;
    let _ = std::fs::remove_file(&tarball);
    std::fs::write(&stamp, OCTOKIT_OPENAPI).map_err(|e| e.to_string())?;
    Ok(file)
}
