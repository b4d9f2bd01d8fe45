//! What the app's wasm is made of, by crate: `cargo xtask weight [route]`
//! splits the linker's output again into a scratch directory (wasm-split
//! keeps the function names there; the shipped files lost them to wasm-opt),
//! prints each route's bytes — its module and the chunks it needs — and runs
//! twiggy over the main module, or over the route whose name holds `route`,
//! summing each item's own bytes under the crate it comes from. Before
//! wasm-opt, so the figures are larger than what ships; the shares are what
//! tell where to cut. `core` and `reactive_graph` hold other crates' code
//! too: rustc names closure shims `core::ops::function::FnOnce::…`, and a
//! component's body is inlined into reactive_graph's `untrack_with_diagnostics`.

use std::collections::BTreeMap;
use std::fs;

use super::{pack, split};
use crate::sh;
use crate::tools::{cargo_install, root};

/// The twiggy this was written against (its CSV's columns).
const TWIGGY: &str = "0.8.0";
/// Rows printed; the rest are summed into one.
const SHOWN: usize = 24;

pub fn report(args: &[String]) -> Result<(), String> {
    let linked = root().join("target/wasm32-unknown-unknown/wasm-release/kandev-web.wasm");
    if !linked.exists() {
        return Err(format!("{} is missing: run `cargo xtask web` first", linked.display()));
    }
    cargo_install("twiggy", "twiggy", TWIGGY, "a minute or two")?;
    let scratch = root().join("target/weight");
    let _ = fs::remove_dir_all(&scratch);
    split::split(&linked, &scratch.join("main.wasm"), &scratch)?;
    let loader =
        fs::read_to_string(scratch.join("__wasm_split.js")).map_err(|e| format!("wasm-split's loader: {e}"))?;
    let routes = pack::route_files(&pack::loaders(&loader)?)?;

    // Chunks are shared between routes: each file goes through twiggy once.
    let main = "main.wasm".to_string();
    let mut weighed = BTreeMap::new();
    for file in routes.values().flatten().chain([&main]) {
        if !weighed.contains_key(file) {
            let path = scratch.join(file).display().to_string();
            let csv = sh::output("twiggy", &["top", "-f", "csv", &path])
                .ok_or_else(|| format!("twiggy top {file} failed"))?;
            weighed.insert(file.clone(), by_crate(&csv)?);
        }
    }
    let weigh = |files: &[String]| sum_files(&weighed, files);
    let main_rows = weigh(std::slice::from_ref(&main));
    println!("the wasm before wasm-opt, KiB (a route loads its module and chunks after the main module)\n");
    println!("{:<44} {:>9}", "main module (every page)", kib(total(&main_rows)));
    for (route, files) in &routes {
        println!("{:<44} {:>9}", short(route), kib(total(&weigh(files))));
    }
    let (what, rows) = match args.first() {
        None => ("the main module".to_string(), main_rows),
        Some(wanted) => {
            let (route, files) = routes
                .iter()
                .find(|(r, _)| r.contains(wanted.as_str()))
                .ok_or_else(|| format!("no route's name holds {wanted:?}"))?;
            (format!("route {}", short(route)), weigh(files))
        }
    };
    print_by_crate(&what, &rows);
    Ok(())
}

/// `files`' rows by crate (from `weighed`), summed over the files.
fn sum_files(weighed: &BTreeMap<String, Vec<(String, u64)>>, files: &[String]) -> Vec<(String, u64)> {
    let mut sums: BTreeMap<String, u64> = BTreeMap::new();
    for (name, bytes) in files.iter().filter_map(|f| weighed.get(f)).flatten() {
        *sums.entry(name.clone()).or_default() += bytes;
    }
    largest_first(sums)
}

fn print_by_crate(what: &str, rows: &[(String, u64)]) {
    let all = total(rows);
    println!("\n{what} by crate ({} KiB)\n", kib(all));
    println!("{:<28} {:>9} {:>6}", "crate", "KiB", "share");
    let (shown, rest) = rows.split_at(rows.len().min(SHOWN));
    let rest = [("(the rest)".to_string(), total(rest))];
    for (name, bytes) in shown.iter().chain(rest.iter().filter(|(_, b)| *b > 0)) {
        println!(
            "{name:<28} {:>9} {:>5.1}%",
            kib(*bytes),
            *bytes as f64 * 100.0 / all.max(1) as f64
        );
    }
}

fn largest_first(sums: BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut rows: Vec<_> = sums.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    rows
}

fn total(rows: &[(String, u64)]) -> u64 {
    rows.iter().map(|(_, b)| b).sum()
}

fn kib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1024.0)
}

/// `__wasm_split_load___automation_editor_route_view_898…` → `automation_editor_route_view`.
fn short(route: &str) -> &str {
    let name = pack::route_stem(route);
    name.rsplit_once('_').map_or(name, |(head, hash)| {
        if hash.chars().all(|c| c.is_ascii_digit()) {
            head
        } else {
            name
        }
    })
}

