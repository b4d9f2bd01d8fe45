//! A small GraphQL reader for the simulator: operations, selection sets with
//! aliases, arguments (literals and `$variables`) and inline fragments —
//! enough to answer any query over the fields the simulator models, and to
//! refuse unknown fields as GitHub does.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Str(String),
    Num(String),
    Punct(char),
    Spread,
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == ',' {
            i += 1;
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '.' {
            if chars.get(i..i + 3) == Some(&['.', '.', '.'][..]) {
                out.push(Tok::Spread);
                i += 3;
            } else {
                return Err("Unexpected '.'".into());
            }
        } else if c == '"' {
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                }
                s.push(chars[i]);
                i += 1;
            }
            i += 1;
            out.push(Tok::Str(s));
        } else if c.is_ascii_digit() || c == '-' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            out.push(Tok::Num(chars[start..i].iter().collect()));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Name(chars[start..i].iter().collect()));
        } else if "{}()[]:$!=@".contains(c) {
            out.push(Tok::Punct(c));
            i += 1;
        } else {
            return Err(format!("Unexpected character '{c}'"));
        }
    }
    Ok(out)
}

/// One requested field, or an inline fragment (`on_type` set, `name` empty).
/// A named fragment's spread becomes the inline fragment it stands for.
#[derive(Debug, Clone, Default)]
pub struct Field {
    pub alias: Option<String>,
    pub name: String,
    pub args: Map<String, Value>,
    pub selection: Vec<Field>,
    pub on_type: Option<String>,
    /// `...Name` until the document's fragments are resolved.
    spread: Option<String>,
}

impl Field {
    pub fn key(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }
}

#[derive(Debug)]
pub struct Operation {
    pub mutation: bool,
    pub selection: Vec<Field>,
}

struct Parser<'a> {
    toks: Vec<Tok>,
    at: usize,
    vars: &'a Map<String, Value>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("Expected '{c}'"))
        }
    }

    fn name(&mut self) -> Result<String, String> {
        match self.next() {
            Some(Tok::Name(n)) => Ok(n),
            other => Err(format!("Expected a name, found {other:?}")),
        }
    }

    fn skip_balanced(&mut self, open: char, close: char) -> Result<(), String> {
        self.expect(open)?;
        let mut depth = 1;
        while depth > 0 {
            match self.next() {
                Some(Tok::Punct(c)) if c == open => depth += 1,
                Some(Tok::Punct(c)) if c == close => depth -= 1,
                Some(_) => {}
                None => return Err("Unexpected end of document".into()),
            }
        }
        Ok(())
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.next() {
            Some(Tok::Punct('$')) => {
                let n = self.name()?;
                Ok(self.vars.get(&n).cloned().unwrap_or(Value::Null))
            }
            Some(Tok::Str(s)) => Ok(Value::String(s)),
            Some(Tok::Num(n)) => Ok(n
                .parse::<i64>()
                .map(Value::from)
                .or_else(|_| n.parse::<f64>().map(Value::from))
                .unwrap_or(Value::Null)),
            Some(Tok::Name(n)) => Ok(match n.as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                "null" => Value::Null,
                _ => Value::String(n),
            }),
            Some(Tok::Punct('{')) => {
                let mut m = Map::new();
                while !self.eat('}') {
                    let k = self.name()?;
                    self.expect(':')?;
                    m.insert(k, self.value()?);
                }
                Ok(Value::Object(m))
            }
            Some(Tok::Punct('[')) => {
                let mut v = vec![];
                while !self.eat(']') {
                    v.push(self.value()?);
                }
                Ok(Value::Array(v))
            }
            other => Err(format!("Unexpected {other:?}")),
        }
    }

    fn selection(&mut self) -> Result<Vec<Field>, String> {
        self.expect('{')?;
        let mut out = vec![];
        while !self.eat('}') {
            if self.peek() == Some(&Tok::Spread) {
                self.at += 1;
                match self.name()?.as_str() {
                    "on" => {
                        let on = self.name()?;
                        out.push(Field {
                            on_type: Some(on),
                            selection: self.selection()?,
                            ..Default::default()
                        });
                    }
                    other => out.push(Field {
                        spread: Some(other.to_string()),
                        ..Default::default()
                    }),
                }
                continue;
            }
            let first = self.name()?;
            let (alias, name) = if self.eat(':') {
                (Some(first), self.name()?)
            } else {
                (None, first)
            };
            let mut args = Map::new();
            if self.eat('(') {
                while !self.eat(')') {
                    let k = self.name()?;
                    self.expect(':')?;
                    args.insert(k, self.value()?);
                }
            }
            let selection = if self.peek() == Some(&Tok::Punct('{')) {
                self.selection()?
            } else {
                vec![]
            };
            out.push(Field {
                alias,
                name,
                args,
                selection,
                on_type: None,
                spread: None,
            });
        }
        Ok(out)
    }
}

