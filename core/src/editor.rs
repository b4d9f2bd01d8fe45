//! Editor rules shared with the web app: which trigger is "the condition", the
//! merged panel's toggles and warnings, per-type presentation tables, and the
//! "would this fire?" preview.

use serde_json::{Map, Value, json};

use crate::gate::Gate;
use crate::merged::{TaskOrigin, check_event, check_origin, check_trigger};
use crate::registry::{self, Entry};
use crate::task_pr::TaskPr;
use crate::trigger::TriggerType;
use crate::trigger::config::{GithubPrMergedConfig, RepoFilter, parse_scheduled};
use crate::trigger::matching::has_exact_repo;

pub mod draft;
pub mod prompt;
pub mod runs;

/// The resolved condition: the first trigger that is neither `scheduled` nor
/// `webhook`. It alone seeds placeholders, the default title and the picker.
pub fn condition_type(types: &[TriggerType]) -> Option<TriggerType> {
    types
        .iter()
        .copied()
        .find(|t| !matches!(t, TriggerType::Scheduled | TriggerType::Webhook))
}

/// The repository picker is disabled only when the resolved condition is
/// `github_pr` (the PR decides the repository). A `github_pr` ahead of a merged
/// trigger therefore disables it: an accepted, pinned gap.
pub fn repository_picker_enabled(condition: Option<TriggerType>) -> bool {
    condition != Some(TriggerType::GithubPr)
}

/// The registry entry that seeds placeholders and the default title.
pub fn seeding_entry(condition: Option<TriggerType>) -> &'static Entry {
    registry::entry(condition.unwrap_or(TriggerType::Scheduled))
}

/// How a panel reads `all_repos`: absent is `false` for the merged trigger (the
/// backend's default) and `true` for `github_pr` (where the backend ignores it).
pub fn read_all_repos(t: TriggerType, config: &Value) -> bool {
    let absent_default = t != TriggerType::GithubPrMerged;
    config
        .get("all_repos")
        .and_then(Value::as_bool)
        .unwrap_or(absent_default)
}

/// The "All repositories" write rule: checking clears `repos`, unchecking
/// leaves them exactly as they are. Other keys are kept.
pub fn set_all_repos(config: &Value, checked: bool) -> Value {
    let mut map = config.as_object().cloned().unwrap_or_default();
    map.insert("all_repos".into(), Value::Bool(checked));
    if checked || !map.contains_key("repos") {
        map.insert("repos".into(), json!([]));
    }
    Value::Object(map)
}

/// The dead-configuration predicate: `all_repos` false and `repos` empty. An
/// organisation entry is live, so it does not trip the warning.
pub fn merged_config_is_dead(config: &Value) -> bool {
    let all_repos = read_all_repos(TriggerType::GithubPrMerged, config);
    let repos_empty = config
        .get("repos")
        .and_then(Value::as_array)
        .is_none_or(|r| r.is_empty());
    !all_repos && repos_empty
}

/// Push and CI match repositories exactly, so they never fire without an exact
/// `owner/name` entry.
pub fn exact_repos_never_fire(repos: &[RepoFilter]) -> bool {
    !has_exact_repo(repos)
}

/// The base-branch input: split on `,` and stored verbatim — no trimming, no
/// dropping (the backend normalises at match time). An untouched empty field
/// stores no entries.
pub fn split_base_branches(input: &str) -> Vec<String> {
    if input.is_empty() {
        return vec![];
    }
    input.split(',').map(str::to_string).collect()
}

pub fn join_list(list: &[String]) -> String {
    list.join(",")
}

