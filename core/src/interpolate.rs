//! The prompt and title interpolator.
//!
//! One left-to-right pass over the template: each `{{token}}` is resolved once,
//! and a substituted value (a PR title, a webhook string) is never scanned again
//! for placeholders. Unresolved tokens made of `[A-Za-z0-9_.-]` are removed;
//! anything else between braces is left as written. The result is trimmed.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};

use crate::text::format_number;

/// Fixed `{{family.field}}` tokens per firing type, mapped to trigger-data keys.
fn family(firing_type: &str) -> &'static [(&'static str, &'static str)] {
    match firing_type {
        "github_pr" => &[
            ("pr.number", "number"),
            ("pr.title", "title"),
            ("pr.url", "html_url"),
            ("pr.author", "author_login"),
            ("pr.repo", "repo"),
            ("pr.branch", "head_branch"),
            ("pr.base_branch", "base_branch"),
            ("pr.body", "body"),
        ],
        "github_push" => &[
            ("push.branch", "branch"),
            ("push.repo", "repo"),
            ("push.sha", "sha"),
            ("push.message", "message"),
        ],
        "github_ci" => &[
            ("ci.check_name", "check_name"),
            ("ci.conclusion", "conclusion"),
            ("ci.repo", "repo"),
            ("ci.url", "html_url"),
        ],
        _ => &[],
    }
}

fn is_token(inner: &str) -> bool {
    !inner.is_empty()
        && inner
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
}

/// Renders a value for insertion.
pub fn format_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => format_number(n),
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
        Value::Array(_) | Value::Object(_) => v.to_string(),
    }
}

/// Compact JSON with object keys sorted at every level.
pub fn canonical_json(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let body: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Array(items) => {
            let body: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", body.join(","))
        }
        other => other.to_string(),
    }
}

