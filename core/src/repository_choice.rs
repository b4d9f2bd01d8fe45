//! Where a run's checkout comes from, and how an automation's repository
//! choice is edited: listed repositories (the first loadable one is used),
//! "Auto" (none listed: the workspace's first repository) or "None" (the
//! agent runs in an empty working directory, with no checkout at all).

use crate::trigger::TriggerType;

/// Where a firing's run task takes its repository from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepositorySource {
    /// `github_pr`: the pull request decides, whatever the automation says.
    PullRequest,
    /// The automation chose "None": no repository, no checkout.
    Nothing,
    /// The automation's listed repositories, else the workspace's first.
    Configured,
}

pub fn run_repository_source(trigger_type: &str, no_repository: bool) -> RepositorySource {
    if trigger_type == TriggerType::GithubPr.as_str() {
        RepositorySource::PullRequest
    } else if no_repository {
        RepositorySource::Nothing
    } else {
        RepositorySource::Configured
    }
}

/// The refusal for a request that asks for both.
pub const BOTH_CHOSEN: &str = "repository_ids must be empty when no_repository is true";

/// Settles a create's or an edit's repository fields so the stored pair is
/// never contradictory: choosing "None" clears the list, listing
/// repositories clears "None", and asking for both at once is refused.
/// `None` fields stay unchanged (a PATCH that names neither).
pub fn settle(
    no_repository: Option<bool>,
    repository_ids: Option<Vec<String>>,
) -> Result<(Option<bool>, Option<Vec<String>>), &'static str> {
    let listed = repository_ids.as_ref().is_some_and(|ids| !ids.is_empty());
    match (no_repository, listed) {
        (Some(true), true) => Err(BOTH_CHOSEN),
        (Some(true), false) => Ok((Some(true), Some(vec![]))),
        (_, true) => Ok((Some(false), repository_ids)),
        _ => Ok((no_repository, repository_ids)),
    }
}

/// The picker's value for "None"; "Auto" is the empty value.
pub const PICK_NONE: &str = "none";

/// What the editor's first picker shows for a saved choice.
pub fn picker_value(no_repository: bool, ids: &[String]) -> String {
    if no_repository {
        PICK_NONE.to_string()
    } else {
        ids.first().cloned().unwrap_or_default()
    }
}

/// The first picker changed: "None" clears the list (and says so), "Auto"
/// drops the first repository, a repository replaces the first and keeps
/// the others (an automation saved with several never loses one by being
/// edited). Returns `(no_repository, ids)`.
pub fn pick_first(ids: &[String], chosen: &str) -> (bool, Vec<String>) {
    if chosen == PICK_NONE {
        return (true, vec![]);
    }
    let mut out: Vec<String> = ids.iter().skip(1).filter(|id| *id != chosen).cloned().collect();
    if !chosen.is_empty() {
        out.insert(0, chosen.to_string());
    }
    (false, out)
}

/// "Add another repository": appended once, never twice, never empty.
pub fn add_repository(ids: &[String], id: &str) -> Vec<String> {
    let mut out = ids.to_vec();
    if !id.is_empty() && !out.iter().any(|x| x == id) {
        out.push(id.to_string());
    }
    out
}

/// The "add another" list offers a repository only while the choice lists
/// some (a second row under "Auto" or "None" would mean nothing) and only
/// those not yet listed.
pub fn addable<'a>(all: &'a [String], no_repository: bool, ids: &[String]) -> Vec<&'a String> {
    if no_repository || ids.is_empty() {
        return vec![];
    }
    all.iter().filter(|id| !ids.contains(id)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_pull_request_trigger_takes_the_pull_requests_repository_even_under_none() {
        assert_eq!(run_repository_source("github_pr", true), RepositorySource::PullRequest);
        assert_eq!(run_repository_source("github_pr", false), RepositorySource::PullRequest);
    }

    #[test]
    fn none_means_no_checkout_for_every_other_type() {
        for t in [
            "scheduled",
            "github_pr_merged",
            "github_push",
            "github_ci",
            "webhook",
            "manual",
        ] {
            assert_eq!(run_repository_source(t, true), RepositorySource::Nothing, "{t}");
            assert_eq!(run_repository_source(t, false), RepositorySource::Configured, "{t}");
        }
    }

    #[test]
    fn settling_never_stores_a_contradiction() {
        assert_eq!(settle(Some(true), Some(ids(&["r1"]))), Err(BOTH_CHOSEN));
        assert_eq!(settle(Some(true), None), Ok((Some(true), Some(vec![]))));
        assert_eq!(settle(Some(true), Some(vec![])), Ok((Some(true), Some(vec![]))));
        assert_eq!(settle(None, Some(ids(&["r1"]))), Ok((Some(false), Some(ids(&["r1"])))));
        assert_eq!(
            settle(Some(false), Some(ids(&["r1"]))),
            Ok((Some(false), Some(ids(&["r1"]))))
        );
        assert_eq!(settle(None, None), Ok((None, None)));
        assert_eq!(settle(None, Some(vec![])), Ok((None, Some(vec![]))));
        assert_eq!(settle(Some(false), None), Ok((Some(false), None)));
    }

    #[test]
    fn the_first_picker_shows_none_auto_or_the_first_repository() {
        assert_eq!(picker_value(true, &[]), PICK_NONE);
        assert_eq!(picker_value(false, &[]), "");
        assert_eq!(picker_value(false, &ids(&["r1", "r2"])), "r1");
    }

    #[test]
    fn picking_replaces_only_the_first_and_none_clears_the_list() {
        let two = ids(&["r1", "r2"]);
        assert_eq!(pick_first(&two, "r3"), (false, ids(&["r3", "r2"])));
        assert_eq!(pick_first(&two, "r2"), (false, ids(&["r2"])));
        assert_eq!(pick_first(&two, ""), (false, ids(&["r2"])));
        assert_eq!(pick_first(&two, PICK_NONE), (true, vec![]));
        assert_eq!(pick_first(&[], "r1"), (false, ids(&["r1"])));
    }

    #[test]
    fn another_repository_is_added_once_and_only_under_a_listed_choice() {
        assert_eq!(add_repository(&ids(&["r1"]), "r2"), ids(&["r1", "r2"]));
        assert_eq!(add_repository(&ids(&["r1"]), "r1"), ids(&["r1"]));
        assert_eq!(add_repository(&ids(&["r1"]), ""), ids(&["r1"]));
        let all = ids(&["r1", "r2", "r3"]);
        assert_eq!(addable(&all, false, &ids(&["r1"])), vec!["r2", "r3"]);
        assert!(addable(&all, false, &[]).is_empty());
        assert!(addable(&all, true, &[]).is_empty());
    }
}
