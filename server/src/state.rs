//! The state every router and component shares. It lives apart from `app`
//! (which builds it) and `http` (which serves it), so neither imports the other
//! for it.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::access::Access;
use crate::agent::AcpRuntime;
use crate::automation::AutomationService;
use crate::board::BoardService;
use crate::bus::Bus;
use crate::clock::Clock;
use crate::config::Settings;
use crate::coord::Tenure;
use crate::coord::{Leases, Outbox};
use crate::github::GithubService;
use crate::live::LiveHub;
use crate::merger::Merger;
use crate::metrics::Metrics;
use crate::orchestrator::Orchestrator;
use crate::store::Store;

/// Everything the HTTP handlers and components share.
pub struct Services {
    pub settings: Settings,
    pub store: Store,
    pub bus: Bus,
    pub clock: Arc<dyn Clock>,
    pub live: LiveHub,
    pub metrics: Metrics,
    pub outbox: Arc<Outbox>,
    pub leases: Arc<Leases>,
    /// What keeps `leases` this replica's: its name, its clock, renewals.
    pub tenure: Arc<Tenure>,
    pub access: Arc<Access>,
    pub board: Arc<BoardService>,
    pub automation: Arc<AutomationService>,
    pub orchestrator: Arc<Orchestrator>,
    pub runtime: Arc<AcpRuntime>,
    pub github: Arc<GithubService>,
    pub merger: Arc<Merger>,
    pub ready: AtomicBool,
    /// The API's in-flight limit and request deadline.
    pub admission: crate::http::overload::Admission,
    /// The live streams open here, per caller and in all.
    pub streams: Arc<crate::http::stream_slots::StreamSlots>,
}

/// What axum handlers receive as `State`.
pub type AppState = Arc<Services>;
