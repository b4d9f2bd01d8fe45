//! The web app built into the binary (see `build.rs`): served when no
//! `KANDEV_WEB_DIR` is given, so the release binary works from anywhere.
//! Precompressed `.gz` files are sent to clients that accept gzip; every
//! file carries an ETag so a reload costs a 304.

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
    etag: String,
}

static ASSETS: LazyLock<HashMap<&'static str, Asset>> = LazyLock::new(|| {
    let by_path: HashMap<&str, &[u8]> = app::FILES.iter().copied().collect();
    app::FILES
        .iter()
        .filter(|(p, _)| !p.ends_with(".gz"))
        .map(|(p, bytes)| {
            let mut h = DefaultHasher::new();
            bytes.hash(&mut h);
            let asset = Asset {
                bytes,
                gzip: by_path.get(format!("{p}.gz").as_str()).copied(),
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

/// A file of the app, or `index.html` for the app's own routes.
pub async fn serve(uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path().trim_start_matches('/');
    let (name, asset) = match ASSETS.get_key_value(path) {
        Some((n, a)) => (*n, a),
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
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
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
    let gzip_ok = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|e| e.trim().starts_with("gzip")));
    match (asset.gzip, gzip_ok) {
        (Some(gz), true) => {
            out.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            (out, gz).into_response()
        }
        _ => (out, asset.bytes).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::content_type;

    #[test]
    fn the_apps_files_get_their_types() {
        assert_eq!(content_type("kandev_web_bg.wasm"), "application/wasm");
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("locales/de/main.ftl"), "text/plain; charset=utf-8");
    }
}
