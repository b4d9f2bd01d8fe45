//! An approval binds to the code it approved: the PR's diff against its base
//! at the head the person saw (sent with the approval), or — when the
//! approval named none — at the head the merger first read. A later head —
//! the merger's own branch update, a rebase, anyone's push — is merged only
//! when its diff is the very same, file for file, blob for blob and mode for
//! mode; anything else is code nobody reviewed, and the job blocks for a new
//! approval.

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

/// Compare's list of a diff when it can state the diff; `None` — the diff
/// is then read from trees — when the files were left out (GitHub does for
/// a diff it could not compute; an empty list would match every other such
/// head), the list may be cut short, or a file still present has a `null`
/// blob (a rewrite of it would not show).
pub fn listed(files: Option<&[DiffFile]>) -> Option<&[DiffFile]> {
    let files = files.filter(|f| f.len() < COMPARE_FILE_CAP)?;
    let blobless = files.iter().any(|f| f.sha.is_empty() && f.status != "removed");
    (!blobless).then_some(files)
}

/// A diff's identity: the base branch it is against and every file's name,
/// status, resulting blob and — for a file still present — its mode at the
/// head (`modes`, by path), in a canonical order. Compare has no modes, so
/// without them an executable bit set after approval would not show. `None`
/// when compare's list cannot state the diff or a present file's mode is
/// unknown: the diff is then read from trees.
#[cfg(feature = "digests")]
pub fn diff_digest(
    base_branch: &str,
    files: Option<&[DiffFile]>,
    modes: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    let lines = listed(files)?
        .iter()
        .map(|f| {
            let mode = match f.status.as_str() {
                "removed" => "",
                _ => modes.get(&f.filename)?,
            };
            Some(format!("{}\0{mode}", compare_line(f)))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(digest_lines("modes\0", base_branch, lines))
}

/// The digest of a diff as releases before modes counted stored it (name,
/// status and blob only). A job bound then still matches a later head by
/// it; no digest stored since can equal one (its tag differs).
#[cfg(feature = "digests")]
pub fn diff_digest_before_modes(base_branch: &str, files: Option<&[DiffFile]>) -> Option<String> {
    let lines = listed(files)?.iter().map(compare_line).collect();
    Some(digest_lines("", base_branch, lines))
}

#[cfg(feature = "digests")]
fn compare_line(f: &DiffFile) -> String {
    format!("{}\0{}\0{}\0{}", f.status, f.previous_filename, f.filename, f.sha)
}

/// SHA-256 of `tag`, the base branch and the sorted lines, in hex. Digests
/// stored before modes counted have no tag; a tag ends in NUL, which no
/// branch name holds, so methods never collide.
#[cfg(feature = "digests")]
pub(super) fn digest_lines(tag: &str, base_branch: &str, mut lines: Vec<String>) -> String {
    use sha2::{Digest, Sha256};
    lines.sort();
    let mut hash = Sha256::new();
    hash.update(tag.as_bytes());
    hash.update(base_branch.as_bytes());
    for line in &lines {
        hash.update(b"\n");
        hash.update(line.as_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `approved_diff` of a job whose approval named its head, before the
/// merger has read that head's diff (a digest is 64 hex digits; too large is
/// empty).
pub const DIFF_UNREAD: &str = "unread";

/// The head an approval names, as the merger will pin it: a full commit SHA
/// (it goes into GitHub URLs, so nothing else passes), in lower case.
pub fn approved_head(sha: &str) -> Result<String, String> {
    if sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(sha.to_ascii_lowercase())
    } else {
        Err("head_sha must be a full commit SHA (40 hexadecimal digits)".into())
    }
}

/// A new job pinned to the head the person approved; its diff is read later.
pub fn pin(head: &str) -> JobState {
    JobState {
        approved_sha: head.to_string(),
        approved_diff: DIFF_UNREAD.to_string(),
        ..Default::default()
    }
}

/// Whether the merger must read the diff of `head` before deciding: the
/// job has bound nothing yet, the head is not the bound one, or the bound
/// head's diff is still unread.
pub fn needs_diff(job: &JobState, head: &str) -> bool {
    job.approved_sha != head || job.approved_diff == DIFF_UNREAD
}

/// Whether the merger must also read the diff of the approved head, which
/// is no longer the PR's head: the approval pinned it and nothing read it.
pub fn needs_approved_diff(job: &JobState, head: &str) -> bool {
    job.approved_diff == DIFF_UNREAD && job.approved_sha != head
}

/// The job after reading the pinned head's diff (`None`: too large).
pub fn settle(job: &JobState, approved_diff: Option<&str>) -> JobState {
    let mut next = job.clone();
    if job.approved_diff == DIFF_UNREAD {
        next.approved_diff = approved_diff.unwrap_or_default().to_string();
    }
    next
}

/// The job's binding after reading `head` and its diff (`None`: too large to
/// compare). The first read binds (or, on the pinned head, records its
/// diff); a later head with the bound diff takes its place; any other head
/// leaves the binding alone, and `decide` blocks.
pub fn bind(job: &JobState, head: &str, diff: Option<&str>) -> JobState {
    let mut next = job.clone();
    if job.approved_sha.is_empty() || (job.approved_sha == head && job.approved_diff == DIFF_UNREAD) {
        next.approved_sha = head.to_string();
        next.approved_diff = diff.unwrap_or_default().to_string();
    } else if !job.approved_diff.is_empty()
        && job.approved_diff != DIFF_UNREAD
        && diff == Some(job.approved_diff.as_str())
    {
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

    /// Every present file a plain one (`100644`).
    #[cfg(feature = "digests")]
    fn plain(files: &[DiffFile]) -> std::collections::BTreeMap<String, String> {
        files
            .iter()
            .map(|f| (f.filename.clone(), "100644".to_string()))
            .collect()
    }

    #[cfg(feature = "digests")]
    fn digest_of(base: &str, files: Option<&[DiffFile]>) -> Option<String> {
        diff_digest(base, files, &plain(files.unwrap_or_default()))
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
        let digest = digest_of("main", Some(&a)).expect("small");
        assert_eq!(digest_of("main", Some(&same)), Some(digest.clone()));
        assert_eq!(digest.len(), 64);
        let other_blob = [file("src/a.rs", "1"), file("src/b.rs", "3")];
        let other_name = [file("src/a.rs", "1"), file("src/c.rs", "2")];
        let mut removed = a.clone();
        removed[1].status = "removed".into();
        let extra = [file("src/a.rs", "1"), file("src/b.rs", "2"), file("evil.sh", "4")];
        for other in [&other_blob[..], &other_name[..], &removed[..], &extra[..]] {
            assert_ne!(digest_of("main", Some(other)), Some(digest.clone()), "{other:?}");
        }
        assert_ne!(digest_of("release", Some(&a)), Some(digest));
    }

    /// Jobs store digests: the same diff must keep its digest across
    /// releases, and one stored before modes counted must still be made.
    #[cfg(feature = "digests")]
    #[test]
    fn a_compare_digest_is_stable_across_releases() {
        let files = [file("src/a.rs", "1")];
        assert_eq!(
            diff_digest_before_modes("main", Some(&files)).as_deref(),
            Some("5e2e6869dbd388abf546744a7cbdb9cce89c03d46aba3172eb1423d4d49a68ea")
        );
        assert_eq!(
            digest_of("main", Some(&files)).as_deref(),
            Some("5e1a05e7731785c6a84f9eca2cbdadfb844abf6cb73d5584e71620ba39252125")
        );
    }

    #[cfg(feature = "digests")]
    #[test]
    fn an_executable_bit_set_on_a_changed_file_changes_the_digest() {
        let files = [file("run.sh", "1")];
        let mut modes = plain(&files);
        let before = diff_digest("main", Some(&files), &modes);
        modes.insert("run.sh".into(), "100755".into());
        assert!(before.is_some());
        assert_ne!(diff_digest("main", Some(&files), &modes), before);
    }

    #[cfg(feature = "digests")]
    #[test]
    fn a_present_file_without_its_mode_cannot_vouch_but_a_removed_one_needs_none() {
        let mut f = file("src/a.rs", "1");
        let none = std::collections::BTreeMap::new();
        assert_eq!(diff_digest("main", Some(&[f.clone()]), &none), None);
        f.status = "removed".into();
        assert!(diff_digest("main", Some(&[f]), &none).is_some());
    }

    #[cfg(feature = "digests")]
    #[test]
    fn a_diff_as_long_as_githubs_cap_cannot_vouch_for_anything() {
        let files: Vec<DiffFile> = (0..COMPARE_FILE_CAP).map(|i| file(&format!("f{i}"), "1")).collect();
        assert_eq!(digest_of("main", Some(&files)), None);
        assert!(digest_of("main", Some(&files[1..])).is_some());
    }

    #[cfg(feature = "digests")]
    #[test]
    fn a_comparison_that_left_its_files_out_cannot_vouch_but_an_empty_diff_can() {
        assert_eq!(digest_of("main", None), None);
        assert!(digest_of("main", Some(&[])).is_some());
    }

    #[cfg(feature = "digests")]
    #[test]
    fn a_listed_file_without_its_blob_cannot_vouch_unless_it_was_removed() {
        let mut f = file("src/a.rs", "");
        assert_eq!(digest_of("main", Some(&[f.clone()])), None);
        f.status = "removed".into();
        assert!(digest_of("main", Some(&[f])).is_some());
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
    fn an_approval_names_its_head_by_a_full_sha_and_nothing_else() {
        let sha = "0123456789abcdef0123456789ABCDEF01234567";
        assert_eq!(approved_head(sha), Ok(sha.to_ascii_lowercase()));
        for hostile in [
            "",
            "abc1234",
            "../../../../repos/x/y/merge",
            &format!("{sha}0"),
            &sha.replace('0', "g"),
        ] {
            assert!(approved_head(hostile).is_err(), "{hostile}");
        }
    }

    #[test]
    fn a_pinned_head_still_read_there_records_its_diff() {
        let job = pin("aaa");
        assert!(needs_diff(&job, "aaa"));
        assert!(!needs_approved_diff(&job, "aaa"));
        assert_eq!(bind(&job, "aaa", Some("d1")), bound("aaa", "d1"));
        assert_eq!(bind(&job, "aaa", None), bound("aaa", ""));
    }

    #[test]
    fn a_pinned_head_that_moved_binds_only_a_head_with_its_diff() {
        let job = pin("aaa");
        assert!(needs_diff(&job, "bbb"));
        assert!(needs_approved_diff(&job, "bbb"));
        // Unread, nothing can match it: the approved diff is read first.
        assert_eq!(bind(&job, "bbb", Some(DIFF_UNREAD)), job);
        let settled = settle(&job, Some("d1"));
        assert_eq!(settled, bound("aaa", "d1"));
        assert_eq!(settle(&settled, Some("d2")), settled);
        assert_eq!(bind(&settled, "bbb", Some("d1")), bound("bbb", "d1"));
        assert_eq!(bind(&settled, "bbb", Some("d2")), settled);
        let large = settle(&job, None);
        assert_eq!(bind(&large, "bbb", None), bound("aaa", ""));
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
