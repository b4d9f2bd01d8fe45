//! Matching helpers shared by every detector.

use super::config::{GithubPrMergedConfig, RepoFilter};

/// Branch glob: `*` matches anything (including `""`); a longer pattern ending in
/// `*` matches by prefix; anything else must match exactly. No trimming.
pub fn branch_glob(pattern: &str, value: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    if pattern.len() > 1
        && let Some(prefix) = pattern.strip_suffix('*')
    {
        return value.starts_with(prefix);
    }
    pattern == value
}

/// An empty list matches everything; otherwise any one glob must match.
pub fn branch_list_matches(patterns: &[String], value: &str) -> bool {
    patterns.is_empty() || patterns.iter().any(|p| branch_glob(p, value))
}

/// An empty list matches everything; otherwise the value must equal an entry.
pub fn value_list_matches(list: &[String], value: &str) -> bool {
    list.is_empty() || list.iter().any(|v| v == value)
}

/// Exact repository match used by push and CI. Case-sensitive; an empty list
/// never matches; organisation entries (`name: ""`) never match.
///
/// The spec forbids changing this rule: push and CI depend on it.
pub fn exact_repo_match(filters: &[RepoFilter], owner: &str, name: &str) -> bool {
    filters
        .iter()
        .any(|f| !f.name.is_empty() && f.owner == owner && f.name == name)
}

/// Whether a push/CI filter list has at least one entry that can ever match.
pub fn has_exact_repo(filters: &[RepoFilter]) -> bool {
    filters.iter().any(|f| !f.owner.is_empty() && !f.name.is_empty())
}

/// One merged-PR repository entry: a non-empty owner equal case-insensitively,
/// and a name that is `""` (organisation wildcard) or equal case-insensitively.
pub fn merged_repo_entry_matches(entry: &RepoFilter, owner: &str, repo: &str) -> bool {
    !entry.owner.is_empty()
        && entry.owner.eq_ignore_ascii_case(owner)
        && (entry.name.is_empty() || entry.name.eq_ignore_ascii_case(repo))
}

/// The merged-PR repository rule: `all_repos` matches everything; otherwise an
/// entry must match; an empty list matches nothing.
pub fn merged_repo_matches(cfg: &GithubPrMergedConfig, owner: &str, repo: &str) -> bool {
    cfg.all_repos || cfg.repos.iter().any(|e| merged_repo_entry_matches(e, owner, repo))
}

/// Trim entries and drop the ones left empty. The result may be empty (= all).
pub fn normalize_base_branches(list: &[String]) -> Vec<String> {
    list.iter()
        .map(|b| b.trim())
        .filter(|b| !b.is_empty())
        .map(str::to_string)
        .collect()
}

