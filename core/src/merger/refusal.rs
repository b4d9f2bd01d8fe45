//! What a merge GitHub refused (405) means. Most refusals stand, but two are
//! not about the PR: the branch takes merges through its queue only, or the
//! base branch moved between GitHub's mergeability check and the merge
//! ("Base branch was modified. Review and try the merge again."), which
//! happens whenever two PRs merge into one base at nearly the same moment —
//! two approved tasks, two replicas — and passes once GitHub has recomputed.

/// A base that keeps moving is read again this many times, then the
/// refusal stands: a busy base is worth waiting out, not forever.
pub const BASE_MOVED_RETRIES: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Merge through the merge queue instead.
    UseQueue,
    /// The base moved under the merge: read the PR again, then decide again.
    BaseMoved,
    /// The refusal stands: read the PR back (it may have merged anyway).
    Stands,
}

/// Classifies GitHub's refusal `message`. `queue_tried`: the queue was
/// already taken up once; `base_moves`: base-moved refusals seen so far.
pub fn after_refusal(message: &str, queue_tried: bool, base_moves: u32) -> Refusal {
    let m = message.to_ascii_lowercase();
    if m.contains("merge queue") && !queue_tried {
        Refusal::UseQueue
    } else if m.contains("base branch was modified") && base_moves < BASE_MOVED_RETRIES {
        Refusal::BaseMoved
    } else {
        Refusal::Stands
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE_MOVED: &str = "Base branch was modified. Review and try the merge again.";

    #[test]
    fn a_base_that_moved_under_the_merge_is_read_again_a_bounded_number_of_times() {
        assert_eq!(after_refusal(BASE_MOVED, false, 0), Refusal::BaseMoved);
        assert_eq!(
            after_refusal(BASE_MOVED, false, BASE_MOVED_RETRIES - 1),
            Refusal::BaseMoved
        );
        assert_eq!(after_refusal(BASE_MOVED, false, BASE_MOVED_RETRIES), Refusal::Stands);
    }

    #[test]
    fn the_merge_queue_is_taken_up_once() {
        let m = "Changes must be made through the merge queue";
        assert_eq!(after_refusal(m, false, 0), Refusal::UseQueue);
        assert_eq!(after_refusal(m, true, 0), Refusal::Stands);
    }

    #[test]
    fn any_other_refusal_stands() {
        for m in [
            "Pull Request is not mergeable",
            "Required status check \"build\" is expected.",
            "Head branch was modified. Review and try the merge again.",
            "",
        ] {
            assert_eq!(after_refusal(m, false, 0), Refusal::Stands, "{m}");
        }
    }
}
