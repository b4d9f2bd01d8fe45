//! The task board: statuses, allowed moves, review hand-off / approve / reject,
//! and binding a pull request to an approval.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Triage,
    Todo,
    Ready,
    Running,
    Review,
    HumanReview,
    Done,
    Blocked,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 8] = [
        TaskStatus::Triage,
        TaskStatus::Todo,
        TaskStatus::Ready,
        TaskStatus::Running,
        TaskStatus::Review,
        TaskStatus::HumanReview,
        TaskStatus::Done,
        TaskStatus::Blocked,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Triage => "triage",
            TaskStatus::Todo => "todo",
            TaskStatus::Ready => "ready",
            TaskStatus::Running => "running",
            TaskStatus::Review => "review",
            TaskStatus::HumanReview => "human_review",
            TaskStatus::Done => "done",
            TaskStatus::Blocked => "blocked",
        }
    }

    pub fn parse(s: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// Why a board move is refused (the API answers 409).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("a task leaves human_review only through approve or reject")]
    LeavesHumanReview,
    #[error("a task enters human_review only through a review hand-off")]
    EntersHumanReview,
    #[error("cannot move a task from {from} to {to}")]
    NotAllowed { from: &'static str, to: &'static str },
    #[error("task is not in human_review (it is {0})")]
    NotInHumanReview(&'static str),
    #[error("task cannot be handed to review from {0}")]
    CannotHandOff(&'static str),
    #[error("task cannot be rejected from {0}")]
    CannotReject(&'static str),
    #[error("the merger can only finish a running task (it is {0})")]
    NotRunning(&'static str),
}

/// Direct moves a user (PATCH) or a tool may make. Approve, reject and the
/// review hand-off have their own functions; a same-status move is a no-op.
pub fn check_move(from: TaskStatus, to: TaskStatus) -> Result<(), MoveError> {
    use TaskStatus::*;
    if from == to {
        return Ok(());
    }
    if from == HumanReview {
        return Err(MoveError::LeavesHumanReview);
    }
    if to == HumanReview {
        return Err(MoveError::EntersHumanReview);
    }
    let allowed: &[TaskStatus] = match from {
        Triage => &[Todo, Ready, Blocked, Done],
        Todo => &[Triage, Ready, Running, Blocked, Done],
        Ready => &[Todo, Running, Blocked, Done],
        Running => &[Ready, Review, Blocked, Done],
        Review => &[Running, Ready, Blocked],
        Done => &[Todo, Ready],
        Blocked => &[Todo, Ready, Running, Done],
        HumanReview => &[],
    };
    if allowed.contains(&to) {
        Ok(())
    } else {
        Err(MoveError::NotAllowed {
            from: from.as_str(),
            to: to.as_str(),
        })
    }
}

/// Where a card can go from the board (the move menu and drag and drop):
/// every other status a direct move allows, in column order.
pub fn move_targets(from: TaskStatus) -> Vec<TaskStatus> {
    TaskStatus::ALL
        .into_iter()
        .filter(|to| *to != from && check_move(from, *to).is_ok())
        .collect()
}

/// Review hand-off: any open status except `human_review` itself moves to
/// `human_review`.
pub fn hand_off_to_review(from: TaskStatus) -> Result<TaskStatus, MoveError> {
    match from {
        TaskStatus::HumanReview | TaskStatus::Done => Err(MoveError::CannotHandOff(from.as_str())),
        _ => Ok(TaskStatus::HumanReview),
    }
}

/// What approving does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// No PR bound: the task is done (the original behaviour).
    Done,
    /// A PR is bound: the task runs while the merger merges it.
    Merge(PrRef),
}

/// Approve is allowed only in `human_review`.
pub fn approve(from: TaskStatus, bound: Option<PrRef>) -> Result<(Approval, TaskStatus), MoveError> {
    if from != TaskStatus::HumanReview {
        return Err(MoveError::NotInHumanReview(from.as_str()));
    }
    Ok(match bound {
        None => (Approval::Done, TaskStatus::Done),
        Some(pr) => (Approval::Merge(pr), TaskStatus::Running),
    })
}

/// Reject sends `human_review` or `review` back to `ready`.
pub fn reject(from: TaskStatus) -> Result<TaskStatus, MoveError> {
    match from {
        TaskStatus::HumanReview | TaskStatus::Review => Ok(TaskStatus::Ready),
        _ => Err(MoveError::CannotReject(from.as_str())),
    }
}

/// The merger's two exits, both from `running`.
pub fn merger_finish(from: TaskStatus, merged: bool) -> Result<TaskStatus, MoveError> {
    if from != TaskStatus::Running {
        return Err(MoveError::NotRunning(from.as_str()));
    }
    Ok(if merged { TaskStatus::Done } else { TaskStatus::Blocked })
}

/// `POST /tasks/{id}/cancel-merge`: the merger's job stops and the task goes
/// back to human review, where it was approved from.
pub fn cancel_merge(from: TaskStatus) -> Result<TaskStatus, MoveError> {
    if from != TaskStatus::Running {
        return Err(MoveError::NotRunning(from.as_str()));
    }
    Ok(TaskStatus::HumanReview)
}

/// A GitHub pull request, compared by (owner, repo, number) — never by string.
#[derive(Debug, Clone, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PrRef {
    pub owner: String,
    pub repo: String,
    pub number: i64,
}

impl PartialEq for PrRef {
    fn eq(&self, other: &Self) -> bool {
        self.number == other.number
            && self.owner.eq_ignore_ascii_case(&other.owner)
            && self.repo.eq_ignore_ascii_case(&other.repo)
    }
}

/// Owner and repository characters in a PR reference: anything but `/` and
/// whitespace (in the sense `crate::schema::PR_REF` publishes).
/// A PR number as both forms and the published pattern accept it: 1 to
/// eighteen significant digits (leading zeros and a `+` allowed).
fn pr_number(digits: &str) -> Option<i64> {
    let n: i64 = digits.parse().ok()?;
    (1..=999_999_999_999_999_999).contains(&n).then_some(n)
}

fn is_name_char(c: char) -> bool {
    !crate::schema::is_space(c) && c != '/'
}

impl PrRef {
    pub fn new(owner: &str, repo: &str, number: i64) -> Self {
        PrRef {
            owner: owner.to_string(),
            repo: repo.to_string(),
            number,
        }
    }

    /// The canonical web URL.
    pub fn url(&self) -> String {
        format!("https://github.com/{}/{}/pull/{}", self.owner, self.repo, self.number)
    }

    /// Parses a GitHub PR URL (`https://github.com/o/r/pull/7`, with anything
    /// after the number such as `/files` or `#x`) or a short `o/r#7` reference.
    pub fn parse(input: &str) -> Option<PrRef> {
        let s = crate::schema::trim_space(input);
        if let Some((pr, consumed)) = match_url_at(s)
            && s[consumed..]
                .chars()
                .next()
                .is_none_or(|c| matches!(c, '/' | '?' | '#'))
        {
            return Some(pr);
        }
        let (path, number) = s.split_once('#')?;
        let (owner, repo) = path.split_once('/')?;
        let number = pr_number(number)?;
        (!owner.is_empty() && !repo.is_empty() && owner.chars().all(is_name_char) && repo.chars().all(is_name_char))
            .then(|| PrRef::new(owner, repo, number))
    }
}

/// Matches `https?://github.com/<owner>/<repo>/pull/<digits>` (case-insensitive)
/// at the start of `s`; returns the ref and the bytes consumed.
fn match_url_at(s: &str) -> Option<(PrRef, usize)> {
    // Compare prefixes in place: copying the rest of a long text for every
    // candidate `h` would make scanning a comment quadratic.
    let starts = |at: usize, prefix: &str| {
        s.as_bytes()
            .get(at..at + prefix.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(prefix.as_bytes()))
    };
    let scheme_len = if starts(0, "https://") {
        8
    } else if starts(0, "http://") {
        7
    } else {
        return None;
    };
    if !starts(scheme_len, "github.com/") {
        return None;
    }
    let mut pos = scheme_len + "github.com/".len();
    let take_segment = |from: usize| -> Option<(&str, usize)> {
        let seg_len = s[from..].find(|c: char| !is_name_char(c)).unwrap_or(s.len() - from);
        (seg_len > 0 && s[from + seg_len..].starts_with('/')).then(|| (&s[from..from + seg_len], from + seg_len + 1))
    };
    let (owner, next) = take_segment(pos)?;
    pos = next;
    let (repo, next) = take_segment(pos)?;
    pos = next;
    if !starts(pos, "pull/") {
        return None;
    }
    pos += 5;
    let digits = s[pos..].find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len() - pos);
    if digits == 0 {
        return None;
    }
    let number = pr_number(&s[pos..pos + digits])?;
    Some((PrRef::new(owner, repo, number), pos + digits))
}

/// The first GitHub PR URL anywhere in free text.
pub fn find_pr_url(text: &str) -> Option<PrRef> {
    text.char_indices()
        .filter(|(_, c)| *c == 'h' || *c == 'H')
        .find_map(|(i, _)| match_url_at(&text[i..]).map(|(pr, _)| pr))
}

/// A task event as PR binding reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum HandoffEvent {
    /// A review hand-off, with its structured PR (if any) and free text.
    ReviewRequested {
        pr: Option<PrRef>,
        text: String,
    },
    Rejected,
    /// Any other event kind; binding ignores it.
    Other,
}