type Fragments = std::collections::HashMap<String, (String, Vec<Field>)>;

/// Replaces every spread with its fragment's fields, refusing unknown and
/// endlessly nested fragments as GitHub does.
fn resolve(fields: Vec<Field>, fragments: &Fragments, depth: usize) -> Result<Vec<Field>, String> {
    if depth > 16 {
        return Err("Fragments nest too deeply (or spread themselves)".into());
    }
    fields
        .into_iter()
        .map(|mut f| {
            if let Some(name) = f.spread.take() {
                let (on, selection) = fragments
                    .get(&name)
                    .ok_or_else(|| format!("Fragment {name} was used, but not defined"))?;
                return Ok(Field {
                    on_type: Some(on.clone()),
                    selection: resolve(selection.clone(), fragments, depth + 1)?,
                    ..Default::default()
                });
            }
            f.selection = resolve(f.selection, fragments, depth)?;
            Ok(f)
        })
        .collect()
}

/// Reads a document: its first operation, with the named fragments it
/// defines (before or after it) spread in.
pub fn parse(query: &str, vars: &Map<String, Value>) -> Result<Operation, String> {
    let mut p = Parser {
        toks: lex(query)?,
        at: 0,
        vars,
    };
    let mut operation: Option<Operation> = None;
    let mut fragments = Fragments::new();
    while p.peek().is_some() {
        if p.peek() == Some(&Tok::Name("fragment".into())) {
            p.at += 1;
            let name = p.name()?;
            if p.name()? != "on" {
                return Err(format!("Fragment {name} needs a type condition"));
            }
            let on = p.name()?;
            let selection = p.selection()?;
            fragments.insert(name, (on, selection));
            continue;
        }
        let mut mutation = false;
        if let Some(Tok::Name(kind)) = p.peek().cloned() {
            match kind.as_str() {
                "query" => {}
                "mutation" => mutation = true,
                other => return Err(format!("Unexpected operation '{other}'")),
            }
            p.at += 1;
            if let Some(Tok::Name(_)) = p.peek() {
                p.at += 1;
            }
            if p.peek() == Some(&Tok::Punct('(')) {
                p.skip_balanced('(', ')')?;
            }
        }
        let selection = p.selection()?;
        operation.get_or_insert(Operation { mutation, selection });
    }
    let op = operation.ok_or("The document holds no operation")?;
    Ok(Operation {
        mutation: op.mutation,
        selection: resolve(op.selection, &fragments, 0)?,
    })
}

/// GitHub's point cost of a query: one request per connection per parent
/// node it may return (by `first`/`last`), summed, divided by 100 and
/// rounded, at least 1.
pub fn cost(fields: &[Field]) -> i64 {
    fn requests(fields: &[Field], parents: f64) -> f64 {
        fields
            .iter()
            .map(|f| match page_size(f) {
                Some(n) => parents + requests(&f.selection, parents * n as f64),
                None => requests(&f.selection, parents),
            })
            .sum()
    }
    ((requests(fields, 1.0) / 100.0).round() as i64).max(1)
}

