//! Which app reports a check, and which app's report a requirement accepts.
//! GitHub lets protection and rulesets pin a required check to one GitHub
//! App; then a same-named check from another app, or a commit status (which
//! anyone with write access can post), does not count for it.

use serde::{Deserialize, Serialize};

use super::shapes::ACTIONS_APP_ID;

/// A required check. In control bodies either a bare name (any source) or
/// `{"context": …, "app_id": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RequiredForm")]
pub struct SimRequired {
    pub context: String,
    /// The app whose report alone counts; `None`: any source.
    pub app_id: Option<i64>,
}

impl From<&str> for SimRequired {
    fn from(name: &str) -> Self {
        SimRequired {
            context: name.to_string(),
            app_id: None,
        }
    }
}

impl SimRequired {
    pub fn pinned(name: &str, app_id: i64) -> Self {
        SimRequired {
            context: name.to_string(),
            app_id: Some(app_id),
        }
    }

    /// Whether a check of `name` reported by `app` (`None`: a commit status)
    /// reports on this requirement.
    pub fn accepts(&self, name: &str, app: Option<i64>) -> bool {
        self.context == name && self.app_id.is_none_or(|a| app == Some(a))
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RequiredForm {
    Name(String),
    Pinned {
        context: String,
        #[serde(default)]
        app_id: Option<i64>,
    },
}

impl From<RequiredForm> for SimRequired {
    fn from(f: RequiredForm) -> Self {
        match f {
            RequiredForm::Name(context) => SimRequired { context, app_id: None },
            RequiredForm::Pinned { context, app_id } => SimRequired { context, app_id },
        }
    }
}

/// A check run as an app reports it (also the control route's body).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckReport {
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    /// The reporting app: GitHub Actions unless said.
    #[serde(default = "actions")]
    pub app_id: i64,
    /// A new run beside the older one of this check, not a replacement.
    #[serde(default)]
    pub rerun: bool,
}

pub fn actions() -> i64 {
    ACTIONS_APP_ID
}

impl CheckReport {
    /// A run reported by GitHub Actions.
    pub fn new(name: &str, status: &str, conclusion: Option<&str>) -> Self {
        CheckReport {
            name: name.to_string(),
            status: status.to_string(),
            conclusion: conclusion.map(str::to_string),
            app_id: ACTIONS_APP_ID,
            rerun: false,
        }
    }

    pub fn from_app(mut self, app_id: i64) -> Self {
        self.app_id = app_id;
        self
    }

    pub fn rerun(mut self) -> Self {
        self.rerun = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requirement_reads_as_a_bare_name_or_a_pinned_object() {
        let read: Vec<SimRequired> =
            serde_json::from_str(r#"["lint", {"context": "build", "app_id": 15368}, {"context": "docs"}]"#)
                .expect("reads");
        assert_eq!(
            read,
            [
                SimRequired::from("lint"),
                SimRequired::pinned("build", 15368),
                SimRequired::from("docs")
            ]
        );
    }

    #[test]
    fn a_pin_accepts_only_its_app() {
        let pinned = SimRequired::pinned("build", 15368);
        assert!(pinned.accepts("build", Some(15368)));
        assert!(!pinned.accepts("build", Some(7)));
        assert!(!pinned.accepts("build", None), "a commit status");
        assert!(SimRequired::from("build").accepts("build", None));
    }
}