/// The push/`github_pr` comma inputs: split, trim, drop empties.
pub fn split_trimmed(input: &str) -> Vec<String> {
    input
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Clicking an organisation badge toggles its `{owner, name: ""}` entry.
pub fn toggle_org(repos: &[RepoFilter], login: &str) -> Vec<RepoFilter> {
    let entry = RepoFilter::new(login, "");
    if repos.contains(&entry) {
        repos.iter().filter(|r| **r != entry).cloned().collect()
    } else {
        let mut out = repos.to_vec();
        out.push(entry);
        out
    }
}

/// Adds a repository entry once.
pub fn add_repo(repos: &[RepoFilter], owner: &str, name: &str) -> Vec<RepoFilter> {
    let entry = RepoFilter::new(owner, name);
    let mut out = repos.to_vec();
    if !out.contains(&entry) {
        out.push(entry);
    }
    out
}

/// The "Add repository" box: text before the first `/` is the organisation,
/// the rest is the search query.
pub fn split_repo_query(input: &str) -> Option<(String, String)> {
    let (org, q) = input.trim().split_once('/')?;
    (!org.is_empty()).then(|| (org.to_string(), q.to_string()))
}

/// Organisation badges render unless the workspace scope is `repos`.
pub fn show_org_badges(scope: Option<&crate::api::GithubWorkspaceSettings>) -> bool {
    scope.is_none_or(|s| s.repo_scope_mode != crate::api::RepoScopeMode::Repos)
}

/// The repository search shows at most this many results.
pub const MAX_SEARCH_RESULTS: usize = 10;

/// The search waits this long after the last keystroke.
pub const SEARCH_DEBOUNCE_MS: u32 = 300;

/// A search request is sent only with both a workspace id and an organisation.
pub fn search_request(workspace_id: Option<&str>, input: &str) -> Option<(String, String)> {
    workspace_id.filter(|w| !w.is_empty())?;
    split_repo_query(input)
}

/// The editor's max-runs input: invalid or below 1 becomes 1.
pub fn parse_max_runs(input: &str) -> i64 {
    input.trim().parse::<i64>().ok().filter(|n| *n >= 1).unwrap_or(1)
}

/// Save is allowed once the trimmed name is non-empty.
pub fn can_save(name: &str) -> bool {
    !name.trim().is_empty()
}

/// After the condition changes, the prompt follows the new default only while
/// it still equals some registry default.
pub fn prompt_after_condition_change(current: &str, condition: Option<TriggerType>) -> Option<String> {
    registry::is_default_prompt(current).then(|| seeding_entry(condition).default_prompt.to_string())
}

/// Badge colours: GitHub types purple, schedule blue, webhook orange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerColor {
    Blue,
    Purple,
    Orange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerIcon {
    Clock,
    Github,
    Webhook,
}

/// Per-type presentation. Exhaustive: a new type does not compile without
/// its icon, colour, badge, info copy and summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TriggerStyle {
    pub icon: TriggerIcon,
    pub color: TriggerColor,
    /// Fluent id of the list badge label.
    pub badge: &'static str,
    /// Fluent id of the info tooltip.
    pub info: &'static str,
}

pub fn style(t: TriggerType) -> TriggerStyle {
    use TriggerColor::*;
    use TriggerIcon::*;
    match t {
        TriggerType::Scheduled => TriggerStyle {
            icon: Clock,
            color: Blue,
            badge: "automations-badge-scheduled",
            info: "automations-info-scheduled",
        },
        TriggerType::GithubPr => TriggerStyle {
            icon: Github,
            color: Purple,
            badge: "automations-badge-github-pr",
            info: "automations-info-github-pr",
        },
        TriggerType::GithubPrMerged => TriggerStyle {
            icon: Github,
            color: Purple,
            badge: "automations-badge-github-pr-merged",
            info: "automations-info-github-pr-merged",
        },
        TriggerType::GithubPush => TriggerStyle {
            icon: Github,
            color: Purple,
            badge: "automations-badge-github-push",
            info: "automations-info-github-push",
        },
        TriggerType::GithubCi => TriggerStyle {
            icon: Github,
            color: Purple,
            badge: "automations-badge-github-ci",
            info: "automations-info-github-ci",
        },
        TriggerType::Webhook => TriggerStyle {
            icon: Webhook,
            color: Orange,
            badge: "automations-badge-webhook",
            info: "automations-info-webhook",
        },
    }
}

/// A collapsed card's summary: a Fluent id and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub id: &'static str,
    pub args: Vec<(&'static str, String)>,
}

impl Summary {
    fn plain(id: &'static str) -> Self {
        Summary { id, args: vec![] }
    }
}

