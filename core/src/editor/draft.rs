//! The editor's draft of an automation's triggers, the section's moves
//! (schedule, condition, webhook mode) and the save diff. Pure, so the browser
//! and the tests agree on what a click does.

use serde_json::{Map, Value};

use super::{condition_type, new_trigger_config};
use crate::api::{NewTrigger, PatchTrigger, Trigger};
use crate::trigger::TriggerType;

/// A trigger as the editor holds it; `id` is `None` until saved.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftTrigger {
    pub id: Option<String>,
    pub trigger_type: TriggerType,
    pub config: Value,
    pub enabled: bool,
}

impl DraftTrigger {
    /// A picker selection: `{type, config: default_config, enabled: true}`.
    pub fn new(t: TriggerType) -> Self {
        DraftTrigger {
            id: None,
            trigger_type: t,
            config: new_trigger_config(t),
            enabled: true,
        }
    }

    pub fn from_saved(t: &Trigger) -> Self {
        DraftTrigger {
            id: Some(t.id.clone()),
            trigger_type: t.trigger_type,
            config: t.config.clone(),
            enabled: t.enabled,
        }
    }

    pub fn to_new(&self) -> NewTrigger {
        NewTrigger {
            trigger_type: self.trigger_type,
            config: self.config.clone(),
            enabled: Some(self.enabled),
        }
    }
}

pub fn types(draft: &[DraftTrigger]) -> Vec<TriggerType> {
    draft.iter().map(|d| d.trigger_type).collect()
}

/// Webhook mode: any trigger is a webhook.
pub fn is_webhook_mode(draft: &[DraftTrigger]) -> bool {
    draft.iter().any(|d| d.trigger_type == TriggerType::Webhook)
}

/// The schedule editor binds to the first `scheduled` trigger.
pub fn schedule_index(draft: &[DraftTrigger]) -> Option<usize> {
    draft.iter().position(|d| d.trigger_type == TriggerType::Scheduled)
}

/// The condition card shows the resolved condition (at most one is shown).
pub fn condition_index(draft: &[DraftTrigger]) -> Option<usize> {
    let t = condition_type(&types(draft))?;
    draft.iter().position(|d| d.trigger_type == t)
}

/// A schedule change: creates the trigger on the first change, and merges the
/// new keys over the old config (`{...old, ...new}`).
pub fn set_schedule(draft: &[DraftTrigger], patch: &Map<String, Value>) -> Vec<DraftTrigger> {
    let mut out = draft.to_vec();
    let i = match schedule_index(&out) {
        Some(i) => i,
        None => {
            out.push(DraftTrigger::new(TriggerType::Scheduled));
            out.len() - 1
        }
    };
    let mut config = out[i].config.as_object().cloned().unwrap_or_default();
    for (k, v) in patch {
        config.insert(k.clone(), v.clone());
    }
    out[i].config = Value::Object(config);
    out
}

/// "Or use a webhook instead": the schedule and condition go, a webhook with
/// `{}` comes in.
pub fn use_webhook_instead(draft: &[DraftTrigger]) -> Vec<DraftTrigger> {
    let mut out: Vec<DraftTrigger> = draft
        .iter()
        .filter(|d| d.trigger_type == TriggerType::Webhook)
        .cloned()
        .collect();
    if out.is_empty() {
        out.push(DraftTrigger {
            config: Value::Object(Map::new()),
            ..DraftTrigger::new(TriggerType::Webhook)
        });
    }
    out
}

/// "Switch to scheduled": the webhook trigger goes.
pub fn switch_to_scheduled(draft: &[DraftTrigger]) -> Vec<DraftTrigger> {
    draft
        .iter()
        .filter(|d| d.trigger_type != TriggerType::Webhook)
        .cloned()
        .collect()
}

pub fn add_trigger(draft: &[DraftTrigger], t: TriggerType) -> Vec<DraftTrigger> {
    let mut out = draft.to_vec();
    out.push(DraftTrigger::new(t));
    out
}

pub fn remove_at(draft: &[DraftTrigger], index: usize) -> Vec<DraftTrigger> {
    draft
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != index)
        .map(|(_, d)| d.clone())
        .collect()
}

/// What an update sends for the triggers: deletions of removed ones, patches
/// of changed ones, creations of pending ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriggerChanges {
    pub delete: Vec<String>,
    pub update: Vec<(String, PatchTrigger)>,
    pub create: Vec<NewTrigger>,
}

impl TriggerChanges {
    pub fn is_empty(&self) -> bool {
        self.delete.is_empty() && self.update.is_empty() && self.create.is_empty()
    }
}

pub fn trigger_changes(saved: &[Trigger], draft: &[DraftTrigger]) -> TriggerChanges {
    let mut changes = TriggerChanges::default();
    for s in saved {
        match draft.iter().find(|d| d.id.as_deref() == Some(s.id.as_str())) {
            None => changes.delete.push(s.id.clone()),
            Some(d) => {
                let patch = PatchTrigger {
                    config: (d.config != s.config).then(|| d.config.clone()),
                    enabled: (d.enabled != s.enabled).then_some(d.enabled),
                };
                if patch.config.is_some() || patch.enabled.is_some() {
                    changes.update.push((s.id.clone(), patch));
                }
            }
        }
    }
    changes.create = draft
        .iter()
        .filter(|d| d.id.is_none())
        .map(DraftTrigger::to_new)
        .collect();
    changes
}

