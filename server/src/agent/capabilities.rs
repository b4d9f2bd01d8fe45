//! A confined agent holds no capability, even when the server runs as root.
//! Root's `CAP_SYS_ADMIN` or `CAP_PERFMON` alone lets a process read any
//! other's `/proc/<pid>/environ` past Landlock (the kernel lets a
//! perfmon-capable caller read another's memory map), the server's tokens
//! and other agents' keys among them; the rest (modules, raw I/O, device
//! nodes, other users' files) reach past every grant as well.

use rustix::io::Errno;
use rustix::thread::{
    CapabilitySet, CapabilitySets, capabilities, capability_is_in_bounding_set, clear_ambient_capability_set,
    remove_capability_from_bounding_set, set_capabilities, set_no_new_privs,
};

/// Drops every capability this process holds or could regain on `exec`.
pub fn drop_all() -> std::io::Result<()> {
    // No setuid program (sudo, su) gives back what is dropped here.
    set_no_new_privs(true)?;
    // A kernel older than ambient capabilities has none to clear.
    match clear_ambient_capability_set() {
        Ok(()) | Err(Errno::INVAL) => {}
        Err(e) => return Err(e.into()),
    }
    // Only a holder of CAP_SETPCAP may shrink the bounding set. Without it
    // (an ordinary user) nothing there is gained: `no_new_privs` keeps an
    // `exec` from granting file capabilities.
    if capabilities(None)?.effective.contains(CapabilitySet::SETPCAP) {
        for bit in 0..u64::BITS {
            let cap = CapabilitySet::from_bits_retain(1 << bit);
            match capability_is_in_bounding_set(cap) {
                Ok(true) => remove_capability_from_bounding_set(cap)?,
                Ok(false) => {}
                // Past the last capability this kernel knows.
                Err(_) => break,
            }
        }
    }
    let none = CapabilitySet::empty();
    set_capabilities(
        None,
        CapabilitySets {
            effective: none,
            permitted: none,
            inheritable: none,
        },
    )?;
    Ok(())
}
