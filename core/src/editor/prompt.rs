//! The prompt editor's placeholder completion: typing `{{` offers the
//! registry's placeholders; choosing one inserts `{{key}}`.
//!
//! Browser cursors count UTF-16 units, so positions cross this boundary in
//! UTF-16 and are converted here.

use crate::api::Placeholder;

fn byte_index(text: &str, utf16: usize) -> usize {
    let mut units = 0;
    for (i, c) in text.char_indices() {
        if units >= utf16 {
            return i;
        }
        units += c.len_utf16();
    }
    text.len()
}

fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// An open completion: where its `{{` starts (UTF-16) and what was typed after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub start: usize,
    pub prefix: String,
}

/// The completion open at `cursor`, if the text before it ends in `{{` plus
/// an unfinished key.
pub fn open_completion(text: &str, cursor: usize) -> Option<Completion> {
    let before = &text[..byte_index(text, cursor)];
    let at = before.rfind("{{")?;
    let prefix = &before[at + 2..];
    let is_key = prefix
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
    is_key.then(|| Completion {
        start: utf16_len(&before[..at]),
        prefix: prefix.to_string(),
    })
}

/// The placeholders a completion offers: keys containing the typed prefix.
pub fn suggestions<'a>(placeholders: &'a [Placeholder], prefix: &str) -> Vec<&'a Placeholder> {
    let p = prefix.to_lowercase();
    placeholders
        .iter()
        .filter(|ph| ph.key.to_lowercase().contains(&p))
        .collect()
}

/// Replaces the open completion with `{{key}}`; returns the new text and the
/// cursor (UTF-16) just after the insertion.
pub fn accept(text: &str, completion: &Completion, cursor: usize, key: &str) -> (String, usize) {
    let start = byte_index(text, completion.start);
    let end = byte_index(text, cursor);
    let inserted = format!("{{{{{key}}}}}");
    let mut out = String::with_capacity(text.len() + inserted.len());
    out.push_str(&text[..start]);
    out.push_str(&inserted);
    // Swallow closing braces the user already typed.
    let rest = &text[end..];
    out.push_str(rest.strip_prefix("}}").unwrap_or(rest));
    (out, completion.start + utf16_len(&inserted))
}

/// A chip click: inserts `{{key}}` at the cursor.
pub fn insert_at(text: &str, cursor: usize, key: &str) -> (String, usize) {
    let at = byte_index(text, cursor);
    let inserted = format!("{{{{{key}}}}}");
    (
        format!("{}{}{}", &text[..at], inserted, &text[at..]),
        cursor + utf16_len(&inserted),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ph(key: &str) -> Placeholder {
        Placeholder {
            key: key.into(),
            description: String::new(),
            example: String::new(),
        }
    }

    #[test]
    fn braces_open_a_completion_with_the_typed_prefix() {
        assert_eq!(
            open_completion("Archive {{task", 14),
            Some(Completion {
                start: 8,
                prefix: "task".into()
            })
        );
        assert_eq!(open_completion("Archive {{task}} ", 17), None);
        assert_eq!(open_completion("no braces", 9), None);
        assert_eq!(open_completion("{{a b", 5), None);
    }

    #[test]
    fn positions_are_utf16_so_emoji_before_the_braces_work() {
        let text = "🎉 {{pr";
        let c = open_completion(text, 7).unwrap();
        assert_eq!(
            c,
            Completion {
                start: 3,
                prefix: "pr".into()
            }
        );
        let (out, cursor) = accept(text, &c, 7, "pr.url");
        assert_eq!(out, "🎉 {{pr.url}}");
        assert_eq!(cursor, 13);
    }

    #[test]
    fn accepting_replaces_the_prefix_and_eats_typed_closers() {
        let c = open_completion("x {{ta}} y", 6).unwrap();
        assert_eq!(accept("x {{ta}} y", &c, 6, "task_id").0, "x {{task_id}} y");
        let list = [ph("task_id"), ph("pr.url"), ph("automation.name")];
        let keys: Vec<_> = suggestions(&list, "a").iter().map(|p| p.key.clone()).collect();
        assert_eq!(keys, vec!["task_id", "automation.name"]);
    }

    #[test]
    fn chips_insert_at_the_cursor() {
        assert_eq!(insert_at("ab", 1, "k"), ("a{{k}}b".to_string(), 6));
    }
}
