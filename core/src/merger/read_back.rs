//! After a merge call GitHub refused, or whose answer was lost (a 5xx, a
//! timeout), the merger reads the PR back rather than believing the call:
//! the merge may have happened (by this call, or by someone before it).
//! GitHub's reads can lag its writes, so an open PR is read again after
//! `read_lag`'s waits before the call's own outcome stands.

use super::Said;
use crate::read_lag::reread_delay;

/// How the merge call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeCall {
    /// GitHub answered no (405): whatever merged the PR, this call did not.
    Refused,
    /// No trustworthy answer: the call may have merged the PR.
    Lost,
}

/// What one read-back says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadBack {
    /// Merged by this call: record the merge.
    Merged,
    /// Merged before this call: finish as `decide` does for a merged PR.
    Complete(Said),
    Block(Said),
    /// Still open: read again after `wait`, or, with `None`, the waits are
    /// spent and the call's own outcome stands.
    Open {
        wait: Option<std::time::Duration>,
    },
}

/// The verdict of read-back number `attempt` (from 0), after `call`, that
/// found the PR `merged` (or with a merge time) and in `state`.
pub fn read_back(call: MergeCall, merged: bool, state: &str, attempt: usize) -> ReadBack {
    match (merged, call) {
        (true, MergeCall::Lost) => ReadBack::Merged,
        (true, MergeCall::Refused) => ReadBack::Complete(Said::new("already-merged")),
        (false, _) if state != "open" => ReadBack::Block(Said::new("closed-unmerged")),
        (false, _) => ReadBack::Open {
            wait: reread_delay(attempt),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merged_read_back_is_this_call_s_merge_only_when_its_answer_was_lost() {
        assert_eq!(read_back(MergeCall::Lost, true, "closed", 0), ReadBack::Merged);
        assert_eq!(
            read_back(MergeCall::Refused, true, "closed", 2),
            ReadBack::Complete(Said::new("already-merged"))
        );
    }

    #[test]
    fn a_closed_read_back_blocks_as_closed_whatever_the_call() {
        for call in [MergeCall::Refused, MergeCall::Lost] {
            assert_eq!(
                read_back(call, false, "closed", 3),
                ReadBack::Block(Said::new("closed-unmerged"))
            );
        }
    }

    #[test]
    fn an_open_read_back_waits_a_few_times_then_lets_the_call_stand() {
        let waits = (0..)
            .take_while(|a| {
                matches!(
                    read_back(MergeCall::Lost, false, "open", *a),
                    ReadBack::Open { wait: Some(_) }
                )
            })
            .count();
        assert!(waits > 0);
        assert_eq!(
            read_back(MergeCall::Refused, false, "open", waits),
            ReadBack::Open { wait: None }
        );
    }
}
