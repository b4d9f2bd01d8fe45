//! `kandev serve` settings, from flags or environment variables (API.md).

use std::path::PathBuf;
use std::time::Duration;

use kandev_core::duration::parse_duration;

fn duration(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

#[derive(clap::Args, Debug, Clone)]
pub struct Settings {
    /// Address and port to listen on.
    #[arg(long, env = "KANDEV_LISTEN", default_value = "127.0.0.1:38080")]
    pub listen: String,
    /// `sqlite://PATH` or `postgres://…`.
    #[arg(long, env = "KANDEV_DATABASE_URL", default_value = "sqlite://./kandev.db")]
    pub database_url: String,
    /// NATS server; empty selects the in-process bus.
    #[arg(long, env = "KANDEV_NATS_URL", default_value = "")]
    pub nats_url: String,
    /// The JetStream stream (and subject prefix) this installation uses on
    /// NATS: every replica of one installation must name the same.
    #[arg(long, env = "KANDEV_NATS_STREAM", default_value = "kandev")]
    pub nats_stream: String,
    /// This replica's name in leases; default: the host name and listen address.
    #[arg(long, env = "KANDEV_REPLICA_ID")]
    pub replica_id: Option<String>,
    /// GitHub REST base URL (GitHub Enterprise, or a simulator).
    #[arg(long, env = "KANDEV_GITHUB_API_URL", default_value = "https://api.github.com")]
    pub github_api_url: String,
    /// Token for GitHub calls; without it GitHub features stay idle.
    #[arg(long, env = "GITHUB_TOKEN", hide_env_values = true)]
    pub github_token: Option<String>,
    /// Longest Kandev waits for one GitHub answer before treating it as a timeout.
    #[arg(long, env = "KANDEV_GITHUB_TIMEOUT", default_value = "20s", value_parser = duration)]
    pub github_timeout: Duration,
    /// Secret that signs GitHub webhook deliveries; without it deliveries are refused.
    #[arg(long, env = "KANDEV_GITHUB_WEBHOOK_SECRET", hide_env_values = true)]
    pub github_webhook_secret: Option<String>,
    /// PR poller period.
    #[arg(long, env = "KANDEV_PR_POLL_INTERVAL", default_value = "60s", value_parser = duration)]
    pub pr_poll_interval: Duration,
    /// How long merged or closed PRs stay watched, so post-merge changes republish.
    #[arg(long, env = "KANDEV_PR_SETTLE_PERIOD", default_value = "6h", value_parser = duration)]
    pub pr_settle_period: Duration,
    /// Cron check period.
    #[arg(long, env = "KANDEV_SCHEDULER_INTERVAL", default_value = "30s", value_parser = duration)]
    pub scheduler_interval: Duration,
    /// How often the merger re-reads checks while waiting.
    #[arg(long, env = "KANDEV_MERGER_POLL_INTERVAL", default_value = "30s", value_parser = duration)]
    pub merger_poll_interval: Duration,
    /// Default wait for pending checks before the merger blocks the task.
    #[arg(long, env = "KANDEV_MERGER_CI_TIMEOUT", default_value = "10m", value_parser = duration)]
    pub merger_ci_timeout: Duration,
    /// Agent for run tasks: a profile id or name, or a command line. Default: the built-in mock agent.
    #[arg(long, env = "KANDEV_DEFAULT_AGENT")]
    pub default_agent: Option<String>,
    /// Longest an agent turn may take before the run fails.
    #[arg(long, env = "KANDEV_AGENT_TURN_TIMEOUT", default_value = "30m", value_parser = duration)]
    pub agent_turn_timeout: Duration,
    /// Where worktrees and scratch directories for agent sessions live.
    #[arg(long, env = "KANDEV_DATA_DIR", default_value = ".kandev")]
    pub data_dir: PathBuf,
    /// Serve the web app from this directory (development: a fresh
    /// `cargo xtask web` without rebuilding the server). Default: the app
    /// built into the binary.
    #[arg(long, env = "KANDEV_WEB_DIR")]
    pub web_dir: Option<PathBuf>,
    /// A bearer token that acts as an instance admin (scripts, CI, tests).
    #[arg(long, env = "KANDEV_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,
    /// The server's public origin (e.g. `https://kandev.example.com`): requests
    /// must name it or a loopback host, and cookies are `Secure` under https.
    #[arg(long, env = "KANDEV_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// API requests served at once; past it callers get a fast 503.
    #[arg(long, env = "KANDEV_MAX_IN_FLIGHT", default_value = "512")]
    pub max_in_flight: usize,
    /// Longest one API request may run before it is answered 503.
    #[arg(long, env = "KANDEV_REQUEST_TIMEOUT", default_value = "60s", value_parser = duration)]
    pub request_timeout: Duration,
    /// `text` or `json`.
    #[arg(long, env = "KANDEV_LOG_FORMAT", default_value = "text")]
    pub log_format: String,
    /// Start an in-process GitHub simulator and seed a demo workspace.
    #[arg(long)]
    pub demo: bool,
    /// How agents are confined (`kandev confine`, Landlock): `best-effort`
    /// confines them as far as the kernel can and warns of the rest,
    /// `required` refuses to start the server (or an agent) where the kernel
    /// cannot confine them fully, `off` starts them as they are — reaching
    /// all the server's OS user can, its database included.
    #[arg(long, env = "KANDEV_AGENTS_CONFINEMENT", value_enum, default_value = "best-effort")]
    pub agents_confinement: AgentsConfinement,
    /// Kept for older configurations: the same as `KANDEV_AGENTS_CONFINEMENT=off`.
    #[arg(long, env = "KANDEV_AGENTS_UNCONFINED", hide = true)]
    pub agents_unconfined: bool,
    /// The only TCP ports confined agents (and the git Kandev runs where
    /// they can write) may connect to, e.g. `443,22`; Kandev's own port is
    /// always added, for their MCP tools. Empty: any port. `none`: only Kandev's.
    /// Keeps them from loopback services such as PostgreSQL and NATS.
    #[arg(long, env = "KANDEV_AGENTS_TCP_PORTS", default_value = "")]
    pub agents_tcp_ports: String,
    /// More paths confined agents (and the git Kandev runs where they can
    /// write) may not read, apart by `:`, e.g. `/run/secrets:/etc/kandev`:
    /// secrets on the host that the server's OS user can read.
    #[arg(long, env = "KANDEV_AGENTS_HIDDEN", default_value = "")]
    pub agents_hidden: String,
    /// Where confined agents keep `HOME` and temporary files: `shared`, the
    /// server user's (every workspace's agents may write them, so one could
    /// plant a `~/.gitconfig` another runs), or `workspace`, a home and a
    /// temporary directory per workspace in the data directory (agents then
    /// log in through their profile's `env`, not the server user's home).
    #[arg(long, env = "KANDEV_AGENTS_HOME", value_enum, default_value = "shared")]
    pub agents_home: AgentsHome,
    /// Under `KANDEV_AGENTS_HOME=workspace`: entries of the server user's
    /// home that every workspace's home links to and its agents may write,
    /// apart by `:` (their logins, e.g. `.claude:.claude.json:.codex`). Each
    /// must exist; every workspace's agents share what is in them.
    #[arg(long, env = "KANDEV_AGENTS_HOME_SHARE", default_value = "")]
    pub agents_home_share: String,
    /// Whether confined agents may open unix sockets by path: `deny` (a
    /// socket file is a way past every grant: the user's systemd manager, a
    /// container runtime, PostgreSQL's peer authentication) or `allow` (for
    /// agents that need one, such as `gpg-agent` to sign commits).
    #[arg(long, env = "KANDEV_AGENTS_UNIX_SOCKETS", value_enum, default_value = "deny")]
    pub agents_unix_sockets: Allowance,
    /// Whether confined agents may make user namespaces: `deny` (in one an
    /// agent holds every capability again, over the kernel's namespaced
    /// surfaces where most local privilege escalations were found) or
    /// `allow` (for agents that run Chromium with its sandbox, or bubblewrap).
    #[arg(long, env = "KANDEV_AGENTS_USER_NAMESPACES", value_enum, default_value = "deny")]
    pub agents_user_namespaces: Allowance,
    /// Let notifications reach loopback, private and link-local addresses.
    /// Off by default: workspace owners choose the targets, and must not
    /// reach the server's host, its network or a cloud metadata service.
    #[arg(long, env = "KANDEV_NOTIFY_PRIVATE_ADDRESSES")]
    pub notify_private_addresses: bool,
}

/// `KANDEV_AGENTS_UNIX_SOCKETS`, `KANDEV_AGENTS_USER_NAMESPACES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Allowance {
    Deny,
    Allow,
}

