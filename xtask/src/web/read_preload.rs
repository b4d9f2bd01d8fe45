//! The page's first API reads, started by `index.html` beside the main
//! module's download instead of after it runs. The table is
//! `kandev_core::api::first_reads`, which the app also builds its requests
//! with, so the browser hands each preloaded answer to the app's request.
//! A segment fills a read only when it looks like an id: a crafted address
//! (`..`, `%2e%2e`, a slash) starts nothing.

use kandev_core::api::first_reads;

use super::preload::{append_preload, pattern_with};

/// The expression for one `:name` segment: a named group of id characters.
fn id_segment(name: &str) -> String {
    format!("(?<{name}>[A-Za-z0-9_-]+)")
}

fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The script for reads made on `every` page and per page `pattern`.
pub fn script(every: &[&str], pages: &[(&str, Vec<String>)]) -> Result<String, String> {
    let mut table = Vec::new();
    for (page, reads) in pages {
        let mut bad = None;
        let re = pattern_with(page, |name| {
            if !valid_name(name) {
                bad = Some(name.to_string());
            }
            id_segment(name)
        })?;
        if let Some(name) = bad {
            return Err(format!(
                "first reads of {page:?}: {name:?} is not a usable segment name"
            ));
        }
        table.push(format!("[/{re}/, {reads:?}]"));
    }
    Ok(format!(
        "<script>(() => {{ const reads = {every:?}; for (const [re, list] of [{}]) {{ const m = re.exec(location.pathname); \
         if (m) {{ for (const r of list) reads.push(r.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, n) => m.groups[n])); break; }} }} \
         for (const href of reads) {} }})();</script>",
        table.join(", "),
        append_preload("href")
    ))
}

/// The script for the app's own table.
pub fn app_script() -> Result<String, String> {
    script(&first_reads::EVERY_PAGE, &first_reads::first_reads())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_reads_and_the_board_reads_are_in_the_script() {
        let s = app_script().expect("script");
        assert!(s.starts_with("<script>") && s.ends_with("</script>"));
        assert!(s.contains("const reads = [\"/api/v1/me\"];"), "{s}");
        assert!(
            s.contains("[/^\\/w\\/(?<ws>[A-Za-z0-9_-]+)\\/?$/, [\"/api/v1/workspaces\", \"/api/v1/workspaces/:ws/tasks?include_archived=false\""),
            "{s}"
        );
        assert!(s.contains("p.as = \"fetch\"") && s.contains("p.crossOrigin = \"anonymous\""));
        assert!(s.contains("for (const href of reads) { const p"), "{s}");
    }

    #[test]
    fn a_segment_name_that_cannot_name_a_group_fails_the_build() {
        assert!(script(&[], &[("/w/:1ws", vec!["/x/:1ws".into()])]).is_err());
        assert!(script(&[], &[("/w/a.b", vec![])]).is_err());
    }
}
