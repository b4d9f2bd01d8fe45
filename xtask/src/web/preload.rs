//! A page opened by its address (a link in a notification, a reload) needs
//! the main module and then its route's code, one after the other: the route's
//! code is asked for only once the main module runs. `index.html` gets a small
//! script that starts the route's merged module (what the first route a page
//! loads is instantiated from, see `pack.rs`) for the address it was opened
//! at, beside the main module's download. The addresses come from the app's own route table
//! (`web/src/lib.rs`), so a route added there is preloaded without more work.

use std::path::Path;

/// `(path pattern, route type)` for every lazy route in the app's router:
/// lines of the form `<Route path=path!("/w/:ws") view={Lazy::<XRoute>::new()}/>`.
pub fn lazy_routes(lib_rs: &str) -> Vec<(String, String)> {
    lib_rs
        .lines()
        .filter_map(|line| {
            let path = line.split("path!(\"").nth(1)?.split('"').next()?;
            let route = line.split("Lazy::<").nth(1)?.split('>').next()?;
            Some((path.to_string(), route.to_string()))
        })
        .collect()
}

/// `TaskDetailRoute` → `task_detail_route`, as wasm-split names its modules.
fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A route's path as an anchored JavaScript regular expression: `:name`
/// matches one segment. Only plain segments are expected; anything else is
/// refused rather than matched wrongly.
fn pattern(path: &str) -> Result<String, String> {
    pattern_with(path, |_| "[^/]+".to_string())
}

/// [`pattern`] with `param(name)` as the expression for each `:name`.
pub fn pattern_with(path: &str, mut param: impl FnMut(&str) -> String) -> Result<String, String> {
    let mut out = String::from("^");
    for segment in path.split('/').skip(1) {
        out.push_str("\\/");
        if let Some(name) = segment.strip_prefix(':') {
            out.push_str(&param(name));
        } else if segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            out.push_str(segment);
        } else {
            return Err(format!("route path {path:?}: segment {segment:?} cannot be preloaded"));
        }
    }
    out.push_str("\\/?$");
    Ok(out)
}

/// JavaScript that preloads the address `href` (an expression) as a fetch
/// the app's own same-origin `fetch` takes over: `as=fetch` with
/// `crossorigin=anonymous` is the mode and credentials such a fetch has.
pub fn append_preload(href: &str) -> String {
    format!(
        "{{ const p = document.createElement(\"link\"); p.rel = \"preload\"; p.as = \"fetch\"; \
         p.crossOrigin = \"anonymous\"; p.href = {href}; document.head.appendChild(p); }}"
    )
}

/// The script: for the address the page was opened at, a `preload` of its
/// route's merged module (so the loader's own `fetch` takes it over).
pub fn script(entries: &[(String, String)]) -> String {
    let table: Vec<String> = entries.iter().map(|(re, url)| format!("[/{re}/, {url:?}]")).collect();
    format!(
        "<script>(() => {{ for (const [re, href] of [{}]) if (re.test(location.pathname)) {{ {} break; }} }})();</script>",
        table.join(", "),
        append_preload("href")
    )
}

/// The preload table for `app_dir` (the hashed app folder's name): each lazy
/// route's pattern and its merged module's address, from the `colds` that
/// `cargo xtask web` wrote. Fails when a lazy route has none, or when the
/// router lists no lazy route (its shape changed).
pub fn entries(root: &Path, colds: &[String], app_dir: &str) -> Result<Vec<(String, String)>, String> {
    let lib = std::fs::read_to_string(root.join("web/src/lib.rs")).map_err(|e| format!("web/src/lib.rs: {e}"))?;
    let routes = lazy_routes(&lib);
    if routes.is_empty() {
        return Err("web/src/lib.rs: no lazy route found to preload".into());
    }
    routes
        .iter()
        .map(|(path, route)| {
            let prefix = format!("cold_{}_view_", snake(route));
            let cold = colds
                .iter()
                .find(|p| p.starts_with(&prefix))
                .ok_or_else(|| format!("route {route} ({path}) has no merged module {prefix}…"))?;
            Ok((pattern(path)?, format!("/{app_dir}/{cold}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazy_routes_are_read_from_the_router_and_eager_ones_left_out() {
        let lib = r#"
                <Route path=path!("/") view=Home/>
                <Route path=path!("/w/:ws/tasks/:id") view={Lazy::<TaskDetailRoute>::new()}/>
                <Route path=path!("/w/:ws") view=Board/>
        "#;
        assert_eq!(
            lazy_routes(lib),
            vec![("/w/:ws/tasks/:id".to_string(), "TaskDetailRoute".to_string())]
        );
        assert_eq!(snake("TaskDetailRoute"), "task_detail_route");
    }

    #[test]
    fn a_route_path_becomes_an_anchored_pattern_of_whole_segments() {
        assert_eq!(
            pattern("/w/:ws/tasks/:id").expect("pattern"),
            "^\\/w\\/[^/]+\\/tasks\\/[^/]+\\/?$"
        );
        assert!(pattern("/files/*rest").is_err());
    }

    #[test]
    fn the_script_preloads_the_first_matching_merged_module_as_a_fetch() {
        let s = script(&[("^\\/login\\/?$".into(), "/app-1/cold_login_route_view_1.wasm".into())]);
        assert!(s.starts_with("<script>") && s.ends_with("</script>"));
        assert!(s.contains("[/^\\/login\\/?$/, \"/app-1/cold_login_route_view_1.wasm\"]"));
        assert!(s.contains("p.as = \"fetch\"") && s.contains("p.crossOrigin = \"anonymous\""));
        assert!(s.contains("p.href = href;"), "{s}");
    }
}
