//! A replica's name (`KANDEV_REPLICA_ID`) owns its leases, so two processes
//! under one name would both hold every lease it holds, and a restart
//! releases "its earlier" leases: the other's. Each process therefore claims
//! its name first, as the lease `replica:{name}` owned by its instance — the
//! machine's boot, its pid and start time, and a nonce. A claim held by an
//! instance of this same boot whose process is gone (a crash, `kill -9`)
//! is taken over at once; any other waits for the claim to run out.

/// One running process: where it runs and which process it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// The machine's boot (`/proc/sys/kernel/random/boot_id`).
    pub boot: String,
    pub pid: u32,
    /// Its start time, in clock ticks since boot (`/proc/<pid>/stat`): a
    /// reused pid starts later.
    pub start: u64,
    /// Tells apart servers embedded in one process (tests).
    pub nonce: String,
}

impl Instance {
    /// Its form as a lease owner.
    pub fn owner(&self) -> String {
        format!("{}/{}/{}/{}", self.boot, self.pid, self.start, self.nonce)
    }

    /// An instance from its owner form; `None` for anything else.
    pub fn parse(owner: &str) -> Option<Self> {
        let mut parts = owner.split('/');
        let boot = parts.next().filter(|b| !b.is_empty())?.to_string();
        let pid = parts.next()?.parse().ok()?;
        let start = parts.next()?.parse().ok()?;
        let nonce = parts.next()?.to_string();
        parts.next().is_none().then_some(Self {
            boot,
            pid,
            start,
            nonce,
        })
    }
}

/// Whether the instance whose owner form is `holder` has surely ended, seen
/// from `me`: it ran on this same boot, and its pid now runs a process that
/// started at another time, or none (`start_of`). On another machine, or a
/// holder that names no instance, nothing can be told: `false`.
pub fn surely_gone(holder: &str, me: &Instance, start_of: impl Fn(u32) -> Option<u64>) -> bool {
    match Instance::parse(holder) {
        Some(h) if h.boot == me.boot && h != *me => start_of(h.pid) != Some(h.start),
        _ => false,
    }
}

/// The field of `/proc/<pid>/stat` after `comm` that holds its start time
/// (the 22nd of the whole line); `comm` may hold anything, `)` too.
pub fn start_time(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> Instance {
        Instance {
            boot: "b1".into(),
            pid: 100,
            start: 5000,
            nonce: "n1".into(),
        }
    }

    #[test]
    fn an_instance_reads_back_from_its_owner_form() {
        assert_eq!(Instance::parse(&me().owner()), Some(me()));
        for not_one in ["", "replica-a", "b1/x/1/n", "b1/1/2", "b1/1/2/n/extra", "/1/2/n"] {
            assert_eq!(Instance::parse(not_one), None, "{not_one}");
        }
    }

    #[test]
    fn a_claim_of_this_boot_whose_process_is_gone_or_another_is_surely_gone() {
        let held = "b1/42/700/n0";
        assert!(surely_gone(held, &me(), |_| None), "no process with its pid");
        assert!(surely_gone(held, &me(), |_| Some(9000)), "its pid reused later");
        assert!(!surely_gone(held, &me(), |_| Some(700)), "it still runs");
    }

    #[test]
    fn a_claim_from_another_machine_or_of_no_instance_cannot_be_told_gone() {
        assert!(!surely_gone("b2/42/700/n0", &me(), |_| None));
        assert!(!surely_gone("replica-a", &me(), |_| None));
        // Another server in this very process: alive, whatever its nonce.
        assert!(!surely_gone("b1/100/5000/n2", &me(), |pid| (pid == 100).then_some(5000)));
        assert!(!surely_gone(&me().owner(), &me(), |_| None), "its own claim");
    }

    #[test]
    fn a_start_time_is_read_past_a_comm_holding_brackets_and_spaces() {
        let stat = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10";
        assert_eq!(start_time(stat), Some(98765));
        assert_eq!(start_time("4242 (short) S 1"), None);
    }
}
