//! Route packs: wasm-split's loader fetches a route's module and every chunk
//! it needs as separate files (fifty for the editor). Over HTTP/1.1 a browser
//! opens six connections to a host, so a phone on a slow network paid its
//! latency about nine times over before the page could run. Each route gets
//! one pack file instead — its module and its chunks, concatenated — and the
//! loader takes every part from the pack when the route is first needed.
//! The single files stay beside the packs: a chunk no pack has started is
//! fetched alone, and a pack that fails falls back to them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// One loader definition of the generated `__wasm_split.js`: a chunk
/// (`const __chunk_N`) or a route (`export const __wasm_split_load_…`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Loader {
    name: String,
    exported: bool,
    /// The file it fetches, relative to the loader (`chunk_12.wasm`).
    file: String,
    deps: Vec<String>,
}

/// Reads the loader definitions. Fails when the generated shape is not the
/// one this code knows (a new wasm-split): the build must not ship a loader
/// it only half rewrote.
pub(super) fn loaders(js: &str) -> Result<Vec<Loader>, String> {
    let mut out = vec![];
    let mut open: Option<Loader> = None;
    for line in js.lines() {
        let head = line
            .strip_prefix("export const ")
            .map(|rest| (true, rest))
            .or_else(|| line.strip_prefix("const __chunk_").map(|rest| (false, rest)));
        if let Some((exported, rest)) = head {
            let name = rest.split(' ').next().unwrap_or_default();
            let name = if exported {
                name.to_string()
            } else {
                format!("__chunk_{name}")
            };
            if open.is_some() {
                return Err(format!("wasm-split loader: {name} starts inside another definition"));
            }
            open = Some(Loader {
                name,
                exported,
                file: String::new(),
                deps: vec![],
            });
        } else if let Some(l) = open.as_mut()
            && let Some(at) = line.find("new URL(\"./")
        {
            let rest = &line[at + "new URL(\"./".len()..];
            l.file = rest.split('"').next().unwrap_or_default().to_string();
        } else if let Some(list) = line.strip_prefix(", [") {
            let mut l = open
                .take()
                .ok_or("wasm-split loader: a dependency list outside a definition")?;
            let list = list.split(']').next().unwrap_or_default();
            l.deps = list
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(String::from)
                .collect();
            if l.file.is_empty() {
                return Err(format!("wasm-split loader: {} fetches no file", l.name));
            }
            out.push(l);
        }
    }
    if open.is_some() {
        return Err("wasm-split loader: a definition without its dependency list".into());
    }
    Ok(out)
}

/// Each route's files: its own module, then every chunk it needs
/// (transitively), each once.
pub(super) fn route_files(all: &[Loader]) -> Result<BTreeMap<String, Vec<String>>, String> {
    let by_name: BTreeMap<&str, &Loader> = all.iter().map(|l| (l.name.as_str(), l)).collect();
    let mut routes = BTreeMap::new();
    for route in all.iter().filter(|l| l.exported) {
        let mut files = vec![route.file.clone()];
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&str> = route.deps.iter().rev().map(String::as_str).collect();
        while let Some(dep) = stack.pop() {
            if !seen.insert(dep) {
                continue;
            }
            let l = by_name
                .get(dep)
                .ok_or_else(|| format!("wasm-split loader: {} needs unknown {dep}", route.name))?;
            files.push(l.file.clone());
            stack.extend(l.deps.iter().rev().map(String::as_str));
        }
        routes.insert(route.name.clone(), files);
    }
    Ok(routes)
}

/// A route loader's name without wasm-split's prefix
/// (`automation_editor_route_view_898…`).
pub(super) fn route_stem(route: &str) -> &str {
    route.trim_start_matches("__wasm_split_load_").trim_start_matches('_')
}

/// The pack's file name for a route loader's name.
fn pack_name(route: &str) -> String {
    format!("pack_{}.bin", route_stem(route))
}

