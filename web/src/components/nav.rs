//! Which section of the app a path belongs to, for the header's current
//! link: the router marks a link current for every path beneath it, which
//! made "Board" current on the members page too.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Board,
    Automations,
    Members,
    Notifications,
    Tokens,
}

pub fn section(path: &str) -> Option<Section> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        ["w", _] | ["w", _, "tasks" | "runs", ..] => Some(Section::Board),
        ["w", _, "members", ..] => Some(Section::Members),
        ["w", _, "notifications", ..] => Some(Section::Notifications),
        ["automations", ..] | ["settings", "automations"] | ["settings", "workspace", _, "automations", ..] => {
            Some(Section::Automations)
        }
        ["settings", "tokens", ..] => Some(Section::Tokens),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_page_marks_its_own_section_only() {
        assert_eq!(section("/w/W"), Some(Section::Board));
        assert_eq!(section("/w/W/tasks/T"), Some(Section::Board));
        assert_eq!(section("/w/W/runs/T"), Some(Section::Board));
        assert_eq!(section("/w/W/members"), Some(Section::Members));
        assert_eq!(section("/w/W/notifications"), Some(Section::Notifications));
        assert_eq!(section("/automations"), Some(Section::Automations));
        assert_eq!(section("/automations/A"), Some(Section::Automations));
        assert_eq!(
            section("/settings/workspace/W/automations/new"),
            Some(Section::Automations)
        );
        assert_eq!(section("/settings/tokens"), Some(Section::Tokens));
        assert_eq!(section("/"), None);
        assert_eq!(section("/login"), None);
    }
}
