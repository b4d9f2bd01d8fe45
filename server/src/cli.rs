//! The `kandev` command line.

use clap::{Parser, Subcommand};

use crate::app::{Application, BuildOptions};
use crate::config::Settings;

#[derive(Parser)]
#[command(name = "kandev", version, about = "Kandev: a task board for AI coding agents")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the server (API, engine, GitHub poller, web app).
    Serve(Box<Settings>),
    /// An ACP agent on stdio that runs `e2e:` scripts (tests and demos).
    MockAgent {
        /// Do not offer `session/load` (replies then replay the transcript).
        #[arg(long)]
        no_load_session: bool,
    },
    /// Runs an agent confined to its worktree (Landlock): the runtime starts
    /// agents through it.
    #[command(hide = true)]
    Confine {
        /// The agent's working tree, which it may write.
        #[arg(long)]
        worktree: std::path::PathBuf,
        /// A path the agent may not reach (repeatable).
        #[arg(long)]
        hide: Vec<std::path::PathBuf>,
        /// Another path it may write, even in a hidden one (repeatable).
        #[arg(long)]
        write: Vec<std::path::PathBuf>,
        /// Refuse to start the agent unless the kernel enforces all of it.
        #[arg(long)]
        require: bool,
        /// Let the agent connect only to the TCP ports `--connect-tcp` names.
        #[arg(long)]
        restrict_tcp: bool,
        /// A TCP port it may connect to under `--restrict-tcp` (repeatable).
        #[arg(long)]
        connect_tcp: Vec<u16>,
        /// Its own `HOME` (with `--tmp`), instead of the server user's.
        #[arg(long, requires = "tmp")]
        home: Option<std::path::PathBuf>,
        /// Its own temporary directory (`TMPDIR`), with `--home`.
        #[arg(long, requires = "home")]
        tmp: Option<std::path::PathBuf>,
        /// An entry of the server user's home (relative to it) its own home
        /// links to and it may write (repeatable; with `--home`).
        #[arg(long, requires = "home")]
        share: Vec<std::path::PathBuf>,
        /// Let it open unix sockets by path (refused otherwise).
        #[arg(long)]
        allow_unix_sockets: bool,
        /// Let it make user namespaces (refused otherwise).
        #[arg(long)]
        allow_user_namespaces: bool,
        /// The server that started it (its parent): when that process
        /// ends, the agent and all it started are ended.
        #[arg(long)]
        server: Option<i32>,
        /// When the turn's lease stops vouching for it, on the monotonic
        /// clock (milliseconds): the agent ends then unless the server
        /// sends a later deadline.
        #[arg(long)]
        until: Option<u64>,
        /// The agent's command and its arguments.
        #[arg(last = true, required = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// A GitHub simulator on loopback (REST API plus a `/_sim` control interface).
    GithubSim {
        /// Address and port to listen on.
        #[arg(long, default_value = "127.0.0.1:38081")]
        listen: String,
    },
    /// Users, against the configured database.
    #[command(subcommand)]
    User(UserCommand),
    /// API tokens, against the configured database.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Adds a user and prints its password (generated unless given on stdin).
    Add {
        /// The username (letters, digits, `.`, `_`, `-`).
        name: String,
        /// Make the user an instance admin.
        #[arg(long)]
        admin: bool,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        db: Database,
    },
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Creates an API token for a user and prints it (shown only once).
    Create {
        /// Whose token.
        #[arg(long)]
        user: String,
        /// What the token is for.
        #[arg(long, default_value = "cli")]
        name: String,
        #[command(flatten)]
        db: Database,
    },
}

#[derive(clap::Args)]
pub struct Database {
    /// `sqlite://PATH` or `postgres://…`.
    #[arg(long, env = "KANDEV_DATABASE_URL", default_value = "sqlite://./kandev.db")]
    pub database_url: String,
}

