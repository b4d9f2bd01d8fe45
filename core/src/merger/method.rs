//! Which merge method the merger asks GitHub for. The workspace names one,
//! but one workspace spans many repositories: a repository's own settings
//! may forbid it (readable only with admin rights, so learnt from GitHub's
//! refusal), and its rulesets may allow fewer methods (`allowed_merge_methods`,
//! linear history, required signatures: GitHub cannot sign a rebase), which
//! the merger reads before merging. A forbidden method is a settings
//! mismatch, not a reason to leave a green PR unmerged.

use crate::api::MERGE_METHODS;

/// The method GitHub refused as not allowed here, from its message: the
/// repository's settings ("Squash merges are not allowed on this
/// repository."), a ruleset ("Squash is not an allowed merge method in this
/// repository."), linear history ("The base branch does not accept merge
/// commits.") or required signatures ("Rebase merges cannot be automatically
/// signed by GitHub"). `None` for any other refusal.
pub fn refused_method(message: &str) -> Option<&'static str> {
    let m = message.to_ascii_lowercase();
    let named = |word: &str| {
        m.contains(&format!("{word} merges are not allowed"))
            || m.contains(&format!("{word} is not an allowed merge method"))
    };
    if m.contains("merge commits are not allowed")
        || m.contains("does not accept merge commits")
        || m.contains("merge is not an allowed merge method")
    {
        Some("merge")
    } else if named("squash") {
        Some("squash")
    } else if named("rebase") || m.contains("rebase merges cannot be automatically signed") {
        Some("rebase")
    } else {
        None
    }
}

/// The method to ask for: the workspace's `preferred` first, then GitHub's
/// others in a fixed order; never one the rulesets do not allow (`allowed`,
/// `None`: no restriction) or GitHub already refused. `None`: none is left.
pub fn merge_method(preferred: &str, allowed: Option<&[String]>, refused: &[&str]) -> Option<&'static str> {
    let first = MERGE_METHODS.iter().copied().find(|m| *m == preferred);
    first
        .into_iter()
        .chain(MERGE_METHODS.iter().copied().filter(|m| Some(*m) != first))
        .filter(|m| allowed.is_none_or(|a| a.iter().any(|x| x.eq_ignore_ascii_case(m))))
        .find(|m| !refused.contains(m))
}

/// Folds one rule's restriction into what the rulesets allow so far: every
/// active rule must allow a method. `None` stands for "no restriction".
pub fn restrict(so_far: Option<Vec<String>>, rule_allows: &[String]) -> Option<Vec<String>> {
    let rule: Vec<String> = rule_allows.iter().map(|m| m.to_ascii_lowercase()).collect();
    Some(match so_far {
        None => rule,
        Some(prev) => prev.into_iter().filter(|m| rule.contains(m)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn refusals_that_name_a_forbidden_method_are_recognised() {
        for (message, method) in [
            ("Merge commits are not allowed on this repository.", "merge"),
            ("Squash merges are not allowed on this repository.", "squash"),
            ("Rebase merges are not allowed on this repository.", "rebase"),
            ("Merge is not an allowed merge method in this repository.", "merge"),
            ("Squash is not an allowed merge method in this repository.", "squash"),
            ("Rebase is not an allowed merge method in this repository.", "rebase"),
            ("The base branch does not accept merge commits.", "merge"),
            ("GraphQL: Rebase merges are not allowed on this repository.", "rebase"),
            (
                "Base branch requires signed commits. Rebase merges cannot be automatically signed by GitHub",
                "rebase",
            ),
        ] {
            assert_eq!(refused_method(message), Some(method), "{message}");
        }
        for other in [
            "Pull Request is not mergeable",
            "Base branch was modified. Review and try the merge again.",
            "Changes must be made through the merge queue",
            "",
        ] {
            assert_eq!(refused_method(other), None, "{other}");
        }
    }

    #[test]
    fn the_preferred_method_comes_first_then_the_others_in_order() {
        assert_eq!(merge_method("squash", None, &[]), Some("squash"));
        assert_eq!(merge_method("rebase", None, &[]), Some("rebase"));
        assert_eq!(merge_method("squash", None, &["squash"]), Some("merge"));
        assert_eq!(merge_method("rebase", None, &["rebase"]), Some("squash"));
        assert_eq!(merge_method("merge", None, &["merge", "squash"]), Some("rebase"));
        assert_eq!(merge_method("squash", None, &["squash", "merge", "rebase"]), None);
        assert_eq!(
            merge_method("bogus", None, &[]),
            Some("squash"),
            "an unknown stored value"
        );
    }

    #[test]
    fn rulesets_narrow_the_choice_before_github_is_asked() {
        let only_rebase = v(&["REBASE"]);
        assert_eq!(merge_method("squash", Some(&only_rebase), &[]), Some("rebase"));
        assert_eq!(merge_method("squash", Some(&only_rebase), &["rebase"]), None);
        assert_eq!(merge_method("squash", Some(&[]), &[]), None);
    }

    #[test]
    fn every_rule_must_allow_a_method() {
        let a = restrict(None, &v(&["squash", "Rebase"]));
        assert_eq!(a, Some(v(&["squash", "rebase"])));
        assert_eq!(restrict(a.clone(), &v(&["rebase", "merge"])), Some(v(&["rebase"])));
        assert_eq!(restrict(a, &v(&["merge"])), Some(vec![]));
    }
}
