//! Agents: profiles, and the ACP runtime that runs run tasks' sessions.

#[cfg(target_os = "linux")]
mod capabilities;
pub mod confine;
#[cfg(target_os = "linux")]
pub mod fence;
pub mod group;
#[cfg(target_os = "linux")]
pub mod keeper;
#[cfg(target_os = "linux")]
pub mod landlock;
pub mod profiles;
mod runtime;
#[cfg(target_os = "linux")]
mod seccomp;
mod transcript;
pub mod workdir;

pub use runtime::{AcpRuntime, RuntimeSettings};
