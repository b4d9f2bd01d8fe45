//! The web app built into the binary (see `build.rs`): served when no
//! `KANDEV_WEB_DIR` is given, so the release binary works from anywhere.
//! Precompressed `.br` and `.gz` twins are sent to clients that accept them;
//! content-hashed files are cacheable for a year, the rest revalidate by ETag.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::LazyLock;

use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

mod app {
    include!(concat!(env!("OUT_DIR"), "/web_app.rs"));
}

struct Asset {
    bytes: &'static [u8],
    gzip: Option<&'static [u8]>,
    brotli: Option<&'static [u8]>,
    etag: String,
}

static ASSETS: LazyLock<HashMap<&'static str, Asset>> = LazyLock::new(|| {
    let by_path: HashMap<&str, &[u8]> = app::FILES.iter().copied().collect();
    app::FILES
        .iter()
        .filter(|(p, _)| !p.ends_with(".gz") && !p.ends_with(".br"))
        .map(|(p, bytes)| {
            let mut h = DefaultHasher::new();
            bytes.hash(&mut h);
            let asset = Asset {
                bytes,
                gzip: by_path.get(format!("{p}.gz").as_str()).copied(),
                brotli: by_path.get(format!("{p}.br").as_str()).copied(),
                etag: format!("\"{:016x}\"", h.finish()),
            };
            (*p, asset)
        })
        .collect()
});

/// Whether the binary carries a built app.
pub fn present() -> bool {
    ASSETS.contains_key("index.html")
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "ftl" | "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Whether a file's name, or a folder it is in, carries its content hash
/// (`name-<16 hex>.ext`, `app-<16 hex>/…`, as `cargo xtask web` names them):
/// such a file never changes under its path.
fn content_hashed(path: &str) -> bool {
    let hashed = |name: &str| {
        name.rsplit_once('-')
            .is_some_and(|(_, h)| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let (dirs, file) = path.rsplit_once('/').unwrap_or(("", path));
    hashed(file.rsplit_once('.').map_or(file, |(stem, _)| stem)) || dirs.split('/').any(hashed)
}

/// The encodings a client accepts, by name (`q=0` refuses one).
pub(crate) fn accepts(headers: &HeaderMap, encoding: &str) -> bool {
    headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',').any(|e| {
                let mut parts = e.split(';').map(str::trim);
                parts.next() == Some(encoding)
                    && !parts.any(|p| {
                        p.strip_prefix("q=")
                            .and_then(|q| q.trim().parse::<f32>().ok())
                            .is_some_and(|q| q == 0.0)
                    })
            })
        })
}

/// Whether a missing path asks for a file of the app (a script, a wasm
/// chunk, a stylesheet…) rather than a page: such a request gets a 404, not
/// `index.html`, so a page left open across an upgrade sees its old chunk is
/// gone instead of trying to run HTML as wasm.
pub fn asset_path(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.rsplit_once('.').is_some_and(|(_, ext)| {
        matches!(
            ext,
            "js" | "wasm" | "bin" | "css" | "ftl" | "json" | "map" | "gz" | "br"
        )
    })
}

/// A file of the app, or `index.html` for the app's own routes.
pub async fn serve(uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path().trim_start_matches('/');
    let (name, asset) = match ASSETS.get_key_value(path) {
        Some((n, a)) => (*n, a),
        None if asset_path(path) => return StatusCode::NOT_FOUND.into_response(),
        None => match ASSETS.get_key_value("index.html") {
            Some((n, a)) => (*n, a),
            None => {
                return (
                    StatusCode::NOT_FOUND,
                    "This kandev was built without its web app: run `cargo xtask web`, then build again.",
                )
                    .into_response();
            }
        },
    };
    let mut out = HeaderMap::new();
    out.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(name)));
    let cache = if content_hashed(name) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    out.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if let Ok(v) = HeaderValue::from_str(&asset.etag) {
        out.insert(header::ETAG, v);
    }
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == asset.etag));
    if fresh {
        return (StatusCode::NOT_MODIFIED, out).into_response();
    }
    let twin = [("br", asset.brotli), ("gzip", asset.gzip)]
        .into_iter()
        .find_map(|(enc, bytes)| bytes.filter(|_| accepts(&headers, enc)).map(|b| (enc, b)));
    match twin {
        Some((enc, bytes)) => {
            out.insert(header::CONTENT_ENCODING, HeaderValue::from_static(enc));
            (out, bytes).into_response()
        }
        None => (out, asset.bytes).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::{accepts, asset_path, content_hashed, content_type};

    #[test]
    fn missing_files_of_the_app_are_not_pages() {
        assert!(asset_path("app-bcf0595dfa7808b1/split___editor.wasm"));
        assert!(asset_path("app-bcf0595dfa7808b1/__wasm_split.js"));
        assert!(asset_path("locales/de.ftl"));
        // A route's pack of chunks (`cargo xtask web`).
        assert!(asset_path("app-bcf0595dfa7808b1/pack_editor_route.bin"));
        assert!(!asset_path("w/2b1c/tasks/9f3e"));
        assert!(!asset_path("settings/workspace/x/automations/new"));
        assert!(!asset_path(""));
    }

    #[test]
    fn the_apps_files_get_their_types() {
        assert_eq!(content_type("kandev_web_bg.wasm"), "application/wasm");
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("locales/de/main.ftl"), "text/plain; charset=utf-8");
    }

    #[test]
    fn only_content_hashed_names_are_immutable() {
        assert!(content_hashed("kandev_web_bg-850aa48e0520c816.wasm"));
        assert!(content_hashed("style-f85fdb017b491f1b.css"));
        assert!(!content_hashed("index.html"));
        assert!(!content_hashed("locales/en-US/board.ftl"));
        assert!(!content_hashed("kandev_web_bg-850aa48e0520c81z.wasm"));
        assert!(!content_hashed("my-page.html"));
        assert!(content_hashed("app-bcf0595dfa7808b1/chunk_11.wasm"));
        assert!(content_hashed("app-bcf0595dfa7808b1/__wasm_split.js"));
        assert!(!content_hashed("app-bcf0595dfa7808bz/chunk_11.wasm"));
        assert!(!content_hashed("locales-x/de.ftl"));
    }

    #[test]
    fn encodings_are_matched_by_name_and_q_zero_refuses() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
            m
        };
        assert!(accepts(&h("gzip, deflate, br, zstd"), "br"));
        assert!(accepts(&h("gzip;q=1.0, br; q=0.5"), "br"));
        assert!(!accepts(&h("gzip, br;q=0"), "br"));
        assert!(!accepts(&h("gzip, br;q=0.000"), "br"));
        assert!(!accepts(&h("gzipx"), "gzip"));
        assert!(!accepts(&HeaderMap::new(), "gzip"));
    }
}
