//! What a confined agent may reach, and how starting it confined is judged:
//! which paths it may not see (the SQLite files, other workspaces'
//! checkouts), which TCP ports and home it gets, and whether a kernel that
//! enforces less may start it. Which hierarchies it reaches is `grants`.

pub mod grants;

pub use grants::{DEVICES, Reach, carve, grants};

use std::path::{Path, PathBuf};

/// The files an SQLite database URL keeps its data in (the database and its
/// journals); none for another database or an in-memory one.
pub fn sqlite_files(database_url: &str) -> Vec<PathBuf> {
    let Some(rest) = database_url
        .strip_prefix("sqlite://")
        .or_else(|| database_url.strip_prefix("sqlite:"))
    else {
        return Vec::new();
    };
    let file = rest.split('?').next().unwrap_or_default();
    if file.is_empty() || file == ":memory:" {
        return Vec::new();
    }
    ["", "-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| PathBuf::from(format!("{file}{suffix}")))
        .collect()
}

/// The checkouts of other workspaces to hide from a run's agent: each of
/// `others` (absolute paths) that does not hold a path in `keep` — its own
/// workspace's checkouts, and what every agent needs (`HOME`, the temporary
/// and data directories): a checkout at `~` (dotfiles) must not hide `~`.
pub fn foreign_checkouts(keep: &[PathBuf], others: &[PathBuf]) -> Vec<PathBuf> {
    let mut hidden: Vec<PathBuf> = others
        .iter()
        .filter(|other| !keep.iter().any(|k| k.starts_with(other)))
        .cloned()
        .collect();
    hidden.sort();
    hidden.dedup();
    hidden
}

/// How much of a confinement the kernel enforced (Landlock's own report).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforced {
    Fully,
    /// An older Landlock: some rights (or the signal scope) are not enforced.
    Partially,
    /// No Landlock at all: nothing is.
    Not,
}

/// What `kandev confine` does once the kernel said how much it enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Start the agent, confined.
    Start,
    /// Start it, saying what is not enforced (the runtime logs it as a warning).
    StartSaying(&'static str),
    /// Refuse to start it: confinement is required and this is why not.
    Refuse(&'static str),
}

pub const PARTIALLY_ENFORCED: &str = "this kernel's Landlock enforces part of the agent's confinement";
pub const NOT_ENFORCED: &str = "this kernel has no Landlock: the agent runs unconfined";
pub const REFUSED_PARTIALLY: &str =
    "this kernel's Landlock enforces only part of the agent's confinement, which is required: the agent does not start";
pub const REFUSED_NOT: &str = "this kernel has no Landlock and confinement is required: the agent does not start";
/// Said when the seccomp filter keeping agents from unix sockets could not
/// be installed: they then open any, and confinement is only partial.
pub const SOCKETS_OPEN: &str = "this kernel cannot keep the agent from unix sockets";
/// Said when the seccomp filter keeping agents from the kernel's key store
/// could not be installed: they then read their user's keys.
pub const KEYS_OPEN: &str = "this kernel cannot keep the agent from its user's kernel keys";
/// Said when the seccomp filter keeping agents from making user namespaces
/// could not be installed: in one they hold every capability again.
pub const NAMESPACES_OPEN: &str = "this kernel cannot keep the agent from making user namespaces";

/// Whether a confined process starts: always on a best effort, only when
/// everything is enforced where confinement is `required`.
pub fn verdict(required: bool, enforced: Enforced) -> Verdict {
    match (enforced, required) {
        (Enforced::Fully, _) => Verdict::Start,
        (Enforced::Partially, false) => Verdict::StartSaying(PARTIALLY_ENFORCED),
        (Enforced::Not, false) => Verdict::StartSaying(NOT_ENFORCED),
        (Enforced::Partially, true) => Verdict::Refuse(REFUSED_PARTIALLY),
        (Enforced::Not, true) => Verdict::Refuse(REFUSED_NOT),
    }
}

/// How far a server's agents are confined, from trying `kandev confine`
/// once (whether it ran, and what it said): `full`, `partial`, `none` (the
/// kernel has no Landlock) or `failed`. `/metrics` shows it.
pub fn posture(ran: bool, said: &str) -> &'static str {
    if !ran {
        "failed"
    } else if said.contains(NOT_ENFORCED) {
        "none"
    } else if [PARTIALLY_ENFORCED, SOCKETS_OPEN, KEYS_OPEN, NAMESPACES_OPEN]
        .iter()
        .any(|s| said.contains(s))
    {
        "partial"
    } else {
        "full"
    }
}

