//! A pull request linked to a task (`TaskPr`), the payload of
//! `github.task_pr.updated`, and the sync's change predicate.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::board::PrRef;
use crate::lenient::null_as_default;

/// One linked pull request row. Its JSON is the `github.task_pr.updated` payload.
///
/// `workspace_id` is carried but never trusted for matching: the task's own
/// workspace (from the task-origin lookup) is authoritative.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskPr {
    #[serde(default, deserialize_with = "null_as_default")]
    pub task_id: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub workspace_id: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub owner: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub repo: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub pr_number: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub pr_url: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub pr_title: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub head_branch: String,
    /// The head commit as of the last sync: what a person reviewing the
    /// task sees, and what their approval names.
    #[serde(default, deserialize_with = "null_as_default")]
    pub head_sha: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub base_branch: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub author_login: String,
    /// `open`, `closed` or `merged` as written by the sync.
    #[serde(default, deserialize_with = "null_as_default")]
    pub state: String,
    #[serde(default, deserialize_with = "crate::api::rfc3339::de_opt")]
    pub merged_at: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "crate::api::rfc3339::de_opt")]
    pub closed_at: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub review_state: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub checks_state: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub mergeable_state: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub review_count: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub pending_review_count: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub required_reviews: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub checks_total: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub checks_passing: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub unresolved_review_threads: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub additions: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub deletions: i64,
    #[serde(default, deserialize_with = "crate::api::rfc3339::de_opt")]
    pub last_synced_at: Option<DateTime<Utc>>,
}

/// PR states as the sync writes them.
pub const STATE_OPEN: &str = "open";
pub const STATE_CLOSED: &str = "closed";
pub const STATE_MERGED: &str = "merged";

impl TaskPr {
    /// `owner/repo`, in the case GitHub reports.
    pub fn full_repo(&self) -> String {
        format!("{}/{}", self.owner, self.repo)
    }

    /// Whether the row's current state is merged (trimmed, case-insensitive).
    pub fn is_merged(&self) -> bool {
        self.state.trim().eq_ignore_ascii_case(STATE_MERGED)
    }

    pub fn is_closed(&self) -> bool {
        self.state.trim().eq_ignore_ascii_case(STATE_CLOSED)
    }
}

/// Whether a read asked under `asked_owner/asked_repo` found the PR under
/// another repository: GitHub answers a renamed or transferred repository's
/// old name with the PR as it is now, and the link follows GitHub's name.
/// Case alone is no move: links are keyed case-insensitively.
pub fn repo_moved(asked_owner: &str, asked_repo: &str, read: &TaskPr) -> bool {
    !same_repository((asked_owner, asked_repo), (&read.owner, &read.repo))
}

/// Whether two `(owner, name)` pairs name one repository: GitHub's names
/// are case-insensitive.
pub fn same_repository(a: (&str, &str), b: (&str, &str)) -> bool {
    a.0.eq_ignore_ascii_case(b.0) && a.1.eq_ignore_ascii_case(b.1)
}

/// The watch-driven sync's publish predicate: the sixteen fields whose change
/// publishes `github.task_pr.updated`. `last_synced_at` and identity fields other
/// than the base branch never count.
pub fn sync_changed(old: &TaskPr, new: &TaskPr) -> bool {
    old.state != new.state
        || old.pr_title != new.pr_title
        || old.additions != new.additions
        || old.deletions != new.deletions
        || old.review_state != new.review_state
        || old.checks_state != new.checks_state
        || old.mergeable_state != new.mergeable_state
        || old.review_count != new.review_count
        || old.pending_review_count != new.pending_review_count
        || old.required_reviews != new.required_reviews
        || old.checks_total != new.checks_total
        || old.checks_passing != new.checks_passing
        || old.unresolved_review_threads != new.unresolved_review_threads
        || old.base_branch != new.base_branch
        || old.merged_at != new.merged_at
        || old.closed_at != new.closed_at
}

/// The head an approval from the task page names: the head the page shows
/// for the PR the approval acts on (`bound`, from [`crate::board::task_bound_pr`]).
/// None when that PR is not linked or its head is unknown: the merger then
/// binds its first read.
pub fn reviewed_head(links: &[TaskPr], bound: Option<&PrRef>) -> Option<String> {
    let bound = bound?;
    links
        .iter()
        .find(|l| l.pr_number == bound.number && same_repository((&l.owner, &l.repo), (&bound.owner, &bound.repo)))
        .map(|l| l.head_sha.clone())
        .filter(|head| !head.is_empty())
}

