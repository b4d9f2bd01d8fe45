//! Which file hierarchies a confined agent reaches, and how. Landlock grants
//! access by hierarchy and cannot deny beneath a grant, so a hidden path is
//! carved out of a root by granting the root's entries one by one instead,
//! down to the hidden path; its ancestors are only listed.

use std::path::{Path, PathBuf};

/// What an agent may do beneath a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// List directories only (an ancestor of a hidden path: `ls` still works).
    List,
    /// Read files, list directories and execute.
    Read,
    /// Everything, writing included.
    Write,
}

/// `root` granted with `reach`, minus every `hidden` path. `entries` lists a
/// directory's entries, never following symbolic links: a link is reached
/// through its target, whose own grants decide. Paths are absolute and
/// canonical (the shell resolves them first).
pub fn carve(
    root: &Path,
    reach: Reach,
    hidden: &[PathBuf],
    entries: &mut dyn FnMut(&Path) -> Vec<PathBuf>,
) -> Vec<(PathBuf, Reach)> {
    if hidden.iter().any(|h| root.starts_with(h)) {
        return Vec::new();
    }
    if !hidden.iter().any(|h| h.starts_with(root)) {
        return vec![(root.to_path_buf(), reach)];
    }
    let mut grants = vec![(root.to_path_buf(), Reach::List)];
    for entry in entries(root) {
        grants.extend(carve(&entry, reach, hidden, entries));
    }
    grants
}

/// Where device files live. An agent opens only [`DEVICES`] there: the rest
/// (disks, consoles, hardware) is hidden, since an agent of a server running
/// as root owns those files and would read a whole disk past every grant.
pub const DEVICE_DIR: &str = "/dev";

