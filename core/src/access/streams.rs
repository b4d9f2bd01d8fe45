//! How many live streams (`GET /workspaces/{ws}/stream`) stay open at once.
//! Each holds a connection, a file descriptor and a task, and every live
//! notice is written to each: without a bound, one member's script (or a
//! leaked viewer token) could open enough to leave the server no descriptor
//! for its database, its agents or anyone else's requests.

/// Streams one caller (a user, or the admin token) may hold at once on one
/// replica (each counts its own): a browser opens one per open page, and
/// keeps at most six connections to a host over HTTP/1.1 anyway.
pub const STREAMS_PER_CALLER: usize = 16;
/// Streams one replica holds at once, all callers together.
pub const STREAMS_PER_REPLICA: usize = 1000;

/// Why a stream was not opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamRefusal {
    /// This caller holds `STREAMS_PER_CALLER` already (429: close one).
    Caller,
    /// The replica holds `STREAMS_PER_REPLICA` (503: another may have room).
    Replica,
}

impl StreamRefusal {
    pub fn message(self) -> String {
        match self {
            StreamRefusal::Caller => {
                format!("you have {STREAMS_PER_CALLER} live streams open already: close a page (or a stream) first")
            }
            StreamRefusal::Replica => {
                format!("this server has {STREAMS_PER_REPLICA} live streams open; retry shortly")
            }
        }
    }
}

/// Whether one more stream opens, with `caller_open` of the caller's and
/// `replica_open` in all already open. The caller's own bound comes first:
/// one caller at its bound is told so even on a full replica.
pub fn admit_stream(caller_open: usize, replica_open: usize) -> Result<(), StreamRefusal> {
    if caller_open >= STREAMS_PER_CALLER {
        Err(StreamRefusal::Caller)
    } else if replica_open >= STREAMS_PER_REPLICA {
        Err(StreamRefusal::Replica)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_opens_streams_up_to_its_bound_and_the_replica_up_to_its_own() {
        assert_eq!(admit_stream(0, 0), Ok(()));
        assert_eq!(admit_stream(STREAMS_PER_CALLER - 1, 0), Ok(()));
        assert_eq!(admit_stream(STREAMS_PER_CALLER, 0), Err(StreamRefusal::Caller));
        assert_eq!(admit_stream(0, STREAMS_PER_REPLICA - 1), Ok(()));
        assert_eq!(admit_stream(0, STREAMS_PER_REPLICA), Err(StreamRefusal::Replica));
        assert_eq!(
            admit_stream(STREAMS_PER_CALLER, STREAMS_PER_REPLICA),
            Err(StreamRefusal::Caller),
            "the caller's own bound first"
        );
    }

    #[test]
    fn each_refusal_says_what_to_do() {
        assert_eq!(
            StreamRefusal::Caller.message(),
            "you have 16 live streams open already: close a page (or a stream) first"
        );
        assert_eq!(
            StreamRefusal::Replica.message(),
            "this server has 1000 live streams open; retry shortly"
        );
    }
}