/// `KANDEV_AGENTS_HOME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentsHome {
    Shared,
    Workspace,
}

/// `KANDEV_AGENTS_CONFINEMENT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentsConfinement {
    Required,
    BestEffort,
    Off,
}

impl Settings {
    /// How agents are confined, the older switch honoured.
    pub fn confinement_mode(&self) -> AgentsConfinement {
        if self.agents_unconfined {
            AgentsConfinement::Off
        } else {
            self.agents_confinement
        }
    }

    /// Defaults for embedding (tests): every value as if no flag or variable were set.
    pub fn defaults() -> Settings {
        Settings {
            listen: "127.0.0.1:38080".into(),
            database_url: "sqlite://./kandev.db".into(),
            nats_url: String::new(),
            nats_stream: "kandev".into(),
            replica_id: None,
            github_api_url: "https://api.github.com".into(),
            github_token: None,
            github_timeout: Duration::from_secs(20),
            github_webhook_secret: None,
            pr_poll_interval: Duration::from_secs(60),
            pr_settle_period: Duration::from_secs(6 * 3600),
            scheduler_interval: Duration::from_secs(30),
            merger_poll_interval: Duration::from_secs(30),
            merger_ci_timeout: Duration::from_secs(600),
            default_agent: None,
            agent_turn_timeout: Duration::from_secs(1800),
            data_dir: PathBuf::from(".kandev"),
            web_dir: None,
            admin_token: None,
            public_url: None,
            max_in_flight: 512,
            request_timeout: Duration::from_secs(60),
            log_format: "text".into(),
            demo: false,
            notify_private_addresses: false,
            agents_confinement: AgentsConfinement::BestEffort,
            agents_unconfined: false,
            agents_tcp_ports: String::new(),
            agents_hidden: String::new(),
            agents_home: AgentsHome::Shared,
            agents_home_share: String::new(),
            agents_unix_sockets: Allowance::Deny,
            agents_user_namespaces: Allowance::Deny,
        }
    }
}