/// The devices every program expects, a new terminal, and shared memory
/// (browsers and Python's multiprocessing need it).
pub const DEVICES: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Every grant for an agent working in `worktree`: all of `/` to read but
/// `hidden` and `/dev`, [`DEVICES`], its worktree and `own` paths to write
/// by name (they may lie in a hidden path: its checkout's `.git`, its
/// workspace's home), and the `shared` roots (the server user's `HOME` and
/// temporary directory) to write minus `hidden`. Paths are absolute and
/// canonical; `entries` is [`carve`]'s.
pub fn grants(
    worktree: &Path,
    hidden: &[PathBuf],
    own: &[PathBuf],
    shared: &[PathBuf],
    entries: &mut dyn FnMut(&Path) -> Vec<PathBuf>,
) -> Vec<(PathBuf, Reach)> {
    let mut unseen = hidden.to_vec();
    unseen.push(PathBuf::from(DEVICE_DIR));
    let mut all = carve(Path::new("/"), Reach::Read, &unseen, entries);
    // A hidden path may lie in shared memory too (a data directory on tmpfs).
    for device in DEVICES {
        all.extend(carve(Path::new(device), Reach::Write, hidden, entries));
    }
    all.push((worktree.to_path_buf(), Reach::Write));
    all.extend(own.iter().map(|w| (w.clone(), Reach::Write)));
    for root in shared {
        all.extend(carve(root, Reach::Write, hidden, entries));
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A directory tree as `entries` sees it.
    fn tree(dirs: &[(&str, &[&str])]) -> BTreeMap<PathBuf, Vec<PathBuf>> {
        dirs.iter()
            .map(|(d, es)| (PathBuf::from(d), es.iter().map(|e| Path::new(d).join(e)).collect()))
            .collect()
    }

    fn carved(root: &str, reach: Reach, hidden: &[&str], t: &BTreeMap<PathBuf, Vec<PathBuf>>) -> Vec<(String, Reach)> {
        let hidden: Vec<PathBuf> = hidden.iter().map(PathBuf::from).collect();
        let mut listed = |p: &Path| t.get(p).cloned().unwrap_or_default();
        carve(Path::new(root), reach, &hidden, &mut listed)
            .into_iter()
            .map(|(p, r)| (p.display().to_string(), r))
            .collect()
    }

    #[test]
    fn a_root_holding_nothing_hidden_is_granted_whole() {
        let t = tree(&[]);
        assert_eq!(
            carved("/usr", Reach::Read, &["/srv/kandev"], &t),
            [("/usr".into(), Reach::Read)]
        );
    }

    #[test]
    fn a_hidden_path_is_carved_out_and_its_ancestors_only_listed() {
        let t = tree(&[
            ("/", &["usr", "srv"]),
            ("/srv", &["kandev", "www"]),
            ("/srv/kandev", &["data", "kandev.db"]),
        ]);
        assert_eq!(
            carved("/", Reach::Read, &["/srv/kandev/data", "/srv/kandev/kandev.db"], &t),
            [
                ("/".into(), Reach::List),
                ("/usr".into(), Reach::Read),
                ("/srv".into(), Reach::List),
                ("/srv/kandev".into(), Reach::List),
                ("/srv/www".into(), Reach::Read),
            ]
        );
    }

    #[test]
    fn a_root_inside_a_hidden_path_is_not_granted() {
        let t = tree(&[]);
        assert!(carved("/srv/kandev/data/x", Reach::Write, &["/srv/kandev/data"], &t).is_empty());
        assert!(carved("/srv/kandev/data", Reach::Write, &["/srv/kandev/data"], &t).is_empty());
    }

    #[test]
    fn a_sibling_sharing_a_name_prefix_is_not_hidden() {
        let t = tree(&[("/srv", &["data", "data2"])]);
        assert_eq!(
            carved("/srv", Reach::Write, &["/srv/data"], &t),
            [("/srv".into(), Reach::List), ("/srv/data2".into(), Reach::Write)]
        );
    }

    /// What Landlock lets an agent do on `path`: the most of every grant on
    /// it or an ancestor (rules add up down a hierarchy).
    fn reach_of(grants: &[(PathBuf, Reach)], path: &str) -> Option<Reach> {
        let rank = |r: &Reach| match r {
            Reach::List => 0,
            Reach::Read => 1,
            Reach::Write => 2,
        };
        grants
            .iter()
            .filter(|(g, _)| Path::new(path).starts_with(g))
            .map(|(_, r)| *r)
            .max_by_key(rank)
    }

    fn a_host() -> BTreeMap<PathBuf, Vec<PathBuf>> {
        tree(&[
            ("/", &["dev", "etc", "home", "srv", "tmp"]),
            ("/dev", &["null", "urandom", "shm", "pts", "sda", "console", "kvm"]),
            ("/srv", &["kandev"]),
            ("/srv/kandev", &["data", "kandev.db"]),
            ("/srv/kandev/data", &["worktrees", "agent-homes"]),
            ("/tmp", &["x"]),
        ])
    }

    fn granted(t: &BTreeMap<PathBuf, Vec<PathBuf>>, own: &[&str], shared: &[&str]) -> Vec<(PathBuf, Reach)> {
        let hidden = [
            PathBuf::from("/srv/kandev/data"),
            PathBuf::from("/srv/kandev/kandev.db"),
        ];
        let own: Vec<PathBuf> = own.iter().map(PathBuf::from).collect();
        let shared: Vec<PathBuf> = shared.iter().map(PathBuf::from).collect();
        let mut listed = |p: &Path| t.get(p).cloned().unwrap_or_default();
        let worktree = Path::new("/srv/kandev/data/worktrees/run1");
        grants(worktree, &hidden, &own, &shared, &mut listed)
    }

    #[test]
    fn an_agent_opens_the_everyday_devices_and_no_disk_console_or_hardware() {
        let g = granted(&a_host(), &[], &["/tmp"]);
        for device in ["/dev/null", "/dev/urandom", "/dev/shm/sem.x", "/dev/pts/3"] {
            assert_eq!(reach_of(&g, device), Some(Reach::Write), "{device}");
        }
        for device in ["/dev/sda", "/dev/console", "/dev/kvm", "/dev/vda"] {
            assert_eq!(
                reach_of(&g, device),
                Some(Reach::List),
                "{device}: only listed, never opened"
            );
        }
    }

    #[test]
    fn an_agent_reads_the_host_writes_its_own_and_never_sees_the_hidden() {
        let home = "/srv/kandev/data/agent-homes/ws1/home";
        let g = granted(&a_host(), &[home], &["/tmp"]);
        assert_eq!(reach_of(&g, "/etc/passwd"), Some(Reach::Read));
        assert_eq!(reach_of(&g, "/tmp/x/f"), Some(Reach::Write));
        assert_eq!(reach_of(&g, "/srv/kandev/data/worktrees/run1/a.rs"), Some(Reach::Write));
        assert_eq!(
            reach_of(&g, "/srv/kandev/data/agent-homes/ws1/home/.gitconfig"),
            Some(Reach::Write)
        );
        assert_eq!(reach_of(&g, "/srv/kandev/data/worktrees/run2/a.rs"), Some(Reach::List));
        assert_eq!(reach_of(&g, "/srv/kandev/kandev.db"), Some(Reach::List));
    }

    #[test]
    fn a_hidden_path_in_shared_memory_stays_hidden() {
        let mut t = a_host();
        t.insert(
            PathBuf::from("/dev/shm"),
            vec![PathBuf::from("/dev/shm/kandev"), PathBuf::from("/dev/shm/sem.x")],
        );
        let hidden = [PathBuf::from("/dev/shm/kandev")];
        let mut listed = |p: &Path| t.get(p).cloned().unwrap_or_default();
        let g = grants(Path::new("/srv/w"), &hidden, &[], &[], &mut listed);
        assert_eq!(reach_of(&g, "/dev/shm/kandev/kandev.db"), Some(Reach::List));
        assert_eq!(reach_of(&g, "/dev/shm/sem.x"), Some(Reach::Write));
        assert_eq!(reach_of(&g, "/dev/null"), Some(Reach::Write));
    }

    #[test]
    fn without_shared_roots_the_temporary_directory_is_only_read() {
        let g = granted(&a_host(), &[], &[]);
        assert_eq!(reach_of(&g, "/tmp/x/f"), Some(Reach::Read));
    }
}
