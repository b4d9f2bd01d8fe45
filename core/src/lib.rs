//! Kandev's rules, as plain functions over plain values.
//!
//! Nothing in this crate performs I/O, spawns tasks or reads a clock: every
//! function that needs the time takes `now` as a parameter. The server (native)
//! and the web editor (WASM) call the same functions, so they cannot drift.

pub mod access;
pub mod agenda;
pub mod api;
pub mod board;
pub mod bounds;
pub mod bus_trust;
pub mod checks;
pub mod confine;
pub mod cron;
pub mod duration;
pub mod editor;
pub mod events;
pub mod executors;
pub mod firing;
pub mod gate;
pub mod github_path;
pub mod interpolate;
pub mod lease;
mod lenient;
pub mod merged;
pub mod merger;
pub mod notify;
pub mod page_policy;
pub mod portable;
pub mod read_lag;
pub mod registry;
pub mod replica;
pub mod repository_choice;
pub mod resume;
pub mod run_status;
pub mod schema;
pub mod task_pr;
pub mod text;
pub mod trigger;
pub mod unreadable;
pub mod webhook;

pub use trigger::TriggerType;
