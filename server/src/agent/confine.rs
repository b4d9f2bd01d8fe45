//! What an agent, running as the server's OS user, cannot reach: the
//! server's environment (cleared for every process started for an agent or
//! in its working tree), its memory, and — through `kandev confine`, which
//! restricts itself with Landlock and then becomes the agent — the database
//! file and other runs' worktrees. Which hierarchies it reaches is
//! `kandev_core::confine`'s decision.

use std::path::{Path, PathBuf};

use super::group::Launch;
use crate::config::{AgentsConfinement, AgentsHome, Allowance, Settings};

/// What a process the server starts for an agent, or in a directory an agent
/// can write, inherits: `PATH`, `HOME`, `LANG` and `TERM`, never
/// `GITHUB_TOKEN`, `KANDEV_*` settings or database URLs.
pub const INHERITED_ENV: [&str; 4] = ["PATH", "HOME", "LANG", "TERM"];

/// The inherited variables this server has.
pub fn inherited_env() -> Vec<(&'static str, std::ffi::OsString)> {
    INHERITED_ENV
        .iter()
        .filter_map(|k| std::env::var_os(k).map(|v| (*k, v)))
        .collect()
}

/// Marks the server process not dumpable. Processes of the same user can
/// otherwise read `/proc/<server>/environ` (the admin and GitHub tokens, the
/// database URL) and its memory; a non-dumpable process's `/proc` files
/// belong to root, as `ssh-agent` does for its keys. It also means no core
/// dumps. Children are unaffected: `exec` makes them dumpable again.
#[cfg(target_os = "linux")]
pub fn keep_server_memory_private() -> std::io::Result<()> {
    use rustix::process::{DumpableBehavior, set_dumpable_behavior};
    set_dumpable_behavior(DumpableBehavior::NotDumpable).map_err(std::io::Error::from)
}

/// Elsewhere there is no `/proc` to read another process's environment from.
#[cfg(not(target_os = "linux"))]
pub fn keep_server_memory_private() -> std::io::Result<()> {
    Ok(())
}

/// What `kandev confine` is asked for: the sandbox one agent (or one git
/// command in its checkout) starts in.
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    pub worktree: PathBuf,
    pub hidden: Vec<PathBuf>,
    /// Other paths it may write, even in a hidden one (its checkout's `.git`).
    pub write: Vec<PathBuf>,
    /// `Some`: the only TCP ports it may connect to.
    pub tcp: Option<Vec<u16>>,
    /// `Some((home, tmp))`: its workspace's own `HOME` and temporary
    /// directory, the only ones it writes (`KANDEV_AGENTS_HOME=workspace`).
    pub home: Option<(PathBuf, PathBuf)>,
    /// Whether it may open unix sockets by path (`seccomp` refuses them otherwise).
    pub unix_sockets: bool,
    /// Whether it may make user namespaces (`seccomp` refuses them otherwise).
    pub user_namespaces: bool,
    /// Entries of the server user's home linked into its own, writable.
    pub shares: Vec<PathBuf>,
}

impl Sandbox {
    /// Its workspace's own `HOME` and temporary directory, if it has them.
    pub fn own_home_dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.home.iter().flat_map(|(home, tmp)| [home, tmp])
    }

    /// Each shared entry as its link in this sandbox's home and the entry
    /// itself in `real_home`; none without a home of its own.
    pub fn shared_entries(&self, real_home: &Path) -> Vec<(PathBuf, PathBuf)> {
        let Some((home, _)) = &self.home else { return Vec::new() };
        self.shares.iter().map(|s| (home.join(s), real_home.join(s))).collect()
    }
}

