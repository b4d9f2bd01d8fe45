//! A confined agent's turn goes on only while its lease does, even when the
//! server cannot stop it: a server that is stopped (SIGSTOP), starved, or
//! waiting on a database call that never returns. The server keeps telling
//! the agent's keeper until when the lease vouches for the turn
//! (`core::lease::left`), and the keeper ends the agent once that time
//! passes unextended, before another replica can take the lease. The
//! deadline travels in the signal itself (a queued real-time signal's
//! value), on the monotonic clock both processes share, so a word delivered
//! late vouches for no more than when it was sent.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The signal that carries a deadline.
pub fn word() -> i32 {
    libc::SIGRTMIN()
}

/// Milliseconds on the monotonic clock (since boot, stopped in suspend:
/// a laptop waking does not end its agents before its server renews).
pub fn now_ms() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let ms = u64::try_from(t.tv_nsec / 1_000_000).unwrap_or(0);
    secs.saturating_mul(1000).saturating_add(ms)
}

/// The deadline `left` from now.
pub fn deadline_in(left: Duration) -> u64 {
    now_ms().saturating_add(u64::try_from(left.as_millis()).unwrap_or(u64::MAX))
}

/// The server's side: tells one keeper its deadline, through a pidfd.
#[derive(Debug)]
pub struct Voucher {
    pidfd: OwnedFd,
    pid: u32,
    /// Whether the keeper waits for words yet: one sent before would end
    /// it (a real-time signal's default action), so none is sent till then.
    listening: AtomicBool,
    /// The latest deadline told (the one the keeper holds the agent to).
    told: AtomicU64,
}

impl Voucher {
    /// For the keeper `pid` behind `pidfd`, started with `until` (`--until`).
    pub fn new(pidfd: OwnedFd, pid: u32, until: u64) -> Self {
        Self {
            pidfd,
            pid,
            listening: AtomicBool::new(false),
            told: AtomicU64::new(until),
        }
    }

    /// Tells the keeper the turn may go on `left` from now, once it listens
    /// (until then, the deadline it started with stands).
    pub fn vouch(&self, left: Duration) {
        if !self.listening.load(Ordering::SeqCst) {
            if !blocks_word(self.pid) {
                return;
            }
            self.listening.store(true, Ordering::SeqCst);
        }
        let until = deadline_in(left);
        if send(&self.pidfd, until) {
            self.told.fetch_max(until, Ordering::SeqCst);
        }
    }

    /// Whether the keeper that exited with `status` ended its agent at the
    /// deadline: it says so, and the latest deadline told has passed.
    pub fn ended_it(&self, status: Option<std::process::ExitStatus>) -> bool {
        status.and_then(|s| s.code()) == Some(LAPSED_STATUS) && now_ms() >= self.told.load(Ordering::SeqCst)
    }
}

/// Whether process `pid` blocks [`word`], as a keeper does before it starts
/// its agent (and for good): from its `SigBlk` in `/proc`. A keeper already
/// gone, and its id taken, is harmless: words go through its pidfd.
fn blocks_word(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    blocked(&status, word())
}

/// Whether `signal` is in the `SigBlk` mask of a `/proc/<pid>/status` text.
fn blocked(status: &str, signal: i32) -> bool {
    let mask = status
        .lines()
        .find_map(|line| line.strip_prefix("SigBlk:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok());
    let bit = u32::try_from(signal - 1).ok().and_then(|b| 1u64.checked_shl(b));
    matches!((mask, bit), (Some(mask), Some(bit)) if mask & bit != 0)
}

/// The kernel's `siginfo_t` for a queued signal (`SI_QUEUE`), as laid out
/// on 64-bit Linux: the fields the kernel copies, then padding to its size.
#[repr(C)]
struct Queued {
    signo: i32,
    errno: i32,
    code: i32,
    _align: i32,
    pid: i32,
    uid: u32,
    value: u64,
    _rest: [u8; 96],
}

const _: () = assert!(std::mem::size_of::<Queued>() == std::mem::size_of::<libc::siginfo_t>());

/// Sends `until` to the process behind `pidfd`: whether it was sent.
fn send(pidfd: &OwnedFd, until: u64) -> bool {
    let info = Queued {
        signo: word(),
        errno: 0,
        code: libc::SI_QUEUE,
        _align: 0,
        pid: i32::try_from(std::process::id()).unwrap_or(0),
        uid: rustix::process::getuid().as_raw(),
        value: until,
        _rest: [0; 96],
    };
    // SAFETY: `info` is a valid siginfo for the kernel to copy; the pidfd is open.
    let sent = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            word(),
            &info as *const Queued,
            0,
        )
    };
    sent == 0
}

