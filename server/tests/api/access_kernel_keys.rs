//! The kernel's key store: every process of one user shares its user
//! keyring (where Kerberos tickets and disk-encryption keys are kept), so a
//! confined agent reaches none of it.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::ffi::CString;

use crate::access_sockets::python;

/// The user keyring (`KEY_SPEC_USER_KEYRING`).
const USER_KEYRING: libc::c_long = -4;
const KEYCTL_SEARCH: libc::c_long = 10;
const KEYCTL_INVALIDATE: libc::c_long = 21;

/// A key of this process's user, invalidated on drop.
struct UserKey(libc::c_long);

impl UserKey {
    /// `None` where this process has no key store to add to (a container's
    /// seccomp profile, a kernel without keys).
    fn add(description: &str, secret: &str) -> Option<Self> {
        let (kind, description) = (c"user", CString::new(description).expect("a description"));
        // SAFETY: every pointer is to a live C string or to `secret`'s bytes.
        let id = unsafe {
            libc::syscall(
                libc::SYS_add_key,
                kind.as_ptr(),
                description.as_ptr(),
                secret.as_ptr(),
                secret.len(),
                USER_KEYRING,
            )
        };
        (id > 0).then_some(Self(id))
    }
}

impl Drop for UserKey {
    fn drop(&mut self) {
        // SAFETY: plain integers.
        unsafe { libc::syscall(libc::SYS_keyctl, KEYCTL_INVALIDATE, self.0) };
    }
}

/// Python looking for the key `description` in its user's keyring and
/// reading it: what it printed.
fn looking_for(description: &str, confined: bool) -> String {
    let probe = format!(
        r#"
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
key = libc.syscall(250, {KEYCTL_SEARCH}, {USER_KEYRING}, b"user", b"{description}", 0)
if key < 0:
    print("search", ctypes.get_errno())
else:
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall(250, 11, key, buf, 64)
    print("read", buf.raw[:n].decode())
"#
    );
    python(&probe, confined).trim().to_string()
}

#[test]
fn a_confined_agent_reaches_none_of_its_user_s_kernel_keys() {
    let description = format!("kandev-test-{}", uuid::Uuid::new_v4().simple());
    let Some(_key) = UserKey::add(&description, "s3cret-ticket") else {
        eprintln!("no kernel key store here: nothing to keep agents from");
        return;
    };
    assert_eq!(looking_for(&description, false), "read s3cret-ticket", "the premise");
    // ENOSYS: as on a kernel without keys.
    assert_eq!(looking_for(&description, true), format!("search {}", libc::ENOSYS));
}
