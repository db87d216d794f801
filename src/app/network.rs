//! The connections an agent's process tree asks warden's proxy for
//! (`crate::net`), through the gate like any request: each becomes warden's
//! own request of kind network (`gate::CardKind::Network`), which the
//! policy decides or a card asks about, in a chat on the agent's process.
//! The connection waits for its answer; nothing else does.

use serde_json::json;

use super::App;
use super::calls::CLIENT_ALLOW;
use crate::model::{PermissionOutcome, PermissionRequest, ToolCallFields, ToolKind};
use crate::net::{ConnectAsk, NetAnswer, Reply};
use crate::policy::CLIENT_NETWORK;
use crate::record::{Answerer, DecisionRecord, Verdict};
use crate::state::{ChatId, Msg, Refusal, RequestFacts, RequestId};

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
    pub(super) fn on_connect_ask(&mut self, key: u64, ask: ConnectAsk) {
        let chats = self.chats_on(key);
        let active = self.ws.active_id().filter(|id| chats.contains(id));
        match active.or_else(|| chats.first().copied()) {
            Some(id) => self.ask_in(id, ask),
            None => self.refuse_unasked(None, ask),
        }
    }

    /// A connection a terminal of chat `id` wants (through the terminal's
    /// own proxy): to that chat's gate, as the agent's own connections go.
    pub(super) fn on_terminal_connect_ask(&mut self, id: ChatId, ask: ConnectAsk) {
        if self.chats.contains_key(&id) {
            self.ask_in(id, ask);
        } else {
            self.refuse_unasked(Some(id), ask);
        }
    }

    /// The connection becomes warden's request of kind network in chat
    /// `id`: the gate decides it, a card asks, and the log records it. One
    /// the proxy refused by itself goes to the gate as a refusal whatever
    /// the mode, which the chat says and the log records.
    fn ask_in(&mut self, id: ChatId, ask: ConnectAsk) {
        let Some(chat) = self.chats.get_mut(&id) else {
            return self.refuse_unasked(Some(id), ask);
        };
        let request_id = chat.next_request;
        chat.next_request += 1;
        let request = connect_request(
            chat.session.as_deref().unwrap_or_default(),
            request_id,
            &ask,
        );
        let mut facts = RequestFacts::of(&request, None);
        match ask.reply {
            Reply::Wait(reply) => {
                chat.net_pending.insert(request_id, reply);
            }
            Reply::Refused(why) => {
                // Nothing waits for the answer: it only marks the entry.
                chat.net_pending
                    .insert(request_id, tokio::sync::oneshot::channel().0);
                facts = facts.refused(Refusal::Safety(why));
            }
        }
        self.send_chat(
            id,
            Msg::PermissionChecked {
                id: request_id,
                request: Box::new(request),
                facts: Box::new(facts),
            },
        );
    }

    /// A connection no chat can ask about (the chat that would is gone):
    /// refused (its reply dropped), and the decision log of its agent's
    /// chats says so.
    fn refuse_unasked(&mut self, chat: Option<ChatId>, ask: ConnectAsk) {
        let why = match &ask.reply {
            Reply::Wait(_) => NO_CHAT.to_string(),
            Reply::Refused(why) => why.clone(),
        };
        tracing::warn!(agent = %ask.agent, host = %ask.host, port = ask.port, "a connection no chat can ask about: refused ({why})");
        let choice = self
            .choices
            .iter()
            .find(|c| c.command.name == ask.agent)
            .or_else(|| self.choices.first());
        let Some(path) = choice.and_then(|c| c.options.decision_log.clone()) else {
            return;
        };
        let record = unasked_record(&ask, why);
        let chat = chat.or_else(|| self.ws.active_id()).unwrap_or_default();
        let job = super::disk::Job::Decision {
            chat,
            path,
            record: Box::new(record),
        };
        if !self.disk.send(job) {
            tracing::warn!("the disk writer is gone: a refused connection is not logged");
        }
    }
}

