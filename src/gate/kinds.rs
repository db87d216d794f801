//! The kinds of card the gate shows, and what each kind does differently.
//! Adding a kind is one variant here, its arms in this file, and one
//! render arm in `ui/card.rs`.

use crate::model::ToolKind;
use crate::policy::{CLIENT_NETWORK, CLIENT_READ, CLIENT_TERMINAL};

/// What a card asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CardKind {
    /// A tool of the agent's own (`session/request_permission`).
    #[default]
    AgentTool,
    /// warden's request for the agent's `fs/read_text_file`.
    ClientRead,
    /// warden's request for the agent's `fs/write_text_file`.
    ClientWrite,
    /// warden's request for the agent's `terminal/create`.
    ClientTerminal,
    /// The agent asks to switch its mode (`switch_mode`: leaving plan mode).
    ModeSwitch,
    /// The agent asks for the user's input through a permission request
    /// (codex-acp's elicitations): allowing it opens a url or accepts a
    /// form for the user, so it always asks.
    Elicitation,
    /// warden's request for a connection the agent's process tree opens
    /// through warden's proxy (`crate::net`): a host nobody allowed yet.
    /// Every mode asks about it (`policy::network`).
    Network,
}

impl CardKind {
    /// The kind of a request: made by warden for a client call (`client`,
    /// named by its `tool_name`), an elicitation, or the agent's own tool
    /// of kind `tool`.
    pub fn of(client: bool, tool_name: Option<&str>, elicitation: bool, tool: ToolKind) -> Self {
        if client {
            return match tool_name {
                Some(CLIENT_READ) => CardKind::ClientRead,
                Some(CLIENT_TERMINAL) => CardKind::ClientTerminal,
                Some(CLIENT_NETWORK) => CardKind::Network,
                // warden names every request it makes; anything else is
                // taken as the widest: a write.
                _ => CardKind::ClientWrite,
            };
        }
        if elicitation {
            CardKind::Elicitation
        } else if tool == ToolKind::SwitchMode {
            CardKind::ModeSwitch
        } else {
            CardKind::AgentTool
        }
    }

    /// warden's own request for one of the agent's client calls (or a
    /// connection through its proxy): warden does the call itself once
    /// allowed, and no tool call of the agent's stands behind it.
    pub fn is_client(self) -> bool {
        matches!(
            self,
            CardKind::ClientRead
                | CardKind::ClientWrite
                | CardKind::ClientTerminal
                | CardKind::Network
        )
    }

    /// What the decision log calls its kind: `network` for a connection,
    /// else the tool's kind.
    pub fn log_kind(self, tool: ToolKind) -> &'static str {
        match self {
            CardKind::Network => "network",
            _ => tool.as_str(),
        }
    }

    /// Its choices are the plain ones (allow, deny, allow for the chat, a
    /// reason, ...), which fold into one row on a small terminal; a mode
    /// switch and an elicitation keep theirs in full.
    pub fn plain_choices(self) -> bool {
        !matches!(self, CardKind::ModeSwitch | CardKind::Elicitation)
    }

    /// `--on-ask allow` may allow it: nobody is there to open a sign-in
    /// page or fill a form, so an elicitation is declined, never accepted
    /// unseen.
    pub fn on_ask_may_allow(self) -> bool {
        self != CardKind::Elicitation
    }

    /// Why "allow for this chat" is not offered, when the kind says so.
    pub fn no_grant_notice(self) -> Option<&'static str> {
        match self {
            CardKind::ModeSwitch => Some("a switch_mode request is decided one at a time"),
            CardKind::Elicitation => Some("a request for your input is answered y or n"),
            _ => None,
        }
    }

    /// It always asks, whatever the mode and the rules.
    pub fn always_asks(self) -> bool {
        self == CardKind::Elicitation
    }

    /// Allowed from Plan, the chat moves to Default (the agent leaves its
    /// plan mode).
    pub fn leaves_plan(self) -> bool {
        self == CardKind::ModeSwitch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::CLIENT_WRITE;

    #[test]
    fn a_request_is_one_kind_by_who_made_it_and_what_it_asks() {
        let of = CardKind::of;
        assert_eq!(
            of(true, Some(CLIENT_READ), false, ToolKind::Read),
            CardKind::ClientRead
        );
        assert_eq!(
            of(true, Some(CLIENT_WRITE), false, ToolKind::Edit),
            CardKind::ClientWrite
        );
        assert_eq!(
            of(true, Some(CLIENT_TERMINAL), false, ToolKind::Execute),
            CardKind::ClientTerminal
        );
        // An agent's tool that names itself like warden's is the agent's.
        assert_eq!(
            of(false, Some(CLIENT_READ), false, ToolKind::Read),
            CardKind::AgentTool
        );
        assert_eq!(
            of(false, None, true, ToolKind::Other),
            CardKind::Elicitation
        );
        assert_eq!(
            of(false, None, false, ToolKind::SwitchMode),
            CardKind::ModeSwitch
        );
        // warden's own request is never an elicitation nor a mode switch.
        assert_eq!(
            of(true, Some(CLIENT_WRITE), true, ToolKind::SwitchMode),
            CardKind::ClientWrite
        );
        assert!(CardKind::ClientTerminal.is_client());
        assert!(!CardKind::AgentTool.is_client());
        assert!(!CardKind::Elicitation.on_ask_may_allow());
        assert!(!CardKind::ModeSwitch.plain_choices());
        assert!(CardKind::ClientRead.plain_choices());
        assert_eq!(
            of(true, Some(CLIENT_NETWORK), false, ToolKind::Fetch),
            CardKind::Network
        );
        // An agent's tool named like warden's connection is the agent's.
        assert_eq!(
            of(false, Some(CLIENT_NETWORK), false, ToolKind::Fetch),
            CardKind::AgentTool
        );
        assert!(CardKind::Network.is_client());
        assert_eq!(CardKind::Network.log_kind(ToolKind::Fetch), "network");
        assert_eq!(CardKind::AgentTool.log_kind(ToolKind::Fetch), "fetch");
    }
}
