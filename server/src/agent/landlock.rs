//! `kandev confine`: restricts this process with Landlock, then starts the
//! agent and keeps it (`keeper`), so the agent and everything it starts stay
//! confined, and end with it. It
//! reads everything but the hidden paths, and writes only its worktree, any
//! `--write` path (its checkout's `.git`), the temporary directory, `HOME`
//! and the everyday devices; it holds no capability (root's included) and
//! reaches no kernel key; it may
//! not signal processes outside its sandbox (the server, other agents), nor
//! connect to their abstract unix sockets (a container runtime's shim, a
//! desktop's X server or bus listen on those), nor — when the server names
//! the TCP ports it may use — connect to any other TCP port (loopback
//! services such as PostgreSQL and NATS among them).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use kandev_core::confine::{Enforced, KEYS_OPEN, NAMESPACES_OPEN, Reach, SOCKETS_OPEN, Verdict, verdict};
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope,
};

use super::confine::{CONFINE_SAYS, Sandbox};

/// The newest Landlock ABI these grants were written and tested for.
const ABI_WRITTEN_FOR: ABI = ABI::V6;

/// A path made absolute and canonical; a missing file keeps its canonical
/// parent (a journal the server creates later is still hidden).
fn canonical(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let parent = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Some(parent.canonicalize().ok()?.join(p.file_name()?))
}

/// A directory's entries that are not symbolic links (a link is reached
/// through its target, whose own grants decide).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| e.path())
        .collect()
}

/// Every grant for an agent working in `worktree`, with `hidden` out of reach
/// (`kandev_core::confine::grants` decides; this gathers what it needs).
fn grants(worktree: &Path, hidden: &[PathBuf], sandbox: &Sandbox, shares: &[Share]) -> Vec<(PathBuf, Reach)> {
    let own: Vec<PathBuf> = sandbox
        .write
        .iter()
        .chain(sandbox.own_home_dirs())
        .chain(shares.iter().map(|s| &s.entry))
        .filter_map(|w| canonical(w))
        .collect();
    // A workspace with a home of its own writes no shared one.
    let shared: Vec<PathBuf> = match sandbox.home {
        Some(_) => Vec::new(),
        None => [Some(std::env::temp_dir()), real_home()]
            .into_iter()
            .flatten()
            .filter_map(|r| canonical(&r))
            .collect(),
    };
    kandev_core::confine::grants(worktree, hidden, &own, &shared, &mut entries)
}

/// The server user's home: `kandev confine` starts with the server's `HOME`.
fn real_home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// An entry of the server user's home shared into a workspace's own.
struct Share {
    /// Where it is linked, in the workspace's home.
    link: PathBuf,
    /// The entry itself, canonical.
    entry: PathBuf,
}

/// The shared entries that are what they are named: an entry reached
/// through a symbolic link (planted while homes were shared, say) could
/// name anything, even `/`, and is not shared.
fn vetted_shares(sandbox: &Sandbox) -> Vec<Share> {
    let Some(home) = real_home().and_then(|h| h.canonicalize().ok()) else {
        return Vec::new();
    };
    sandbox
        .shared_entries(&home)
        .into_iter()
        .filter_map(|(link, named)| match named.canonicalize() {
            Ok(entry) if entry == named => Some(Share { link, entry }),
            Ok(_) => {
                eprintln!(
                    "{CONFINE_SAYS} {} leads elsewhere through a link: not shared",
                    named.display()
                );
                None
            }
            // One not there yet has nothing to share.
            Err(_) => None,
        })
        .collect()
}

/// Links each shared entry into the workspace's own home. Run confined: a
/// link the agents planted on the way cannot lead this outside their home
/// (that entry is then not shared, and it is said). A link naming another
/// entry (the home moved) is made again; anything else there is the agents'
/// own and stays. Two agents of one workspace starting at once may both
/// link: either link serves.
fn link_shares(shares: &[Share]) {
    for Share { link, entry } in shares {
        if let Err(e) = link_share(link, entry) {
            eprintln!("{CONFINE_SAYS} could not link {} ({e}): not shared", link.display());
        }
    }
}

