//! Whether a replica acts on a message from the shared bus. Anything that can
//! reach NATS can publish into the installation's stream — an agent on the
//! same host included — so a message counts only if a replica of this
//! installation sealed it, or if the outbox holds that very event (a replica
//! older than seals published it, during a rolling upgrade).

/// Where a bus message came from, as far as a replica can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Its seal was made with the installation's key.
    Sealed,
    /// Unsealed or badly sealed, but the outbox holds the same subject and body.
    Stored,
    /// Neither: never handled.
    Forged,
}

/// The event subject a stream subject carries (`{namespace}.{subject}`).
pub fn event_subject<'a>(namespace: &str, wire_subject: &'a str) -> Option<&'a str> {
    wire_subject.strip_prefix(namespace)?.strip_prefix('.')
}

/// What the bytes a seal covers are: the subject it was published on, a NUL
/// (no subject holds one), the body. A sealed body moved to another subject
/// no longer matches.
pub fn sealed_bytes(wire_subject: &str, body: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(wire_subject.len() + 1 + body.len());
    bytes.extend_from_slice(wire_subject.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(body);
    bytes
}

/// Decides a message's origin from whether its seal matched and what the
/// outbox holds under its id (`None`: nothing, or not looked up).
pub fn origin(seal_matches: bool, stored: Option<(&str, &[u8])>, subject: Option<&str>, body: &[u8]) -> Origin {
    if seal_matches {
        return Origin::Sealed;
    }
    match (stored, subject) {
        (Some((stored_subject, stored_body)), Some(subject)) if stored_subject == subject && stored_body == body => {
            Origin::Stored
        }
        _ => Origin::Forged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matching_seal_is_enough() {
        assert_eq!(origin(true, None, None, b"{}"), Origin::Sealed);
    }

    #[test]
    fn an_unsealed_message_the_outbox_holds_byte_for_byte_is_stored() {
        let stored = Some(("github.task_pr.updated", &b"{\"id\":\"e1\"}"[..]));
        assert_eq!(
            origin(false, stored, Some("github.task_pr.updated"), b"{\"id\":\"e1\"}"),
            Origin::Stored
        );
    }

    #[test]
    fn a_stored_id_with_another_body_or_subject_is_forged() {
        let stored = Some(("github.task_pr.updated", &b"{\"state\":\"open\"}"[..]));
        assert_eq!(
            origin(false, stored, Some("github.task_pr.updated"), b"{\"state\":\"merged\"}"),
            Origin::Forged
        );
        assert_eq!(
            origin(false, stored, Some("automation.triggered"), b"{\"state\":\"open\"}"),
            Origin::Forged
        );
    }

    #[test]
    fn an_unsealed_message_nothing_holds_is_forged() {
        assert_eq!(origin(false, None, Some("a.b"), b"{}"), Origin::Forged);
        let stored = Some(("a.b", &b"{}"[..]));
        assert_eq!(
            origin(false, stored, None, b"{}"),
            Origin::Forged,
            "outside the stream's namespace"
        );
    }

    #[test]
    fn the_event_subject_is_the_part_after_the_namespace() {
        assert_eq!(
            event_subject("kandev", "kandev.github.task_pr.updated"),
            Some("github.task_pr.updated")
        );
        assert_eq!(event_subject("kandev", "kandevx.github"), None);
        assert_eq!(event_subject("kandev", "other.github"), None);
    }

    #[test]
    fn a_seal_covers_the_subject_and_the_body_apart() {
        assert_eq!(sealed_bytes("a.b", b"c"), b"a.b\0c".to_vec());
        assert_ne!(sealed_bytes("a.b", b"c"), sealed_bytes("a.bc", b""));
    }
}