/// How agents are started confined: the `kandev` binary that confines them,
/// and what they must not reach (the data directory, the SQLite files).
#[derive(Debug, Clone)]
pub struct Confinement {
    pub bin: PathBuf,
    pub hidden: Vec<PathBuf>,
    /// Refuse to start what the kernel cannot fully confine (`--require`).
    pub required: bool,
    /// The only TCP ports it may connect to (`KANDEV_AGENTS_TCP_PORTS`, and
    /// the server's own); `None`: any.
    pub tcp_ports: Option<Vec<u16>>,
    /// Where workspaces' own homes live (`KANDEV_AGENTS_HOME=workspace`).
    pub homes: Option<PathBuf>,
    /// This workspace's `HOME` and temporary directory, beneath `homes`.
    pub home: Option<(PathBuf, PathBuf)>,
    /// Whether it may open unix sockets by path (`KANDEV_AGENTS_UNIX_SOCKETS`).
    pub unix_sockets: bool,
    /// Whether it may make user namespaces (`KANDEV_AGENTS_USER_NAMESPACES`).
    pub user_namespaces: bool,
    /// Entries of the server user's home each workspace's home links to
    /// (`KANDEV_AGENTS_HOME_SHARE`), relative to it.
    pub shares: Vec<PathBuf>,
    /// When the turn's lease stops vouching for it (`fence`): its keeper
    /// ends the agent then, unless told a later deadline.
    pub until: Option<u64>,
}

impl Confinement {
    /// For a server keeping its worktrees in `data_dir` and its data at
    /// `database_url`. Relative paths (the defaults are) are the server's,
    /// made absolute here: `kandev confine` runs in the agent's worktree.
    pub fn new(bin: PathBuf, data_dir: &Path, database_url: &str) -> Self {
        let mut hidden = vec![data_dir.to_path_buf()];
        hidden.extend(kandev_core::confine::sqlite_files(database_url));
        let hidden = hidden
            .into_iter()
            .map(|p| std::path::absolute(&p).unwrap_or(p))
            .collect();
        Self {
            bin,
            hidden,
            required: false,
            tcp_ports: None,
            homes: None,
            home: None,
            unix_sockets: false,
            user_namespaces: false,
            shares: Vec::new(),
            until: None,
        }
    }

    /// This confinement ending the agent at `until` (`fence::deadline_in`)
    /// unless the server says a later deadline; `None`: no deadline.
    pub fn until(&self, until: Option<u64>) -> Self {
        Self { until, ..self.clone() }
    }

    /// This confinement linking `shares` (entries of the server user's
    /// home) into each workspace's own home, writable.
    pub fn sharing(self, shares: Vec<PathBuf>) -> Self {
        Self { shares, ..self }
    }

    /// This confinement letting agents open unix sockets by path, or not.
    pub fn allowing_unix_sockets(self, unix_sockets: bool) -> Self {
        Self { unix_sockets, ..self }
    }

    /// This confinement letting agents make user namespaces, or not.
    pub fn allowing_user_namespaces(self, user_namespaces: bool) -> Self {
        Self {
            user_namespaces,
            ..self
        }
    }

    /// This confinement giving each workspace's agents a `HOME` and a
    /// temporary directory of their own beneath `homes` (in the data
    /// directory, so no other workspace's agent reaches them).
    pub fn with_homes(self, homes: Option<PathBuf>) -> Self {
        let homes = homes.map(|h| std::path::absolute(&h).unwrap_or(h));
        Self { homes, ..self }
    }

    /// This confinement for an agent of `workspace_id`: its own home where
    /// workspaces have them. `Err` for an id that names no single directory.
    pub fn for_workspace(self, workspace_id: &str) -> Result<Self, String> {
        let Some(homes) = &self.homes else { return Ok(self) };
        let home = kandev_core::confine::workspace_home(homes, workspace_id)
            .ok_or_else(|| format!("workspace id {workspace_id:?} cannot name a directory"))?;
        Ok(Self {
            home: Some(home),
            ..self
        })
    }

    /// This confinement letting TCP connections reach only `ports` (`None`: any).
    pub fn connecting(self, ports: Option<Vec<u16>>) -> Self {
        Self {
            tcp_ports: ports,
            ..self
        }
    }

    /// This confinement letting the server's own port be reached too, where
    /// ports are restricted (an agent's MCP tools are served there).
    pub fn with_server_port(self, port: Option<u16>) -> Self {
        let tcp_ports = kandev_core::confine::connectable(self.tcp_ports.as_deref(), port);
        Self { tcp_ports, ..self }
    }

    /// This confinement, refusing (`required`) or not to start what the
    /// kernel cannot fully confine.
    pub fn requiring(self, required: bool) -> Self {
        Self { required, ..self }
    }

