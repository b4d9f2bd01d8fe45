//! Route packs: wasm-split's loader fetches a route's module and every chunk
//! it needs as separate files (fifty for the editor). Over HTTP/1.1 a browser
//! opens six connections to a host, so a phone on a slow network paid its
//! latency about nine times over before the page could run. Each route gets
//! one pack file instead — its module and its chunks, concatenated — and the
//! loader takes every part from the pack when the route is first needed.
//! The single files stay beside the packs: a chunk no pack has started is
//! fetched alone, and a pack that fails falls back to them.
//!
//! The first route a page loads has no chunk in memory yet, so it needs no
//! parts at all: it gets the route's merged module (`cold_….wasm`, see
//! `merge.rs`), one instantiation instead of fifty. Every file that module
//! holds then counts as loaded, so a later route never instantiates a chunk
//! twice; it takes what it still lacks from its pack.

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

/// The merged module's file name for a route loader's name.
fn cold_name(route: &str) -> String {
    format!("cold_{}.wasm", route_stem(route))
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
// Files whose instantiation has begun: `true` when alone, or the promise of
// the merged module that holds them, which every later load awaits instead.
const __begun = new Map();
function __once(file, load) {
    return () => {
        const holder = __begun.get(file);
        if (holder instanceof Promise) return holder;
        __begun.set(file, true);
        return load();
    };
}
function __route(pack, cold, files, load) {
    return () => {
        const holder = __begun.get(files[0]);
        if (holder instanceof Promise) return holder;
        if (files.some((f) => __begun.has(f))) {
            __startPack(pack);
            return load();
        }
        // Nothing of this route is loaded: its merged module, in one go.
        const src = fetch(new URL("./" + cold, import.meta.url));
        const done = WebAssembly.instantiateStreaming(src, getSharedImports());
        for (const f of files) __begun.set(f, done);
        // Forgotten when it fails, so the next attempt starts over.
        done.catch(() => {
            for (const f of files) if (__begun.get(f) === done) __begun.delete(f);
        });
        return done;
    };
}
"#;

/// How a definition being rewritten must end.
#[derive(Clone, Copy)]
enum Open {
    Chunk,
    Route,
}

/// The loader with every fetch going through `__part`, every module loaded
/// at most once (`__once`), and every route starting with its merged module
/// or, once some of its files are loaded, its pack. `routes` are
/// [`route_files`]'s.
fn rewrite(js: &str, all: &[Loader], routes: &BTreeMap<String, Vec<String>>) -> Result<String, String> {
    let fetches = js.matches("fetch(new URL(\"./").count();
    if fetches == 0 || routes.is_empty() {
        return Err("wasm-split loader: no fetch or no route loader to rewrite".into());
    }
    let file_of: BTreeMap<&str, &str> = all.iter().map(|l| (l.name.as_str(), l.file.as_str())).collect();
    let mut out = String::with_capacity(js.len() + RUNTIME.len());
    let mut open = None;
    let mut with_runtime = false;
    for line in js.lines() {
        let mut line = line.replace("fetch(new URL(\"./", "__part(new URL(\"./");
        if let Some(rest) = line.strip_prefix("const __chunk_")
            && line.contains(" = makeLoad(")
        {
            let name = format!("__chunk_{}", rest.split(' ').next().unwrap_or_default());
            let file = file_of
                .get(name.as_str())
                .ok_or_else(|| format!("wasm-split loader: {name} was not read"))?;
            line = line.replace(" = makeLoad(", &format!(" = __once({file:?}, makeLoad("));
            open = Some(Open::Chunk);
        } else if let Some(rest) = line.strip_prefix("export const ")
            && line.contains(" = wrapAsyncCb(makeLoad(")
        {
            let name = rest.split(' ').next().unwrap_or_default();
            let files = routes
                .get(name)
                .ok_or_else(|| format!("wasm-split loader: route {name} was not read"))?;
            let list = serde_json::to_string(files).map_err(|e| format!("route files: {e}"))?;
            line = line.replace(
                " = wrapAsyncCb(makeLoad(",
                &format!(
                    " = wrapAsyncCb(__route({:?}, {:?}, {list}, __once({:?}, makeLoad(",
                    pack_name(name),
                    cold_name(name),
                    files[0]
                ),
            );
            open = Some(Open::Route);
        } else if let Some(how) = open
            && line.starts_with(", [")
        {
            let (end, closed) = match how {
                Open::Chunk => ("]);", "]));"),
                Open::Route => ("]));", "]))));"),
            };
            let Some(head) = line.strip_suffix(end) else {
                return Err(format!("wasm-split loader: unexpected end of a definition: {line}"));
            };
            line = format!("{head}{closed}");
            open = None;
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

/// What [`pack`] wrote: the merged modules' names (what a page opened at a
/// route's address starts with), and the bytes of packs and merged modules.
pub struct Packed {
    pub colds: Vec<String>,
    pub pack_bytes: u64,
    pub cold_bytes: u64,
}

/// Writes one pack and one merged module per route into `app` and rewrites
/// its loader.
pub fn pack(app: &Path) -> Result<Packed, String> {
    let loader_path = app.join("__wasm_split.js");
    let js = fs::read_to_string(&loader_path).map_err(|e| format!("{}: {e}", loader_path.display()))?;
    let all = loaders(&js)?;
    let routes = route_files(&all)?;
    let mut packed = Packed {
        colds: Vec::with_capacity(routes.len()),
        pack_bytes: 0,
        cold_bytes: 0,
    };
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
        packed.pack_bytes += body.len() as u64;
        fs::write(app.join(&name), &body).map_err(|e| format!("{name}: {e}"))?;
        // The route's own module last, as the loader instantiates it after its chunks.
        let (own, chunks) = files.split_first().ok_or("a route without files")?;
        let cold = super::merge::merge(&[chunks, std::slice::from_ref(own)].concat())?;
        let name = cold_name(route);
        packed.cold_bytes += cold.len() as u64;
        fs::write(app.join(&name), &cold).map_err(|e| format!("{name}: {e}"))?;
        packed.colds.push(name);
    }
    fs::write(&loader_path, rewrite(&js, &all, &routes)?).map_err(|e| format!("{}: {e}", loader_path.display()))?;
    Ok(packed)
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

    fn rewritten(js: &str) -> Result<String, String> {
        let all = loaders(js)?;
        rewrite(js, &all, &route_files(&all)?)
    }

    #[test]
    fn the_rewritten_loader_starts_a_route_merged_or_from_its_pack_and_loads_each_module_once() {
        let out = rewritten(LOADER).expect("rewrite");
        assert!(!out.contains("fetch(new URL(\"./chunk"), "{out}");
        assert_eq!(out.matches("__part(new URL(\"./").count(), 3);
        assert!(
            out.contains(
                "export const __wasm_split_load___editor_route = wrapAsyncCb(__route(\"pack_editor_route.bin\", \
             \"cold_editor_route.wasm\", [\"split___editor_route.wasm\",\"chunk_2.wasm\",\"chunk_1.wasm\"], \
             __once(\"split___editor_route.wasm\", makeLoad(() => {"
            ),
            "{out}"
        );
        assert!(out.contains("\n, [__chunk_2, __chunk_1]))));\n"), "{out}");
        assert!(
            out.contains("const __chunk_1 = __once(\"chunk_1.wasm\", makeLoad(() => {"),
            "{out}"
        );
        assert!(
            out.contains("const __chunk_2 = __once(\"chunk_2.wasm\", makeLoad(() => {"),
            "{out}"
        );
        assert!(out.contains("\n, [__chunk_1]));\n"), "{out}");
        let runtime_at = out.find("const __parts = new Map();").expect("runtime");
        assert!(runtime_at > out.find("import {").expect("import"));
        // Brackets still balance once the definitions are wrapped.
        let count = |c: char| out.chars().filter(|x| *x == c).count();
        assert_eq!(count('('), count(')'));
        assert_eq!(count('['), count(']'));
        assert_eq!(cold_name("__wasm_split_load___editor_route"), "cold_editor_route.wasm");
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
        assert!(rewritten("import x;\nconst a = 1;\n").is_err());
        let bad_end = LOADER.replace(", [__chunk_2, __chunk_1]));", ", [__chunk_2, __chunk_1]);");
        assert!(rewritten(&bad_end).is_err());
        assert!(loaders("const __chunk_1 = makeLoad(() => {\n").is_err());
        let no_file = "const __chunk_1 = makeLoad(() => {\n}\n, []);\n";
        assert!(loaders(no_file).is_err());
        let unknown_dep = LOADER.replace(", [__chunk_2, __chunk_1]));", ", [__chunk_9]));");
        assert!(route_files(&loaders(&unknown_dep).expect("loaders")).is_err());
    }
}
