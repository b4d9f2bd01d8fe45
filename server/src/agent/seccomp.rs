//! A confined agent cannot open a unix socket by path. Landlock (up to ABI 7)
//! does not govern `connect` to a socket file, so through one an agent
//! would reach past every grant: the user's systemd manager
//! (`systemd-run --user` starts anything unconfined), a container runtime,
//! PostgreSQL trusting the OS user (peer authentication). A seccomp filter
//! refuses `socket(AF_UNIX, …)`; `socketpair`, which only joins a process
//! to its own children, stays open. `io_uring` is refused too: it can make
//! sockets without the `socket` call the filter sees.
//!
//! Nor can it reach the kernel's key store: every process of one user
//! shares its user keyring (and a login's processes their session keyring),
//! where Kerberos tickets and disk-encryption keys are kept, so an agent
//! read its user's keys there, and could leave keys for another workspace's.
//!
//! Nor can it make a user namespace: in one it holds every capability again
//! (over that namespace), which opens the kernel's namespaced surfaces —
//! netfilter, mounts of its own — where most local privilege escalations of
//! recent years were found.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// x86-64's x32 ABI numbers its calls with this bit: the same arch to the
/// filter, so each call is matched under both numbers.
const X32: i64 = 0x4000_0000;

/// Each of `calls` (and its x32 twin on x86-64).
fn numbers(calls: &[i64]) -> Vec<i64> {
    let x32 = cfg!(target_arch = "x86_64");
    calls
        .iter()
        .flat_map(|&c| [Some(c), x32.then_some(c | X32)])
        .flatten()
        .collect()
}

fn install(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<(), String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch)
        .map_err(|e| e.to_string())?;
    let program = BpfProgram::try_from(filter).map_err(|e| e.to_string())?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}

/// Refuses this process, and all it starts, unix sockets and `io_uring`.
pub fn deny_unix_sockets() -> Result<(), String> {
    let unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, libc::AF_UNIX as u64)
        .and_then(|c| SeccompRule::new(vec![c]))
        .map_err(|e| e.to_string())?;
    let sockets = numbers(&[libc::SYS_socket])
        .into_iter()
        .map(|n| (n, vec![unix.clone()]));
    install(sockets.collect(), libc::EACCES)?;
    // As on a kernel without it: programs that try it fall back to plain calls.
    let rings = [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ];
    refuse_all(&rings)
}

/// Refuses this process, and all it starts, the kernel's key store, as on a
/// kernel without one.
pub fn deny_kernel_keys() -> Result<(), String> {
    refuse_all(&[libc::SYS_add_key, libc::SYS_keyctl, libc::SYS_request_key])
}

/// Refuses this process, and all it starts, new user namespaces, with EPERM
/// as on a kernel that disallows them (programs such as Chromium then fall
/// back or say so). `clone3` passes its flags in memory a filter cannot
/// read, so it answers ENOSYS and the C library falls back to `clone`.
pub fn deny_user_namespaces() -> Result<(), String> {
    let new_user = libc::CLONE_NEWUSER as u64;
    let rule = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(new_user), new_user)
        .and_then(|c| SeccompRule::new(vec![c]))
        .map_err(|e| e.to_string())?;
    let calls = numbers(&[libc::SYS_unshare, libc::SYS_clone])
        .into_iter()
        .map(|n| (n, vec![rule.clone()]));
    install(calls.collect(), libc::EPERM)?;
    refuse_all(&[libc::SYS_clone3])
}

/// Every one of `calls` answers ENOSYS, whatever its arguments.
fn refuse_all(calls: &[i64]) -> Result<(), String> {
    install(
        numbers(calls).into_iter().map(|n| (n, Vec::new())).collect(),
        libc::ENOSYS,
    )
}
