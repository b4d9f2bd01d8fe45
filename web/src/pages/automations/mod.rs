//! The automations list and the automation editor.

mod editor;
mod list;

pub use editor::AutomationEditor;
pub use list::AutomationsList;