fn page_size(f: &Field) -> Option<u64> {
    f.args
        .get("first")
        .or_else(|| f.args.get("last"))
        .and_then(Value::as_u64)
}

/// A connection's page as `first`/`last`/`after` ask (cursors are
/// `cursor:<index>`); GitHub refuses a connection read without a size.
fn paginate(conn: &Map<String, Value>, f: &Field) -> Result<Value, String> {
    let nodes = conn.get("nodes").and_then(Value::as_array).cloned().unwrap_or_default();
    let size = page_size(f).ok_or_else(|| {
        format!(
            "You must provide a `first` or `last` value to properly paginate the `{}` connection.",
            f.name
        )
    })?;
    if size > 100 {
        return Err(format!(
            "Requesting {size} records on the `{}` connection exceeds the `first`/`last` limit of 100 records.",
            f.name
        ));
    }
    let size = size as usize;
    let after = f
        .args
        .get("after")
        .and_then(Value::as_str)
        .and_then(|c| c.strip_prefix("cursor:"))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        .min(nodes.len());
    let (start, end) = if f.args.contains_key("first") {
        (after, (after + size).min(nodes.len()))
    } else {
        (nodes.len().saturating_sub(size).max(after), nodes.len())
    };
    let mut page = conn.clone();
    page.insert("nodes".into(), Value::Array(nodes[start..end].to_vec()));
    page.insert(
        "pageInfo".into(),
        serde_json::json!({"__typename": "PageInfo", "hasNextPage": end < nodes.len(),
                           "hasPreviousPage": start > 0, "endCursor": format!("cursor:{end}"),
                           "startCursor": format!("cursor:{start}")}),
    );
    Ok(Value::Object(page))
}

