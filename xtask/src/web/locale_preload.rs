//! A German page waits for its messages: the app asks for `/locales/de.ftl`
//! only once the main module runs. `index.html` gets a small script that
//! starts that file beside the main module's download when the page will
//! want it. Which locale that is follows `i18n::browser_locale`: the kept
//! choice if the app knows it, else the first shipped locale whose language
//! the browser's starts with; the built-in one needs no file. The names come
//! from the app's own source (`web/src/i18n.rs`), so the two cannot drift on
//! what is shipped or where the choice is kept.

/// The value of `const NAME: &str = "…";` in `source`.
fn str_const(source: &str, name: &str) -> Result<String, String> {
    let needle = format!("const {name}: &str = \"");
    let start = source
        .find(&needle)
        .ok_or_else(|| format!("web/src/i18n.rs: no `{needle}…\"`"))?
        + needle.len();
    let len = source[start..]
        .find('"')
        .ok_or_else(|| format!("web/src/i18n.rs: `{name}` is not closed"))?;
    Ok(source[start..start + len].to_string())
}

/// The script for the app's `i18n.rs` and the locale files the build wrote
/// (their names without `.ftl`).
pub fn script(i18n_rs: &str, written: &[String]) -> Result<String, String> {
    let built_in = str_const(i18n_rs, "DEFAULT_LOCALE")?;
    let key = str_const(i18n_rs, "STORAGE_KEY")?;
    let mut fetched: Vec<&String> = written.iter().filter(|l| **l != built_in).collect();
    fetched.sort();
    let list = fetched.iter().map(|l| format!("{l:?}")).collect::<Vec<_>>().join(", ");
    Ok(format!(
        "<script>(() => {{ const known = [{list}]; let l = \"\"; \
         try {{ l = localStorage.getItem({key:?}) || \"\"; }} catch (e) {{}} \
         if (l !== {built_in:?} && !known.includes(l)) {{ const n = (navigator.language || \"\").toLowerCase(); \
         l = known.find((k) => n.startsWith(k.split(\"-\")[0].toLowerCase())) || \"\"; }} \
         if (known.includes(l)) {} }})();</script>",
        super::preload::append_preload("\"/locales/\" + l + \".ftl\"")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const I18N: &str = r#"
        pub const DEFAULT_LOCALE: &str = "en-US";
        const STORAGE_KEY: &str = "kandev-locale";
    "#;

    #[test]
    fn the_script_knows_every_fetched_locale_and_not_the_built_in_one() {
        let s = script(I18N, &["en-US".into(), "de".into()]).expect("script");
        assert!(s.starts_with("<script>") && s.ends_with("</script>"));
        assert!(s.contains("const known = [\"de\"];"), "{s}");
        assert!(s.contains("localStorage.getItem(\"kandev-locale\")"), "{s}");
        assert!(s.contains("l !== \"en-US\""), "{s}");
        assert!(s.contains("p.as = \"fetch\"") && s.contains("p.crossOrigin = \"anonymous\""));
        assert!(s.contains("p.href = \"/locales/\" + l + \".ftl\";"), "{s}");
    }

    #[test]
    fn an_app_without_the_constants_fails_the_build() {
        assert!(script("pub const OTHER: &str = \"x\";", &["de".into()]).is_err());
    }
}