/// The collapsed-summary message per type (never the raw type id).
pub fn summary(t: TriggerType, config: &Value) -> Summary {
    match t {
        TriggerType::Scheduled => {
            let cfg = serde_json::from_value(config.clone())
                .ok()
                .or_else(|| parse_scheduled("{}").ok())
                .unwrap_or_default();
            let expr = cfg.cron_expression.trim().to_string();
            match expr.as_str() {
                "" => Summary::plain("automations-summary-custom-schedule"),
                "@hourly" | "0 * * * *" => Summary::plain("automations-cron-every-hour"),
                "@daily" | "0 0 * * *" => Summary::plain("automations-cron-every-day"),
                "@weekly" | "0 0 * * 0" => Summary::plain("automations-cron-every-week"),
                _ => {
                    let tz = if cfg.timezone.trim().is_empty() {
                        "UTC".to_string()
                    } else {
                        cfg.timezone.trim().to_string()
                    };
                    Summary {
                        id: "automations-summary-cron",
                        args: vec![("expr", expr), ("tz", tz)],
                    }
                }
            }
        }
        TriggerType::GithubPr => {
            let events: Vec<String> = config
                .get("events")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default();
            if events.is_empty() {
                Summary::plain("automations-summary-pr-event")
            } else {
                Summary {
                    id: "automations-summary-pr-events",
                    args: vec![("events", events.join(", "))],
                }
            }
        }
        TriggerType::GithubPrMerged => Summary::plain("automations-summary-pr-merged"),
        TriggerType::GithubPush => Summary::plain("automations-summary-push"),
        TriggerType::GithubCi => Summary::plain("automations-summary-ci"),
        TriggerType::Webhook => Summary::plain("automations-summary-webhook"),
    }
}

/// Picker groups: the registry minus the `schedule` category, grouped by
/// category in first-seen order; unknown categories are dropped.
pub fn picker_groups() -> Vec<(&'static str, Vec<&'static Entry>)> {
    let mut groups: Vec<(&'static str, Vec<&'static Entry>)> = vec![];
    for e in registry::ENTRIES.iter() {
        if e.category == registry::CATEGORY_SCHEDULE {
            continue;
        }
        if e.category != registry::CATEGORY_GITHUB && e.category != registry::CATEGORY_WEBHOOK {
            continue;
        }
        match groups.iter_mut().find(|(c, _)| *c == e.category) {
            Some((_, items)) => items.push(e),
            None => groups.push((e.category, vec![e])),
        }
    }
    groups
}

/// Picker search: case-insensitive on label and description.
pub fn picker_matches(entry: &Entry, query: &str) -> bool {
    let q = query.trim().to_lowercase();
    q.is_empty() || entry.label.to_lowercase().contains(&q) || entry.description.to_lowercase().contains(&q)
}

/// "Would this fire?" for one recent merged PR, by the backend's own gates in
/// the backend's order. `origin` is the task as the server resolved it (its
/// current workspace, and whether it is a run task, which never fires).
pub fn preview_merged(
    pr: &TaskPr,
    origin: Option<&TaskOrigin>,
    automation_workspace: &str,
    config: &Value,
) -> Result<(), Gate> {
    check_event(pr)?;
    let origin = check_origin(origin)?;
    let cfg: GithubPrMergedConfig = serde_json::from_value(config.clone()).map_err(|_| Gate::Config)?;
    check_trigger(&origin.workspace_id, automation_workspace, &cfg, pr)
}

/// A new trigger from the picker: `{type, config: default_config, enabled: true}`.
pub fn new_trigger_config(t: TriggerType) -> Value {
    registry::entry(t).default_config_value()
}

