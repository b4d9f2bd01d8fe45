//! Helpers for tests and benchmarks that run Kandev as real processes.

mod replica;

pub use replica::{ADMIN_TOKEN, Api, Replica, WEBHOOK_SECRET, fresh_postgres_database, shared_env};