/// What the rewritten loader needs first. The pack says what it holds (a
/// header naming each part and its length), so the first page carries no
/// index: a part asked for while packs are arriving waits for them.
const RUNTIME: &str = r#"// Route packs (see xtask/src/web/pack.rs): one request per route.
const __parts = new Map();
const __arriving = new Set();
const __packs = new Set();
function __startPack(file) {
    if (__packs.has(file)) return;
    __packs.add(file);
    const body = fetch(new URL("./" + file, import.meta.url))
        .then((r) => {
            if (!r.ok) throw new Error(`${file}: HTTP ${r.status}`);
            return r.arrayBuffer();
        })
        .then((b) => {
            const size = new DataView(b).getUint32(0, true);
            let at = 4 + size;
            for (const [name, len] of JSON.parse(new TextDecoder().decode(new Uint8Array(b, 4, size)))) {
                if (!__parts.has(name)) __parts.set(name, b.slice(at, at + len));
                at += len;
            }
        });
    __arriving.add(body);
    // A failed pack is forgotten, so the next attempt asks for it again.
    body.catch(() => __packs.delete(file)).finally(() => __arriving.delete(body));
}
async function __part(url) {
    const name = url.pathname.split("/").pop();
    if (!__parts.has(name) && __arriving.size) await Promise.allSettled([...__arriving]);
    const bytes = __parts.get(name);
    if (bytes === undefined) return fetch(url);
    // Instantiated once: the bytes are not needed again.
    __parts.delete(name);
    return new Response(bytes, { headers: { "Content-Type": "application/wasm" } });
}
function __withPack(file, load) {
    return () => {
        __startPack(file);
        return load();
    };
}
"#;

/// The loader with every fetch going through `__part` and every route
/// starting its pack first.
fn rewrite(js: &str) -> Result<String, String> {
    let fetches = js.matches("fetch(new URL(\"./").count();
    let routes = js.matches("= wrapAsyncCb(makeLoad(").count();
    if fetches == 0 || routes == 0 {
        return Err("wasm-split loader: no fetch or no route loader to rewrite".into());
    }
    let mut out = String::with_capacity(js.len() + RUNTIME.len());
    let mut in_route = false;
    let mut with_runtime = false;
    for line in js.lines() {
        let mut line = line.replace("fetch(new URL(\"./", "__part(new URL(\"./");
        if let Some(rest) = line.strip_prefix("export const ")
            && line.contains("= wrapAsyncCb(makeLoad(")
        {
            let name = rest.split(' ').next().unwrap_or_default();
            line = line.replace(
                "= wrapAsyncCb(makeLoad(",
                &format!("= wrapAsyncCb(__withPack({:?}, makeLoad(", pack_name(name)),
            );
            in_route = true;
        } else if in_route && line.starts_with(", [") {
            if !line.ends_with("]));") {
                return Err(format!("wasm-split loader: unexpected end of a route loader: {line}"));
            }
            line = format!("{}])));", line.trim_end_matches("]));"));
            in_route = false;
        }
        out.push_str(&line);
        out.push('\n');
        // The runtime goes right after the import line.
        if line.starts_with("import ") && !with_runtime {
            out.push_str(RUNTIME);
            with_runtime = true;
        }
    }
    if !with_runtime {
        return Err("wasm-split loader: no import line to put the pack runtime after".into());
    }
    Ok(out)
}

/// A pack: a little-endian `u32` header length, the header (JSON
/// `[[file, length], …]`), then the files in that order.
fn pack_bytes(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, String> {
    let header: Vec<(&str, usize)> = files.iter().map(|(f, b)| (f.as_str(), b.len())).collect();
    let header = serde_json::to_vec(&header).map_err(|e| format!("pack header: {e}"))?;
    let mut out = Vec::with_capacity(4 + header.len() + files.iter().map(|(_, b)| b.len()).sum::<usize>());
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&header);
    for (_, bytes) in files {
        out.extend_from_slice(bytes);
    }
    Ok(out)
}

