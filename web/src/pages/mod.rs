//! Pages, one folder per feature.

pub mod automations;
pub mod board;
mod home;
mod run_view;

pub use home::{AutomationsHome, Home};
pub use run_view::RunView;