/// `KANDEV_AGENTS_HIDDEN`: more paths agents may not read, apart by `:` as
/// in `PATH`. Each must be absolute (agents start in their worktrees, where
/// a relative path would name something else) and not `/`, which would
/// hide the agent's own program.
pub fn hidden_paths(setting: &str) -> Result<Vec<PathBuf>, String> {
    path_list(setting)
        .map(|p| {
            let path = Path::new(p);
            if !path.is_absolute() {
                Err(format!("KANDEV_AGENTS_HIDDEN: {p:?} is not an absolute path"))
            } else if path.parent().is_none() {
                Err("KANDEV_AGENTS_HIDDEN: \"/\" would hide everything, the agent's own program too".into())
            } else {
                Ok(path.to_path_buf())
            }
        })
        .collect()
}

/// The items of a list of paths apart by `:` (as `PATH`), trimmed, none empty.
fn path_list(setting: &str) -> impl Iterator<Item = &str> {
    setting.split(':').map(str::trim).filter(|p| !p.is_empty())
}

/// Entries of a home that run as its user outside any confinement (a login
/// key, a shell's or the desktop's startup, user services, git's config): never
/// shared with agents, alone or inside a shared directory.
pub const NEVER_SHARED: [&str; 13] = [
    ".ssh",
    ".profile",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".gitconfig",
    ".config/git",
    ".config/systemd",
    ".config/autostart",
];

/// `KANDEV_AGENTS_HOME_SHARE`: entries of the server user's `HOME` (agents'
/// logins, such as `.claude`) that every workspace's own home links to, apart
/// by `:`. Each is a plain relative path that stays inside `HOME` and holds
/// nothing of [`NEVER_SHARED`]; there are none to link to unless each
/// workspace has a home of its own (`per_workspace`).
pub fn home_shares(setting: &str, per_workspace: bool) -> Result<Vec<PathBuf>, String> {
    use std::path::Component;
    if !per_workspace && path_list(setting).next().is_some() {
        return Err("KANDEV_AGENTS_HOME_SHARE names what each workspace's home links to: \
                    it needs KANDEV_AGENTS_HOME=workspace"
            .into());
    }
    path_list(setting)
        .map(|p| {
            let path = Path::new(p);
            if !path.components().all(|c| matches!(c, Component::Normal(_))) {
                return Err(format!(
                    "KANDEV_AGENTS_HOME_SHARE: {p:?} is not a path inside HOME (give it relative, e.g. .claude)"
                ));
            }
            let overlaps = |n: &&&str| Path::new(n).starts_with(path) || path.starts_with(n);
            match NEVER_SHARED.iter().find(overlaps) {
                Some(n) => Err(format!(
                    "KANDEV_AGENTS_HOME_SHARE: {p:?} would let agents write ~/{n}, which runs outside their confinement"
                )),
                None => Ok(path.to_path_buf()),
            }
        })
        .collect()
}

/// `KANDEV_AGENTS_TCP_PORTS`: `None` when agents may connect to any TCP port
/// (empty), else the only ports they may (`none`: no port but Kandev's own,
/// which the server adds for MCP). Sorted, each once.
pub fn tcp_ports(setting: &str) -> Result<Option<Vec<u16>>, String> {
    let setting = setting.trim();
    if setting.is_empty() {
        return Ok(None);
    }
    if setting.eq_ignore_ascii_case("none") {
        return Ok(Some(Vec::new()));
    }
    let mut ports = setting
        .split(',')
        .map(|p| match p.trim().parse::<u16>() {
            Ok(port) if port > 0 => Ok(port),
            _ => Err(format!(
                "KANDEV_AGENTS_TCP_PORTS: {:?} is not a TCP port (1-65535); give ports apart by commas, e.g. 443,22",
                p.trim()
            )),
        })
        .collect::<Result<Vec<u16>, String>>()?;
    ports.sort_unstable();
    ports.dedup();
    Ok(Some(ports))
}

/// The ports a confined process may connect to: the setting's and, when it
/// restricts them, `own` (the server's port: an agent's MCP tools are there).
pub fn connectable(setting: Option<&[u16]>, own: Option<u16>) -> Option<Vec<u16>> {
    let mut ports = setting?.to_vec();
    ports.extend(own);
    ports.sort_unstable();
    ports.dedup();
    Some(ports)
}

