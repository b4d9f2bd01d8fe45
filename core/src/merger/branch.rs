//! Whether the merged PR's head branch may be deleted. Deleting a branch
//! that other open PRs are based on makes GitHub close them (only its own
//! auto-delete retargets them), so a stack of PRs would lose every PR above
//! the merged one. When in doubt, the branch is kept: a stray branch costs
//! nothing, a closed PR costs its author a reopen that may no longer work.

/// Why the branch stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeepBranch {
    /// The workspace does not delete merged branches, or the PR named none.
    NotAsked,
    /// The head's repository (a fork, perhaps) is gone.
    HeadRepositoryGone,
    /// Open PRs are based on it: deleting it would close them.
    BaseOfOpenPrs(Vec<i64>),
    /// Which PRs are based on it could not be read.
    DependentsUnknown,
}

impl KeepBranch {
    /// The log line's words.
    pub fn describe(&self) -> String {
        match self {
            KeepBranch::NotAsked => "branch deletion is off".into(),
            KeepBranch::HeadRepositoryGone => "the head's repository is gone".into(),
            KeepBranch::BaseOfOpenPrs(prs) => {
                let named: Vec<String> = prs.iter().map(|n| format!("#{n}")).collect();
                format!("open PRs are based on it: {}", named.join(", "))
            }
            KeepBranch::DependentsUnknown => "could not read which PRs are based on it".into(),
        }
    }
}

/// Whether the head branch is out of the merger's reach: it lives in a
/// repository other than the base's (a fork, or one since deleted) whose
/// owner did not allow edits from maintainers. GitHub reports
/// `maintainer_can_modify: false` for same-repository PRs too, so only a
/// head elsewhere counts; an unknown base repository counts as reachable
/// (the update itself then says).
pub fn fork_locked(base_repo: Option<&str>, head_repo: Option<&str>, maintainer_can_modify: bool) -> bool {
    match base_repo {
        Some(base) => !maintainer_can_modify && !head_repo.is_some_and(|h| h.eq_ignore_ascii_case(base)),
        None => false,
    }
}

/// Where the branch lives: the head's repository `owner/name`, never the
/// base repository just because a branch there shares its name.
pub fn branch_home<'a>(
    enabled: bool,
    branch: &str,
    head_repo: Option<&'a str>,
) -> Result<(&'a str, &'a str), KeepBranch> {
    if !enabled || branch.is_empty() {
        return Err(KeepBranch::NotAsked);
    }
    head_repo
        .and_then(|full| full.split_once('/'))
        .filter(|(o, r)| !o.is_empty() && !r.is_empty())
        .ok_or(KeepBranch::HeadRepositoryGone)
}

/// The last word: `based_on` is the open PRs whose base is the branch, or
/// `None` when that list could not be read.
pub fn may_delete(based_on: Option<&[i64]>) -> Result<(), KeepBranch> {
    match based_on {
        None => Err(KeepBranch::DependentsUnknown),
        Some([]) => Ok(()),
        Some(prs) => Err(KeepBranch::BaseOfOpenPrs(prs.to_vec())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_head_outside_the_base_repository_without_maintainer_edits_is_locked() {
        // GitHub says `false` for same-repository PRs: not a lock.
        assert!(!fork_locked(Some("acme/api"), Some("acme/api"), false));
        assert!(!fork_locked(Some("acme/api"), Some("ACME/Api"), false));
        assert!(!fork_locked(Some("acme/api"), Some("alice/api"), true));
        assert!(fork_locked(Some("acme/api"), Some("alice/api"), false));
        // A deleted fork can be updated by nobody.
        assert!(fork_locked(Some("acme/api"), None, false));
        // Unknown base: the update call will say.
        assert!(!fork_locked(None, Some("alice/api"), false));
    }

    #[test]
    fn the_branch_lives_in_the_head_s_repository() {
        assert_eq!(branch_home(true, "feature", Some("alice/api")), Ok(("alice", "api")));
        assert_eq!(
            branch_home(false, "feature", Some("acme/api")),
            Err(KeepBranch::NotAsked)
        );
        assert_eq!(branch_home(true, "", Some("acme/api")), Err(KeepBranch::NotAsked));
        assert_eq!(branch_home(true, "feature", None), Err(KeepBranch::HeadRepositoryGone));
        assert_eq!(
            branch_home(true, "feature", Some("nameless")),
            Err(KeepBranch::HeadRepositoryGone)
        );
        assert_eq!(
            branch_home(true, "feature", Some("/api")),
            Err(KeepBranch::HeadRepositoryGone)
        );
    }

    #[test]
    fn a_branch_other_open_prs_are_based_on_is_kept() {
        assert_eq!(may_delete(Some(&[])), Ok(()));
        assert_eq!(may_delete(Some(&[7, 9])), Err(KeepBranch::BaseOfOpenPrs(vec![7, 9])));
        assert_eq!(
            KeepBranch::BaseOfOpenPrs(vec![7, 9]).describe(),
            "open PRs are based on it: #7, #9"
        );
    }

    #[test]
    fn a_branch_whose_dependents_cannot_be_read_is_kept() {
        assert_eq!(may_delete(None), Err(KeepBranch::DependentsUnknown));
    }
}