/// The PR an approval acts on. Hand-off and reject events are read newest
/// first and the scan stops at the first reject: only the current review cycle
/// counts. Within a hand-off the structured PR wins over text. Comments are read
/// only for legacy tasks with no hand-off or reject events at all.
pub fn bound_pr(events_newest_first: &[HandoffEvent], comments_newest_first: &[String]) -> Option<PrRef> {
    let mut saw_cycle_event = false;
    for ev in events_newest_first {
        match ev {
            HandoffEvent::Rejected => return None,
            HandoffEvent::ReviewRequested { pr, text } => {
                saw_cycle_event = true;
                if let Some(found) = pr.clone().or_else(|| find_pr_url(text)) {
                    return Some(found);
                }
            }
            HandoffEvent::Other => {}
        }
    }
    if saw_cycle_event {
        return None;
    }
    comments_newest_first.iter().find_map(|c| find_pr_url(c))
}

/// A task event as binding reads it, from its stored kind and payload. A
/// hand-off whose payload cannot be read still opens a review cycle.
pub fn handoff_event(kind: &str, payload: &serde_json::Value) -> HandoffEvent {
    use crate::api::{EVENT_REJECTED, EVENT_REVIEW_REQUESTED, ReviewHandoff};
    match kind {
        EVENT_REVIEW_REQUESTED => {
            let (pr, text) = match ReviewHandoff::deserialize(payload) {
                Ok(h) => (h.pr, format!("{} {}", h.summary, h.pr_url)),
                Err(_) => (None, String::new()),
            };
            HandoffEvent::ReviewRequested { pr, text }
        }
        EVENT_REJECTED => HandoffEvent::Rejected,
        _ => HandoffEvent::Other,
    }
}