/// Config object for display; non-objects read as empty.
pub fn config_object(config: &Value) -> Map<String, Value> {
    config.as_object().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use TriggerType::*;

    #[test]
    fn condition_is_the_first_non_schedule_non_webhook_trigger() {
        assert_eq!(
            condition_type(&[Scheduled, GithubPrMerged, GithubPr]),
            Some(GithubPrMerged)
        );
        assert_eq!(condition_type(&[Webhook, Scheduled]), None);
        assert_eq!(condition_type(&[GithubPr, GithubPrMerged]), Some(GithubPr));
    }

    #[test]
    fn picker_is_enabled_for_merged_and_disabled_for_github_pr_first() {
        assert!(repository_picker_enabled(condition_type(&[Scheduled, GithubPrMerged])));
        assert!(!repository_picker_enabled(condition_type(&[GithubPr, GithubPrMerged])));
        assert!(repository_picker_enabled(None));
    }

    #[test]
    fn absent_all_repos_reads_false_for_merged_and_true_for_pr() {
        assert!(!read_all_repos(GithubPrMerged, &json!({})));
        assert!(read_all_repos(GithubPr, &json!({})));
        assert!(read_all_repos(GithubPrMerged, &json!({"all_repos": true})));
    }

    #[test]
    fn checking_all_repos_clears_and_unchecking_keeps() {
        let start = json!({"all_repos": false, "repos": [{"owner": "acme", "name": "api"}], "base_branches": ["main"]});
        let checked = set_all_repos(&start, true);
        assert_eq!(
            checked,
            json!({"all_repos": true, "repos": [], "base_branches": ["main"]})
        );
        let unchecked = set_all_repos(&checked, false);
        assert_eq!(unchecked["repos"], json!([]));
        assert!(merged_config_is_dead(&unchecked));
        let keep = set_all_repos(
            &json!({"all_repos": true, "repos": [{"owner": "o", "name": "r"}]}),
            false,
        );
        assert_eq!(keep["repos"], json!([{"owner": "o", "name": "r"}]));
    }

    #[test]
    fn dead_config_predicate() {
        assert!(merged_config_is_dead(&json!({})));
        assert!(merged_config_is_dead(&json!({"all_repos": false, "repos": []})));
        assert!(!merged_config_is_dead(
            &json!({"all_repos": false, "repos": [{"owner": "acme", "name": ""}]})
        ));
        assert!(!merged_config_is_dead(&json!({"all_repos": true})));
    }

    #[test]
    fn base_branch_input_splits_verbatim() {
        assert_eq!(
            split_base_branches(" main , "),
            vec![" main ".to_string(), " ".to_string()]
        );
        assert_eq!(split_base_branches("main,,dev"), vec!["main", "", "dev"]);
        assert!(split_base_branches("").is_empty());
        assert_eq!(split_trimmed(" main , ,dev"), vec!["main", "dev"]);
    }

    #[test]
    fn org_badges_toggle_wildcards() {
        let r = toggle_org(&[], "acme");
        assert_eq!(r, vec![RepoFilter::new("acme", "")]);
        assert!(toggle_org(&r, "acme").is_empty());
        assert_eq!(add_repo(&r, "acme", "api").len(), 2);
        assert_eq!(add_repo(&add_repo(&[], "a", "b"), "a", "b").len(), 1);
        assert_eq!(split_repo_query("acme/ap"), Some(("acme".into(), "ap".into())));
        assert_eq!(split_repo_query("acme"), None);
    }

    #[test]
    fn search_needs_a_workspace_and_an_org_and_org_badges_hide_in_repos_scope() {
        assert_eq!(search_request(None, "acme/api"), None);
        assert_eq!(search_request(Some(""), "acme/api"), None);
        assert_eq!(search_request(Some("ws"), "acme"), None);
        assert_eq!(search_request(Some("ws"), "acme/"), Some(("acme".into(), "".into())));
        let mut scope: crate::api::GithubWorkspaceSettings = serde_json::from_value(json!({})).unwrap();
        assert!(show_org_badges(None));
        assert!(show_org_badges(Some(&scope)));
        scope.repo_scope_mode = crate::api::RepoScopeMode::Repos;
        assert!(!show_org_badges(Some(&scope)));
    }

    #[test]
    fn styles_group_github_types_in_purple() {
        for t in [GithubPr, GithubPrMerged, GithubPush, GithubCi] {
            assert_eq!(style(t).color, TriggerColor::Purple);
            assert_eq!(style(t).icon, TriggerIcon::Github);
        }
        assert_eq!(style(Scheduled).color, TriggerColor::Blue);
        assert_eq!(style(Webhook).color, TriggerColor::Orange);
        assert_eq!(style(GithubPrMerged).badge, "automations-badge-github-pr-merged");
    }

    #[test]
    fn summaries_never_echo_the_type_id() {
        assert_eq!(summary(GithubPrMerged, &json!({})).id, "automations-summary-pr-merged");
        assert_eq!(
            summary(Scheduled, &json!({"cron_expression": "@hourly"})).id,
            "automations-cron-every-hour"
        );
        assert_eq!(
            summary(Scheduled, &json!({"cron_expression": ""})).id,
            "automations-summary-custom-schedule"
        );
        let s = summary(
            Scheduled,
            &json!({"cron_expression": "5 4 * * *", "timezone": "Europe/Berlin"}),
        );
        assert_eq!(
            s.args,
            vec![("expr", "5 4 * * *".to_string()), ("tz", "Europe/Berlin".to_string())]
        );
        assert_eq!(
            summary(GithubPr, &json!({"events": ["opened"]})).args,
            vec![("events", "opened".to_string())]
        );
        for t in TriggerType::ALL {
            assert!(summary(t, &json!({})).id.starts_with("automations-"));
        }
    }

    #[test]
    fn picker_groups_put_merged_right_after_new_pull_requests() {
        let groups = picker_groups();
        let names: Vec<&str> = groups.iter().map(|(c, _)| *c).collect();
        assert_eq!(names, ["github", "webhook"]);
        let github: Vec<&str> = groups[0].1.iter().map(|e| e.label).collect();
        assert_eq!(
            github,
            [
                "New pull requests",
                "Pull request merged",
                "Push to branch",
                "CI check result"
            ]
        );
        assert!(picker_matches(groups[0].1[1], "MERGED"));
        assert!(!picker_matches(groups[0].1[1], "webhook"));
    }

    #[test]
    fn prompt_follows_the_condition_only_while_default() {
        let default = registry::entry(Scheduled).default_prompt;
        assert_eq!(
            prompt_after_condition_change(default, Some(GithubPrMerged)).as_deref(),
            Some(registry::GITHUB_PR_MERGED_PROMPT)
        );
        assert_eq!(prompt_after_condition_change("mine", Some(GithubPrMerged)), None);
    }

    #[test]
    fn preview_uses_the_same_gates_as_the_backend() {
        let pr = TaskPr {
            task_id: "t".into(),
            owner: "acme".into(),
            repo: "api".into(),
            pr_number: 1,
            state: "merged".into(),
            base_branch: "main".into(),
            ..Default::default()
        };
        let task = |ws: &str| TaskOrigin {
            workspace_id: ws.into(),
            is_automation_run: false,
        };
        let (w, v) = (task("W"), task("V"));
        assert_eq!(preview_merged(&pr, Some(&w), "W", &json!({"all_repos": true})), Ok(()));
        assert_eq!(preview_merged(&pr, Some(&w), "W", &json!({})), Err(Gate::Repository));
        assert_eq!(
            preview_merged(&pr, Some(&v), "W", &json!({"all_repos": true})),
            Err(Gate::Workspace)
        );
        assert_eq!(
            preview_merged(&pr, Some(&w), "W", &json!({"all_repos": "x"})),
            Err(Gate::Config)
        );
    }

    /// Gate 7 in the preview: a run task's PR is refused before any trigger
    /// rule is looked at, exactly as the server refuses it.
    #[test]
    fn preview_of_a_run_tasks_pr_says_it_never_fires() {
        let pr = TaskPr {
            task_id: "run".into(),
            owner: "acme".into(),
            repo: "api".into(),
            pr_number: 2,
            state: "merged".into(),
            ..Default::default()
        };
        let run = TaskOrigin {
            workspace_id: "W".into(),
            is_automation_run: true,
        };
        assert_eq!(
            preview_merged(&pr, Some(&run), "W", &json!({"all_repos": true})),
            Err(Gate::NotAutomationRun)
        );
        assert_eq!(
            preview_merged(&pr, None, "W", &json!({"all_repos": true})),
            Err(Gate::TaskResolvable)
        );
    }

    #[test]
    fn small_inputs() {
        assert_eq!(parse_max_runs("0"), 1);
        assert_eq!(parse_max_runs("abc"), 1);
        assert_eq!(parse_max_runs(" 3 "), 3);
        assert!(!can_save("   "));
        assert!(exact_repos_never_fire(&[RepoFilter::new("acme", "")]));
        assert!(!exact_repos_never_fire(&[RepoFilter::new("acme", "api")]));
    }
}
