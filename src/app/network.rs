//! The connections an agent's process tree asks warden's proxy for
//! (`crate::net`), through the gate like any request: each becomes warden's
//! own request of kind network (`gate::CardKind::Network`), which the
//! policy decides or a card asks about, in a chat on the agent's process.
//! The connection waits for its answer; nothing else does.

use serde_json::json;

use super::App;
use super::calls::CLIENT_ALLOW;
use crate::model::{PermissionOutcome, PermissionRequest, ToolCallFields, ToolKind};
use crate::net::{ConnectAsk, NetAnswer};
use crate::policy::CLIENT_NETWORK;
use crate::state::{ChatId, Msg, RequestFacts, RequestId};

/// warden's request for one connection.
pub(super) fn connect_request(session: &str, id: RequestId, ask: &ConnectAsk) -> PermissionRequest {
    let target = format!("{}:{}", ask.host, ask.port);
    PermissionRequest {
        session_id: session.to_string(),
        tool_call_id: format!("warden-{id}"),
        fields: ToolCallFields {
            title: Some(format!("{} wants to reach {target}", ask.agent)),
            kind: Some(ToolKind::Fetch),
            raw_input: Some(json!({ "host": ask.host, "port": ask.port })),
            tool_name: Some(CLIENT_NETWORK.to_string()),
            ..ToolCallFields::default()
        },
        options: super::calls::client_options(),
        client: true,
    }
}

/// What the connection gets for the gate's answer.
pub(super) fn net_answer(outcome: &PermissionOutcome) -> NetAnswer {
    if *outcome == PermissionOutcome::Selected(CLIENT_ALLOW.into()) {
        NetAnswer::Allow
    } else {
        NetAnswer::Deny { reason: None }
    }
}

impl App {
    /// A connection the agent of spawn key `key` wants: to the gate of the
    /// chat on screen when it runs on that agent, else of its first chat.
    /// With no chat to ask in, it is refused (the reply dropped).
    pub(super) fn on_connect_ask(&mut self, key: u64, ask: ConnectAsk) {
        let chats = self.chats_on(key);
        let active = self.ws.active_id().filter(|id| chats.contains(id));
        let Some(id): Option<ChatId> = active.or_else(|| chats.first().copied()) else {
            tracing::warn!(host = %ask.host, port = ask.port, "a connection with no chat to ask in: refused");
            return;
        };
        let Some(chat) = self.chats.get_mut(&id) else {
            return;
        };
        let request_id = chat.next_request;
        chat.next_request += 1;
        let request = connect_request(
            chat.session.as_deref().unwrap_or_default(),
            request_id,
            &ask,
        );
        chat.net_pending.insert(request_id, ask.reply);
        let facts = RequestFacts::of(&request, None);
        self.send_chat(
            id,
            Msg::PermissionChecked {
                id: request_id,
                request: Box::new(request),
                facts: Box::new(facts),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::CardKind;

    #[test]
    fn a_connection_is_a_network_card_naming_agent_host_and_port() {
        let (reply, _rx) = tokio::sync::oneshot::channel();
        let ask = ConnectAsk {
            agent: "claude-agent-acp".into(),
            host: "api.github.com".into(),
            port: 443,
            reply,
        };
        let request = connect_request("s", 7, &ask);
        let facts = RequestFacts::of(&request, None);
        assert_eq!(facts.view.card, CardKind::Network);
        assert_eq!(
            facts.view.title,
            "claude-agent-acp wants to reach api.github.com:443"
        );
        assert_eq!(
            crate::policy::network::target(&facts.view),
            Some(("api.github.com".to_string(), 443))
        );
        assert_eq!(
            net_answer(&PermissionOutcome::Selected(CLIENT_ALLOW.into())),
            NetAnswer::Allow
        );
        assert_eq!(
            net_answer(&PermissionOutcome::Selected("reject".into())),
            NetAnswer::Deny { reason: None }
        );
        assert_eq!(
            net_answer(&PermissionOutcome::Cancelled),
            NetAnswer::Deny { reason: None }
        );
    }

    fn ask_for(host: &str) -> ConnectAsk {
        let (reply, _rx) = tokio::sync::oneshot::channel();
        ConnectAsk {
            agent: "demo".into(),
            host: host.into(),
            port: 443,
            reply,
        }
    }

    fn checked(id: RequestId, ask: &ConnectAsk) -> Msg {
        let request = connect_request("s", id, ask);
        Msg::PermissionChecked {
            id,
            facts: Box::new(RequestFacts::of(&request, None)),
            request: Box::new(request),
        }
    }

    /// Auto mode allows the agent's tools, never a new host: a card waits,
    /// between turns too.
    #[test]
    fn a_new_host_is_a_card_in_auto_mode_even_between_turns() {
        use crate::policy::Mode;
        let mut s = crate::state::ChatState::new("demo", "/w");
        s.gate.mode = Mode::Auto;
        let effects = s.update(checked(1, &ask_for("api.github.com")));
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, crate::state::Effect::RespondPermission { .. })),
            "{effects:?}"
        );
        assert_eq!(s.gate.approvals.len(), 1);
        assert_eq!(s.gate.approvals[0].view.card, CardKind::Network);
        assert!(
            !s.gate.approvals[0].card.keep_rule,
            "no rule of a call keeps a host"
        );
        let labels: Vec<&str> = s.gate.approvals[0]
            .card
            .rows
            .iter()
            .map(|r| r.label.as_str())
            .collect();
        assert!(
            labels.contains(&"Allow this host for this chat"),
            "{labels:?}"
        );
        assert!(
            labels
                .iter()
                .any(|l| l.starts_with("Always allow this host for")),
            "{labels:?}"
        );
        let remote: Vec<&str> = s.card_summaries()[0]
            .choices
            .iter()
            .map(|c| c.label)
            .collect();
        assert!(remote.contains(&"Allow this connection"), "{remote:?}");
    }

