//! A diff compare cannot state (300 files or more, its files left out, a
//! blob sent as `null`) is identified by the two full trees instead: the
//! merge base's and the head's, as `GET /git/trees/{sha}?recursive=1`
//! lists them. Which method a diff gets depends on what compare says of
//! that diff, so the same diff gets the same digest. Trees also carry each
//! file's mode, which compare does not.

/// One entry of a git tree listed recursively.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TreeEntry {
    pub path: String,
    /// `100644`, `100755`, `120000` (a link), `160000` (a submodule), `040000`.
    pub mode: String,
    /// `blob`, `tree` or `commit` (a submodule).
    pub kind: String,
    pub sha: String,
}

/// A commit's whole tree; GitHub cuts it (`truncated`) past 100,000 entries
/// or 7 MB, and a cut tree cannot vouch for anything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tree {
    pub entries: Vec<TreeEntry>,
    pub truncated: bool,
}

/// How one path differs between the base tree and the head tree.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TreeChange {
    pub path: String,
    /// The head's mode and object, `None` when the head removed the path.
    pub after: Option<(String, String)>,
}

/// Every path whose content (blob or submodule commit) or mode differs
/// between `base` and `head`, in path order. Directories are left out:
/// their contents are listed path by path.
pub fn tree_changes(base: &[TreeEntry], head: &[TreeEntry]) -> Vec<TreeChange> {
    use std::collections::BTreeMap;
    let index = |entries: &[TreeEntry]| -> BTreeMap<String, (String, String)> {
        entries
            .iter()
            .filter(|e| e.kind != "tree")
            .map(|e| (e.path.clone(), (e.mode.clone(), e.sha.clone())))
            .collect()
    };
    let (mut before, after) = (index(base), index(head));
    let mut changes: Vec<TreeChange> = after
        .into_iter()
        .filter_map(|(path, now)| {
            let was = before.remove(&path);
            (was.as_ref() != Some(&now)).then_some(TreeChange { path, after: Some(now) })
        })
        .collect();
    changes.extend(before.into_keys().map(|path| TreeChange { path, after: None }));
    changes.sort();
    changes
}

/// The identity of the diff from `base` (the merge base's tree) to `head`
/// against `base_branch`; `None` when either tree is cut.
#[cfg(feature = "digests")]
pub fn tree_digest(base_branch: &str, base: &Tree, head: &Tree) -> Option<String> {
    if base.truncated || head.truncated {
        return None;
    }
    let lines: Vec<String> = tree_changes(&base.entries, &head.entries)
        .into_iter()
        .map(|c| match c.after {
            Some((mode, sha)) => format!("{}\0{mode}\0{sha}", c.path),
            None => format!("{}\0removed", c.path),
        })
        .collect();
    Some(super::approval::digest_lines("tree\0", base_branch, lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(path: &str, sha: &str) -> TreeEntry {
        TreeEntry {
            path: path.into(),
            mode: "100644".into(),
            kind: "blob".into(),
            sha: sha.into(),
        }
    }

    fn dir(path: &str, sha: &str) -> TreeEntry {
        TreeEntry {
            path: path.into(),
            mode: "040000".into(),
            kind: "tree".into(),
            sha: sha.into(),
        }
    }

    fn whole(entries: Vec<TreeEntry>) -> Tree {
        Tree {
            entries,
            truncated: false,
        }
    }

    #[test]
    fn a_tree_diff_lists_added_changed_and_removed_files_but_not_directories() {
        let base = [
            dir("src", "t1"),
            blob("README.md", "r"),
            blob("src/a.rs", "a"),
            blob("old.rs", "o"),
        ];
        let head = [
            dir("src", "t2"),
            blob("README.md", "r"),
            blob("src/a.rs", "a2"),
            blob("src/new.rs", "n"),
        ];
        let change = |path: &str, sha: Option<&str>| TreeChange {
            path: path.into(),
            after: sha.map(|s| ("100644".to_string(), s.to_string())),
        };
        assert_eq!(
            tree_changes(&base, &head),
            vec![
                change("old.rs", None),
                change("src/a.rs", Some("a2")),
                change("src/new.rs", Some("n"))
            ]
        );
    }

    #[cfg(feature = "digests")]
    #[test]
    fn a_tree_digest_ignores_what_the_pr_left_alone_but_not_a_mode_a_blob_or_the_base_branch() {
        let base = whole(vec![blob("README.md", "r"), blob("run.sh", "s")]);
        let head = whole(vec![blob("README.md", "r"), blob("run.sh", "s2")]);
        let digest = tree_digest("main", &base, &head).expect("whole trees");
        assert_eq!(digest.len(), 64);
        // The base moved on a file the PR does not touch: the same diff.
        let moved_base = whole(vec![blob("README.md", "r2"), blob("run.sh", "s")]);
        let moved_head = whole(vec![blob("README.md", "r2"), blob("run.sh", "s2")]);
        assert_eq!(tree_digest("main", &moved_base, &moved_head), Some(digest.clone()));
        let mut executable = head.clone();
        executable.entries[1].mode = "100755".into();
        let other_blob = whole(vec![blob("README.md", "r"), blob("run.sh", "s3")]);
        for other in [&executable, &other_blob] {
            assert_ne!(tree_digest("main", &base, other), Some(digest.clone()), "{other:?}");
        }
        assert_ne!(tree_digest("release", &base, &head), Some(digest));
    }

    #[cfg(feature = "digests")]
    #[test]
    fn a_cut_tree_cannot_vouch_for_anything() {
        let cut = Tree {
            entries: vec![blob("a", "1")],
            truncated: true,
        };
        let base = whole(vec![]);
        assert_eq!(tree_digest("main", &cut, &base), None);
        assert_eq!(tree_digest("main", &base, &cut), None);
    }
}
