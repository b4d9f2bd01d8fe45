//! Pages, one folder per feature.

pub mod automations;
pub mod board;
mod home;
mod login;
mod members;
mod notifications;
mod run_view;
mod tokens;

pub use home::{AutomationsHome, Home};
pub use login::Login;
pub use members::Members;
pub use notifications::Notifications;
pub use run_view::RunView;
pub use tokens::Tokens;
