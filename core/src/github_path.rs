//! GitHub REST paths built from untrusted names. Every owner, repository and
//! branch is percent-encoded segment by segment, so a branch named `x#y` or
//! `x?ref=main` cannot change which resource a request reaches, and a `.` or
//! `..` segment (which URL parsers collapse) is refused outright.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadName(pub String);

/// Percent-encodes one path segment: only RFC 3986 unreserved bytes stay.
pub fn encode_segment(s: &str) -> Result<String, BadName> {
    if s.is_empty() || s == "." || s == ".." {
        return Err(BadName(format!("{s:?} is not a usable path segment")));
    }
    Ok(s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect())
}

/// `/repos/{owner}/{repo}` with both encoded.
pub fn repo(owner: &str, repo: &str) -> Result<String, BadName> {
    Ok(format!("/repos/{}/{}", encode_segment(owner)?, encode_segment(repo)?))
}

/// A branch or ref name as a path: each `/`-separated part encoded on its own
/// (GitHub addresses `refs/heads/feature/x` with literal slashes).
pub fn git_ref(name: &str) -> Result<String, BadName> {
    name.split('/')
        .map(encode_segment)
        .collect::<Result<Vec<_>, _>>()
        .map(|parts| parts.join("/"))
}

/// A query-string value: unreserved bytes stay, space is `+`.
pub fn query_value(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// GitHub's GraphQL endpoint for a REST base: `https://api.github.com` →
/// `…/graphql`; an Enterprise `https://host/api/v3` → `https://host/api/graphql`.
pub fn graphql_url(rest_base: &str) -> String {
    let base = rest_base.trim_end_matches('/');
    match base.strip_suffix("/api/v3") {
        Some(host) => format!("{host}/api/graphql"),
        None => format!("{base}/graphql"),
    }
}

/// Lists are read 100 at a time, and at most this many pages (10,000 items),
/// so a hostile or runaway list cannot keep a reader going for ever.
pub const PER_PAGE: usize = 100;
pub const MAX_PAGES: usize = 100;

/// The next page to read after page `page` (1-based) brought `got` items, of
/// `total` when GitHub says (`None` for plain arrays); `None`: done.
pub fn next_page(page: usize, got: usize, seen: usize, total: Option<usize>) -> Option<usize> {
    let more = match total {
        Some(total) => seen < total && got > 0,
        None => got >= PER_PAGE,
    };
    (more && page < MAX_PAGES).then_some(page + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass_through() {
        assert_eq!(repo("acme", "api.rs").unwrap(), "/repos/acme/api.rs");
        assert_eq!(git_ref("feature/login-v2").unwrap(), "feature/login-v2");
    }

    #[test]
    fn a_branch_with_hash_or_question_mark_stays_one_ref() {
        assert_eq!(git_ref("fix#12").unwrap(), "fix%2312");
        assert_eq!(git_ref("x?ref=main").unwrap(), "x%3Fref%3Dmain");
        assert_eq!(git_ref("a b%").unwrap(), "a%20b%25");
    }

    #[test]
    fn dot_segments_and_empty_parts_are_refused() {
        for bad in ["..", ".", "", "a/../b", "a//b", "/lead", "trail/"] {
            assert!(git_ref(bad).is_err(), "{bad:?}");
        }
        assert!(repo("..", "x").is_err());
        assert!(repo("acme", "").is_err());
        assert!(repo("acme/evil", "x").unwrap().starts_with("/repos/acme%2Fevil/"));
    }

    #[test]
    fn query_values_are_form_encoded() {
        assert_eq!(query_value("user:acme api in:name"), "user%3Aacme+api+in%3Aname");
    }

    #[test]
    fn graphql_lives_beside_the_rest_api() {
        assert_eq!(graphql_url("https://api.github.com"), "https://api.github.com/graphql");
        assert_eq!(
            graphql_url("https://ghe.example/api/v3/"),
            "https://ghe.example/api/graphql"
        );
        assert_eq!(graphql_url("http://127.0.0.1:9000"), "http://127.0.0.1:9000/graphql");
    }

    #[test]
    fn pages_until_the_total_or_a_short_page_and_never_past_the_cap() {
        assert_eq!(next_page(1, 100, 100, Some(250)), Some(2));
        assert_eq!(next_page(3, 50, 250, Some(250)), None);
        assert_eq!(next_page(2, 0, 100, Some(250)), None, "an empty page ends it");
        assert_eq!(next_page(1, 100, 100, None), Some(2));
        assert_eq!(next_page(2, 7, 107, None), None);
        assert_eq!(next_page(MAX_PAGES, 100, 10_000, Some(1_000_000)), None);
    }
}
