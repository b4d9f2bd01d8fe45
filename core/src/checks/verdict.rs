//! Whether a head commit's checks let the merger go on. A required check may
//! be pinned to one GitHub App (classic protection's `checks[].app_id`, a
//! ruleset's `integration_id`): GitHub then counts only that app's report, so
//! a same-named check from another app — or a commit status anyone with
//! write access can post — neither satisfies nor fails it.

use super::{Check, CheckStatus};

/// A check a branch requires: its name and, when pinned, the app that must
/// report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub name: String,
    /// `None`: any source counts.
    pub app: Option<i64>,
}

impl Requirement {
    /// GitHub writes "any source" as a missing or null id, or as -1.
    pub fn new(name: &str, app: Option<i64>) -> Self {
        Requirement {
            name: name.to_string(),
            app: app.filter(|id| *id > 0),
        }
    }

    /// Whether `check` reports on this requirement.
    pub fn met_by(&self, check: &Check) -> bool {
        check.name == self.name && self.app.is_none_or(|app| check.app == Some(app))
    }
}

impl From<&str> for Requirement {
    fn from(name: &str) -> Self {
        Requirement::new(name, None)
    }
}

/// The checks that decide.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Required {
    /// Classic protection could not be read: every reported check counts,
    /// as well as `checks` (the rulesets' requirements, which still hold).
    pub all_count: bool,
    pub checks: Vec<Requirement>,
}

impl Required {
    /// Nothing is known to be required: every reported check counts.
    pub fn every_check() -> Self {
        Required {
            all_count: true,
            checks: vec![],
        }
    }

    /// Exactly these checks decide.
    pub fn only(checks: Vec<Requirement>) -> Self {
        Required {
            all_count: false,
            checks,
        }
    }
}

/// A required check still awaited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Awaited {
    pub name: String,
    /// Set when another source reported a check of this name that does not
    /// count, because only this app's report does: said, or "build passed"
    /// on GitHub and "waiting for build" here would contradict each other.
    pub only_app: Option<i64>,
}

impl From<&str> for Awaited {
    fn from(name: &str) -> Self {
        Awaited {
            name: name.to_string(),
            only_app: None,
        }
    }
}

/// What the merger needs to know about CI on a head commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CiVerdict {
    Green,
    /// Required checks still running (or expected and not reported yet).
    Pending(Vec<Awaited>),
    /// Required checks failed: every one, with its name and URL.
    Failed(Vec<Check>),
}

