//! The automations list and the automation editor.

mod editor;
mod list;
mod transfer;

pub use editor::AutomationEditor;
pub use list::AutomationsList;
