//! A repository renamed or transferred on GitHub: a trigger that names it
//! must follow it. Events arrive under the new name only, so a filter left
//! on the old one would stop matching — and a merged PR would never archive
//! its task. An organisation wildcard (`owner` with an empty name) is about
//! the organisation, not the repository, and stays as it is.

use serde_json::Value;

use crate::task_pr::same_repository;

/// `config` with every repository entry naming `from` (GitHub's names are
/// case-insensitive) renamed to `to`, case and all (push and CI filters
/// match exactly); `None` when that changes nothing.
/// An entry already naming `to` absorbs the old one rather than doubling.
pub fn follow_repo_move(config: &Value, from: (&str, &str), to: (&str, &str)) -> Option<Value> {
    let repos = config.get("repos")?.as_array()?;
    let names = |e: &Value, (owner, name): (&str, &str)| {
        let field = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
        !name.is_empty() && same_repository((field("owner"), field("name")), (owner, name))
    };
    if !repos.iter().any(|e| names(e, from)) {
        return None;
    }
    let mut out: Vec<Value> = vec![];
    for entry in repos {
        let entry = if names(entry, from) {
            let mut moved = entry.clone();
            moved["owner"] = Value::from(to.0);
            moved["name"] = Value::from(to.1);
            moved
        } else {
            entry.clone()
        };
        if !(names(&entry, to) && out.iter().any(|e| names(e, to))) {
            out.push(entry);
        }
    }
    let mut moved = config.clone();
    moved["repos"] = Value::Array(out);
    (moved != *config).then_some(moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FROM: (&str, &str) = ("acme", "api");
    const TO: (&str, &str) = ("newco", "service");

    #[test]
    fn an_entry_naming_the_old_repository_follows_it_in_any_case() {
        let config =
            json!({"all_repos": false, "repos": [{"owner": "ACME", "name": "Api"}], "base_branches": ["main"]});
        assert_eq!(
            follow_repo_move(&config, FROM, TO),
            Some(
                json!({"all_repos": false, "repos": [{"owner": "newco", "name": "service"}], "base_branches": ["main"]})
            )
        );
    }

    #[test]
    fn organisation_wildcards_and_other_repositories_stay() {
        let config = json!({"repos": [{"owner": "acme", "name": ""}, {"owner": "acme", "name": "web"}]});
        assert_eq!(follow_repo_move(&config, FROM, TO), None);
        let mixed = json!({"repos": [{"owner": "acme", "name": ""}, {"owner": "acme", "name": "api"}]});
        assert_eq!(
            follow_repo_move(&mixed, FROM, TO),
            Some(json!({"repos": [{"owner": "acme", "name": ""}, {"owner": "newco", "name": "service"}]}))
        );
    }

    #[test]
    fn a_rename_that_only_changes_case_renames_the_entries_exactly() {
        let config = json!({"repos": [{"owner": "acme", "name": "api"}, {"owner": "acme", "name": "API"}]});
        assert_eq!(
            follow_repo_move(&config, ("acme", "api"), ("Acme", "API")),
            Some(json!({"repos": [{"owner": "Acme", "name": "API"}]}))
        );
        let already = json!({"repos": [{"owner": "Acme", "name": "API"}]});
        assert_eq!(follow_repo_move(&already, ("acme", "api"), ("Acme", "API")), None);
    }

    #[test]
    fn an_entry_already_naming_the_new_repository_absorbs_the_old_one() {
        let config = json!({"repos": [{"owner": "newco", "name": "service"}, {"owner": "acme", "name": "api"}]});
        assert_eq!(
            follow_repo_move(&config, FROM, TO),
            Some(json!({"repos": [{"owner": "newco", "name": "service"}]}))
        );
    }

    #[test]
    fn configs_without_repository_entries_are_untouched() {
        for config in [
            json!({"cron": "0 9 * * *"}),
            json!({"repos": null}),
            json!({"repos": "acme/api"}),
            json!({"repos": [7, null]}),
        ] {
            assert_eq!(follow_repo_move(&config, FROM, TO), None, "{config}");
        }
    }
}