/// Picks the requested fields out of a resolved object; an unknown field is
/// GitHub's "Field 'x' doesn't exist on type 'T'".
pub fn project(value: &Value, fields: &[Field]) -> Result<Value, String> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|v| project(v, fields))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(obj) => {
            let kind = obj.get("__typename").and_then(Value::as_str).unwrap_or("Object");
            let mut out = Map::new();
            for f in fields {
                if let Some(on) = &f.on_type {
                    if on == kind
                        && let Value::Object(m) = project(value, &f.selection)?
                    {
                        out.extend(m);
                    }
                    continue;
                }
                let Some(v) = obj.get(&f.name) else {
                    return Err(format!("Field '{}' doesn't exist on type '{kind}'", f.name));
                };
                let paged;
                let v = match v {
                    Value::Object(conn) if conn.get("__connection") == Some(&Value::Bool(true)) => {
                        paged = paginate(conn, f)?;
                        &paged
                    }
                    other => other,
                };
                let v = if f.selection.is_empty() {
                    v.clone()
                } else {
                    project(v, &f.selection)?
                };
                out.insert(f.key().to_string(), v);
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_aliases_arguments_variables_and_inline_fragments() {
        let vars = json!({"owner": "acme", "n": 7});
        let op = parse(
            r#"query Q($owner: String!, $n: Int!) {
                 repo: repository(owner: $owner, name: "api") {
                   pullRequest(number: $n) { id ... on PullRequest { number } }
                 }
               }"#,
            vars.as_object().unwrap(),
        )
        .unwrap();
        assert!(!op.mutation);
        let repo = &op.selection[0];
        assert_eq!((repo.key(), repo.name.as_str()), ("repo", "repository"));
        assert_eq!(repo.args["owner"], "acme");
        assert_eq!(repo.args["name"], "api");
        assert_eq!(repo.selection[0].args["number"], 7);
        let pr = json!({"__typename": "PullRequest", "id": "X", "number": 7, "title": "t"});
        assert_eq!(
            project(&pr, &repo.selection[0].selection).unwrap(),
            json!({"id": "X", "number": 7})
        );
    }

    #[test]
    fn an_unknown_field_is_refused_with_githubs_words() {
        let op = parse("{ viewer { nope } }", &Map::new()).unwrap();
        let v = json!({"viewer": {"__typename": "User", "login": "x"}});
        assert_eq!(
            project(&v, &op.selection).unwrap_err(),
            "Field 'nope' doesn't exist on type 'User'"
        );
    }

    #[test]
    fn named_fragments_spread_in_wherever_they_are_defined() {
        let op = parse(
            "query { a: pullRequest(number: 1) { ...F } } fragment F on PullRequest { number title }",
            &Map::new(),
        )
        .unwrap();
        let pr = json!({"__typename": "PullRequest", "number": 1, "title": "t", "body": "b"});
        assert_eq!(
            project(&pr, &op.selection[0].selection).unwrap(),
            json!({"number": 1, "title": "t"})
        );
        assert!(parse("{ a { ...Missing } }", &Map::new()).is_err());
        assert!(parse("{ a { ...F } } fragment F on X { ...F }", &Map::new()).is_err());
    }

    #[test]
    fn a_query_costs_what_githubs_documentation_says() {
        let cost_of = |q: &str| cost(&parse(q, &Map::new()).unwrap().selection);
        // No connection at all: the minimum.
        assert_eq!(
            cost_of("{ repository(owner: \"a\", name: \"b\") { pullRequest(number: 1) { title } } }"),
            1
        );
        // 100 PRs, each with six connections: 600 requests.
        let pr = "pullRequest(number: 1) { a: reviews(first: 100) { totalCount } b: reviewThreads(first: 100) { totalCount } \
                  c: reviewRequests(first: 100) { totalCount } d: commits(last: 1) { nodes { commit { \
                  e: contexts(first: 100) { totalCount } } } } f: rules(first: 100) { totalCount } }";
        let prs: String = (0..100).map(|i| format!("p{i}: {pr} ")).collect();
        assert_eq!(
            cost_of(&format!("{{ repository(owner: \"a\", name: \"b\") {{ {prs} }} }}")),
            6
        );
        // A nested connection multiplies: 1 + 100 requests, then 1 + 100 + 1,000.
        assert_eq!(
            cost_of("{ r { pullRequests(first: 100) { nodes { reviews(first: 10) { totalCount } } } } }"),
            1
        );
        assert_eq!(
            cost_of(
                "{ r { pullRequests(first: 100) { nodes { reviews(first: 10) { nodes { comments(first: 100) { totalCount } } } } } } }"
            ),
            11
        );
    }

    #[test]
    fn connections_page_by_first_last_and_after_and_need_a_size() {
        let conn = json!({"__typename": "C", "__connection": true, "totalCount": 5,
                          "nodes": [{"__typename": "N", "i": 0}, {"__typename": "N", "i": 1}, {"__typename": "N", "i": 2},
                                    {"__typename": "N", "i": 3}, {"__typename": "N", "i": 4}]});
        let obj = json!({"__typename": "T", "list": conn});
        let read = |q: &str| {
            let op = parse(q, &Map::new()).unwrap();
            project(&obj, &op.selection)
        };
        let page = read(
            "{ list(first: 2, after: \"cursor:1\") { totalCount nodes { i } pageInfo { hasNextPage endCursor } } }",
        )
        .unwrap();
        assert_eq!(page["list"]["nodes"], json!([{"i": 1}, {"i": 2}]));
        assert_eq!(
            page["list"]["pageInfo"],
            json!({"hasNextPage": true, "endCursor": "cursor:3"})
        );
        assert_eq!(page["list"]["totalCount"], 5);
        let last = read("{ list(last: 1) { nodes { i } } }").unwrap();
        assert_eq!(last["list"]["nodes"], json!([{"i": 4}]));
        assert!(
            read("{ list { nodes { i } } }")
                .unwrap_err()
                .contains("You must provide a `first` or `last` value")
        );
        assert!(
            read("{ list(first: 101) { nodes { i } } }")
                .unwrap_err()
                .contains("exceeds")
        );
    }
}
