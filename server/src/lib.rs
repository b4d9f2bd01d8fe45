//! The Kandev server: the imperative shell around `kandev-core`.
//!
//! `app` is the composition root; every other module is one component with a
//! small public face. Decisions are calls into `kandev_core`.

pub mod access;
pub mod agent;
pub mod app;
pub mod automation;
pub mod board;
pub mod bus;
pub mod cli;
pub mod clock;
pub mod config;
pub mod coord;
pub mod demo;
pub mod error;
pub mod github;
pub mod github_sim;
pub mod http;
pub mod live;
pub mod mcp;
pub mod merger;
pub mod metrics;
pub mod mock_agent;
pub mod notify;
pub mod orchestrator;
pub mod periodic;
pub mod signature;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod testkit;
pub mod tls;
pub mod upkeep;