fn resolve_path<'a>(data: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut segments = path.split('.');
    let first = segments.next()?;
    let mut current = data.get(first)?;
    for seg in segments {
        current = match current {
            Value::Object(m) => m.get(seg)?,
            Value::Array(items) => {
                if seg.is_empty() || !seg.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                items.get(seg.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    (!current.is_null()).then_some(current)
}

struct Context<'a> {
    firing_type: &'a str,
    data: Map<String, Value>,
    now: DateTime<Utc>,
}

impl Context<'_> {
    fn resolve(&self, token: &str) -> Option<String> {
        match token {
            "trigger.type" => return Some(self.firing_type.to_string()),
            "trigger.timestamp" => {
                return Some(self.now.to_rfc3339_opts(SecondsFormat::Secs, true));
            }
            "webhook.body" if self.firing_type == "webhook" => {
                return Some(canonical_json(&Value::Object(self.data.clone())));
            }
            _ => {}
        }
        if let Some((_, key)) = family(self.firing_type).iter().find(|(t, _)| *t == token) {
            return Some(self.data.get(*key).map(format_value).unwrap_or_default());
        }
        let path = token.strip_prefix("data.").or_else(|| token.strip_prefix("webhook."))?;
        resolve_path(&self.data, path).map(format_value)
    }
}

/// Interpolates `template` for a firing of `firing_type` (a registry type or
/// `manual`) with its trigger data. `now` renders `{{trigger.timestamp}}`.
pub fn interpolate(template: &str, firing_type: &str, data: &Value, now: DateTime<Utc>) -> String {
    if template.is_empty() || !template.contains("{{") {
        return template.to_string();
    }
    let ctx = Context {
        firing_type,
        data: data.as_object().cloned().unwrap_or_default(),
        now,
    };
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after_open = &rest[start + 2..];
        match after_open.find("}}") {
            Some(end) if is_token(&after_open[..end]) => {
                if let Some(value) = ctx.resolve(&after_open[..end]) {
                    out.push_str(&value);
                }
                rest = &after_open[end + 2..];
            }
            Some(_) => {
                // Not a token: keep one brace and rescan, so `{{{data.x}}}` still
                // finds the inner token the way a regex scan would.
                out.push('{');
                rest = &rest[start + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-03-08T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn render(t: &str, ty: &str, data: Value) -> String {
        interpolate(t, ty, &data, now())
    }

    #[test]
    fn short_circuit_returns_template_untrimmed() {
        assert_eq!(render("  Hello  ", "manual", json!({})), "  Hello  ");
        assert_eq!(render("", "manual", json!({})), "");
    }

    #[test]
    fn pr_number_renders_as_a_bare_integer() {
        assert_eq!(
            render("{{data.pr_number}}", "github_pr_merged", json!({"pr_number": 7})),
            "7"
        );
        assert_eq!(
            render("{{data.pr_number}}", "github_pr_merged", json!({"pr_number": 7.0})),
            "7"
        );
    }

    #[test]
    fn manual_run_strips_the_task_id() {
        let t = r#"e2e:mcp:kandev:archive_task_kandev({"task_id":"{{data.task_id}}"})"#;
        assert_eq!(
            render(t, "manual", json!({"source": "manual"})),
            r#"e2e:mcp:kandev:archive_task_kandev({"task_id":""})"#
        );
    }

    #[test]
    fn unresolved_tokens_are_stripped_and_result_trimmed() {
        assert_eq!(render("  {{data.x}}  ", "manual", json!({})), "");
        assert_eq!(render("a {{nope}} b", "manual", json!({})), "a  b");
        assert_eq!(render("{{data.x}}", "manual", json!({"x": null})), "");
    }

    #[test]
    fn tokens_with_spaces_or_other_characters_survive() {
        assert_eq!(
            render("{{ data.x }} {{data.*}}", "manual", json!({"x": 1})),
            "{{ data.x }} {{data.*}}"
        );
        assert_eq!(render("{{{data.x}}}", "manual", json!({"x": 1})), "{1}");
        assert_eq!(render("open {{ no close", "manual", json!({})), "open {{ no close");
    }

    #[test]
    fn fixed_tokens_and_families() {
        assert_eq!(
            render("{{trigger.type}} {{trigger.timestamp}}", "scheduled", json!({})),
            "scheduled 2026-03-08T12:00:00Z"
        );
        let pr = json!({"number": 42, "title": "Fix", "html_url": "u", "repo": "o/r"});
        assert_eq!(
            render("{{pr.repo}}#{{pr.number}} {{pr.title}} {{pr.body}}|", "github_pr", pr),
            "o/r#42 Fix |"
        );
        // a family token of another type is stripped
        assert_eq!(render("[{{pr.title}}]", "github_push", json!({"title": "x"})), "[]");
        assert_eq!(
            render("{{push.branch}}", "github_push", json!({"branch": "main"})),
            "main"
        );
        assert_eq!(
            render("{{ci.url}}", "github_ci", json!({"html_url": "https://ci"})),
            "https://ci"
        );
    }

    #[test]
    fn data_and_webhook_paths_resolve_objects_and_arrays() {
        let d = json!({"pull_request": {"number": 5, "labels": ["a", "b"]}, "ok": true, "obj": {"b": 1, "a": 2}});
        assert_eq!(render("{{webhook.pull_request.number}}", "webhook", d.clone()), "5");
        assert_eq!(render("{{data.pull_request.labels.1}}", "manual", d.clone()), "b");
        assert_eq!(render("[{{data.pull_request.labels.9}}]", "manual", d.clone()), "[]");
        assert_eq!(render("{{data.ok}}", "manual", d.clone()), "true");
        assert_eq!(
            render("{{data.pull_request.labels}}", "manual", d.clone()),
            r#"["a","b"]"#
        );
    }

    #[test]
    fn webhook_body_is_sorted_compact_json() {
        let d = json!({"z": 1, "a": {"y": [1, {"c": 2, "b": 3}], "x": "s"}});
        assert_eq!(
            render("{{webhook.body}}", "webhook", d),
            r#"{"a":{"x":"s","y":[1,{"b":3,"c":2}]},"z":1}"#
        );
    }

    #[test]
    fn non_object_data_reads_as_empty() {
        assert_eq!(render("[{{data.0}}]", "manual", json!([1, 2])), "[]");
    }

    #[test]
    fn substituted_values_are_never_rescanned() {
        let d = json!({"title": "{{data.secret}} and {{trigger.type}}", "secret": "S"});
        assert_eq!(
            render("{{pr.title}}", "github_pr", d.clone()),
            "{{data.secret}} and {{trigger.type}}"
        );
        let w = json!({"msg": "{{data.secret}}", "secret": "S"});
        assert_eq!(render("{{webhook.msg}}", "webhook", w), "{{data.secret}}");
    }

    #[test]
    fn merged_default_prompt_names_the_task_and_the_tool() {
        let prompt = crate::registry::GITHUB_PR_MERGED_PROMPT;
        let out = render(prompt, "github_pr_merged", json!({"task_id": "T-123"}));
        assert!(out.contains("with task id: T-123\n"));
        assert!(out.contains("archive_task_kandev"));
    }

    proptest! {
        #[test]
        fn text_without_braces_is_returned_unchanged(s in "[^{}]*") {
            prop_assert_eq!(render(&s, "manual", json!({"x": 1})), s);
        }

        #[test]
        fn string_values_are_inserted_verbatim(v in "[^{}]{0,20}[{}]{0,4}[^{}]{0,20}") {
            // a value, whatever it contains, comes out exactly as it went in
            let out = render("<{{data.v}}>", "manual", json!({"v": v.clone()}));
            prop_assert_eq!(out, format!("<{v}>"));
        }

        #[test]
        fn integers_render_bare(n in any::<i64>()) {
            prop_assert_eq!(render("{{data.n}}", "manual", json!({"n": n})), n.to_string());
        }
    }
}
