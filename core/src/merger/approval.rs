//! An approval binds to the code it approved: the PR's diff against its base
//! when the merger first read it. A later head — the merger's own branch
//! update, a rebase, anyone's push — is merged only when its diff is the very
//! same, file for file and blob for blob; anything else is code nobody
//! reviewed, and the job blocks for a new approval.

use super::JobState;

/// One file of a diff as GitHub's compare lists it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffFile {
    pub filename: String,
    /// A rename's old name (empty otherwise).
    pub previous_filename: String,
    /// `added`, `removed`, `modified`, `renamed`, `copied`, `changed`, `unchanged`.
    pub status: String,
    /// The blob after the change (GitHub sends `null` for some entries).
    pub sha: String,
}

/// GitHub's compare lists at most this many files; a diff that reaches it
/// may be cut, so it cannot vouch for a new head.
pub const COMPARE_FILE_CAP: usize = 300;

/// A diff's identity: the base branch it is against and every file's name,
/// status and resulting blob, in a canonical order. `None` when the list may
/// be cut short (it cannot be compared).
#[cfg(feature = "digests")]
pub fn diff_digest(base_branch: &str, files: &[DiffFile]) -> Option<String> {
    use sha2::{Digest, Sha256};
    if files.len() >= COMPARE_FILE_CAP {
        return None;
    }
    let mut lines: Vec<String> = files
        .iter()
        .map(|f| format!("{}\0{}\0{}\0{}", f.status, f.previous_filename, f.filename, f.sha))
        .collect();
    lines.sort();
    let mut hash = Sha256::new();
    hash.update(base_branch.as_bytes());
    for line in &lines {
        hash.update(b"\n");
        hash.update(line.as_bytes());
    }
    Some(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether the merger must read the diff of `head` before deciding: the
/// job has bound nothing yet, or the head is not the bound one.
pub fn needs_diff(job: &JobState, head: &str) -> bool {
    job.approved_sha != head
}

/// The job's binding after reading `head` and its diff (`None`: too large to
/// compare). The first read binds; a later head with the bound diff takes
/// its place; any other head leaves the binding alone, and `decide` blocks.
pub fn bind(job: &JobState, head: &str, diff: Option<&str>) -> JobState {
    let mut next = job.clone();
    if job.approved_sha.is_empty() {
        next.approved_sha = head.to_string();
        next.approved_diff = diff.unwrap_or_default().to_string();
    } else if !job.approved_diff.is_empty() && diff == Some(job.approved_diff.as_str()) {
        next.approved_sha = head.to_string();
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, sha: &str) -> DiffFile {
        DiffFile {
            filename: name.into(),
            status: "modified".into(),
            sha: sha.into(),
            ..Default::default()
        }
    }

    fn bound(sha: &str, diff: &str) -> JobState {
        JobState {
            approved_sha: sha.into(),
            approved_diff: diff.into(),
            ..Default::default()
        }
    }

    #[cfg(feature = "digests")]
    #[test]
    fn a_diffs_digest_ignores_order_but_not_a_blob_a_name_a_status_or_the_base() {
        let a = [file("src/a.rs", "1"), file("src/b.rs", "2")];
        let same = [file("src/b.rs", "2"), file("src/a.rs", "1")];
        let digest = diff_digest("main", &a).expect("small");
        assert_eq!(diff_digest("main", &same), Some(digest.clone()));
        assert_eq!(digest.len(), 64);
        let other_blob = [file("src/a.rs", "1"), file("src/b.rs", "3")];
        let other_name = [file("src/a.rs", "1"), file("src/c.rs", "2")];
        let mut removed = a.clone();
        removed[1].status = "removed".into();
        let extra = [file("src/a.rs", "1"), file("src/b.rs", "2"), file("evil.sh", "4")];
        for other in [&other_blob[..], &other_name[..], &removed[..], &extra[..]] {
            assert_ne!(diff_digest("main", other), Some(digest.clone()), "{other:?}");
        }
        assert_ne!(diff_digest("release", &a), Some(digest));
    }

    #[cfg(feature = "digests")]
    #[test]
    fn a_diff_as_long_as_githubs_cap_cannot_vouch_for_anything() {
        let files: Vec<DiffFile> = (0..COMPARE_FILE_CAP).map(|i| file(&format!("f{i}"), "1")).collect();
        assert_eq!(diff_digest("main", &files), None);
        assert!(diff_digest("main", &files[1..]).is_some());
    }

    #[test]
    fn the_first_read_binds_the_head_and_its_diff() {
        let job = bind(&JobState::default(), "aaa", Some("d1"));
        assert_eq!(job, bound("aaa", "d1"));
        assert!(!needs_diff(&job, "aaa"));
        assert!(needs_diff(&job, "bbb"));
        assert!(needs_diff(&JobState::default(), "aaa"));
    }

    #[test]
    fn a_new_head_with_the_approved_diff_takes_the_approved_heads_place() {
        assert_eq!(bind(&bound("aaa", "d1"), "bbb", Some("d1")), bound("bbb", "d1"));
    }

    #[test]
    fn a_new_head_with_another_diff_or_an_uncomparable_one_stays_unbound() {
        let job = bound("aaa", "d1");
        assert_eq!(bind(&job, "bbb", Some("d2")), job);
        assert_eq!(bind(&job, "bbb", None), job);
        // A head bound while its diff was too large: nothing can match it.
        let large = bind(&JobState::default(), "aaa", None);
        assert_eq!(large, bound("aaa", ""));
        assert_eq!(bind(&large, "bbb", Some("")), large);
        assert_eq!(bind(&large, "bbb", None), large);
    }
}
