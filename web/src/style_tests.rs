//! The stylesheet keeps to its design tokens: outside `:root`, spacing and
//! type sizes come from the `--space-*` / `--text-*` scales and colours from
//! the palette, so both themes change in one place.

const CSS: &str = include_str!("../style.css");

/// The rules after the token definitions (`:root` and its dark variant).
fn rules() -> &'static str {
    let at = CSS.find("*, *::before").expect("the first rule after the tokens");
    &CSS[at..]
}

/// `(property, value)` of every declaration in the rules.
fn declarations() -> Vec<(String, String)> {
    rules()
        .split(['{', '}', ';'])
        .filter_map(|d| d.split_once(':'))
        .filter(|(p, _)| !p.contains(['.', '#', '*', '@', ',']) && !p.trim().is_empty())
        .map(|(p, v)| {
            (
                p.trim().to_string(),
                v.trim().trim_end_matches("!important").trim().to_string(),
            )
        })
        .collect()
}

fn spaced(property: &str) -> bool {
    property == "font-size"
        || property.starts_with("margin")
        || property.starts_with("padding")
        || property.ends_with("gap")
}

/// A length a token-true rule may use: a token, zero, auto, a share of the
/// viewport or parent, or the visually-hidden idiom's -1px.
fn allowed(part: &str) -> bool {
    part.starts_with("var(--space-")
        || part.starts_with("var(--text-")
        || part.starts_with("calc(")
        || ["0", "auto", "-1px"].contains(&part)
        || part.ends_with('%')
        || part.ends_with("vh")
        || part.ends_with("vw")
}

/// A value's space-separated parts, keeping `calc(…)` whole.
fn parts(value: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (vec![], String::new(), 0);
    for c in value.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn spacing_and_type_sizes_come_from_the_scales() {
    let mut raw = vec![];
    for (property, value) in declarations().into_iter().filter(|(p, _)| spaced(p)) {
        let bad = parts(&value)
            .iter()
            .any(|part| !allowed(part) || (part.starts_with("calc(") && !part.contains("var(--space-")));
        if bad {
            raw.push(format!("{property}: {value}"));
        }
    }
    assert!(raw.is_empty(), "raw lengths outside the scales: {raw:#?}");
}

#[test]
fn colours_come_from_the_palette() {
    let raw: Vec<String> = declarations()
        .into_iter()
        .filter(|(_, v)| v.contains('#') || v.contains("rgb(") || v.contains("rgba("))
        .map(|(p, v)| format!("{p}: {v}"))
        .collect();
    assert!(raw.is_empty(), "colours outside the palette: {raw:#?}");
}
