//! Patterns the OpenAPI document publishes for request fields, and the
//! predicates the server validates with. They are written once here, and the
//! tests below hold each predicate to its pattern (with the `regex` crate), so
//! a client generated from the document and the server agree on every string.
//!
//! Whitespace is spelled out as one explicit class instead of `\s`: regex
//! engines disagree on `\s` (Python's includes U+001C–U+001F, Rust's does not).

/// The characters a pattern's `SPACE` class holds, as a regex class body.
macro_rules! space_class {
    () => {
        r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
    };
}

/// Whether `c` is whitespace, exactly as the published patterns read it.
pub fn is_space(c: char) -> bool {
    matches!(c,
        '\t'..='\r' | '\u{1c}'..='\u{20}' | '\u{85}' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}'
        | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}')
}

/// `s` without leading and trailing whitespace (in the patterns' sense).
pub fn trim_space(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Whether `s` holds nothing but whitespace.
pub fn is_blank(s: &str) -> bool {
    s.chars().all(is_space)
}

/// A required text (names, titles, comments): at least one non-space character.
pub const NOT_BLANK: &str = concat!("[^", space_class!(), "]");

/// A repository owner or name: GitHub's characters, not only dots, 1–100 long
/// (the length is the schema's `maxLength`).
pub const REPO_SEGMENT: &str = r"^[A-Za-z0-9._-]*[A-Za-z0-9_-][A-Za-z0-9._-]*$";

/// Whether a repository owner or name is acceptable.
pub fn is_repo_segment(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && s.chars().any(|c| c != '.')
}

/// A username as given: 1–64 letters, digits, `.`, `_`, `-` (stored lowercase).
pub const USERNAME: &str = r"^[A-Za-z0-9._-]{1,64}$";

/// An environment variable's name: no `=` and no NUL.
pub const ENV_KEY: &str = r"^[^=\x00]+$";

/// A notification target's URL: http(s), a host, no spaces or control
/// characters (`crate::notify::validate_target`).
pub const TARGET_URL: &str = concat!(
    "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#:",
    space_class!(),
    r"\x00-\x1f\x7f-\x9f][^",
    space_class!(),
    r"\x00-\x1f\x7f-\x9f]*$"
);

/// A character a target URL may not hold.
pub fn url_forbids(c: char) -> bool {
    is_space(c) || c.is_control()
}

/// A review hand-off's `pr_url`: blank, a GitHub pull request URL (anything
/// may follow the number after `/`, `?` or `#`), or `owner/repo#number`;
/// spaces around either are trimmed, as the server does.
pub const PR_REF: &str = concat!(
    "^[",
    space_class!(),
    "]*(?:[Hh][Tt][Tt][Pp][Ss]?://[Gg][Ii][Tt][Hh][Uu][Bb]\\.[Cc][Oo][Mm]/[^/",
    space_class!(),
    "]+/[^/",
    space_class!(),
    "]+/[Pp][Uu][Ll][Ll]/0*[1-9][0-9]{0,17}(?:[/?#][\\s\\S]*|[",
    space_class!(),
    "]*)|[^/#",
    space_class!(),
    "]+/[^/#",
    space_class!(),
    "]+#\\+?0*[1-9][0-9]{0,17}[",
    space_class!(),
    "]*)?$"
);

/// The schedules the document names: blank, a descriptor, or `@every` with a
/// whole number of seconds, minutes or hours within 1 s to 366 days. The
/// server accepts 5-field cron expressions (with an optional `TZ=` prefix)
/// and fractional durations as well; the description says so.
pub const SCHEDULE: &str = concat!(
    "^(?:|@(?:yearly|annually|monthly|weekly|daily|midnight|hourly)",
    "|@every (?:[1-9][0-9]{0,6}s|(?:[1-9][0-9]{0,4}|[1-4][0-9]{5}|5[01][0-9]{4}|52[0-6][0-9]{3}|5270[0-3][0-9]|527040)m|(?:[1-9][0-9]{0,2}|[1-7][0-9]{3}|8[0-6][0-9]{2}|87[0-7][0-9]|878[0-4])h))$"
);

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use regex::Regex;

    use super::*;
    use crate::board::PrRef;

    /// Each pattern compiled once for the whole run.
    fn re(p: &'static str) -> &'static Regex {
        static CACHE: std::sync::Mutex<Vec<(&str, &Regex)>> = std::sync::Mutex::new(Vec::new());
        let mut cache = CACHE.lock().unwrap();
        if let Some((_, r)) = cache.iter().find(|(k, _)| *k == p) {
            return r;
        }
        let r: &'static Regex = Box::leak(Box::new(Regex::new(p).expect("a valid pattern")));
        cache.push((p, r));
        r
    }

    /// Strings rich in the characters these rules care about.
    fn tricky() -> impl Strategy<Value = String> {
        let pieces = prop_oneof![
            Just(" ".to_string()),
            Just("\t".to_string()),
            Just("\u{1c}".to_string()),
            Just("\u{a0}".to_string()),
            Just("\u{3000}".to_string()),
            Just("\u{feff}".to_string()),
            Just("/".to_string()),
            Just("#".to_string()),
            Just(".".to_string()),
            Just("=".to_string()),
            Just("\0".to_string()),
            Just("https://github.com/".to_string()),
            Just("HTTP://GitHub.COM/".to_string()),
            Just("pull/".to_string()),
            Just("acme".to_string()),
            "[0-9]{1,20}",
            "[a-zA-Z0-9._-]{1,4}",
            ".{0,3}",
        ];
        prop::collection::vec(pieces, 0..8).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn not_blank_matches_exactly_the_non_blank(s in tricky()) {
            prop_assert_eq!(re(NOT_BLANK).is_match(&s), !is_blank(&s));
            prop_assert_eq!(trim_space(&s).is_empty(), is_blank(&s));
        }

        #[test]
        fn repo_segments_match_their_predicate(s in tricky()) {
            let by_pattern = re(REPO_SEGMENT).is_match(&s) && s.chars().count() <= 100;
            prop_assert_eq!(by_pattern, is_repo_segment(&s));
        }

        #[test]
        fn usernames_match_the_normaliser(s in tricky()) {
            prop_assert_eq!(re(USERNAME).is_match(&s), crate::access::normalise_username(&s).is_ok(), "{:?}", s);
        }

        #[test]
        fn target_urls_match_what_the_validator_accepts(s in tricky()) {
            let events = vec![crate::notify::MERGED.to_string()];
            let by_pattern = re(TARGET_URL).is_match(&s) && s.chars().count() <= 2048;
            prop_assert_eq!(by_pattern, crate::notify::validate_target(&s, &events, None).is_ok(), "{:?}", s);
        }

        #[test]
        fn pr_refs_match_what_the_review_accepts(s in tricky()) {
            let accepted = is_blank(&s) || PrRef::parse(trim_space(&s)).is_some();
            prop_assert_eq!(re(PR_REF).is_match(&s), accepted, "{:?}", s);
        }

        #[test]
        fn documented_schedules_are_all_valid(s in "@every [0-9]{1,8}[smh]|@[a-z]{4,8}|.{0,6}") {
            if re(SCHEDULE).is_match(&s) {
                let now = chrono::DateTime::parse_from_rfc3339("2026-03-08T09:00:00Z").unwrap().to_utc();
                prop_assert!(s.is_empty() || crate::cron::validate_schedule(&s, "", now).is_ok(), "{:?}", s);
            }
        }
    }

    #[test]
    fn the_schedule_pattern_reaches_its_bounds() {
        let r = re(SCHEDULE);
        for ok in [
            "",
            "@daily",
            "@every 1s",
            "@every 8784h",
            "@every 527040m",
            "@every 9999999s",
        ] {
            assert!(r.is_match(ok), "{ok}");
        }
        for bad in [
            "@every 0s",
            "@every 8785h",
            "@every 527041m",
            "@every 600000m",
            "@every 1.5h",
            "0 9 * * *",
            "@fortnightly",
        ] {
            assert!(!r.is_match(bad), "{bad}");
        }
    }

    #[test]
    fn pr_refs_with_exotic_spaces_agree() {
        for s in [
            "a\u{1c}b/c#1",
            "\u{1c}acme/api#1",
            "acme/api#1\u{1f}",
            "https://github.com/a\u{a0}b/c/pull/1",
            "https://github.com/a/b/pull/1 ",
            " https://github.com/a/b/pull/1\t",
            "a/b#+1",
            "a/b#0",
            "\u{1c}",
            // Nineteen digits fit an i64 but not the pattern: both refuse.
            "https://github.com/a/b/pull/1000000000000000000",
            "https://github.com/a/b/pull/0000000000000000001",
            "https://github.com/a/b/pull/0",
            "a/b#1000000000000000000",
            "a/b#0000000000000000000999999999999999999",
        ] {
            let accepted = is_blank(s) || PrRef::parse(trim_space(s)).is_some();
            assert_eq!(re(PR_REF).is_match(s), accepted, "{s:?}");
        }
    }

    #[test]
    fn env_keys_refuse_equals_and_nul() {
        let r = re(ENV_KEY);
        assert!(r.is_match("API_KEY"));
        assert!(!r.is_match("A=B") && !r.is_match("") && !r.is_match("a\0"));
    }
}