/// The turn's fence while it runs: a task telling the keeper, every
/// `every`, how long `left` says the lease vouches for; stopped on drop.
pub struct Fence {
    voucher: Arc<Voucher>,
    telling: tokio::task::JoinHandle<()>,
}

impl Fence {
    pub fn keep(voucher: Voucher, every: Duration, left: impl Fn() -> Option<Duration> + Send + 'static) -> Self {
        let voucher = Arc::new(voucher);
        let tells = voucher.clone();
        let telling = tokio::spawn(async move {
            loop {
                // Nothing to vouch for: the keeper's deadline stands.
                if let Some(left) = left() {
                    tells.vouch(left);
                }
                tokio::time::sleep(every).await;
            }
        });
        Self { voucher, telling }
    }

    /// See `Voucher::ended_it`.
    pub fn ended_it(&self, status: Option<std::process::ExitStatus>) -> bool {
        self.voucher.ended_it(status)
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        self.telling.abort();
    }
}

/// The keeper's side: waits for `asked` (the server's word to end) while
/// the deadline, `until` and then each later word's, holds. Returns the
/// status the keeper exits with: once asked, as killed; once the deadline
/// passes, [`LAPSED_STATUS`] (said). `asked` must hold [`word`], blocked
/// on every thread.
pub fn hear(asked: libc::sigset_t, mut until: Option<u64>) -> i32 {
    loop {
        let wait = match until {
            Some(until) => match until.checked_sub(now_ms()).filter(|&ms| ms > 0) {
                Some(ms) => Some(libc::timespec {
                    tv_sec: i64::try_from(ms / 1000).unwrap_or(i64::MAX),
                    tv_nsec: i64::try_from(ms % 1000 * 1_000_000).unwrap_or(0),
                }),
                None => {
                    eprintln!("{} {LAPSED}", super::confine::CONFINE_SAYS);
                    return LAPSED_STATUS;
                }
            },
            None => None,
        };
        // SAFETY: `info` is written by the kernel before it is read, and
        // only for a signal that came.
        let mut info = unsafe { std::mem::zeroed::<libc::siginfo_t>() };
        let got = unsafe {
            libc::sigtimedwait(
                &asked,
                &mut info,
                wait.as_ref().map_or(std::ptr::null(), |w| w as *const _),
            )
        };
        if got == word() {
            // SAFETY: a queued signal's value, as the server sent it.
            let said = unsafe { info.si_value().sival_ptr } as u64;
            until = Some(kandev_core::lease::later_deadline(until, said));
        } else if got > 0 {
            return super::keeper::KILLED;
        }
        // -1: the deadline came (checked above on the next pass), or an interruption.
    }
}

/// The status a keeper exits with when it ended its agent at the deadline
/// (as `timeout` does). An agent can exit with it too, so the server also
/// asks whether the deadline it last told has passed.
pub const LAPSED_STATUS: i32 = 124;

/// What a keeper says when it ends an agent whose lease lapsed.
pub const LAPSED: &str = "the server did not renew the turn's lease in time: the agent is ended";

#[cfg(test)]
mod tests {
    use super::blocked;

    #[test]
    fn a_signal_is_blocked_where_its_bit_of_sigblk_is_set() {
        let status = "Name:\tkandev\nSigPnd:\t0000000000000000\nSigBlk:\t0000000200004003\n";
        assert!(blocked(status, 1) && blocked(status, 2) && blocked(status, 15) && blocked(status, 34));
        assert!(!blocked(status, 3) && !blocked(status, 35) && !blocked(status, 64));
        assert!(!blocked("Name:\tgone\n", 34), "no mask: not listening");
        assert!(!blocked(status, 0) && !blocked(status, 65));
    }
}
