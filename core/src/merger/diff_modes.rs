//! Compare lists a diff's files without their modes, so a head that only
//! made a reviewed file executable would keep its digest. The merger reads
//! the modes of the directories holding the diff's files at the head (one
//! GraphQL query) and the digest covers them.

use std::collections::BTreeSet;

use super::approval::DiffFile;

/// The directories whose listings hold the modes of the diff's files still
/// present at the head (`""`: the top level), sorted and distinct.
pub fn mode_dirs(files: &[DiffFile]) -> Vec<String> {
    files
        .iter()
        .filter(|f| f.status != "removed")
        .map(|f| f.filename.rsplit_once('/').map_or("", |(dir, _)| dir).to_string())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// A head's diff digest (`None`: it cannot vouch), and the digest releases
/// before modes counted made of it, when compare could state the diff.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Digests {
    pub now: Option<String>,
    pub before_modes: Option<String>,
}

impl Digests {
    /// The digest to bind a head by, given the digest the job holds: the
    /// older one only when the job was bound by it before modes counted
    /// (no digest made since can equal one), else the current one.
    pub fn for_binding(self, bound: &str) -> Option<String> {
        match self.before_modes {
            Some(old) if old == bound => Some(old),
            _ => self.now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, status: &str) -> DiffFile {
        DiffFile {
            filename: name.into(),
            status: status.into(),
            sha: "1".into(),
            ..Default::default()
        }
    }

    #[test]
    fn the_modes_of_present_files_are_read_from_their_directories() {
        let files = [
            file("src/a.rs", "modified"),
            file("src/b.rs", "added"),
            file("run.sh", "modified"),
            file("docs/gone.md", "removed"),
            file("deep/er/x", "renamed"),
        ];
        assert_eq!(mode_dirs(&files), ["", "deep/er", "src"]);
        assert!(mode_dirs(&[]).is_empty());
    }

    #[test]
    fn a_job_bound_before_modes_counted_keeps_its_binding_and_no_other_does() {
        let read = || Digests {
            now: Some("new".into()),
            before_modes: Some("old".into()),
        };
        assert_eq!(read().for_binding("old").as_deref(), Some("old"));
        assert_eq!(read().for_binding("new").as_deref(), Some("new"));
        assert_eq!(read().for_binding("other").as_deref(), Some("new"));
        assert_eq!(read().for_binding("").as_deref(), Some("new"));
        let trees = Digests {
            now: None,
            before_modes: None,
        };
        assert_eq!(trees.for_binding(""), None);
    }
}
