//! Embeds the built web app (`web/dist`, made by `cargo xtask web`) in the
//! binary, so `kandev serve` serves it from any directory. Without a built
//! app the list is empty and the server says so at `/`.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let web = Path::new(&manifest).join("../web");
    let dist = web.join("dist");
    // A missing path would rerun this on every build: watch the web crate
    // until there is a build to watch.
    let watched = if dist.is_dir() { &dist } else { &web };
    println!("cargo::rerun-if-changed={}", watched.display());
    let mut all = vec![];
    files(&dist, &mut all);
    all.sort();
    let mut code = String::from(
        "/// The built web app: (path under `web/dist`, bytes).\npub static FILES: &[(&str, &[u8])] = &[\n",
    );
    for p in &all {
        let Ok(rel) = p.strip_prefix(&dist) else { continue };
        let rel = rel.to_string_lossy().replace('\\', "/");
        let abs = p.canonicalize().unwrap_or_else(|_| p.clone());
        code.push_str(&format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            abs.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("web_app.rs");
    if let Err(e) = std::fs::write(&out, code) {
        panic!("cannot write {}: {e}", out.display());
    }
}
