//! The mock agent's inline `e2e:` script language (pure; parsed once per prompt).

use kandev_core::resume::{HISTORY_CLOSE, HISTORY_OPEN};
use serde_json::Value;

/// One script step.
#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    Message(String),
    Thinking(String),
    Delay(u64),
    /// Asks the client for permission, as a real agent does before a risky tool.
    Permission(String),
    /// Reports the agent's process id (tests check it is reaped).
    Pid,
    /// Says what it knows of the earlier conversation (tests of replies).
    Recall,
    /// Exits abruptly mid-turn, as a crashing agent would.
    Crash,
    /// Reads a file and says whether it could (tests of confinement).
    Read(String),
    /// Writes a file and says whether it could (tests of confinement).
    Write(String),
    /// Connects to an abstract unix socket (`@name`) or a TCP address
    /// (`127.0.0.1:5432`) and says whether it could (tests of confinement).
    Connect(String),
    /// Says `NAME=value` for one of its environment variables.
    Env(String),
    /// Starts `sh -c` with the text in the background, detached from the
    /// agent's stdio, and says its pid (tests of what outlives a turn).
    Spawn(String),
    /// Says the URL of its `kandev` MCP server, as an agent holding its token
    /// could (tests of what a token opens once its turn is over).
    McpUrl,
    /// A real MCP call. `args` is the parsed JSON object, or the error text.
    Mcp {
        server: String,
        tool: String,
        args: Result<Value, String>,
    },
}

/// What a prompt asks the mock agent to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    Script(Vec<Directive>),
    /// `/e2e:<name>`: a named scenario. It receives no prompt text.
    Scenario(String),
    /// Anything else gets a short canned reply.
    Plain,
}

/// Removes `<kandev-system>…</kandev-system>` and replayed-history blocks.
pub fn strip_system_blocks(prompt: &str) -> String {
    let without = strip_blocks(prompt, "<kandev-system>", "</kandev-system>");
    strip_blocks(&without, HISTORY_OPEN, HISTORY_CLOSE)
}

/// The text of the prompt's replayed-history block ("" when it has none).
pub fn history_of(prompt: &str) -> &str {
    let Some(start) = prompt.find(HISTORY_OPEN) else {
        return "";
    };
    let rest = &prompt[start + HISTORY_OPEN.len()..];
    rest.find(HISTORY_CLOSE).map(|end| &rest[..end]).unwrap_or(rest)
}

