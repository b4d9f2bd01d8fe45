//! Agents: profiles, and the ACP runtime that runs run tasks' sessions.

pub mod profiles;
