//! Helpers for tests and benchmarks that run Kandev as real processes.

mod checkout;
pub mod processes;
mod replica;

pub use checkout::checkout_repository;
pub use replica::{ADMIN_TOKEN, Api, Replica, WEBHOOK_SECRET, fresh_postgres_database, shared_env};