/// Why a connection no chat can ask about is refused.
const NO_CHAT: &str = "no chat to ask in (it was closed)";

/// The decision log's record of a connection refused with no chat to ask
/// in: the agent's, no session and no chat.
fn unasked_record(ask: &ConnectAsk, why: String) -> DecisionRecord {
    let request = connect_request("", 0, ask);
    let view = RequestFacts::of(&request, None).view;
    DecisionRecord {
        time: crate::decision_log::now_rfc3339(),
        agent: ask.agent.clone(),
        session: String::new(),
        chat: String::new(),
        request_id: 0,
        tool_call_id: String::new(),
        title: view.title.clone(),
        kind: view.card.log_kind(view.kind).to_string(),
        category: view.category().as_str().to_string(),
        mode: String::new(),
        decision: Verdict::Denied,
        option_id: None,
        option_kind: None,
        source: Answerer::Safety,
        reason: why,
        cwd: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::CardKind;

    #[test]
    fn a_connection_is_a_network_card_naming_agent_host_and_port() {
        let (ask, _rx) = ConnectAsk::waiting("claude-agent-acp", "api.github.com", 443);
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
        ConnectAsk::waiting("demo", host, 443).0
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

    /// A host a deny rule names is refused without a card, in every mode,
    /// and logged with kind network like any refusal.
    #[test]
    fn a_host_a_deny_rule_names_is_refused_and_logged() {
        use crate::policy::{Mode, Rule, RuleDecision};
        use crate::state::Effect;
        for mode in [Mode::Default, Mode::Auto, Mode::Plan] {
            let mut s = crate::state::ChatState::new("demo", "/w");
            s.gate.mode = mode;
            let mut rule = Rule::new(RuleDecision::Deny);
            rule.host = Some("*.pastebin.com".into());
            s.gate.rules = vec![rule];
            let effects = s.update(checked(1, &ask_for("x.pastebin.com")));
            assert!(s.gate.approvals.is_empty(), "{mode:?}");
            let answered = effects.iter().find_map(|e| match e {
                Effect::RespondPermission { outcome, .. } => Some(net_answer(outcome)),
                _ => None,
            });
            assert_eq!(answered, Some(NetAnswer::Deny { reason: None }), "{mode:?}");
            let record = effects.iter().find_map(|e| match e {
                Effect::LogDecision(record) => Some(record.clone()),
                _ => None,
            });
            let record = record.expect("logged");
            assert_eq!(
                (record.kind.as_str(), record.decision.as_str()),
                ("network", "denied"),
                "{mode:?}"
            );
        }
    }

    /// An app of two chats on one agent process (spawn key 7), the second
    /// on screen, its decisions logged in `dir`; no process runs.
    fn two_chats(dir: &std::path::Path) -> (App, ChatId, ChatId) {
        let command = crate::acp::AgentCommand {
            name: "demo".into(),
            program: "/nonexistent/agent".into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: dir.to_path_buf(),
        };
        let options = super::super::ChatOptions {
            decision_log: Some(dir.join("decisions.jsonl")),
            ..super::super::ChatOptions::default()
        };
        let mut app = App::with_options(command.clone(), options.clone());
        let first = app.ws.active_id().expect("a chat");
        let second = app.add_chat(command, options);
        for chat in app.chats.values_mut() {
            chat.agent_key = Some(7);
        }
        app.ws.active = 1;
        assert_eq!(app.ws.active_id(), Some(second));
        (app, first, second)
    }

    fn cards(app: &App, id: ChatId) -> Vec<String> {
        app.ws
            .chat(id)
            .map(|slot| {
                slot.state
                    .gate
                    .approvals
                    .iter()
                    .map(|a| a.view.title.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn logged(dir: &std::path::Path) -> Vec<DecisionRecord> {
        crate::decision_log::read(&dir.join("decisions.jsonl")).unwrap_or_default()
    }

    /// A terminal's connection is asked about in the chat that ran the
    /// terminal, not in the chat on screen (where the agent's own go).
    #[tokio::test]
    async fn a_terminals_connection_asks_in_its_own_chat() {
        use super::super::Incoming;
        let dir = tempfile::tempdir().unwrap();
        let (mut app, first, second) = two_chats(dir.path());
        let (ask, mut answer) = ConnectAsk::waiting("demo", "from.terminal", 443);
        app.on_agent_event(Incoming::TerminalNet(first, Box::new(ask)));
        assert_eq!(
            cards(&app, first),
            ["demo wants to reach from.terminal:443"]
        );
        assert!(cards(&app, second).is_empty());
        assert!(answer.try_recv().is_err(), "it waits for its card");
        let (ask, _answer) = ConnectAsk::waiting("demo", "from.agent", 443);
        app.on_agent_event(Incoming::Net(7, Box::new(ask)));
        assert_eq!(cards(&app, second), ["demo wants to reach from.agent:443"]);
        assert_eq!(cards(&app, first).len(), 1);
        // Its card answered in its chat answers the terminal's connection.
        app.ws.active = 0;
        app.handle(Msg::Action(crate::state::Action::ch('y')));
        assert_eq!(answer.try_recv(), Ok(NetAnswer::Allow));
    }

    /// A terminal's connection whose chat is gone is refused, and the
    /// decision log says so with kind network.
    #[tokio::test]
    async fn a_connection_with_no_chat_to_ask_in_is_refused_and_logged() {
        use super::super::Incoming;
        let dir = tempfile::tempdir().unwrap();
        let (mut app, first, second) = two_chats(dir.path());
        let (ask, mut answer) = ConnectAsk::waiting("demo", "orphan.example", 8080);
        app.on_agent_event(Incoming::TerminalNet(99, Box::new(ask)));
        assert!(matches!(
            answer.try_recv(),
            Err(tokio::sync::oneshot::error::TryRecvError::Closed)
        ));
        assert!(cards(&app, first).is_empty() && cards(&app, second).is_empty());
        app.settle_disk().await;
        let log = logged(dir.path());
        assert_eq!(log.len(), 1, "{log:?}");
        assert_eq!(log[0].kind, "network");
        assert_eq!(log[0].decision, Verdict::Denied);
        assert_eq!(log[0].source, Answerer::Safety);
        assert_eq!(log[0].agent, "demo");
        assert_eq!(log[0].title, "demo wants to reach orphan.example:8080");
        assert_eq!(log[0].reason, NO_CHAT);
    }

    /// A connection the proxy refused by itself (the network closed) is
    /// no card: the chat says it was refused and the log records it.
    #[tokio::test]
    async fn a_refusal_the_proxy_made_is_said_and_logged_without_a_card() {
        use super::super::Incoming;
        let dir = tempfile::tempdir().unwrap();
        let (mut app, first, _) = two_chats(dir.path());
        let refused = ConnectAsk {
            agent: "demo".into(),
            host: "closed.example".into(),
            port: 443,
            reply: Reply::Refused(crate::net::proxy::CLOSED.into()),
        };
        app.on_agent_event(Incoming::TerminalNet(first, Box::new(refused)));
        assert!(cards(&app, first).is_empty());
        let said = app
            .ws
            .chat(first)
            .map(|slot| {
                slot.state
                    .session
                    .transcript
                    .entries()
                    .iter()
                    .any(|e| matches!(&e.kind, crate::state::EntryKind::Error { message, .. } if message.contains("closed.example:443") && message.contains("network is closed")))
            })
            .unwrap_or_default();
        assert!(said, "the chat says it");
        app.settle_disk().await;
        let log = logged(dir.path());
        assert_eq!(log.len(), 1, "{log:?}");
        assert_eq!(log[0].kind, "network");
        assert_eq!(log[0].decision, Verdict::Denied);
        assert_eq!(log[0].source, Answerer::Safety);
        assert_eq!(log[0].reason, crate::net::proxy::CLOSED);
        assert!(app.chats[&first].net_pending.is_empty());
    }
}