fn link_share(link: &Path, entry: &Path) -> std::io::Result<()> {
    use std::io::ErrorKind::{AlreadyExists, NotFound};
    match std::fs::symlink_metadata(link) {
        Ok(m) if m.file_type().is_symlink() => {
            if std::fs::read_link(link).is_ok_and(|to| to == entry) {
                return Ok(());
            }
            match std::fs::remove_file(link) {
                Err(e) if e.kind() != NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(_) => return Ok(()),
        Err(_) => {}
    }
    if let Some(parent) = link.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::os::unix::fs::symlink(entry, link) {
        Err(e) if e.kind() != AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// The rights `reach` grants on `path`: a file takes only file rights (a
/// directory's would be refused, and the ruleset reported partial).
fn access(path: &Path, reach: Reach) -> BitFlags<AccessFs> {
    let rights = match reach {
        Reach::List => AccessFs::ReadDir.into(),
        Reach::Read => AccessFs::from_read(ABI_WRITTEN_FOR),
        Reach::Write => AccessFs::from_all(ABI_WRITTEN_FOR),
    };
    if path.is_dir() {
        rights
    } else {
        rights & AccessFs::from_file(ABI_WRITTEN_FOR)
    }
}

fn restrict(worktree: &Path, hidden: &[PathBuf], sandbox: &Sandbox, shares: &[Share]) -> Result<RulesetStatus, String> {
    let tcp = sandbox.tcp.as_deref();
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI_WRITTEN_FOR))
        .and_then(|r| r.scope(Scope::Signal | Scope::AbstractUnixSocket))
        .map_err(|e| e.to_string())?;
    if tcp.is_some() {
        // Handled, every connect is refused but to the ports granted below.
        ruleset = ruleset
            .handle_access(AccessNet::ConnectTcp)
            .map_err(|e| e.to_string())?;
    }
    let mut ruleset = ruleset.create().map_err(|e| e.to_string())?;
    for port in tcp.unwrap_or_default() {
        ruleset = ruleset
            .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
            .map_err(|e| format!("TCP port {port}: {e}"))?;
    }
    for (path, reach) in grants(worktree, hidden, sandbox, shares) {
        // A path gone since it was listed has nothing to grant.
        let Ok(fd) = PathFd::new(&path) else { continue };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access(&path, reach)))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let status = ruleset.restrict_self().map_err(|e| e.to_string())?;
    Ok(status.ruleset)
}

/// Confines this process to `worktree`, then runs `program` and keeps it
/// (unless confinement is `required` and the kernel enforces less), until
/// it exits, the server asks, `server` ends, or the deadline (`until`, or
/// a later one the server sends) passes; exits then. Returns only if
/// it did not start `program`: the error says why.
pub fn confine_and_keep(
    required: bool,
    sandbox: &Sandbox,
    server: Option<rustix::process::Pid>,
    until: Option<u64>,
    program: &OsString,
    args: &[OsString],
) -> String {
    let Some(worktree) = canonical(&sandbox.worktree) else {
        return format!("no worktree {}", sandbox.worktree.display());
    };
    // A workspace's own home is made on its first agent, private to this user.
    for dir in sandbox.own_home_dirs() {
        use std::os::unix::fs::DirBuilderExt;
        if let Err(e) = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
            return format!("could not make {}: {e}", dir.display());
        }
    }
    // A path not there to resolve stays hidden as the server named it.
    let hidden: Vec<PathBuf> = sandbox
        .hidden
        .iter()
        .map(|h| canonical(h).unwrap_or_else(|| h.clone()))
        .collect();
    // A session of its own: no controlling terminal to type into (TIOCSTI)
    // when the server runs in one, and a process group the server kills
    // should this keeper not end its agent in time.
    if let Err(e) = rustix::process::setsid() {
        eprintln!("{CONFINE_SAYS} could not start a session of its own ({e}): the agent keeps the server's terminal");
    }
    let shares = vetted_shares(sandbox);
    let enforced = match restrict(&worktree, &hidden, sandbox, &shares) {
        Ok(RulesetStatus::FullyEnforced) => Enforced::Fully,
        Ok(RulesetStatus::PartiallyEnforced) => Enforced::Partially,
        Ok(RulesetStatus::NotEnforced) => Enforced::Not,
        Err(e) => return format!("could not confine the agent: {e}"),
    };
    match verdict(required, enforced) {
        Verdict::Start => {}
        Verdict::StartSaying(said) => eprintln!("{CONFINE_SAYS} {said}"),
        Verdict::Refuse(why) => return why.to_string(),
    }
    link_shares(&shares);
    if let Err(e) = super::capabilities::drop_all() {
        return format!("could not drop the agent's capabilities: {e}");
    }
    if !sandbox.unix_sockets
        && let Err(e) = super::seccomp::deny_unix_sockets()
    {
        if required {
            return format!("{SOCKETS_OPEN} ({e}) and confinement is required: the agent does not start");
        }
        eprintln!("{CONFINE_SAYS} {SOCKETS_OPEN} ({e}): it may open any");
    }
    if let Err(e) = super::seccomp::deny_kernel_keys() {
        if required {
            return format!("{KEYS_OPEN} ({e}) and confinement is required: the agent does not start");
        }
        eprintln!("{CONFINE_SAYS} {KEYS_OPEN} ({e})");
    }
    if !sandbox.user_namespaces
        && let Err(e) = super::seccomp::deny_user_namespaces()
    {
        if required {
            return format!("{NAMESPACES_OPEN} ({e}) and confinement is required: the agent does not start");
        }
        eprintln!("{CONFINE_SAYS} {NAMESPACES_OPEN} ({e})");
    }
    let mut command = std::process::Command::new(program);
    command.args(args).current_dir(&worktree);
    if let Some((home, tmp)) = &sandbox.home {
        command.env("HOME", home).env("TMPDIR", tmp);
    }
    super::keeper::keep(command, server, until)
}
