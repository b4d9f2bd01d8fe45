//! The web bundle: wasm (size-optimised profile) → wasm-bindgen → wasm-opt,
//! plus the static files, each also gzip- and brotli-compressed for serving.
//! The script, wasm and stylesheet get content-hashed names, so the server
//! can let browsers keep them for a year. Prints sizes and fails above the
//! first page's budget.

use std::fs;
use std::io::Write;
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;

use crate::sh;
use crate::tools::{root, wasm_opt};

/// What the first page (the board) may weigh, gzipped: index.html, the
/// script, the wasm and the stylesheet. First set at the achieved size +
/// 10 %; raised only deliberately, with the reason in the commit (last:
/// 613 → 620 for the executor choice and the tokenised stylesheet, 614 KiB
/// achieved). Lower it when the bundle shrinks.
const FIRST_PAGE_BUDGET_KIB: u64 = 620;

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
        // Type-erased components: one copy of the view code instead of one
        // per component signature (Leptos's own flag).
        &[(
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS".into(),
            "--cfg erase_components".into(),
        )],
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
    let js = hashed(&dist, "kandev_web.js")?;
    let wasm = hashed(&dist, "kandev_web_bg.wasm")?;
    fs::copy(root().join("web/style.css"), dist.join("style.css")).map_err(|e| format!("style.css: {e}"))?;
    let css = hashed(&dist, "style.css")?;
    let template = fs::read_to_string(root().join("web/index.html")).map_err(|e| format!("index.html: {e}"))?;
    let index = template
        .replace("/kandev_web.js", &format!("/{js}"))
        .replace("/kandev_web_bg.wasm", &format!("/{wasm}"))
        .replace("/style.css", &format!("/{css}"));
    fs::write(dist.join("index.html"), index).map_err(|e| format!("index.html: {e}"))?;
    copy_dir(&root().join("web/assets"), &dist.join("assets"))?;
    locale_files(&dist)?;
    let mut total = (0, 0);
    for path in files(&dist) {
        total.0 += size(&path);
        total.1 += compress(&path)?;
    }
    let gz = |name: &str| size(&dist.join(format!("{name}.gz")));
    let first_page = ["index.html", &js, &wasm, &css].iter().map(|n| gz(n)).sum::<u64>() / 1024;
    sh::step(&format!(
        "web bundle: wasm {} KiB from wasm-bindgen, {} KiB after wasm-opt -Oz, {} KiB gzipped, {} KiB brotli; \
         first page {first_page} KiB gzipped (budget {FIRST_PAGE_BUDGET_KIB} KiB); all files {} KiB raw, {} KiB gzipped",
        raw_size / 1024,
        size(&dist.join(&wasm)) / 1024,
        gz(&wasm) / 1024,
        size(&dist.join(format!("{wasm}.br"))) / 1024,
        total.0 / 1024,
        total.1 / 1024
    ));
    if first_page > FIRST_PAGE_BUDGET_KIB {
        return Err(format!(
            "the first page weighs {first_page} KiB gzipped, over its budget of {FIRST_PAGE_BUDGET_KIB} KiB: find what grew with `twiggy top` on target/wasm32-unknown-unknown/wasm-release/kandev-web.wasm"
        ));
    }
    Ok(())
}

/// Each locale's Fluent files as one `locales/<locale>.ftl`: the app has
/// English built in and fetches another language in one request.
fn locale_files(dist: &Path) -> Result<(), String> {
    let out = dist.join("locales");
    fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    for dir in files_in(&root().join("locales")) {
        let mut sources = files_in(&dir);
        sources.sort();
        let mut joined = String::new();
        for f in sources.iter().filter(|f| f.extension().is_some_and(|e| e == "ftl")) {
            joined += &fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
            joined.push('\n');
        }
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        fs::write(out.join(format!("{name}.ftl")), joined).map_err(|e| format!("{name}.ftl: {e}"))?;
    }
    Ok(())
}

fn files_in(dir: &Path) -> Vec<std::path::PathBuf> {
    fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// Renames `dist/name` to `stem-<hash>.ext` (16 hex digits of FNV-1a over
/// its bytes) and returns the new name: a changed file gets a new name, so a
/// year-long cache never serves a stale one.
fn hashed(dist: &Path, name: &str) -> Result<String, String> {
    let from = dist.join(name);
    let bytes = fs::read(&from).map_err(|e| format!("{name}: {e}"))?;
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let to = format!("{stem}-{hash:016x}.{ext}");
    fs::rename(&from, dist.join(&to)).map_err(|e| format!("{name}: {e}"))?;
    Ok(to)
}

fn size(p: &Path) -> u64 {
    fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Writes `path.gz` and `path.br` beside the file; returns the gzip size.
fn compress(path: &Path) -> Result<u64, String> {
    let data = fs::read(path).map_err(|e| e.to_string())?;
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    enc.write_all(&data).map_err(|e| e.to_string())?;
    let gz = enc.finish().map_err(|e| e.to_string())?;
    fs::write(format!("{}.gz", path.display()), &gz).map_err(|e| e.to_string())?;
    let mut br = Vec::new();
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        ..Default::default()
    };
    brotli::BrotliCompress(&mut data.as_slice(), &mut br, &params).map_err(|e| e.to_string())?;
    fs::write(format!("{}.br", path.display()), &br).map_err(|e| e.to_string())?;
    Ok(gz.len() as u64)
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