    /// This confinement hiding `more` as well (relative paths are the server's).
    pub fn also_hiding(&self, more: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut hidden = self.hidden.clone();
        hidden.extend(more.into_iter().map(|p| std::path::absolute(&p).unwrap_or(p)));
        Self { hidden, ..self.clone() }
    }

    /// `kandev confine … -- program args`: `program` confined to `worktree`
    /// and the `write` paths besides (its checkout's `.git`). Agents start
    /// so, and so does the server's own git in a checkout agents can write,
    /// whose config and attributes (filters run on checkout) are theirs to plant.
    /// It is kept (`keeper`) until it exits, the server asks, or the server ends.
    pub fn confined<S: AsRef<std::ffi::OsStr>>(
        &self,
        worktree: &Path,
        write: &[&Path],
        program: &str,
        args: &[S],
    ) -> Launch {
        let mut cmd = tokio::process::Command::new(&self.bin);
        cmd.arg("confine").arg("--worktree").arg(worktree);
        // Its keeper ends the agent when this process does.
        cmd.arg("--server").arg(std::process::id().to_string());
        if let Some(until) = self.until {
            cmd.arg("--until").arg(until.to_string());
        }
        if self.required {
            cmd.arg("--require");
        }
        for h in &self.hidden {
            cmd.arg("--hide").arg(h);
        }
        for w in write {
            cmd.arg("--write").arg(w);
        }
        if let Some((home, tmp)) = &self.home {
            cmd.arg("--home").arg(home).arg("--tmp").arg(tmp);
            for share in &self.shares {
                cmd.arg("--share").arg(share);
            }
        }
        if self.unix_sockets {
            cmd.arg("--allow-unix-sockets");
        }
        if self.user_namespaces {
            cmd.arg("--allow-user-namespaces");
        }
        if let Some(ports) = &self.tcp_ports {
            cmd.arg("--restrict-tcp");
            for port in ports {
                cmd.arg("--connect-tcp").arg(port.to_string());
            }
        }
        cmd.arg("--").arg(program).args(args);
        Launch::kept(cmd)
    }
}

/// `program args` as the server starts it for an agent, or in a checkout
/// agents can write: through `confinement` when there is one (kept by
/// `kandev confine`, in a session of its own), else as it is, leading a
/// process group of its own (`group::ProcessGroup` ends either).
pub fn start<S: AsRef<std::ffi::OsStr>>(
    confinement: Option<&Confinement>,
    worktree: &Path,
    write: &[&Path],
    program: &str,
    args: &[S],
) -> Launch {
    match confinement {
        Some(c) => c.confined(worktree, write, program, args),
        None => {
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args);
            Launch::leading_a_group(cmd)
        }
    }
}

