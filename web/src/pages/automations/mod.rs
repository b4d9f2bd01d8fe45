//! The automations home, one automation's page, the workspace list and the
//! automation editor.

mod editor;
mod home;
mod list;
mod page;
mod runs;
mod transfer;

pub use editor::AutomationEditor;
pub use home::AutomationsOverview;
pub use list::AutomationsList;
pub use page::AutomationPage;