/// The merged-PR base-branch rule: normalise once, then the branch-list glob.
pub fn merged_base_branch_matches(base_branches: &[String], base: &str) -> bool {
    branch_list_matches(&normalize_base_branches(base_branches), base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn glob_exact_star_and_trailing_star() {
        assert!(branch_glob("main", "main"));
        assert!(!branch_glob("main", "Main"));
        assert!(branch_glob("*", ""));
        assert!(branch_glob("*", "anything"));
        assert!(branch_glob("release/*", "release/v2"));
        assert!(branch_glob("release/*", "release/"));
        assert!(!branch_glob("release/*", "main"));
        assert!(!branch_glob("rel*ase", "release"), "only a trailing star is special");
        assert!(!branch_glob(" main", "main"), "no trimming in the glob");
    }

    #[test]
    fn exact_repo_match_is_case_sensitive_and_empty_never_matches() {
        let f = vec![RepoFilter::new("acme", "api")];
        assert!(exact_repo_match(&f, "acme", "api"));
        assert!(!exact_repo_match(&f, "ACME", "api"));
        assert!(!exact_repo_match(&[], "acme", "api"));
        assert!(!exact_repo_match(&[RepoFilter::new("acme", "")], "acme", "api"));
    }

    #[test]
    fn merged_repo_org_wildcard_and_empty_owner() {
        let cfg = |repos: Vec<RepoFilter>| GithubPrMergedConfig {
            all_repos: false,
            repos,
            base_branches: vec![],
        };
        assert!(merged_repo_matches(
            &cfg(vec![RepoFilter::new("acme", "")]),
            "acme",
            "api"
        ));
        assert!(merged_repo_matches(
            &cfg(vec![RepoFilter::new("Acme", "")]),
            "ACME",
            "web"
        ));
        assert!(!merged_repo_matches(
            &cfg(vec![RepoFilter::new("acme", "")]),
            "other",
            "api"
        ));
        assert!(!merged_repo_matches(
            &cfg(vec![RepoFilter::new("", "api")]),
            "acme",
            "api"
        ));
        assert!(!merged_repo_matches(&cfg(vec![RepoFilter::new("", "")]), "", ""));
        assert!(!merged_repo_matches(&cfg(vec![]), "acme", "api"));
        let all = GithubPrMergedConfig {
            all_repos: true,
            ..Default::default()
        };
        assert!(merged_repo_matches(&all, "x", "y"));
    }

    #[test]
    fn base_branches_are_trimmed_and_empties_dropped() {
        assert_eq!(normalize_base_branches(&v(&[" main ", ""])), v(&["main"]));
        assert!(normalize_base_branches(&v(&["", " "])).is_empty());
        assert!(merged_base_branch_matches(&v(&["", " "]), "anything"));
        assert!(merged_base_branch_matches(&v(&[]), ""));
        assert!(merged_base_branch_matches(&v(&["*"]), ""));
        assert!(!merged_base_branch_matches(&v(&["main"]), ""));
    }

    #[test]
    fn value_list_empty_matches_all() {
        assert!(value_list_matches(&[], "x"));
        assert!(value_list_matches(&v(&["a", "x"]), "x"));
        assert!(!value_list_matches(&v(&["a"]), "x"));
    }

    proptest! {
        #[test]
        fn star_matches_every_branch(b in ".*") {
            prop_assert!(branch_glob("*", &b));
        }

        #[test]
        fn prefix_glob_matches_exactly_the_prefixed(prefix in "[a-z/]{1,8}", rest in "[a-z0-9/]{0,8}", other in "[A-Z]{1,8}") {
            let pat = format!("{prefix}*");
            let with_prefix = format!("{prefix}{rest}");
            prop_assert!(branch_glob(&pat, &with_prefix));
            prop_assert!(!branch_glob(&pat, &other));
        }

        #[test]
        fn merged_repo_match_ignores_case(owner in "[a-zA-Z0-9-]{1,10}", repo in "[a-zA-Z0-9_.-]{1,10}") {
            let cfg = GithubPrMergedConfig {
                all_repos: false,
                repos: vec![RepoFilter::new(&owner.to_lowercase(), &repo.to_uppercase())],
                base_branches: vec![],
            };
            prop_assert!(merged_repo_matches(&cfg, &owner.to_uppercase(), &repo.to_lowercase()));
        }

        #[test]
        fn exact_match_never_matches_a_case_changed_owner(owner in "[a-z]{1,10}", repo in "[a-z]{1,10}") {
            let f = vec![RepoFilter::new(&owner, &repo)];
            prop_assert!(exact_repo_match(&f, &owner, &repo));
            prop_assert!(!exact_repo_match(&f, &owner.to_uppercase(), &repo));
        }

        #[test]
        fn normalised_base_branches_have_no_blank_or_padded_entries(list in proptest::collection::vec("[ a-z]{0,6}", 0..6)) {
            for b in normalize_base_branches(&list) {
                prop_assert!(!b.is_empty());
                prop_assert_eq!(b.trim(), b.as_str());
            }
        }
    }
}