/// How the server's agents are confined: through this `kandev` binary (in
/// tests, the built one), on Linux, as `KANDEV_AGENTS_CONFINEMENT` says.
/// Tried once here, so a kernel that cannot confine them is known at start:
/// where confinement is required the server does not start (`Err`), else
/// it says so once as a warning (and each agent start again). Also says
/// how far they are confined (`core::confine::posture`, or `off`).
pub async fn for_settings(
    settings: &Settings,
    kandev_bin: Option<&Path>,
) -> Result<(Option<Confinement>, &'static str), String> {
    let mode = settings.confinement_mode();
    if settings.agents_unconfined && settings.agents_confinement == AgentsConfinement::Required {
        return Err("KANDEV_AGENTS_UNCONFINED contradicts KANDEV_AGENTS_CONFINEMENT=required".into());
    }
    let required = mode == AgentsConfinement::Required;
    let refuse = |why: &str| format!("agents cannot be confined, which KANDEV_AGENTS_CONFINEMENT=required asks: {why}");
    if mode == AgentsConfinement::Off {
        return Ok((None, "off"));
    }
    if !cfg!(target_os = "linux") {
        return if required {
            Err(refuse("Landlock is Linux's"))
        } else {
            Ok((None, "off"))
        };
    }
    let bin = kandev_bin
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_exe().ok());
    let Some(bin) = bin else {
        if required {
            return Err(refuse("this binary's own path is unknown"));
        }
        tracing::warn!("agents run unconfined: this binary's own path is unknown");
        return Ok((None, "off"));
    };
    let tcp_ports = kandev_core::confine::tcp_ports(&settings.agents_tcp_ports)?;
    let hidden = kandev_core::confine::hidden_paths(&settings.agents_hidden)?;
    let per_workspace = settings.agents_home == AgentsHome::Workspace;
    let shares = kandev_core::confine::home_shares(&settings.agents_home_share, per_workspace)?;
    let confinement = Confinement::new(bin, &settings.data_dir, &settings.database_url)
        .also_hiding(hidden)
        .requiring(required)
        .connecting(tcp_ports)
        .allowing_unix_sockets(settings.agents_unix_sockets == Allowance::Allow)
        .allowing_user_namespaces(settings.agents_user_namespaces == Allowance::Allow)
        .with_homes(per_workspace.then(|| settings.data_dir.join("agent-homes")))
        .sharing(shares);
    let probe = confinement
        .confined(&std::env::temp_dir(), &[], "true", &[] as &[&str])
        .command
        .env_clear()
        .envs(inherited_env())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("could not try `kandev confine`: {e}"))?;
    let said = String::from_utf8_lossy(&probe.stderr);
    let said = said
        .lines()
        .filter_map(|l| l.strip_prefix(CONFINE_SAYS))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("; ");
    match (probe.status.success(), required) {
        (true, _) if said.is_empty() => {}
        (true, _) => tracing::warn!("agents run confined only as far as this kernel can: {said}"),
        (false, true) => return Err(refuse(&said)),
        (false, false) => tracing::warn!("`kandev confine` failed on trying it ({}): {said}", probe.status),
    }
    if !per_workspace {
        tracing::warn!("{SHARED_HOME}");
    }
    // Under root an agent keeps no capability (`kandev confine`), but file
    // modes still let it read what only root may.
    #[cfg(target_os = "linux")]
    if rustix::process::geteuid().is_root() {
        tracing::warn!("{RUNS_AS_ROOT}");
    }
    Ok((
        Some(confinement),
        kandev_core::confine::posture(probe.status.success(), &said),
    ))
}

/// Logged at start while agents write the server user's own home.
pub const SHARED_HOME: &str = "agents write the server user's home (KANDEV_AGENTS_HOME=shared): one can plant \
     ~/.ssh/authorized_keys or a shell's startup file and so act as that user outside its confinement; \
     set KANDEV_AGENTS_HOME=workspace (and KANDEV_AGENTS_HOME_SHARE for agents' logins)";

/// Logged at start when the server (and so every agent) runs as root.
pub const RUNS_AS_ROOT: &str = "the server runs as root: confined agents hold no capability, but still read files \
     only root may read (outside Kandev's data) and write what root owns within their grants; \
     run Kandev as an ordinary user";

/// What `kandev confine` says on stderr starts so; the runtime logs it as a warning.
pub const CONFINE_SAYS: &str = "kandev confine:";

#[cfg(test)]
mod confinement_tests {
    use std::path::{Path, PathBuf};

    use super::Confinement;

    /// How a server with `edit` made to its settings confines its agents.
    async fn confining(edit: impl FnOnce(&mut crate::config::Settings)) -> Result<(), String> {
        let mut settings = crate::config::Settings::defaults();
        edit(&mut settings);
        super::for_settings(&settings, Some(Path::new("/bin/true")))
            .await
            .map(drop)
    }

    /// Why a server with `edit` made to its settings does not start.
    async fn refused(edit: impl FnOnce(&mut crate::config::Settings)) -> String {
        confining(edit).await.expect_err("a server that does not start")
    }

    /// A server with `edit` made to its settings, started (its start's logs are the test's).
    async fn started(edit: impl FnOnce(&mut crate::config::Settings)) {
        confining(edit).await.expect("confinement");
    }

