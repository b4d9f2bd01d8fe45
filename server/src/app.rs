//! The composition root: the only place that knows how the components are
//! built, wired and started, and in which order.
//!
//! Start-up order (load-bearing, see the spec's "Start-up ordering"):
//! 1. construct store, bus and services; wire every lookup;
//! 2. the orchestrator subscribes to `automation.triggered`;
//! 3. the automation components start;
//! 4. the GitHub poller starts (its first sweep runs at once);
//! 5. HTTP accepts requests.
//!
//! Shutdown runs in reverse.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use kandev_core::access::PublicOrigin;

use crate::access::{Access, AccessSettings};
use crate::agent::{AcpRuntime, RuntimeSettings};
use crate::automation::merged::MergedPrSubscriber;
use crate::automation::pr_evaluator::PrEvaluator;
use crate::automation::push_ci::PushCiSubscriber;
use crate::automation::scheduler::Scheduler;
use crate::automation::{AutomationService, StoreTaskOriginLookup};
use crate::board::BoardService;
use crate::bus::{Bus, BusTrust};
use crate::clock::{Clock, SystemClock};
use crate::config::Settings;
use crate::coord::{ClockCheck, Identity, Leases, Outbox, Tenure, new_replica_id};
use crate::github::poller::Poller;
use crate::github::{GithubClient, GithubService};
use crate::http;
use crate::live::LiveHub;
use crate::mcp::McpEndpoints;
use crate::merger::{Merger, MergerHandle, MergerSettings};
use crate::metrics::Metrics;
use crate::orchestrator::{AgentRuntime, Orchestrator};
use crate::store::Store;
use crate::upkeep::Upkeep;