/// The PR an approval of the task acts on, from its events and comments in
/// the order the API lists them (oldest first). Approve binds it, and the task
/// page names its head, so both read it through this one rule.
pub fn task_bound_pr(events: &[crate::api::TaskEvent], comments: &[crate::api::Comment]) -> Option<PrRef> {
    let events: Vec<HandoffEvent> = events
        .iter()
        .rev()
        .map(|e| handoff_event(&e.kind, &e.payload))
        .collect();
    let comments: Vec<String> = comments.iter().rev().map(|c| c.body.clone()).collect();
    bound_pr(&events, &comments)
}

/// `ci_wait_timeout_minutes=N` from the task description or a comment (the
/// newest comment wins over the description). A value outside 1–1440 minutes
/// (or too long to be a number) is ignored, as if it were not there.
pub fn ci_wait_timeout_minutes(description: &str, comments_newest_first: &[String]) -> Option<u64> {
    fn find(text: &str) -> Option<u64> {
        const KEY: &str = "ci_wait_timeout_minutes=";
        let at = text.rfind(KEY)?;
        let digits: String = text[at + KEY.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let n: i64 = digits.parse().ok()?;
        crate::bounds::ci_wait_minutes(n).ok().map(|n| n as u64)
    }
    comments_newest_first
        .iter()
        .find_map(|c| find(c))
        .or_else(|| find(description))
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskStatus::*;

    #[test]
    fn a_cancelled_merge_goes_back_to_human_review_from_running_only() {
        assert_eq!(cancel_merge(Running), Ok(HumanReview));
        assert!(cancel_merge(Done).is_err());
        assert!(cancel_merge(HumanReview).is_err());
    }

    #[test]
    fn statuses_round_trip() {
        for s in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(TaskStatus::parse("merging"), None);
    }

    #[test]
    fn only_approve_or_reject_leave_human_review() {
        for to in TaskStatus::ALL {
            if to != HumanReview {
                assert_eq!(check_move(HumanReview, to), Err(MoveError::LeavesHumanReview));
            }
        }
        assert!(approve(HumanReview, None).is_ok());
        assert_eq!(reject(HumanReview), Ok(Ready));
    }

    #[test]
    fn entering_human_review_needs_a_hand_off() {
        assert_eq!(check_move(Running, HumanReview), Err(MoveError::EntersHumanReview));
        assert_eq!(hand_off_to_review(Running), Ok(HumanReview));
        assert_eq!(hand_off_to_review(Review), Ok(HumanReview));
        assert!(hand_off_to_review(HumanReview).is_err());
        assert!(hand_off_to_review(Done).is_err());
    }

    #[test]
    fn the_happy_path_moves() {
        for (a, b) in [
            (Triage, Todo),
            (Todo, Ready),
            (Ready, Running),
            (Running, Review),
            (Running, Blocked),
            (Blocked, Ready),
            (Done, Ready),
        ] {
            assert_eq!(check_move(a, b), Ok(()), "{a:?}->{b:?}");
        }
        assert!(check_move(Review, Done).is_err());
        assert!(check_move(Triage, Running).is_err());
        assert_eq!(check_move(Done, Done), Ok(()));
    }

    #[test]
    fn approve_without_pr_is_done_and_with_pr_is_running() {
        assert_eq!(approve(HumanReview, None), Ok((Approval::Done, Done)));
        let pr = PrRef::new("acme", "api", 7);
        assert_eq!(
            approve(HumanReview, Some(pr.clone())),
            Ok((Approval::Merge(pr), Running))
        );
        assert_eq!(approve(Done, None), Err(MoveError::NotInHumanReview("done")));
    }

    #[test]
    fn merger_exits_from_running_only() {
        assert_eq!(merger_finish(Running, true), Ok(Done));
        assert_eq!(merger_finish(Running, false), Ok(Blocked));
        assert!(merger_finish(Done, true).is_err());
    }

    #[test]
    fn pr_urls_parse_and_compare_by_triple() {
        let a = PrRef::parse("https://github.com/Acme/API/pull/12/files").unwrap();
        assert_eq!(a, PrRef::new("acme", "api", 12));
        assert_eq!(
            PrRef::parse("http://GitHub.com/o/r/pull/3#discussion"),
            Some(PrRef::new("o", "r", 3))
        );
        assert_eq!(PrRef::parse("acme/api#9"), Some(PrRef::new("acme", "api", 9)));
        assert_eq!(PrRef::parse("https://github.com/o/r/pull/12abc"), None);
        for bad in [
            "https://gitlab.com/o/r/pull/1",
            "https://github.com/o/r/issues/1",
            "https://github.com/o/pull/1",
            "nope",
            "o/r#0",
        ] {
            assert_eq!(PrRef::parse(bad), None, "{bad}");
        }
        assert_ne!(PrRef::new("a", "b", 1), PrRef::new("a", "b", 2));
        assert_eq!(PrRef::new("o", "r", 5).url(), "https://github.com/o/r/pull/5");
    }

    #[test]
    fn free_text_finds_the_first_url() {
        let t = "see HTTPS://github.com/a/b/pull/1 and https://github.com/c/d/pull/2";
        assert_eq!(find_pr_url(t), Some(PrRef::new("a", "b", 1)));
        assert_eq!(find_pr_url("nothing here http://example.com"), None);
    }

    fn handoff(pr: Option<PrRef>, text: &str) -> HandoffEvent {
        HandoffEvent::ReviewRequested { pr, text: text.into() }
    }

    #[test]
    fn latest_handoff_wins_after_a_rejected_pr() {
        let old = PrRef::new("o", "r", 1);
        let new = PrRef::new("o", "r", 2);
        let events = vec![
            handoff(Some(new.clone()), ""),
            HandoffEvent::Rejected,
            handoff(Some(old), ""),
        ];
        assert_eq!(bound_pr(&events, &[]), Some(new));
    }

    #[test]
    fn a_rejected_handoff_never_falls_back_to_an_old_comment() {
        let events = vec![HandoffEvent::Rejected, handoff(Some(PrRef::new("o", "r", 1)), "")];
        let comments = vec!["https://github.com/o/r/pull/1".to_string()];
        assert_eq!(bound_pr(&events, &comments), None);
    }

    #[test]
    fn structured_pr_beats_text_and_text_is_a_fallback() {
        let events = vec![handoff(Some(PrRef::new("o", "r", 2)), "https://github.com/o/r/pull/9")];
        assert_eq!(bound_pr(&events, &[]), Some(PrRef::new("o", "r", 2)));
        let events = vec![handoff(None, "done, see https://github.com/o/r/pull/9")];
        assert_eq!(bound_pr(&events, &[]), Some(PrRef::new("o", "r", 9)));
    }

    #[test]
    fn handoff_without_any_pr_binds_nothing_even_with_comments() {
        let events = vec![handoff(None, "research notes")];
        let comments = vec!["https://github.com/o/r/pull/1".to_string()];
        assert_eq!(bound_pr(&events, &comments), None);
    }

    #[test]
    fn legacy_tasks_fall_back_to_comments() {
        let comments = vec!["old".to_string(), "https://github.com/o/r/pull/4".to_string()];
        assert_eq!(
            bound_pr(&[HandoffEvent::Other], &comments),
            Some(PrRef::new("o", "r", 4))
        );
        assert_eq!(bound_pr(&[], &[]), None);
    }

    #[test]
    fn the_task_binds_what_its_listed_events_and_comments_bind() {
        use crate::api::{Actor, Comment, TaskEvent};
        let at = chrono::DateTime::UNIX_EPOCH;
        let event = |kind: &str, payload: serde_json::Value| TaskEvent {
            id: String::new(),
            task_id: String::new(),
            kind: kind.into(),
            payload,
            actor: Actor::System,
            created_at: at,
        };
        let comment = |body: &str| Comment {
            id: String::new(),
            task_id: String::new(),
            body: body.into(),
            author: String::new(),
            created_at: at,
        };
        let pr = |n: i64| serde_json::json!({"summary": "", "pr": {"owner": "o", "repo": "r", "number": n}});
        // Oldest first, as the API lists them: the newest hand-off binds.
        let events = [
            event("review_requested", pr(1)),
            event("rejected", serde_json::json!({})),
            event("review_requested", pr(2)),
        ];
        assert_eq!(task_bound_pr(&events, &[]), Some(PrRef::new("o", "r", 2)));
        // A hand-off's text binds when it names no structured PR.
        let text = serde_json::json!({"summary": "see https://github.com/o/r/pull/7"});
        assert_eq!(
            task_bound_pr(&[event("review_requested", text)], &[]),
            Some(PrRef::new("o", "r", 7))
        );
        // An unreadable hand-off still opens a cycle, so old comments bind nothing.
        let comments = [comment("https://github.com/o/r/pull/3")];
        assert_eq!(
            task_bound_pr(&[event("review_requested", serde_json::json!(5))], &comments),
            None
        );
        // With no hand-off at all, the newest comment naming a PR binds.
        let comments = [
            comment("https://github.com/o/r/pull/3"),
            comment("https://github.com/o/r/pull/4"),
        ];
        assert_eq!(
            task_bound_pr(&[event("created", serde_json::json!({}))], &comments),
            Some(PrRef::new("o", "r", 4))
        );
    }

    #[test]
    fn ci_timeout_override_from_comment_then_description() {
        assert_eq!(ci_wait_timeout_minutes("x ci_wait_timeout_minutes=25 y", &[]), Some(25));
        assert_eq!(
            ci_wait_timeout_minutes("ci_wait_timeout_minutes=25", &["ci_wait_timeout_minutes=3".into()]),
            Some(3)
        );
        assert_eq!(ci_wait_timeout_minutes("ci_wait_timeout_minutes=0", &[]), None);
        assert_eq!(ci_wait_timeout_minutes("ci_wait_timeout_minutes=1440", &[]), Some(1440));
        assert_eq!(ci_wait_timeout_minutes("ci_wait_timeout_minutes=1441", &[]), None);
        assert_eq!(
            ci_wait_timeout_minutes("ci_wait_timeout_minutes=99999999999999999999999999", &[]),
            None
        );
        assert_eq!(ci_wait_timeout_minutes("nothing", &["nope".into()]), None);
    }

    #[test]
    fn a_card_moves_only_where_a_direct_move_is_allowed() {
        use TaskStatus::*;
        assert_eq!(move_targets(Done), [Todo, Ready]);
        assert!(
            move_targets(HumanReview).is_empty(),
            "review is left by approve or reject"
        );
        assert!(!move_targets(Todo).contains(&HumanReview));
        assert!(!move_targets(Todo).contains(&Todo));
    }
}
