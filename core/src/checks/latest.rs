//! Which of a commit's check runs still count. GitHub keeps a re-run's
//! superseded runs on the commit — in the REST list and in GraphQL's rollup
//! alike — while its merge box and its required-check rule judge only the
//! newest run of each check. Judging them all kept a PR red after a
//! successful re-run.

use super::{Check, from_check_run};

/// One check run as GitHub lists it on a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedRun<'a> {
    /// GitHub's id: a re-run always gets a higher one. 0 when unknown.
    pub id: i64,
    /// The app that reported it (0 when unknown): two apps' `build` are two checks.
    pub app: i64,
    pub name: &'a str,
    pub status: &'a str,
    pub conclusion: Option<&'a str>,
    pub url: &'a str,
}

/// The newest run of each check (app and name), in the order the checks first
/// appear. A run without an id supersedes nothing and is never superseded:
/// without one, which is newer cannot be told, and array order is no guide.
pub fn current_runs<'a>(runs: impl IntoIterator<Item = ListedRun<'a>>) -> Vec<Check> {
    let mut kept: Vec<ListedRun<'a>> = vec![];
    for run in runs {
        let same = |k: &&mut ListedRun<'a>| run.id > 0 && k.id > 0 && k.app == run.app && k.name == run.name;
        match kept.iter_mut().find(same) {
            Some(k) if k.id < run.id => *k = run,
            Some(_) => {}
            None => kept.push(run),
        }
    }
    kept.iter()
        .map(|r| Check {
            app: (r.app > 0).then_some(r.app),
            ..from_check_run(r.name, r.status, r.conclusion, r.url)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{CheckStatus, CiVerdict, Required, ci_verdict};

    fn listed(
        id: i64,
        app: i64,
        name: &'static str,
        status: &'static str,
        conclusion: Option<&'static str>,
    ) -> ListedRun<'static> {
        ListedRun {
            id,
            app,
            name,
            status,
            conclusion,
            url: "https://ci/run",
        }
    }

    fn statuses(checks: &[Check]) -> Vec<(&str, CheckStatus)> {
        checks.iter().map(|c| (c.name.as_str(), c.status)).collect()
    }

    #[test]
    fn a_rerun_that_passed_supersedes_the_failure_in_either_list_order() {
        let failed = listed(7, 1, "build", "completed", Some("failure"));
        let passed = listed(9, 1, "build", "completed", Some("success"));
        for runs in [[failed, passed], [passed, failed]] {
            let current = current_runs(runs);
            assert_eq!(statuses(&current), [("build", CheckStatus::Passed)]);
            assert_eq!(
                ci_verdict(&current, &Required::only(vec!["build".into()])),
                CiVerdict::Green
            );
        }
    }

    #[test]
    fn a_rerun_that_failed_or_still_runs_decides_over_an_older_pass() {
        let passed = listed(3, 1, "build", "completed", Some("success"));
        let failed = listed(4, 1, "build", "completed", Some("cancelled"));
        assert_eq!(
            statuses(&current_runs([passed, failed])),
            [("build", CheckStatus::Failed)]
        );
        let queued = listed(5, 1, "build", "queued", None);
        assert_eq!(
            statuses(&current_runs([passed, failed, queued])),
            [("build", CheckStatus::Pending)]
        );
    }

    #[test]
    fn the_same_name_from_two_apps_is_two_checks() {
        let ours = listed(3, 1, "build", "completed", Some("failure"));
        let theirs = listed(4, 2, "build", "completed", Some("success"));
        assert_eq!(
            statuses(&current_runs([ours, theirs])),
            [("build", CheckStatus::Failed), ("build", CheckStatus::Passed)]
        );
    }

    #[test]
    fn runs_without_ids_are_never_collapsed() {
        let a = listed(0, 1, "build", "completed", Some("failure"));
        let b = listed(0, 1, "build", "completed", Some("success"));
        let c = listed(5, 1, "build", "completed", Some("success"));
        assert_eq!(
            statuses(&current_runs([a, b, c])),
            [
                ("build", CheckStatus::Failed),
                ("build", CheckStatus::Passed),
                ("build", CheckStatus::Passed)
            ]
        );
    }

    #[test]
    fn distinct_checks_keep_their_first_order() {
        let runs = [
            listed(1, 1, "lint", "completed", Some("failure")),
            listed(2, 1, "build", "completed", Some("success")),
            listed(3, 1, "lint", "completed", Some("success")),
        ];
        assert_eq!(
            statuses(&current_runs(runs)),
            [("lint", CheckStatus::Passed), ("build", CheckStatus::Passed)]
        );
    }
}