/// Bytes per crate from twiggy's `top -f csv`, largest first. Leaves out
/// what wasm-bindgen removes before shipping: the function names, its
/// descriptors and their exports, imports and custom section.
pub fn by_crate(csv: &str) -> Result<Vec<(String, u64)>, String> {
    let mut lines = csv.lines();
    let header = fields(lines.next().ok_or("twiggy printed nothing")?);
    if header.first().map(String::as_str) != Some("Name") || header.get(1).map(String::as_str) != Some("ShallowSize") {
        return Err(format!("twiggy's CSV starts with {header:?}, not Name,ShallowSize"));
    }
    let mut sums: BTreeMap<String, u64> = BTreeMap::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let row = fields(line);
        let (Some(name), Some(bytes)) = (row.first(), row.get(1)) else {
            return Err(format!("a CSV row without a size: {line}"));
        };
        let bytes: u64 = bytes.parse().map_err(|_| format!("not a size: {bytes}"))?;
        if let Some(owner) = owner(name) {
            *sums.entry(owner).or_default() += bytes;
        }
    }
    Ok(largest_first(sums))
}

/// The crate an item belongs to, `(data)` for data segments, `(other)` for
/// what names none; `None` for what never ships.
fn owner(name: &str) -> Option<String> {
    let dropped = ["\"function names\"", "custom section '__wasm_bindgen_unstable'"];
    if dropped.iter().any(|d| name.starts_with(d))
        || name.contains("__wbindgen_describe")
        || name.contains("WasmDescribe>::describe")
        || name.starts_with("import __wbindgen_placeholder")
    {
        return None;
    }
    if name.starts_with("data segment") {
        return Some("(data)".into());
    }
    // `<T as trait>::f` and `<&mut T as …>` name T's crate first.
    let mut rest = name;
    loop {
        let before = rest;
        for prefix in ["<", "&mut ", "&", "impl ", "dyn "] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        if rest == before {
            break;
        }
    }
    let ident: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let after = &rest[ident.len()..];
    // rustc adds a disambiguator to std's crates: `core[c5930c85a12de822]::`.
    let after = match after.strip_prefix('[') {
        Some(tail) => tail.split_once(']').map_or("", |(_, t)| t),
        None => after,
    };
    let is_crate = ident.starts_with(|c: char| c.is_ascii_lowercase() || c == '_');
    Some(if is_crate && after.starts_with("::") {
        ident
    } else {
        "(other)".into()
    })
}

/// One CSV line's fields: quoted fields may hold commas and doubled quotes.
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![];
    let mut field = String::new();
    let (mut quoted, mut chars) = (false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    out.push(field);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "Name,ShallowSize,ShallowSizePercent,RetainedSize,RetainedSizePercent\n\
\"\"\"function names\"\" subsection\",675574,24.79,,\n\
custom section '__wasm_bindgen_unstable',651666,23.9,,\n\
\"data segment \"\".rodata\"\"\",39480,1.45,,\n\
\"<&mut serde_json::de::Deserializer<R> as serde_core::de::Deserializer>::deserialize_struct::h35a5\",8403,0.31,,\n\
core[c5930c85a12de822]::fmt::float::float_to_decimal_common_shortest::<f64>,5965,0.22,,\n\
\"<F as leptos_router::matching::choose_view::ChooseView>::choose::{{closure}}::hb01d\",6215,0.2,,\n\
\"<T as tachys::view::Render>::build, with a comma\",100,0.0,,\n\
\"<core::option::Option<T> as wasm_bindgen::describe::WasmDescribe>::describe\",2018,0.1,,\n\
export \"__wbindgen_describe___wbg_x\",57,0.0,,\n\
import __wbindgen_placeholder__.__wbindgen_describe,60,0.0,,\n\
serde_json::error::make_error::h1,1117,0.04,,\n\
elem[0],4986,0.18,,\n";

    #[test]
    fn items_are_summed_under_their_crate_largest_first() {
        let rows = by_crate(CSV).expect("parsed");
        assert_eq!(
            rows,
            vec![
                ("(data)".to_string(), 39480),
                ("(other)".to_string(), 6215 + 100 + 4986),
                ("serde_json".to_string(), 8403 + 1117),
                ("core".to_string(), 5965),
            ]
        );
    }

    #[test]
    fn what_wasm_bindgen_strips_is_not_counted() {
        let total: u64 = by_crate(CSV).expect("parsed").iter().map(|(_, b)| b).sum();
        assert_eq!(total, 39480 + 8403 + 1117 + 5965 + 6215 + 100 + 4986);
    }

    #[test]
    fn a_generic_parameter_is_not_taken_for_a_crate() {
        // `<F as …>` names no crate: the item is generic code instantiated elsewhere.
        assert_eq!(owner("<F as leptos_router::X>::f").as_deref(), Some("(other)"));
        assert_eq!(
            owner("<&mut reactive_graph::X as Y>::f").as_deref(),
            Some("reactive_graph")
        );
        assert_eq!(owner("alloc[ab12]::raw_vec::grow").as_deref(), Some("alloc"));
    }

    #[test]
    fn a_route_is_named_without_its_loader_prefix_and_hash() {
        assert_eq!(
            short("__wasm_split_load___automation_editor_route_view_8984433873247922633"),
            "automation_editor_route_view"
        );
        assert_eq!(short("__wasm_split_load___board"), "board");
    }

    #[test]
    fn quoted_fields_keep_their_commas_and_quotes() {
        assert_eq!(fields("\"a, b\",\"say \"\"hi\"\"\",3"), vec!["a, b", "say \"hi\"", "3"]);
    }

    #[test]
    fn a_csv_of_another_shape_is_refused() {
        assert!(by_crate("Item,Bytes\nx,1\n").is_err());
        assert!(by_crate("Name,ShallowSize\nx,many\n").is_err());
        assert!(by_crate("").is_err());
    }
}