/// Only required checks decide, or every check when protection could not be
/// read. A required check that has not reported at all — or only from a
/// source its pin does not accept — is pending.
pub fn ci_verdict(checks: &[Check], required: &Required) -> CiVerdict {
    let counts = |c: &Check| required.all_count || required.checks.iter().any(|q| q.met_by(c));
    let mut failed: Vec<Check> = vec![];
    for c in checks.iter().filter(|c| counts(c) && c.status == CheckStatus::Failed) {
        if !failed.iter().any(|f| f.name == c.name) {
            failed.push(c.clone());
        }
    }
    if !failed.is_empty() {
        return CiVerdict::Failed(failed);
    }
    let mut pending: Vec<Awaited> = checks
        .iter()
        .filter(|c| counts(c) && c.status == CheckStatus::Pending)
        .map(|c| Awaited::from(c.name.as_str()))
        .collect();
    for req in &required.checks {
        if !checks.iter().any(|c| req.met_by(c)) {
            let elsewhere = checks.iter().any(|c| c.name == req.name);
            pending.push(Awaited {
                name: req.name.clone(),
                only_app: req.app.filter(|_| elsewhere),
            });
        }
    }
    if pending.is_empty() {
        CiVerdict::Green
    } else {
        CiVerdict::Pending(pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{from_check_run, from_commit_status};

    const ACTIONS: i64 = 15368;
    const OTHER: i64 = 4242;

    fn run(name: &str, status: &str, conclusion: Option<&str>) -> Check {
        from_check_run(name, status, conclusion, &format!("https://ci/{name}"))
    }

    fn from_app(app: i64, name: &str, conclusion: Option<&str>) -> Check {
        let status = if conclusion.is_some() {
            "completed"
        } else {
            "in_progress"
        };
        Check {
            app: Some(app),
            ..run(name, status, conclusion)
        }
    }

    fn names(list: &[&str]) -> Required {
        Required::only(list.iter().map(|n| Requirement::from(*n)).collect())
    }

    fn pinned_build() -> Required {
        Required::only(vec![Requirement::new("build", Some(ACTIONS))])
    }

    #[test]
    fn only_required_checks_decide() {
        let checks = vec![
            run("build", "completed", Some("success")),
            run("lint", "completed", Some("failure")),
        ];
        assert_eq!(ci_verdict(&checks, &names(&["build"])), CiVerdict::Green);
        assert_eq!(
            ci_verdict(&checks, &Required::every_check()),
            CiVerdict::Failed(vec![run("lint", "completed", Some("failure"))]),
            "without readable protection every check counts"
        );
        let two = vec![
            run("build", "completed", Some("failure")),
            run("lint", "completed", Some("timed_out")),
            run("docs", "completed", Some("success")),
        ];
        let CiVerdict::Failed(all) = ci_verdict(&two, &Required::every_check()) else {
            panic!("failing")
        };
        assert_eq!(
            all.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["build", "lint"],
            "every failing check, not only the first"
        );
        assert_eq!(
            ci_verdict(&checks, &names(&["build", "deploy-preview"])),
            CiVerdict::Pending(vec!["deploy-preview".into()]),
            "expected but not reported"
        );
        let statuses = vec![from_commit_status("ci/legacy", "pending", "")];
        assert_eq!(
            ci_verdict(&statuses, &Required::every_check()),
            CiVerdict::Pending(vec!["ci/legacy".into()])
        );
    }

    #[test]
    fn any_source_is_written_as_none_null_or_minus_one() {
        assert_eq!(Requirement::new("build", Some(-1)), Requirement::from("build"));
        assert_eq!(Requirement::new("build", Some(0)).app, None);
        assert_eq!(Requirement::new("build", Some(ACTIONS)).app, Some(ACTIONS));
    }

    #[test]
    fn a_pinned_requirement_is_not_met_by_another_app_or_a_commit_status() {
        let pinned = pinned_build();
        for impostor in [
            from_app(OTHER, "build", Some("success")),
            from_commit_status("build", "success", ""),
        ] {
            assert_eq!(
                ci_verdict(std::slice::from_ref(&impostor), &pinned),
                CiVerdict::Pending(vec![Awaited {
                    name: "build".into(),
                    only_app: Some(ACTIONS)
                }]),
                "{impostor:?}"
            );
        }
        assert_eq!(
            ci_verdict(&[from_app(ACTIONS, "build", Some("success"))], &pinned),
            CiVerdict::Green
        );
    }

    #[test]
    fn another_app_failing_a_pinned_check_s_name_does_not_fail_it() {
        let pinned = pinned_build();
        let checks = [
            from_app(OTHER, "build", Some("failure")),
            from_app(ACTIONS, "build", Some("success")),
        ];
        assert_eq!(ci_verdict(&checks, &pinned), CiVerdict::Green);
        let running = [
            from_app(OTHER, "build", Some("failure")),
            from_app(ACTIONS, "build", None),
        ];
        assert_eq!(
            ci_verdict(&running, &pinned),
            CiVerdict::Pending(vec!["build".into()]),
            "the pinned app's own run is awaited, with no note"
        );
        let failing = [from_app(ACTIONS, "build", Some("failure"))];
        assert!(matches!(ci_verdict(&failing, &pinned), CiVerdict::Failed(_)));
    }

    #[test]
    fn a_pinned_check_not_reported_by_anyone_is_awaited_plainly() {
        let pinned = pinned_build();
        assert_eq!(ci_verdict(&[], &pinned), CiVerdict::Pending(vec!["build".into()]));
    }

    #[test]
    fn unreadable_protection_counts_every_check_and_still_awaits_the_rulesets_pins() {
        let rulesets = Required {
            all_count: true,
            ..pinned_build()
        };
        let impostor = from_commit_status("build", "success", "");
        assert_eq!(
            ci_verdict(std::slice::from_ref(&impostor), &rulesets),
            CiVerdict::Pending(vec![Awaited {
                name: "build".into(),
                only_app: Some(ACTIONS)
            }])
        );
        let lint = from_app(OTHER, "lint", Some("failure"));
        assert!(matches!(ci_verdict(&[impostor, lint], &rulesets), CiVerdict::Failed(_)));
    }

    #[test]
    fn an_unpinned_requirement_accepts_any_source() {
        let any = names(&["build"]);
        for check in [
            from_app(OTHER, "build", Some("success")),
            from_commit_status("build", "success", ""),
        ] {
            assert_eq!(ci_verdict(&[check], &any), CiVerdict::Green);
        }
    }
}
