//! warden's own choices on a card, defined once: the key that picks each,
//! its words on the card, the remote page and the hint line, and the id the
//! remote page posts and `--on-ask` names. The card's rows
//! (`state::CardView`), the card keys (`keys::CARDS`), the "approve all?"
//! question, the remote page and `--on-ask` all read this table; no letter
//! or label of these is written anywhere else.

use super::CardKind;

/// One of warden's own choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// What the remote page posts for it and `--on-ask` names it.
    pub id: &'static str,
    /// The key that picks it on a card.
    pub key: char,
    /// Its words on the card and the remote page.
    pub label: &'static str,
    /// Its words on a network card, when they differ.
    pub network: Option<&'static str>,
    /// Its word on the card's hint line.
    pub hint: &'static str,
}

impl Row {
    /// Its words on a card of `kind`.
    pub fn label(self, kind: CardKind) -> &'static str {
        match (kind, self.network) {
            (CardKind::Network, Some(label)) => label,
            _ => self.label,
        }
    }
}

/// Allow once.
pub const ALLOW: Row = Row {
    id: "allow",
    key: 'y',
    label: "Allow once",
    network: Some("Allow this connection"),
    hint: "allow",
};
/// Deny.
pub const DENY: Row = Row {
    id: "deny",
    key: 'n',
    label: "Deny",
    network: None,
    hint: "deny",
};
/// Allow this kind of call for the rest of the chat.
pub const FOR_CHAT: Row = Row {
    id: "chat",
    key: 'a',
    label: "Allow for this chat",
    network: Some("Allow this host for this chat"),
    hint: "chat",
};
/// Stop asking for this agent (for a connection: allow its host for this
/// agent from now on), saved to the settings.
pub const BYPASS: Row = Row {
    id: "bypass",
    key: 'b',
    label: "Bypass",
    network: Some("Always allow this host for"),
    hint: "bypass",
};
/// Keep as a rule in the settings.
pub const KEEP_RULE: Row = Row {
    id: "rule",
    key: 'p',
    label: "Keep as rule",
    network: None,
    hint: "keep as rule",
};
/// Deny, and tell the agent why.
pub const REASON: Row = Row {
    id: "reason",
    key: 'r',
    label: "Deny with a reason…",
    network: None,
    hint: "reason",
};
/// Allow every card pending at the key press, after a question.
pub const APPROVE_ALL: Row = Row {
    id: "all",
    key: 'A',
    label: "Approve all pending",
    network: None,
    hint: "all",
};

/// Every one of warden's choices.
pub const ROWS: [Row; 7] = [
    ALLOW,
    DENY,
    FOR_CHAT,
    BYPASS,
    KEEP_RULE,
    REASON,
    APPROVE_ALL,
];

/// The choices another device may post (the remote page's buttons).
pub const REMOTE: [Row; 3] = [ALLOW, DENY, REASON];

/// The row the remote page or `--on-ask` names.
pub fn by_id(id: &str) -> Option<Row> {
    ROWS.into_iter().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_choice_has_a_key_and_an_id_of_its_own() {
        for (i, a) in ROWS.iter().enumerate() {
            for b in &ROWS[i + 1..] {
                assert_ne!(a.key, b.key, "{a:?} {b:?}");
                assert_ne!(a.id, b.id, "{a:?} {b:?}");
            }
            assert_eq!(by_id(a.id), Some(*a));
        }
        assert_eq!(by_id("always"), None);
        assert_eq!(
            FOR_CHAT.label(CardKind::Network),
            "Allow this host for this chat"
        );
        assert_eq!(FOR_CHAT.label(CardKind::AgentTool), "Allow for this chat");
        assert_eq!(DENY.label(CardKind::Network), "Deny");
    }
}
