//! The reads a page makes as soon as it opens, named once. The app builds its
//! requests with these functions, and `cargo xtask web` writes a script into
//! `index.html` from [`first_reads`] that starts the same requests beside the
//! main module's download. On a phone that saves a round trip after the
//! module runs (165 ms on fast 4G, 560 ms on slow 4G); the browser hands the
//! preloaded answer to the app's own request only when the address is the
//! same byte for byte, hence one source for both.

/// Who is signed in: every page asks, for the header and the role rules.
pub const ME: &str = "/api/v1/me";

/// The caller's workspaces: the layout's switcher.
pub const WORKSPACES: &str = "/api/v1/workspaces";

pub fn repositories(ws: &str) -> String {
    format!("/api/v1/workspaces/{ws}/repositories")
}

pub fn tasks(ws: &str, archived: bool) -> String {
    format!("/api/v1/workspaces/{ws}/tasks?include_archived={archived}")
}

/// Every PR link of the tasks the board shows, in one request.
pub fn board_prs(ws: &str, archived: bool) -> String {
    format!("/api/v1/workspaces/{ws}/board-prs?include_archived={archived}")
}

/// A task page's reads: the task, its events, comments, PR links and agent sessions.
pub fn task(id: &str) -> String {
    format!("/api/v1/tasks/{id}")
}

pub fn task_events(id: &str) -> String {
    format!("/api/v1/tasks/{id}/events")
}

pub fn task_comments(id: &str) -> String {
    format!("/api/v1/tasks/{id}/comments")
}

pub fn task_prs(id: &str) -> String {
    format!("/api/v1/tasks/{id}/prs")
}

pub fn sessions(id: &str) -> String {
    format!("/api/v1/tasks/{id}/sessions")
}

/// An automation page's reads: the automation, its recent runs and evaluations.
pub fn automation(id: &str) -> String {
    format!("/api/v1/automations/{id}")
}

pub fn automation_runs(id: &str) -> String {
    format!("/api/v1/automations/{id}/runs?limit=50")
}

pub fn evaluations(id: &str) -> String {
    format!("/api/v1/automations/{id}/evaluations?limit=30")
}

/// Read by every page, whatever its address.
pub const EVERY_PAGE: [&str; 1] = [ME];

/// A page's address pattern (the router's form: `:name` is one segment) and
/// the reads it makes as it opens, beyond [`EVERY_PAGE`], with `:name`
/// standing for that segment. Only reads the page makes with the address
/// alone belong here (the board opens on its unarchived tasks).
pub fn first_reads() -> Vec<(&'static str, Vec<String>)> {
    vec![
        (
            "/w/:ws",
            vec![
                WORKSPACES.to_string(),
                tasks(":ws", false),
                board_prs(":ws", false),
                repositories(":ws"),
            ],
        ),
        (
            "/w/:ws/tasks/:id",
            vec![
                WORKSPACES.to_string(),
                task(":id"),
                task_events(":id"),
                task_comments(":id"),
                task_prs(":id"),
                sessions(":id"),
            ],
        ),
        // A run's conversation: its run task and that task's agent sessions.
        (
            "/w/:ws/runs/:id",
            vec![WORKSPACES.to_string(), task(":id"), sessions(":id")],
        ),
        (
            "/automations/:id",
            vec![
                WORKSPACES.to_string(),
                automation(":id"),
                automation_runs(":id"),
                evaluations(":id"),
            ],
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_opens_on_its_tasks_links_repositories_and_the_switcher() {
        let board = first_reads();
        let (page, reads) = &board[0];
        assert_eq!(*page, "/w/:ws");
        assert_eq!(
            reads,
            &[
                "/api/v1/workspaces",
                "/api/v1/workspaces/:ws/tasks?include_archived=false",
                "/api/v1/workspaces/:ws/board-prs?include_archived=false",
                "/api/v1/workspaces/:ws/repositories",
            ]
        );
    }

    #[test]
    fn a_task_page_opens_on_the_task_its_events_comments_links_sessions_and_the_switcher() {
        let pages = first_reads();
        let (_, reads) = pages
            .iter()
            .find(|(page, _)| *page == "/w/:ws/tasks/:id")
            .expect("the task page");
        assert_eq!(
            reads,
            &[
                "/api/v1/workspaces",
                "/api/v1/tasks/:id",
                "/api/v1/tasks/:id/events",
                "/api/v1/tasks/:id/comments",
                "/api/v1/tasks/:id/prs",
                "/api/v1/tasks/:id/sessions",
            ]
        );
    }

    #[test]
    fn a_run_and_an_automation_page_open_on_their_own_reads_and_the_switcher() {
        let pages = first_reads();
        let reads = |page: &str| {
            pages
                .iter()
                .find(|(p, _)| *p == page)
                .map(|(_, r)| r.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            reads("/w/:ws/runs/:id"),
            ["/api/v1/workspaces", "/api/v1/tasks/:id", "/api/v1/tasks/:id/sessions"]
        );
        assert_eq!(
            reads("/automations/:id"),
            [
                "/api/v1/workspaces",
                "/api/v1/automations/:id",
                "/api/v1/automations/:id/runs?limit=50",
                "/api/v1/automations/:id/evaluations?limit=30",
            ]
        );
    }

    #[test]
    fn every_placeholder_in_a_read_is_a_segment_of_its_page() {
        for (page, reads) in first_reads() {
            let names: Vec<&str> = page.split('/').filter(|s| s.starts_with(':')).collect();
            for read in reads {
                for part in read.split(['/', '?', '=', '&']).filter(|s| s.starts_with(':')) {
                    assert!(names.contains(&part), "{read} uses {part}, which {page} does not have");
                }
            }
        }
    }
}
