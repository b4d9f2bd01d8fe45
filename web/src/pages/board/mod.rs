//! The task board and a task's detail page.

mod columns;
mod repositories;
mod task_actions;
mod task_card;
mod task_detail;

pub use columns::Board;
pub use task_detail::TaskDetail;
