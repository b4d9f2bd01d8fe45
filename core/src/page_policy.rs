//! What a browser may do with Kandev's responses: the headers every answer
//! carries, and the content security policy `index.html` carries for the
//! app (a `<meta>` written by the build, since only the build knows the
//! hashes of the page's inline scripts).

/// Headers on every response. No page may frame Kandev (a framed Approve or
/// Delete is one click away from a hostile page on a sibling subdomain,
/// which `SameSite=Lax` cookies do not stop); nothing is sniffed into
/// another type; the app's addresses (task ids) stay out of referrers.
pub const RESPONSE_HEADERS: [(&str, &str); 4] = [
    ("content-security-policy", "frame-ancestors 'none'"),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
];

/// The app's policy: its own files and API only; scripts are its own files
/// and the page's inline scripts named by `script_hashes` (`'sha256-…'`),
/// and WebAssembly may be compiled. Styles may be inline: Leptos sets
/// `style` attributes, which can run no script.
pub fn app_policy(script_hashes: &[String]) -> String {
    let scripts: String = script_hashes.iter().map(|h| format!(" {h}")).collect();
    format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{scripts}; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'"
    )
}

/// The bodies of `html`'s inline scripts (`<script>` or `<script type=…>`
/// without `src`), as the browser hashes them: every byte between the tags.
pub fn inline_scripts(html: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find("<script") {
        let after = &rest[at..];
        let Some(open_end) = after.find('>') else { break };
        let tag = &after[..open_end];
        let body_start = &after[open_end + 1..];
        let Some(close) = body_start.find("</script>") else {
            break;
        };
        if !tag.contains(" src=") {
            found.push(&body_start[..close]);
        }
        rest = &body_start[close + "</script>".len()..];
    }
    found
}

/// A CSP source naming one inline script: `'sha256-<base64 of its SHA-256>'`.
#[cfg(feature = "digests")]
pub fn script_hash(body: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("'sha256-{}'", base64(&Sha256::digest(body.as_bytes())))
}

/// Standard base64 with padding (RFC 4648 §4), as CSP hashes are written.
#[cfg(feature = "digests")]
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_response_refuses_framing_and_sniffing() {
        let headers: std::collections::HashMap<_, _> = RESPONSE_HEADERS.into_iter().collect();
        assert_eq!(headers["content-security-policy"], "frame-ancestors 'none'");
        assert_eq!(headers["x-frame-options"], "DENY");
        assert_eq!(headers["x-content-type-options"], "nosniff");
    }

    #[test]
    fn inline_scripts_are_found_whole_and_scripts_with_a_source_are_not() {
        let html = "<head><script>a()</script><script src=\"/x.js\"></script>\n\
                    <script type=\"module\">\n  import b from \"/b.js\";\n</script></head>";
        assert_eq!(inline_scripts(html), vec!["a()", "\n  import b from \"/b.js\";\n"]);
        assert!(inline_scripts("<p>no script</p>").is_empty());
        assert!(inline_scripts("<script>unclosed").is_empty());
    }

    #[cfg(feature = "digests")]
    #[test]
    fn a_script_s_hash_is_its_sha256_in_base64_as_csp_writes_it() {
        // `printf 'alert(1)' | openssl dgst -sha256 -binary | base64`
        assert_eq!(
            script_hash("alert(1)"),
            "'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"
        );
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
    }

    #[test]
    fn the_app_may_run_only_its_own_scripts_and_those_hashed() {
        let policy = app_policy(&["'sha256-AAA='".into(), "'sha256-BBB='".into()]);
        assert!(
            policy.contains("script-src 'self' 'wasm-unsafe-eval' 'sha256-AAA=' 'sha256-BBB=';"),
            "{policy}"
        );
        for part in [
            "default-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "connect-src 'self'",
        ] {
            assert!(policy.contains(part), "{part}: {policy}");
        }
        assert!(!policy.contains("'unsafe-eval'"));
        assert!(!policy.contains("script-src 'self' 'unsafe-inline'"));
    }
}