pub async fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Serve(settings) => {
            let mut settings = *settings;
            crate::telemetry::init(settings.log_format == "json");
            crate::tls::install_crypto_provider();
            let demo = if settings.demo {
                Some(crate::demo::prepare(&mut settings).await.map_err(|e| e.to_string())?)
            } else {
                None
            };
            let app = Application::build(settings, BuildOptions::default())
                .await
                .map_err(|e| e.to_string())?;
            announce(&app);
            if let Some((sim, sim_base)) = demo {
                let kandev = format!("http://{}", app.address());
                crate::demo::seed(&app.services, &sim, &sim_base, &kandev).await?;
            }
            app.run_until_signal().await;
            Ok(())
        }
        Command::GithubSim { listen } => {
            crate::telemetry::init(false);
            crate::tls::install_crypto_provider();
            let sim = crate::github_sim::Simulator::new();
            let (addr, task) = sim
                .serve(&listen)
                .await
                .map_err(|e| format!("listen on {listen}: {e}"))?;
            println!("github simulator listening on http://{addr}");
            tracing::info!(%addr, "GitHub simulator listening");
            let _ = task.await;
            Ok(())
        }
        Command::User(UserCommand::Add {
            name,
            admin,
            password_stdin,
            db,
        }) => {
            let password = if password_stdin {
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .map_err(|e| format!("reading the password: {e}"))?;
                Some(line.trim_end_matches(['\r', '\n']).to_string())
            } else {
                None
            };
            let store = open(&db).await?;
            let (user, generated) =
                crate::access::bootstrap::add_user(&store, &name, password.as_deref(), admin, chrono::Utc::now())
                    .await
                    .map_err(|e| e.to_string())?;
            println!(
                "added user {}{}",
                user.username,
                if user.admin { " (admin)" } else { "" }
            );
            if let Some(p) = generated {
                println!("password: {p}");
            }
            Ok(())
        }
        Command::Token(TokenCommand::Create { user, name, db }) => {
            let store = open(&db).await?;
            let username = kandev_core::access::normalise_username(&user)?;
            let record = store
                .user_by_name(&username)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("no user {username}"))?;
            let token = crate::access::bootstrap::create_token(&store, &record.user.id, &name, chrono::Utc::now())
                .await
                .map_err(|e| e.to_string())?;
            println!("{}", token.token);
            Ok(())
        }
        // Run before any runtime, by `confine_if_asked`.
        Command::Confine { .. } => Err("kandev confine runs on its own thread, before the runtime".into()),
        Command::MockAgent { no_load_session } => {
            crate::tls::install_crypto_provider();
            crate::mock_agent::run(!no_load_session).await
        }
    }
}

/// `kandev confine`, which must run on the process's only thread (Landlock
/// and seccomp bind the thread that asks, and the keeper stays beside its
/// agent): it runs the agent and exits with its status, or with 126 (the
/// status a shell gives a command it could not run), saying why where the
/// runtime looks for it. Any other command is handed back.
pub fn confine_if_asked(cli: Cli) -> Cli {
    let Command::Confine {
        worktree,
        hide,
        write,
        require,
        restrict_tcp,
        connect_tcp,
        home,
        tmp,
        allow_unix_sockets,
        allow_user_namespaces,
        share,
        server,
        until,
        command,
    } = cli.command
    else {
        return cli;
    };
    let why = match command.split_first() {
        None => "no command to confine".to_string(),
        Some((program, args)) => {
            let sandbox = crate::agent::confine::Sandbox {
                worktree,
                hidden: hide,
                write,
                tcp: restrict_tcp.then_some(connect_tcp),
                home: home.zip(tmp),
                unix_sockets: allow_unix_sockets,
                user_namespaces: allow_user_namespaces,
                shares: share,
            };
            confine(require, &sandbox, server, until, program, args)
        }
    };
    eprintln!("{} {why}", crate::agent::confine::CONFINE_SAYS);
    std::process::exit(126)
}

/// Confines and keeps the agent, watching `server`; returns only with the
/// reason it could not start it.
#[cfg(target_os = "linux")]
fn confine(
    required: bool,
    sandbox: &crate::agent::confine::Sandbox,
    server: Option<i32>,
    until: Option<u64>,
    program: &std::ffi::OsString,
    args: &[std::ffi::OsString],
) -> String {
    let server = server.and_then(rustix::process::Pid::from_raw);
    crate::agent::landlock::confine_and_keep(required, sandbox, server, until, program, args)
}

/// Without Landlock there is nothing to confine with: the runtime does not
/// start agents through this elsewhere.
#[cfg(not(target_os = "linux"))]
fn confine(
    _required: bool,
    _sandbox: &crate::agent::confine::Sandbox,
    _server: Option<i32>,
    _until: Option<u64>,
    _program: &std::ffi::OsString,
    _args: &[std::ffi::OsString],
) -> String {
    "agents are confined only on Linux".into()
}

async fn open(db: &Database) -> Result<crate::store::Store, String> {
    crate::store::Store::connect(&db.database_url)
        .await
        .map_err(|e| format!("database {}: {e}", db.database_url))
}

/// The first lines a person reads: where to sign in and, on a first start,
/// the generated admin password (printed here once, never logged).
fn announce(app: &Application) {
    let url = app.sign_in_url();
    match &app.first_admin_password {
        Some(password) => {
            println!(
                "Kandev is ready. Sign in at {url}?username={}",
                crate::access::bootstrap::FIRST_ADMIN
            );
            println!("  username: {}", crate::access::bootstrap::FIRST_ADMIN);
            println!("  password: {password}");
            println!("(shown only now; add users with `kandev user add NAME`)");
        }
        None => println!("Kandev is ready. Sign in at {url}"),
    }
}
