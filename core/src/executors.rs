//! The executors this server can run an agent with. An automation names one
//! (`executor_profile_id`) or none (the server's default); a name the server
//! does not know is refused, so a run never starts on an executor that does
//! not exist.

use serde::{Deserialize, Serialize};

/// One executor: its id, its kind (which decides what it can do), and
/// whether it takes several repositories at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Executor {
    pub id: String,
    pub kind: String,
    pub several_repositories: bool,
}

/// Kinds that check out several repositories side by side.
const SEVERAL: &[&str] = &["worktree", "local_docker", "ssh", "sprites"];

/// What Kandev runs today: the agent as a process on the server's host.
pub fn known() -> Vec<Executor> {
    ["local"]
        .iter()
        .map(|kind| Executor {
            id: (*kind).to_string(),
            kind: (*kind).to_string(),
            several_repositories: SEVERAL.contains(kind),
        })
        .collect()
}

/// An automation's executor: none (the default) or one the server knows.
pub fn check(id: &str) -> Result<(), String> {
    if id.is_empty() || known().iter().any(|e| e.id == id) {
        Ok(())
    } else {
        let names: Vec<String> = known().into_iter().map(|e| e.id).collect();
        Err(format!(
            "executor_profile_id: unknown executor {id:?}; this server runs {}",
            names.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_and_known_executors_pass_and_others_are_named_in_the_refusal() {
        assert_eq!(check(""), Ok(()));
        assert_eq!(check("local"), Ok(()));
        let refused = check("ssh-prod").unwrap_err();
        assert_eq!(
            refused,
            "executor_profile_id: unknown executor \"ssh-prod\"; this server runs local"
        );
    }

    #[test]
    fn only_multi_checkout_kinds_take_several_repositories() {
        assert!(known().iter().all(|e| !e.several_repositories), "local takes one");
        assert!(SEVERAL.contains(&"worktree"));
    }
}
