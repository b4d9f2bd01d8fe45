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
#[derive(Debug, Clone, Default)]
pub struct Field {
    pub alias: Option<String>,
    pub name: String,
    pub args: Map<String, Value>,
    pub selection: Vec<Field>,
    pub on_type: Option<String>,
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
                    other => return Err(format!("Fragment spreads are not supported: {other}")),
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
            });
        }
        Ok(out)
    }
}

/// Reads the first operation of a document.
pub fn parse(query: &str, vars: &Map<String, Value>) -> Result<Operation, String> {
    let mut p = Parser {
        toks: lex(query)?,
        at: 0,
        vars,
    };
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
    Ok(Operation {
        mutation,
        selection: p.selection()?,
    })
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
}
