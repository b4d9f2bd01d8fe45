//! The automation editor's widgets: trigger badges and cards, the condition
//! picker, per-type config panels and the shared repository selector.

mod badge;
mod card;
pub mod panels;
mod picker;
mod repo_selector;

pub use badge::TriggerBadge;
pub use card::TriggerCard;
pub use picker::ConditionPicker;
pub use repo_selector::RepoSelector;