/// Whether a saved trigger differs from its draft (marks the card dirty).
pub fn is_dirty(saved: &[Trigger], d: &DraftTrigger) -> bool {
    match &d.id {
        None => true,
        Some(id) => saved
            .iter()
            .find(|s| &s.id == id)
            .is_none_or(|s| s.config != d.config || s.enabled != d.enabled),
    }
}

/// The repositories a save stores: a `github_pr` condition keeps only the
/// first selection (the PR decides the repository).
pub fn repository_ids_for_save(condition: Option<TriggerType>, ids: &[String]) -> Vec<String> {
    let ids: Vec<String> = ids.iter().filter(|s| !s.is_empty()).cloned().collect();
    if condition == Some(TriggerType::GithubPr) {
        ids.into_iter().take(1).collect()
    } else {
        ids
    }
}

/// "None — no repository" is saved only where the picker is live: under
/// `github_pr` the pull request decides the repository.
pub fn no_repository_for_save(condition: Option<TriggerType>, chosen: bool) -> bool {
    chosen && condition != Some(TriggerType::GithubPr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TriggerType::*;

    #[test]
    fn none_is_saved_only_where_the_picker_is_live() {
        assert!(no_repository_for_save(Some(Scheduled), true));
        assert!(no_repository_for_save(None, true));
        assert!(!no_repository_for_save(Some(GithubPr), true));
        assert!(!no_repository_for_save(Some(GithubPrMerged), false));
    }

    use chrono::{DateTime, Utc};
    use serde_json::json;

    fn saved(id: &str, t: TriggerType, config: Value) -> Trigger {
        Trigger {
            id: id.into(),
            automation_id: "a".into(),
            trigger_type: t,
            config,
            enabled: true,
            last_evaluated_at: None,
            created_at: DateTime::<Utc>::default(),
            updated_at: DateTime::<Utc>::default(),
        }
    }

    #[test]
    fn picker_selection_adds_the_registry_default_config_enabled() {
        let d = add_trigger(&[], GithubPrMerged);
        assert_eq!(d[0].config, new_trigger_config(GithubPrMerged));
        assert!(d[0].enabled);
        assert_eq!(d[0].id, None);
    }

    #[test]
    fn schedule_is_created_on_first_change_and_merges_after() {
        let mut patch = Map::new();
        patch.insert("cron_expression".into(), json!("@daily"));
        let d = set_schedule(&[], &patch);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].config["cron_expression"], "@daily");
        let mut tz = Map::new();
        tz.insert("timezone".into(), json!("Europe/Berlin"));
        let d = set_schedule(&d, &tz);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].config,
            json!({"cron_expression": "@daily", "timezone": "Europe/Berlin"})
        );
    }

    #[test]
    fn webhook_mode_replaces_schedule_and_condition_and_switches_back() {
        let d = add_trigger(&set_schedule(&[], &Map::new()), GithubPr);
        let w = use_webhook_instead(&d);
        assert_eq!(types(&w), vec![Webhook]);
        assert_eq!(w[0].config, json!({}));
        assert!(is_webhook_mode(&w));
        assert!(switch_to_scheduled(&w).is_empty());
    }

    #[test]
    fn the_condition_card_is_the_resolved_condition() {
        let d = add_trigger(&add_trigger(&add_trigger(&[], Scheduled), GithubPr), GithubPrMerged);
        assert_eq!(condition_index(&d), Some(1));
        assert_eq!(schedule_index(&d), Some(0));
        assert_eq!(condition_index(&remove_at(&d, 1)), Some(1));
    }

    #[test]
    fn update_diff_deletes_patches_and_creates() {
        let s = vec![
            saved("t1", Scheduled, json!({"cron_expression": "@daily"})),
            saved("t2", GithubPr, json!({})),
            saved("t3", GithubCi, json!({})),
        ];
        let mut d: Vec<DraftTrigger> = s.iter().map(DraftTrigger::from_saved).collect();
        d[0].config = json!({"cron_expression": "@hourly"});
        d[2].enabled = false;
        d.remove(1);
        d.push(DraftTrigger::new(GithubPrMerged));
        let c = trigger_changes(&s, &d);
        assert_eq!(c.delete, vec!["t2".to_string()]);
        assert_eq!(c.update.len(), 2);
        assert_eq!(c.update[0].1.config, Some(json!({"cron_expression": "@hourly"})));
        assert_eq!(c.update[0].1.enabled, None);
        assert_eq!(c.update[1].1.enabled, Some(false));
        assert_eq!(c.create.len(), 1);
        assert_eq!(c.create[0].trigger_type, GithubPrMerged);
        assert!(is_dirty(&s, &d[0]));
        let unchanged: Vec<DraftTrigger> = s.iter().map(DraftTrigger::from_saved).collect();
        assert!(trigger_changes(&s, &unchanged).is_empty());
    }

    #[test]
    fn github_pr_keeps_only_the_first_repository() {
        let ids = vec!["r1".to_string(), "r2".to_string()];
        assert_eq!(repository_ids_for_save(Some(GithubPr), &ids), vec!["r1".to_string()]);
        assert_eq!(repository_ids_for_save(Some(GithubPrMerged), &ids), ids);
        assert!(repository_ids_for_save(None, &["".to_string()]).is_empty());
    }
}
