//! The web bundle: wasm (size-optimised profile) → wasm-bindgen → wasm-opt,
//! plus the static files, each also gzip-compressed for serving. Prints sizes.

use std::fs;
use std::io::Write;
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;

use crate::sh;
use crate::tools::{root, wasm_opt};

pub fn build() -> Result<(), String> {
    sh::step("building the web app (wasm)");
    sh::run(
        "cargo",
        &[
            "build",
            "-p",
            "kandev-web",
            "--target",
            "wasm32-unknown-unknown",
            "--profile",
            "wasm-release",
        ],
        &[],
    )?;
    let dist = root().join("web/dist");
    let _ = fs::remove_dir_all(&dist);
    fs::create_dir_all(&dist).map_err(|e| format!("{}: {e}", dist.display()))?;
    let wasm = root().join("target/wasm32-unknown-unknown/wasm-release/kandev-web.wasm");
    sh::run(
        "wasm-bindgen",
        &[
            "--target",
            "web",
            "--no-typescript",
            "--out-name",
            "kandev_web",
            "--out-dir",
            &dist.display().to_string(),
            &wasm.display().to_string(),
        ],
        &[],
    )?;
    let bg = dist.join("kandev_web_bg.wasm");
    let raw_size = size(&bg);
    sh::run(
        &wasm_opt().display().to_string(),
        &[
            "-Oz",
            "--enable-bulk-memory",
            "--enable-nontrapping-float-to-int",
            "--enable-reference-types",
            "--enable-sign-ext",
            "--enable-mutable-globals",
            "-o",
            &bg.display().to_string(),
            &bg.display().to_string(),
        ],
        &[],
    )?;
    for file in ["index.html", "style.css"] {
        fs::copy(root().join("web").join(file), dist.join(file)).map_err(|e| format!("{file}: {e}"))?;
    }
    copy_dir(&root().join("web/assets"), &dist.join("assets"))?;
    copy_dir(&root().join("locales"), &dist.join("locales"))?;
    let mut total = (0, 0);
    for path in files(&dist) {
        total.0 += size(&path);
        total.1 += gzip(&path)?;
    }
    let opt_size = size(&bg);
    let gz_size = size(&dist.join("kandev_web_bg.wasm.gz"));
    sh::step(&format!(
        "web bundle: wasm {} KiB from wasm-bindgen, {} KiB after wasm-opt -Oz, {} KiB gzipped; all files {} KiB raw, {} KiB gzipped",
        raw_size / 1024,
        opt_size / 1024,
        gz_size / 1024,
        total.0 / 1024,
        total.1 / 1024
    ));
    Ok(())
}

fn size(p: &Path) -> u64 {
    fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn gzip(path: &Path) -> Result<u64, String> {
    let data = fs::read(path).map_err(|e| e.to_string())?;
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    enc.write_all(&data).map_err(|e| e.to_string())?;
    let out = enc.finish().map_err(|e| e.to_string())?;
    let name = format!("{}.gz", path.display());
    fs::write(&name, &out).map_err(|e| e.to_string())?;
    Ok(out.len() as u64)
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    if !from.exists() {
        return Ok(());
    }
    fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in fs::read_dir(from).map_err(|e| e.to_string())?.flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}