pub use crate::state::Services;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("storage: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("event bus: {0}")]
    Bus(#[from] crate::bus::BusError),
    #[error("listen on {0}: {1}")]
    Listen(String, std::io::Error),
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Access(#[from] crate::error::ServiceError),
}

/// Options for embedding the server (tests, benchmarks, demo).
#[derive(Default)]
pub struct BuildOptions {
    pub clock: Option<Arc<dyn Clock>>,
    /// The `kandev` binary that runs `mock-agent` (tests embed the server in
    /// another executable).
    pub mock_agent_bin: Option<std::path::PathBuf>,
    /// The real time, as leases are checked against the database's (tests
    /// set it off); `None`: the system's.
    pub wall_clock: Option<Arc<dyn Clock>>,
}

/// The running components, in start order.
struct Components {
    merged: MergedPrSubscriber,
    push_ci: PushCiSubscriber,
    scheduler: Scheduler,
    pr_evaluator: PrEvaluator,
    poller: Poller,
    upkeep: Upkeep,
    notifier: Arc<crate::notify::Notifier>,
}

pub struct Application {
    pub services: Arc<Services>,
    address: SocketAddr,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<()>,
    components: Components,
    /// The first-start admin's generated password, to be shown once.
    pub first_admin_password: Option<String>,
    route_table: Vec<(&'static str, &'static str)>,
}

/// Builds the services with every lookup wired (step 1).
pub async fn construct(settings: Settings, options: BuildOptions) -> Result<Arc<Services>, StartError> {
    crate::tls::install_crypto_provider();
    let access_settings = access_settings(&settings)?;
    let (confinement, posture) = crate::agent::confine::for_settings(&settings, options.mock_agent_bin.as_deref())
        .await
        .map_err(StartError::Config)?;
    let store = Store::connect(&settings.database_url).await?;
    let clock = options.clock.unwrap_or_else(|| Arc::new(SystemClock));
    let metrics = Metrics::default();
    let bus = if settings.nats_url.trim().is_empty() {
        Bus::memory()
    } else {
        let candidate = crate::access::credentials::random_hex::<32>()?;
        let key = store.installation_key("bus", candidate, clock.now()).await?;
        let trust = BusTrust::new(&key, BusTrust::outbox_of(store.clone()), metrics.clone());
        Bus::nats(settings.nats_url.trim(), &settings.nats_stream, trust).await?
    };
    let live = if settings.nats_url.trim().is_empty() {
        LiveHub::default()
    } else {
        LiveHub::shared(
            settings.nats_url.trim(),
            &crate::bus::live_subject(&settings.nats_stream),
        )
        .await?
    };
    metrics.agents_confinement(posture);
    let access = Arc::new(Access::new(store.clone(), clock.clone(), access_settings)?);
    let outbox = Arc::new(Outbox::new(store.clone(), bus.clone(), clock.clone(), metrics.clone()));
    let replica = replica_id(&settings);
    let identity = Identity::new(store.clone(), clock.clone(), &replica);
    let leases = Arc::new(Leases::new(store.clone(), clock.clone(), replica));
    let wall = options.wall_clock.unwrap_or_else(|| Arc::new(SystemClock));
    let tenure = Arc::new(Tenure {
        leases: leases.clone(),
        identity,
        clock: ClockCheck::new(store.clone(), wall, leases.clone()),
    });
    let board = Arc::new(BoardService::new(
        store.clone(),
        clock.clone(),
        live.clone(),
        metrics.clone(),
    ));
    let automation = Arc::new(AutomationService::new(
        store.clone(),
        bus.clone(),
        outbox.clone(),
        clock.clone(),
        metrics.clone(),
        live.clone(),
        board.clone(),
    ));
    // Wired at construction, before any component starts, so the merged-PR
    // subscriber's start-up line reports the true state.
    automation.set_task_origin_lookup(Arc::new(StoreTaskOriginLookup::new(store.clone())));
    let orchestrator = Arc::new(Orchestrator::new(
        store.clone(),
        bus.clone(),
        clock.clone(),
        metrics.clone(),
        live.clone(),
        leases.clone(),
    ));
    let runtime = Arc::new(AcpRuntime::new(
        store.clone(),
        clock.clone(),
        live.clone(),
        RuntimeSettings {
            default_agent: settings.default_agent.clone(),
            data_dir: settings.data_dir.clone(),
            turn_timeout: settings.agent_turn_timeout,
            confinement,
            mock_agent_bin: options.mock_agent_bin,
        },
    ));
    orchestrator.set_runtime(Arc::new(runtime.clone()) as Arc<dyn AgentRuntime>);
    automation.set_orchestrator(orchestrator.clone());
    runtime.set_orchestrator(&orchestrator);
    board.add_listener(runtime.clone());
    let client = Arc::new(GithubClient::new(
        &settings.github_api_url,
        settings.github_token.clone(),
        settings.github_timeout,
        metrics.clone(),
    ));
    let github = Arc::new(GithubService::new(
        client,
        store.clone(),
        outbox.clone(),
        live.clone(),
        clock.clone(),
        settings.github_webhook_secret.clone(),
    ));
    board.set_pr_linker(github.clone());
    orchestrator.set_pr_linker(github.clone());
    let merger = Arc::new(Merger::new(
        store.clone(),
        board.clone(),
        github.clone(),
        clock.clone(),
        MergerSettings {
            poll_interval: settings.merger_poll_interval,
            default_timeout: settings.merger_ci_timeout,
        },
        leases.clone(),
    ));
    board.set_merge_starter(Arc::new(MergerHandle(merger.clone())));
    let admission = http::overload::Admission::new(settings.max_in_flight, settings.request_timeout);
    Ok(Arc::new(Services {
        settings,
        store,
        bus,
        clock,
        live,
        metrics,
        outbox,
        leases,
        tenure,
        access,
        board,
        automation,
        orchestrator,
        runtime,
        github,
        merger,
        ready: AtomicBool::new(false),
        admission,
        streams: Default::default(),
    }))
}

/// This replica's name in leases: `KANDEV_REPLICA_ID`, else the host and the
/// listen address — stable across restarts, so a restarted replica knows the
/// leases it held before are dead. A port chosen at random (`:0`) gets a
/// random name.
fn replica_id(settings: &Settings) -> String {
    if let Some(id) = settings.replica_id.as_deref().map(str::trim).filter(|i| !i.is_empty()) {
        return id.to_string();
    }
    if settings.listen.ends_with(":0") {
        return new_replica_id();
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "localhost".into());
    format!("{}/{}", host.trim(), settings.listen)
}

/// The access settings, checked before anything starts.
fn access_settings(settings: &Settings) -> Result<AccessSettings, StartError> {
    let admin_token = settings.admin_token.clone().filter(|t| !t.trim().is_empty());
    if admin_token.as_ref().is_some_and(|t| t.trim().len() < 16) {
        return Err(StartError::Config(
            "KANDEV_ADMIN_TOKEN must be at least 16 characters".into(),
        ));
    }
    let public = match settings.public_url.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
        Some(url) => Some(PublicOrigin::parse(url).map_err(StartError::Config)?),
        None => None,
    };
    Ok(AccessSettings { admin_token, public })
}

impl Application {
    pub async fn build(settings: Settings, options: BuildOptions) -> Result<Application, StartError> {
        // Before any agent can start: agents run as our OS user.
        if let Err(e) = crate::agent::confine::keep_server_memory_private() {
            tracing::warn!(error = %e, "could not keep the server's memory from its agents");
        }
        let listen = settings.listen.clone();
        let services = construct(settings, options).await?;
        // Bind first: agents started during start-up need the MCP address.
        // Connections wait in the backlog until serving starts (step 5).
        let listener = TcpListener::bind(&listen)
            .await
            .map_err(|e| StartError::Listen(listen.clone(), e))?;
        let address = listener
            .local_addr()
            .map_err(|e| StartError::Listen(listen.clone(), e))?;
        // Agents reach the MCP endpoint over loopback: a wildcard listen
        // address is no address to connect to (nor a Host the guard accepts).
        let reachable = match address {
            SocketAddr::V4(a) if a.ip().is_unspecified() => SocketAddr::from(([127, 0, 0, 1], a.port())),
            SocketAddr::V6(a) if a.ip().is_unspecified() => SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, a.port())),
            other => other,
        };
        services.runtime.set_base_url(format!("http://{reachable}"));
        let first_admin_password = crate::access::bootstrap::first_admin(
            &services.store,
            services.access.has_admin_token(),
            services.clock.now(),
        )
        .await?;
        let components = Components {
            merged: MergedPrSubscriber::new(services.automation.clone()),
            push_ci: PushCiSubscriber::new(services.automation.clone()),
            scheduler: Scheduler::new(
                services.automation.clone(),
                services.settings.scheduler_interval,
                services.leases.clone(),
            ),
            pr_evaluator: PrEvaluator::new(
                services.automation.clone(),
                services.github.client().clone(),
                services.settings.pr_poll_interval,
                services.leases.clone(),
            ),
            poller: Poller::new(
                services.github.clone(),
                services.settings.pr_poll_interval,
                services.settings.pr_settle_period,
                services.leases.clone(),
            ),
            upkeep: Upkeep::new(
                services.tenure.clone(),
                services.outbox.clone(),
                services.orchestrator.clone(),
                services.merger.clone(),
            ),
            notifier: crate::notify::Notifier::new(
                services.store.clone(),
                services.clock.clone(),
                services.settings.notify_private_addresses,
            ),
        };
        if !services.github.client().is_configured() {
            tracing::info!("GitHub features are idle: no GITHUB_TOKEN is set");
        }
        // Nothing is done under this replica's name before it is this
        // process's alone; nor while its clock is off the database's (the
        // orchestrator's subscriptions may take run leases).
        services.tenure.begin().await.map_err(StartError::Config)?;
        // 2. orchestrator, 3. automation components; a failure unwinds what started.
        services.orchestrator.start().await?;
        if let Err(e) = start_automation(&components).await {
            stop_automation(&components).await;
            services.orchestrator.stop().await;
            return Err(e);
        }
        // 4. the poller, whose first sweep runs at once: every consumer is attached.
        components.poller.start().await;
        // Leases this replica held before a restart are dead: release them
        // now, then the upkeep relays what the outbox holds and resumes runs
        // and merges nobody drives (its first pass runs at once).
        if let Err(e) = services.store.release_leases_of(services.leases.replica()).await {
            tracing::warn!(error = %e, "could not release this replica's earlier leases; they will expire");
        }
        components.upkeep.start().await;
        components.notifier.start().await;
        // 5. HTTP.
        let extra = McpEndpoints::new(services.store.clone(), services.board.clone()).routes();
        let routes = http::api_routes(extra);
        let route_table = routes.table().to_vec();
        if services.settings.web_dir.is_none() && !http::embedded_app_present() {
            tracing::warn!("this binary was built without the web app (run `cargo xtask web`, then build again)");
        }
        let router = http::router(services.clone(), routes, services.settings.web_dir.as_deref());
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        let server = tokio::spawn(async move {
            let serve = axum::serve(listener, router).with_graceful_shutdown(async move { stop.cancelled().await });
            if let Err(e) = serve.await {
                tracing::error!(error = %e, "HTTP server stopped");
            }
        });
        services.ready.store(true, Ordering::SeqCst);
        tracing::info!(%address, bus = services.bus.kind(), "kandev is serving");
        Ok(Application {
            services,
            address,
            shutdown,
            server,
            components,
            first_admin_password,
            route_table,
        })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// Every `(method, route template)` the server routes (`*` for any method).
    pub fn route_table(&self) -> &[(&'static str, &'static str)] {
        &self.route_table
    }

    /// Where a person signs in: the public URL when set, else this address.
    pub fn sign_in_url(&self) -> String {
        let base = match self.services.access.public() {
            Some(p) => p.origin(),
            // A wildcard listen address is reached through loopback.
            None if self.address.ip().is_unspecified() => format!("http://127.0.0.1:{}", self.address.port()),
            None => format!("http://{}", self.address),
        };
        format!("{base}/login")
    }

    /// Stops in reverse order: HTTP, poller, automation components, orchestrator.
    pub async fn shutdown(self) {
        self.services.ready.store(false, Ordering::SeqCst);
        self.shutdown.cancel();
        // Live streams never end by themselves; the graceful stop waits for them.
        self.services.streams.close();
        let _ = self.server.await;
        self.components.upkeep.stop().await;
        self.components.notifier.stop().await;
        self.services.merger.shutdown().await;
        self.components.poller.stop().await;
        self.services.github.stop_rereads().await;
        stop_automation(&self.components).await;
        self.services.orchestrator.stop().await;
        self.services.runtime.shutdown().await;
        self.components.upkeep.stop_renewing().await;
        // A clean stop hands its work over at once, then its name.
        self.services.tenure.end().await;
        self.services.store.close().await;
    }

    /// Runs until Ctrl-C or SIGTERM, then shuts down.
    pub async fn run_until_signal(self) {
        wait_for_signal().await;
        tracing::info!("shutting down");
        self.shutdown().await;
    }
}

async fn start_automation(c: &Components) -> Result<(), StartError> {
    c.merged.start().await?;
    c.push_ci.start().await?;
    c.scheduler.start().await;
    c.pr_evaluator.start().await;
    Ok(())
}

async fn stop_automation(c: &Components) {
    c.pr_evaluator.stop().await;
    c.scheduler.stop().await;
    c.push_ci.stop().await;
    c.merged.stop().await;
}

async fn wait_for_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
