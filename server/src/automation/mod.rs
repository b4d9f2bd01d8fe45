//! The automation engine's shell: CRUD, the firing path, the detectors for
//! each trigger type and the evaluation record. Every decision is a call into
//! `kandev_core`.

mod crud;
pub mod evaluations;
mod fire;
mod home;
pub mod index;
mod lookup;
pub mod merged;
mod portable;
pub mod pr_evaluator;
pub mod push_ci;
pub mod scheduler;
mod webhook;

pub use webhook::WebhookHeaders;

pub use evaluations::EvaluationRecorder;
pub use fire::{FireOutcome, FireRequest};
pub use lookup::{StoreTaskOriginLookup, TaskOriginLookup};

use std::sync::{Arc, RwLock};

use crate::board::BoardService;
use crate::bus::Bus;
use crate::clock::Clock;
use crate::coord::Outbox;
use crate::live::LiveHub;
use crate::metrics::Metrics;
use crate::orchestrator::Orchestrator;
use crate::store::Store;

pub struct AutomationService {
    store: Store,
    bus: Bus,
    outbox: Arc<Outbox>,
    clock: Arc<dyn Clock>,
    metrics: Metrics,
    live: LiveHub,
    board: Arc<BoardService>,
    recorder: EvaluationRecorder,
    lookup: RwLock<Option<Arc<dyn TaskOriginLookup>>>,
    /// Writes a firing's run in the firing's own transaction; without it
    /// every firing goes through `automation.triggered`.
    orchestrator: RwLock<Option<Arc<Orchestrator>>>,
    index: index::TriggerIndex,
}

impl AutomationService {
    pub fn new(
        store: Store,
        bus: Bus,
        outbox: Arc<Outbox>,
        clock: Arc<dyn Clock>,
        metrics: Metrics,
        live: LiveHub,
        board: Arc<BoardService>,
    ) -> Self {
        let recorder = EvaluationRecorder::start(store.clone(), metrics.clone());
        let index = index::TriggerIndex::new(store.clone());
        AutomationService {
            index,
            store,
            bus,
            outbox,
            clock,
            metrics,
            live,
            board,
            recorder,
            lookup: RwLock::new(None),
            orchestrator: RwLock::new(None),
        }
    }

    /// Wires the task-origin lookup. The composition root calls this at
    /// construction, before any component starts; subscribers read it live.
    pub fn set_task_origin_lookup(&self, lookup: Arc<dyn TaskOriginLookup>) {
        *self.lookup.write().unwrap_or_else(|p| p.into_inner()) = Some(lookup);
    }

    /// Wires the orchestrator that writes runs in the firing's transaction
    /// (the composition root, at construction).
    pub fn set_orchestrator(&self, orchestrator: Arc<Orchestrator>) {
        *self.orchestrator.write().unwrap_or_else(|p| p.into_inner()) = Some(orchestrator);
    }

    fn orchestrator(&self) -> Option<Arc<Orchestrator>> {
        self.orchestrator.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn task_origin_lookup(&self) -> Option<Arc<dyn TaskOriginLookup>> {
        self.lookup.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The enabled triggers the detectors evaluate, kept in memory.
    pub fn triggers(&self) -> &index::TriggerIndex {
        &self.index
    }

    pub fn bus(&self) -> &Bus {
        &self.bus
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn recorder(&self) -> &EvaluationRecorder {
        &self.recorder
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}