fn strip_blocks(prompt: &str, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(prompt.len());
    let mut rest = prompt;
    while let Some(start) = rest.find(open) {
        out.push_str(&rest[..start]);
        rest = match rest[start..].find(close) {
            Some(end) => &rest[start + end + close.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// The run task and session ids from the prompt's `Kandev Task ID:` and
/// `Kandev Session ID:` lines.
pub fn context_ids(prompt: &str) -> (String, String) {
    let find = |label: &str| {
        prompt
            .lines()
            .find_map(|l| {
                let rest = &l[l.find(label)? + label.len()..];
                Some(rest.split('<').next().unwrap_or_default().trim().to_string())
            })
            .unwrap_or_default()
    };
    (find("Kandev Task ID:"), find("Kandev Session ID:"))
}

pub fn route(prompt: &str) -> Route {
    let body = strip_system_blocks(prompt);
    let body = body.trim();
    if let Some(name) = body.strip_prefix("/e2e:") {
        return Route::Scenario(name.trim().to_string());
    }
    if body.starts_with("e2e:") {
        return Route::Script(body.lines().filter_map(parse_line).collect());
    }
    instructed_call(body).map(Route::Script).unwrap_or(Route::Plain)
}

/// Obeys a plain instruction of the form "Call the `tool` tool …, with task
/// id: <id>" on the `kandev` MCP server, as a real agent would with the
/// merged trigger's default prompt; an empty id means no call.
fn instructed_call(body: &str) -> Option<Vec<Directive>> {
    let line = body
        .lines()
        .find(|l| l.contains("Call the `") && l.contains("task id:"))?;
    let after = &line[line.find("Call the `")? + "Call the `".len()..];
    let tool = after.split('`').next()?.trim();
    let id = line[line.rfind("task id:")? + "task id:".len()..].trim();
    if tool.is_empty() {
        return None;
    }
    if id.is_empty() {
        return Some(vec![Directive::Message(
            "No task id was supplied, so I did not call the tool.".into(),
        )]);
    }
    Some(vec![
        Directive::Message(format!("Calling {tool} for task {id}.")),
        Directive::Mcp {
            server: "kandev".into(),
            tool: tool.to_string(),
            args: Ok(serde_json::json!({ "task_id": id })),
        },
    ])
}

/// Parses a quoted string argument with `\\`, `\"`, `\n`, `\t` escapes.
fn parse_string_arg(s: &str) -> Option<String> {
    let inner = s.trim().strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// The text between the first `(` and the last `)`.
fn call_args(s: &str) -> Option<&str> {
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    (close > open).then(|| &s[open + 1..close])
}

pub fn parse_line(line: &str) -> Option<Directive> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let rest = line.strip_prefix("e2e:")?;
    if let Some(mcp) = rest.strip_prefix("mcp:") {
        let (server, after) = mcp.split_once(':')?;
        let tool_end = after.find('(')?;
        let tool = after[..tool_end].trim().to_string();
        let raw = call_args(after)?;
        let args = match serde_json::from_str::<Value>(raw) {
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(_) => Err("arguments must be a JSON object".to_string()),
            Err(e) => Err(e.to_string()),
        };
        return Some(Directive::Mcp {
            server: server.trim().to_string(),
            tool,
            args,
        });
    }
    let name_end = rest.find('(')?;
    let args = call_args(rest)?;
    match &rest[..name_end] {
        "message" => parse_string_arg(args).map(Directive::Message),
        "thinking" => parse_string_arg(args).map(Directive::Thinking),
        "delay" => args.trim().parse().ok().map(Directive::Delay),
        "permission" => parse_string_arg(args).map(Directive::Permission),
        "pid" => Some(Directive::Pid),
        "recall" => Some(Directive::Recall),
        "crash" => Some(Directive::Crash),
        "mcp_url" => Some(Directive::McpUrl),
        "read" => parse_string_arg(args).map(Directive::Read),
        "write" => parse_string_arg(args).map(Directive::Write),
        "spawn" => parse_string_arg(args).map(Directive::Spawn),
        "connect" => parse_string_arg(args).map(Directive::Connect),
        "env" => parse_string_arg(args).map(Directive::Env),
        _ => None,
    }
}

/// Replaces `{task_id}` and `{session_id}` inside every string value.
pub fn substitute_ids(v: &Value, task_id: &str, session_id: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("{task_id}", task_id).replace("{session_id}", session_id)),
        Value::Array(items) => Value::Array(items.iter().map(|i| substitute_ids(i, task_id, session_id)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, i)| (k.clone(), substitute_ids(i, task_id, session_id)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scripts_parse_directives_and_skip_the_rest() {
        let prompt = "<kandev-system>Kandev Task ID: T1\nKandev Session ID: S1</kandev-system>\n\
            e2e:message(\"hi \\\"there\\\"\\n\")\n# comment\n\n e2e:thinking(\"hmm\") \n e2e:delay(25)\n e2e:unknown(1)\n\
            e2e:mcp:kandev:archive_task_kandev({\"task_id\":\"abc\"})";
        let Route::Script(d) = route(prompt) else { panic!() };
        assert_eq!(
            d,
            vec![
                Directive::Message("hi \"there\"\n".into()),
                Directive::Thinking("hmm".into()),
                Directive::Delay(25),
                Directive::Mcp {
                    server: "kandev".into(),
                    tool: "archive_task_kandev".into(),
                    args: Ok(json!({"task_id": "abc"}))
                },
            ]
        );
        assert_eq!(context_ids(prompt), ("T1".to_string(), "S1".to_string()));
    }

    #[test]
    fn mcp_args_run_to_the_last_paren_and_must_be_an_object() {
        let d = parse_line("e2e:mcp:s:t({\"x\":\"(a)\"})").unwrap();
        assert_eq!(
            d,
            Directive::Mcp {
                server: "s".into(),
                tool: "t".into(),
                args: Ok(json!({"x": "(a)"}))
            }
        );
        let Some(Directive::Mcp { args: Err(_), .. }) = parse_line("e2e:mcp:s:t([1])") else {
            panic!()
        };
        let Some(Directive::Mcp { args: Err(_), .. }) = parse_line("e2e:mcp:s:t({nope})") else {
            panic!()
        };
    }

    #[test]
    fn routes() {
        assert_eq!(route("  hello"), Route::Plain);
        assert_eq!(
            parse_line("e2e:permission(\"Run it\")"),
            Some(Directive::Permission("Run it".into()))
        );
        assert_eq!(parse_line("e2e:crash()"), Some(Directive::Crash));
        assert_eq!(parse_line("e2e:pid()"), Some(Directive::Pid));
        assert_eq!(parse_line("e2e:mcp_url()"), Some(Directive::McpUrl));
        assert_eq!(
            parse_line("e2e:read(\"/etc/x\")"),
            Some(Directive::Read("/etc/x".into()))
        );
        assert_eq!(parse_line("e2e:write(\"out\")"), Some(Directive::Write("out".into())));
        assert_eq!(parse_line("e2e:connect(\"@x\")"), Some(Directive::Connect("@x".into())));
        assert_eq!(parse_line("e2e:env(\"HOME\")"), Some(Directive::Env("HOME".into())));
        assert_eq!(
            parse_line("e2e:spawn(\"sleep 9\")"),
            Some(Directive::Spawn("sleep 9".into()))
        );
        assert_eq!(route("/e2e:overloaded"), Route::Scenario("overloaded".into()));
        assert_eq!(route("Just say hi."), Route::Plain);
        assert!(matches!(
            route("<kandev-system>x</kandev-system>\n e2e:delay(1)"),
            Route::Script(_)
        ));
    }

    #[test]
    fn replayed_history_is_read_and_stripped_before_routing() {
        let h = [kandev_core::api::TranscriptMessage {
            role: "user".into(),
            kind: "message".into(),
            content: "first".into(),
            tool: None,
            created_at: chrono::DateTime::default(),
        }];
        let prompt = format!(
            "<kandev-system>Kandev Task ID: T</kandev-system>\n\n{}e2e:recall()",
            kandev_core::resume::history_block(&h)
        );
        assert!(history_of(&prompt).contains("[user] first\n"));
        assert_eq!(route(&prompt), Route::Script(vec![Directive::Recall]));
        assert_eq!(history_of("no history"), "");
    }

    #[test]
    fn ids_are_substituted_in_string_values() {
        let v = substitute_ids(&json!({"a": "{task_id}/{session_id}", "b": [1, "{task_id}"]}), "T", "S");
        assert_eq!(v, json!({"a": "T/S", "b": [1, "T"]}));
    }

    #[test]
    fn the_merged_default_prompt_is_obeyed_like_a_real_agent_would() {
        let data = serde_json::json!({"task_id": "T-42"});
        let prompt = kandev_core::interpolate::interpolate(
            kandev_core::registry::GITHUB_PR_MERGED_PROMPT,
            "github_pr_merged",
            &data,
            chrono::DateTime::default(),
        );
        let Route::Script(steps) = route(&prompt) else {
            panic!("not obeyed")
        };
        assert_eq!(
            steps.last(),
            Some(&Directive::Mcp {
                server: "kandev".into(),
                tool: "archive_task_kandev".into(),
                args: Ok(serde_json::json!({"task_id": "T-42"})),
            })
        );
        let empty = kandev_core::interpolate::interpolate(
            kandev_core::registry::GITHUB_PR_MERGED_PROMPT,
            "manual",
            &serde_json::json!({}),
            chrono::DateTime::default(),
        );
        let Route::Script(steps) = route(&empty) else {
            panic!("not obeyed")
        };
        assert!(steps.iter().all(|d| !matches!(d, Directive::Mcp { .. })));
    }
}