/// Writes one pack per route into `app` and rewrites its loader. Returns
/// the packs' file names and their bytes together.
pub fn pack(app: &Path) -> Result<(Vec<String>, u64), String> {
    let loader_path = app.join("__wasm_split.js");
    let js = fs::read_to_string(&loader_path).map_err(|e| format!("{}: {e}", loader_path.display()))?;
    let routes = route_files(&loaders(&js)?)?;
    let mut bytes = 0;
    let mut names = Vec::with_capacity(routes.len());
    for (route, files) in &routes {
        let files = files
            .iter()
            .map(|f| {
                fs::read(app.join(f))
                    .map(|b| (f.clone(), b))
                    .map_err(|e| format!("{f}: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let body = pack_bytes(&files)?;
        let name = pack_name(route);
        bytes += body.len() as u64;
        fs::write(app.join(&name), &body).map_err(|e| format!("{name}: {e}"))?;
        names.push(name);
    }
    fs::write(&loader_path, rewrite(&js)?).map_err(|e| format!("{}: {e}", loader_path.display()))?;
    Ok((names, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape wasm-split 0.2 writes, cut down to two chunks and a route.
    const LOADER: &str = r#"import { initSync } from "./kandev_web.js";

function makeLoad(fetcher, deps) { }
/* a, b */
const __chunk_1 = makeLoad(() => {
    const src = fetch(new URL("./chunk_1.wasm", import.meta.url));
    return async (imports) => (WebAssembly.instantiateStreaming(src, imports));
}
, []);
const __chunk_2 = makeLoad(() => {
    const src = fetch(new URL("./chunk_2.wasm", import.meta.url));
    return async (imports) => (WebAssembly.instantiateStreaming(src, imports));
}
, [__chunk_1]);
export const __wasm_split_load___editor_route = wrapAsyncCb(makeLoad(() => {
    const src = fetch(new URL("./split___editor_route.wasm", import.meta.url));
    return async (imports) => (WebAssembly.instantiateStreaming(src, imports));
}
, [__chunk_2, __chunk_1]));
"#;

    #[test]
    fn a_routes_pack_holds_its_module_and_every_chunk_it_needs_once() {
        let all = loaders(LOADER).expect("loaders");
        assert_eq!(all.len(), 3);
        let routes = route_files(&all).expect("routes");
        assert_eq!(
            routes["__wasm_split_load___editor_route"],
            vec!["split___editor_route.wasm", "chunk_2.wasm", "chunk_1.wasm"]
        );
        assert_eq!(pack_name("__wasm_split_load___editor_route"), "pack_editor_route.bin");
    }

    #[test]
    fn the_rewritten_loader_fetches_through_packs_and_keeps_its_shape() {
        let out = rewrite(LOADER).expect("rewrite");
        assert!(!out.contains("fetch(new URL(\"./chunk"), "{out}");
        assert_eq!(out.matches("__part(new URL(\"./").count(), 3);
        assert!(out.contains(
            "export const __wasm_split_load___editor_route = wrapAsyncCb(__withPack(\"pack_editor_route.bin\", makeLoad(() => {"
        ));
        assert!(out.contains("\n, [__chunk_2, __chunk_1])));\n"), "{out}");
        // Chunk definitions keep their own terminator.
        assert!(out.contains("\n, [__chunk_1]);\n"));
        let runtime_at = out.find("const __parts = new Map();").expect("runtime");
        assert!(runtime_at > out.find("import {").expect("import"));
        // Brackets still balance once the route is wrapped.
        let count = |c: char| out.chars().filter(|x| *x == c).count();
        assert_eq!(count('('), count(')'));
    }

    #[test]
    fn a_pack_names_its_parts_and_their_lengths_before_them() {
        let files = vec![("a.wasm".to_string(), vec![1, 2, 3]), ("b.wasm".to_string(), vec![4])];
        let pack = pack_bytes(&files).expect("pack");
        let size = u32::from_le_bytes([pack[0], pack[1], pack[2], pack[3]]) as usize;
        let header: Vec<(String, usize)> = serde_json::from_slice(&pack[4..4 + size]).expect("header");
        assert_eq!(header, vec![("a.wasm".to_string(), 3), ("b.wasm".to_string(), 1)]);
        assert_eq!(&pack[4 + size..], &[1, 2, 3, 4]);
    }

    #[test]
    fn a_loader_of_an_unknown_shape_is_refused() {
        assert!(rewrite("import x;\nconst a = 1;\n").is_err());
        assert!(loaders("const __chunk_1 = makeLoad(() => {\n").is_err());
        let no_file = "const __chunk_1 = makeLoad(() => {\n}\n, []);\n";
        assert!(loaders(no_file).is_err());
        let unknown_dep = LOADER.replace(", [__chunk_2, __chunk_1]));", ", [__chunk_9]));");
        assert!(route_files(&loaders(&unknown_dep).expect("loaders")).is_err());
    }
}
