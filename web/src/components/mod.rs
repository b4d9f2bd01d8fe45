//! Shared widgets.

pub mod automations;
mod confirm;
mod icons;
mod layout;
mod nav;
mod reply;
mod switch;
mod toast;

pub use confirm::Confirm;
pub use icons::{Icon, IconSvg, trigger_icon};
pub use layout::Layout;
pub use reply::ReplyComposer;
pub use switch::Switch;
pub use toast::{provide_toasts, toast};