/// A workspace's agents' own `HOME` and temporary directory beneath
/// `homes`; `None` for an id that is not one plain name (it becomes a path).
pub fn workspace_home(homes: &Path, workspace_id: &str) -> Option<(PathBuf, PathBuf)> {
    let plain = !workspace_id.is_empty()
        && workspace_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then(|| {
        let root = homes.join(workspace_id);
        (root.join("home"), root.join("tmp"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sqlite_url_names_the_database_and_its_journals() {
        assert_eq!(
            sqlite_files("sqlite://./kandev.db?mode=rwc"),
            [
                "./kandev.db",
                "./kandev.db-wal",
                "./kandev.db-shm",
                "./kandev.db-journal"
            ]
            .map(PathBuf::from)
        );
        assert_eq!(sqlite_files("sqlite:/var/k.db")[0], PathBuf::from("/var/k.db"));
        assert!(sqlite_files("postgres://u@h/db").is_empty());
        assert!(sqlite_files("sqlite::memory:").is_empty());
        assert!(sqlite_files("sqlite://").is_empty());
    }

    #[test]
    fn another_workspace_s_checkouts_are_hidden_unless_they_hold_one_of_ours() {
        let own = ["/src/mono/api", "/src/web"].map(PathBuf::from);
        let others = [
            "/src/billing",
            "/src/mono",
            "/src/web",
            "/src/web/vendor",
            "/src/billing",
        ]
        .map(PathBuf::from);
        assert_eq!(
            foreign_checkouts(&own, &others),
            ["/src/billing", "/src/web/vendor"].map(PathBuf::from),
            "the one holding ours and ours itself stay readable; duplicates once"
        );
        assert!(foreign_checkouts(&own, &[]).is_empty());
        assert_eq!(
            foreign_checkouts(&[], &[PathBuf::from("/src/a")]),
            [PathBuf::from("/src/a")],
            "a run with no checkout of its own hides them all"
        );
    }

    #[test]
    fn a_checkout_holding_home_or_the_data_directory_stays_readable() {
        let keep = ["/src/api", "/home/dev", "/tmp", "/home/dev/.kandev"].map(PathBuf::from);
        let others = ["/home/dev", "/home/dev/src/billing", "/"].map(PathBuf::from);
        assert_eq!(
            foreign_checkouts(&keep, &others),
            [PathBuf::from("/home/dev/src/billing")]
        );
    }

    #[test]
    fn a_checkout_sharing_a_name_prefix_with_ours_is_still_hidden() {
        assert_eq!(
            foreign_checkouts(&[PathBuf::from("/src/api")], &[PathBuf::from("/src/ap")]),
            [PathBuf::from("/src/ap")]
        );
    }

    #[test]
    fn a_best_effort_starts_the_agent_however_little_is_enforced_and_says_so() {
        assert_eq!(verdict(false, Enforced::Fully), Verdict::Start);
        assert_eq!(
            verdict(false, Enforced::Partially),
            Verdict::StartSaying("this kernel's Landlock enforces part of the agent's confinement")
        );
        assert_eq!(
            verdict(false, Enforced::Not),
            Verdict::StartSaying("this kernel has no Landlock: the agent runs unconfined")
        );
    }

    #[test]
    fn required_confinement_starts_the_agent_only_when_fully_enforced() {
        assert_eq!(verdict(true, Enforced::Fully), Verdict::Start);
        assert_eq!(verdict(true, Enforced::Partially), Verdict::Refuse(REFUSED_PARTIALLY));
        assert_eq!(
            verdict(true, Enforced::Not),
            Verdict::Refuse("this kernel has no Landlock and confinement is required: the agent does not start")
        );
    }

    #[test]
    fn the_posture_is_what_trying_confine_showed() {
        assert_eq!(posture(true, ""), "full");
        assert_eq!(posture(true, PARTIALLY_ENFORCED), "partial");
        assert_eq!(
            posture(true, &format!("kandev confine: {SOCKETS_OPEN} (EINVAL)")),
            "partial"
        );
        assert_eq!(
            posture(true, &format!("kandev confine: {KEYS_OPEN} (EINVAL)")),
            "partial"
        );
        assert_eq!(
            posture(true, &format!("kandev confine: {NAMESPACES_OPEN} (EINVAL)")),
            "partial"
        );
        assert_eq!(posture(true, NOT_ENFORCED), "none");
        assert_eq!(posture(false, "could not confine the agent: x"), "failed");
    }

    #[test]
    fn hidden_paths_are_absolute_paths_apart_by_colons() {
        assert_eq!(hidden_paths(""), Ok(vec![]));
        assert_eq!(
            hidden_paths("/run/secrets: /etc/kandev ::"),
            Ok(vec![PathBuf::from("/run/secrets"), PathBuf::from("/etc/kandev")])
        );
    }

    #[test]
    fn hidden_paths_refuse_a_relative_path_and_the_root_naming_why() {
        assert_eq!(
            hidden_paths("/etc/kandev:secrets"),
            Err("KANDEV_AGENTS_HIDDEN: \"secrets\" is not an absolute path".into())
        );
        assert!(hidden_paths("/").unwrap_err().contains("would hide everything"));
        assert!(hidden_paths("/srv:/").is_err());
    }

    #[test]
    fn home_shares_are_relative_paths_inside_home() {
        assert_eq!(
            home_shares(".claude: .config/gh:", true),
            Ok(vec![PathBuf::from(".claude"), PathBuf::from(".config/gh")])
        );
        assert_eq!(home_shares(".config/gh", true), Ok(vec![PathBuf::from(".config/gh")]));
        for outside in ["/root/.claude", "../other", ".config/../../x", "./.claude"] {
            let err = home_shares(outside, true).unwrap_err();
            assert!(err.contains("is not a path inside HOME"), "{outside}: {err}");
        }
    }

    #[test]
    fn home_shares_need_a_home_per_workspace_to_link_into() {
        assert!(
            home_shares(".claude", false)
                .unwrap_err()
                .contains("it needs KANDEV_AGENTS_HOME=workspace")
        );
        assert_eq!(home_shares(" : ", false), Ok(vec![]));
    }

    #[test]
    fn home_shares_never_hold_what_runs_outside_confinement() {
        for risky in [".ssh", ".ssh/authorized_keys", ".bashrc", ".config", ".config/systemd"] {
            let err = home_shares(risky, true).unwrap_err();
            assert!(err.contains("which runs outside their confinement"), "{risky}: {err}");
        }
        assert_eq!(
            home_shares(".config", true),
            Err("KANDEV_AGENTS_HOME_SHARE: \".config\" would let agents write ~/.config/git, which runs outside their confinement".into())
        );
    }

    #[test]
    fn tcp_ports_empty_means_any_port_and_none_means_only_kandev_s() {
        assert_eq!(tcp_ports(""), Ok(None));
        assert_eq!(tcp_ports("  "), Ok(None));
        assert_eq!(tcp_ports("none"), Ok(Some(vec![])));
        assert_eq!(tcp_ports("443, 22,443,80"), Ok(Some(vec![22, 80, 443])));
    }

    #[test]
    fn tcp_ports_that_are_not_ports_are_refused_naming_the_bad_one() {
        for bad in ["0", "65536", "443,", "https", "22;443"] {
            let err = tcp_ports(bad).unwrap_err();
            assert!(err.starts_with("KANDEV_AGENTS_TCP_PORTS: "), "{err}");
        }
        assert!(tcp_ports("443,x").unwrap_err().contains("\"x\""));
    }

    #[test]
    fn kandev_s_own_port_is_added_only_to_a_restricted_list() {
        assert_eq!(connectable(None, Some(38080)), None);
        assert_eq!(connectable(Some(&[443]), Some(38080)), Some(vec![443, 38080]));
        assert_eq!(connectable(Some(&[]), Some(38080)), Some(vec![38080]));
        assert_eq!(connectable(Some(&[443]), Some(443)), Some(vec![443]));
        assert_eq!(connectable(Some(&[443]), None), Some(vec![443]));
    }

    #[test]
    fn a_workspace_home_is_one_directory_per_workspace_and_never_a_path_out() {
        let homes = Path::new("/data/agent-homes");
        assert_eq!(
            workspace_home(homes, "6f1c-ab_9"),
            Some((
                PathBuf::from("/data/agent-homes/6f1c-ab_9/home"),
                PathBuf::from("/data/agent-homes/6f1c-ab_9/tmp")
            ))
        );
        for hostile in ["", "..", "a/b", "../x", "a b", "é"] {
            assert_eq!(workspace_home(homes, hostile), None, "{hostile:?}");
        }
    }
}