    #[tokio::test]
    async fn a_tcp_ports_setting_that_names_no_port_stops_the_server_saying_why() {
        let err = refused(|s| s.agents_tcp_ports = "443,https".into()).await;
        assert!(
            err.contains("KANDEV_AGENTS_TCP_PORTS: \"https\" is not a TCP port"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_hidden_paths_setting_with_a_relative_path_stops_the_server_saying_why() {
        let err = refused(|s| s.agents_hidden = "/run/secrets:secrets".into()).await;
        assert_eq!(err, "KANDEV_AGENTS_HIDDEN: \"secrets\" is not an absolute path");
    }

    fn plain() -> Confinement {
        Confinement::new(PathBuf::from("/bin/kandev"), Path::new("/d"), "sqlite://x.db")
    }

    /// The arguments `kandev confine` gets for an agent under `c`.
    fn confine_args(c: &Confinement) -> Vec<String> {
        c.confined(Path::new("/w"), &[], "agent", &[] as &[&str])
            .command
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn unix_sockets_and_user_namespaces_reach_kandev_confine_allowed_only_when_the_settings_allow_them() {
        type Allow = fn(Confinement) -> Confinement;
        let allowances: [(&str, Allow); 2] = [
            ("--allow-unix-sockets", |c| c.allowing_unix_sockets(true)),
            ("--allow-user-namespaces", |c| c.allowing_user_namespaces(true)),
        ];
        for (flag, allow) in allowances {
            assert!(!confine_args(&plain()).contains(&flag.to_string()), "{flag}");
            let allowed = confine_args(&allow(plain()));
            assert_eq!(allowed.iter().filter(|a| *a == flag).count(), 1, "{flag}");
            assert!(allowed.iter().position(|a| a == flag) < allowed.iter().position(|a| a == "--"));
        }
    }

    #[test]
    fn a_workspace_s_own_home_reaches_kandev_confine_only_where_homes_are_per_workspace() {
        let shared = plain().for_workspace("ws1").unwrap();
        assert!(shared.home.is_none(), "shared by default");
        let own = plain().with_homes(Some(PathBuf::from("/d/agent-homes")));
        let args = confine_args(&own.clone().for_workspace("ws1").unwrap());
        let at = args.iter().position(|a| a == "--home").expect("a home");
        assert_eq!(
            args[at..at + 4],
            ["--home", "/d/agent-homes/ws1/home", "--tmp", "/d/agent-homes/ws1/tmp"]
        );
        assert!(
            own.for_workspace("../ws2").is_err(),
            "an id that is a path names no home"
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    #[tracing_test::traced_test]
    async fn a_server_running_as_root_says_what_its_agents_can_still_read() {
        started(|_| {}).await;
        // Said exactly when this test runs as root (CI does).
        let root = rustix::process::geteuid().is_root();
        assert_eq!(logs_contain("the server runs as root"), root);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    #[tracing_test::traced_test]
    async fn a_server_whose_agents_write_its_home_says_what_they_could_plant() {
        started(|_| {}).await;
        assert!(logs_contain(super::SHARED_HOME), "shared is the default");
        assert!(super::SHARED_HOME.contains("~/.ssh/authorized_keys"));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    #[tracing_test::traced_test]
    async fn a_server_giving_each_workspace_a_home_does_not_warn_of_the_shared_one() {
        started(|s| s.agents_home = crate::config::AgentsHome::Workspace).await;
        assert!(!logs_contain("agents write the server user's home"));
    }

    #[tokio::test]
    async fn shared_home_entries_without_a_home_per_workspace_stop_the_server_saying_why() {
        let err = refused(|s| s.agents_home_share = ".claude".into()).await;
        assert!(err.contains("it needs KANDEV_AGENTS_HOME=workspace"), "{err}");
        let err = refused(|s| {
            s.agents_home = crate::config::AgentsHome::Workspace;
            s.agents_home_share = "/root/.claude".into();
        })
        .await;
        assert!(err.contains("\"/root/.claude\" is not a path inside HOME"), "{err}");
    }

    #[test]
    fn shared_home_entries_reach_kandev_confine_only_with_a_workspace_home() {
        let shares = vec![PathBuf::from(".claude"), PathBuf::from(".config/gh")];
        let without = confine_args(&plain().sharing(shares.clone()));
        assert!(!without.contains(&"--share".to_string()), "{without:?}");
        let with = plain()
            .with_homes(Some(PathBuf::from("/d/agent-homes")))
            .sharing(shares)
            .for_workspace("ws1")
            .unwrap();
        let args = confine_args(&with).join(" ");
        assert!(args.contains("--share .claude --share .config/gh --"), "{args}");
    }

    #[test]
    fn restricted_ports_reach_kandev_confine_with_the_server_s_own() {
        let args = confine_args(&plain().connecting(Some(vec![443])).with_server_port(Some(38080)));
        let tail = &args[args.iter().position(|a| a == "--restrict-tcp").expect("restricted")..];
        assert_eq!(
            tail[..5],
            ["--restrict-tcp", "--connect-tcp", "443", "--connect-tcp", "38080"]
        );
        let open = confine_args(&plain().with_server_port(Some(38080)));
        assert!(!open.iter().any(|a| a == "--restrict-tcp"), "any port by default");
    }

    #[test]
    fn the_default_relative_paths_are_hidden_as_the_server_sees_them() {
        let c = Confinement::new(
            PathBuf::from("/bin/kandev"),
            Path::new(".kandev"),
            "sqlite://./kandev.db",
        );
        let here = std::env::current_dir().expect("cwd");
        assert_eq!(c.hidden[0], here.join(".kandev"));
        assert_eq!(c.hidden[1], here.join("kandev.db"));
        assert!(c.hidden.iter().all(|p| p.is_absolute()), "{:?}", c.hidden);
        assert_eq!(
            c.hidden.len(),
            5,
            "the data directory, the database and its three journals"
        );
    }

    #[tokio::test]
    async fn off_starts_agents_as_they_are_and_the_old_switch_says_off_too() {
        use crate::config::{AgentsConfinement, Settings};
        let mut s = Settings::defaults();
        s.agents_confinement = AgentsConfinement::Off;
        assert!(matches!(super::for_settings(&s, None).await, Ok((None, "off"))));
        let mut s = Settings::defaults();
        s.agents_unconfined = true;
        assert_eq!(s.confinement_mode(), AgentsConfinement::Off);
        assert!(matches!(super::for_settings(&s, None).await, Ok((None, "off"))));
    }

    #[tokio::test]
    async fn the_old_switch_contradicting_required_confinement_stops_the_start() {
        use crate::config::{AgentsConfinement, Settings};
        let mut s = Settings::defaults();
        s.agents_unconfined = true;
        s.agents_confinement = AgentsConfinement::Required;
        assert_eq!(
            super::for_settings(&s, None).await.err().as_deref(),
            Some("KANDEV_AGENTS_UNCONFINED contradicts KANDEV_AGENTS_CONFINEMENT=required")
        );
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::process::Command;

    use rustix::process::{DumpableBehavior, Gid, Uid, set_dumpable_behavior};
    use rustix::thread::{gettid, set_thread_groups, set_thread_res_gid, set_thread_res_uid};

    /// Reads this thread's environment through `/proc` from a child process,
    /// which runs under the thread's user as an agent runs under the server's.
    fn a_child_reads_our_environment() -> bool {
        let path = format!(
            "/proc/{}/task/{}/environ",
            std::process::id(),
            gettid().as_raw_nonzero()
        );
        Command::new("cat")
            .arg(path)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    #[test]
    fn a_process_of_the_server_s_user_cannot_read_its_environment() {
        // As root every read is allowed: this thread, and the children it
        // starts, become `nobody` (a test process of its own under nextest).
        if rustix::process::getuid().is_root() {
            let nobody = (Uid::from_raw(65534), Gid::from_raw(65534));
            set_thread_groups(&[]).expect("drop groups");
            set_thread_res_gid(nobody.1, nobody.1, nobody.1).expect("become nogroup");
            set_thread_res_uid(nobody.0, nobody.0, nobody.0).expect("become nobody");
            // Changing users made the process non-dumpable: undo it for the baseline.
            set_dumpable_behavior(DumpableBehavior::Dumpable).expect("dumpable again");
        }
        assert!(a_child_reads_our_environment(), "the baseline: a same-user read works");
        super::keep_server_memory_private().expect("prctl");
        assert!(!a_child_reads_our_environment(), "the server's environment is readable");
    }
}