/// The unwatched reconcile's predicate: only state, merged_at and closed_at.
pub fn lifecycle_changed(old: &TaskPr, new: &TaskPr) -> bool {
    old.state != new.state || old.merged_at != new.merged_at || old.closed_at != new.closed_at
}

/// The reconcile path never runs on merged or closed rows.
pub fn needs_unwatched_sync(row: &TaskPr) -> bool {
    !(row.is_merged() || row.is_closed())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_as(owner: &str, repo: &str) -> TaskPr {
        TaskPr {
            owner: owner.into(),
            repo: repo.into(),
            pr_number: 7,
            ..Default::default()
        }
    }

    #[test]
    fn an_approval_names_the_head_of_the_bound_pr_among_its_links() {
        let link = |repo: &str, n: i64, sha: &str| TaskPr {
            owner: "acme".into(),
            repo: repo.into(),
            pr_number: n,
            head_sha: sha.into(),
            ..Default::default()
        };
        let links = [link("api", 1, "aaa"), link("api", 2, "bbb"), link("web", 2, "ccc")];
        let bound = |repo: &str, n: i64| Some(PrRef::new("ACME", repo, n));
        assert_eq!(reviewed_head(&links, bound("api", 2).as_ref()), Some("bbb".into()));
        assert_eq!(reviewed_head(&links, bound("Web", 2).as_ref()), Some("ccc".into()));
        assert_eq!(reviewed_head(&links, bound("api", 3).as_ref()), None, "not linked");
        assert_eq!(reviewed_head(&links, None), None, "nothing bound");
        assert_eq!(
            reviewed_head(&[link("api", 2, "")], bound("api", 2).as_ref()),
            None,
            "head unknown"
        );
    }

    #[test]
    fn a_read_reporting_a_renamed_or_transferred_repository_is_a_move() {
        assert!(repo_moved("acme", "widgets", &read_as("acme", "gadgets")));
        assert!(repo_moved("acme", "widgets", &read_as("newco", "widgets")));
        assert!(repo_moved("acme", "widgets", &read_as("newco", "gadgets")));
    }

    #[test]
    fn a_read_differing_only_in_case_is_no_move() {
        assert!(!repo_moved("acme", "widgets", &read_as("acme", "widgets")));
        assert!(!repo_moved("ACME", "Widgets", &read_as("acme", "widgets")));
    }

    #[test]
    fn sixteen_fields_each_publish_and_others_do_not() {
        let base = TaskPr {
            task_id: "t".into(),
            state: "open".into(),
            ..Default::default()
        };
        let mutations: Vec<fn(&mut TaskPr)> = vec![
            |p| p.state = "merged".into(),
            |p| p.pr_title = "x".into(),
            |p| p.additions = 1,
            |p| p.deletions = 1,
            |p| p.review_state = "approved".into(),
            |p| p.checks_state = "success".into(),
            |p| p.mergeable_state = "clean".into(),
            |p| p.review_count = 1,
            |p| p.pending_review_count = 1,
            |p| p.required_reviews = 1,
            |p| p.checks_total = 1,
            |p| p.checks_passing = 1,
            |p| p.unresolved_review_threads = 1,
            |p| p.base_branch = "dev".into(),
            |p| p.merged_at = Some(Utc::now_for_tests()),
            |p| p.closed_at = Some(Utc::now_for_tests()),
        ];
        assert_eq!(mutations.len(), 16);
        for m in mutations {
            let mut next = base.clone();
            m(&mut next);
            assert!(sync_changed(&base, &next));
        }
        let mut quiet = base.clone();
        quiet.last_synced_at = Some(Utc::now_for_tests());
        quiet.head_branch = "feature".into();
        quiet.author_login = "bob".into();
        assert!(!sync_changed(&base, &quiet));
    }

    #[test]
    fn lifecycle_predicate_is_three_fields_and_skips_terminal_rows() {
        let base = TaskPr {
            state: "open".into(),
            ..Default::default()
        };
        let mut titled = base.clone();
        titled.pr_title = "new".into();
        assert!(!lifecycle_changed(&base, &titled));
        let mut merged = base.clone();
        merged.state = "merged".into();
        assert!(lifecycle_changed(&base, &merged));
        assert!(needs_unwatched_sync(&base));
        assert!(!needs_unwatched_sync(&merged));
        assert!(!needs_unwatched_sync(&TaskPr {
            state: "closed".into(),
            ..Default::default()
        }));
    }

    trait NowForTests {
        fn now_for_tests() -> DateTime<Utc>;
    }
    impl NowForTests for Utc {
        fn now_for_tests() -> DateTime<Utc> {
            DateTime::parse_from_rfc3339("2026-03-08T12:00:00Z")
                .unwrap()
                .with_timezone(&Utc)
        }
    }
}