    /// `warden exec --on-ask` answers a connection's card, and the log
    /// says `network`.
    #[test]
    fn on_ask_answers_a_connection_and_the_log_says_network() {
        use crate::state::{Effect, OnAsk};
        for (on_ask, allowed) in [(OnAsk::Allow, true), (OnAsk::Deny, false)] {
            let mut s = crate::state::ChatState::new("demo", "/w");
            s.gate.headless = Some(on_ask);
            let effects = s.update(checked(1, &ask_for("example.com")));
            let outcome = effects.iter().find_map(|e| match e {
                Effect::RespondPermission { outcome, .. } => Some(outcome.clone()),
                _ => None,
            });
            let outcome = outcome.expect("answered");
            assert_eq!(net_answer(&outcome) == NetAnswer::Allow, allowed);
            let record = effects.iter().find_map(|e| match e {
                Effect::LogDecision(record) => Some(record.clone()),
                _ => None,
            });
            assert_eq!(record.expect("logged").kind, "network");
        }
    }

    /// `b` on a network card: allowed now and for this chat, and the host
    /// goes to the agent's `allow_hosts` in the settings; the same host
    /// again is not asked about.
    #[test]
    fn always_for_this_agent_saves_the_host_and_covers_the_chat() {
        use crate::state::{Action, Effect, SettingsEdit};
        let mut s = crate::state::ChatState::new("demo", "/w");
        s.gate.agent_policy.name = "demo".into();
        s.update(checked(1, &ask_for("api.github.com")));
        let effects = s.update(Msg::Action(Action::ch('b')));
        let logged = effects.iter().find_map(|e| match e {
            Effect::LogDecision(record) => Some(record.reason.clone()),
            _ => None,
        });
        assert_eq!(
            logged.as_deref(),
            Some("connections to api.github.com:443 in this chat")
        );
        assert!(
            effects.contains(&Effect::EditSettings(SettingsEdit::AllowHost {
                agent: "demo".into(),
                host: "api.github.com:443".into(),
            })),
            "{effects:?}"
        );
        let answered = effects.iter().find_map(|e| match e {
            Effect::RespondPermission { outcome, .. } => Some(net_answer(outcome)),
            _ => None,
        });
        assert_eq!(answered, Some(NetAnswer::Allow));
        let again = s.update(checked(2, &ask_for("api.github.com")));
        assert!(
            again.iter().any(|e| matches!(e, Effect::RespondPermission { outcome, .. } if net_answer(outcome) == NetAnswer::Allow)),
            "{again:?}"
        );
        assert!(s.gate.approvals.is_empty());
        // Another host still asks.
        s.update(checked(3, &ask_for("evil.example")));
        assert_eq!(s.gate.approvals.len(), 1);
    }
}
