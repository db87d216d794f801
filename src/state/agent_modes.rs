//! Keeping the agent in a mode that asks: warden's gate sees only what the
//! agent asks about, so a session that opens in a mode that acts without
//! asking (qwen-code starts in `auto`) is moved to the agent's asking mode
//! before any prompt is sent, and an agent that moves itself into such a
//! mode is moved back.

use crate::agents::quirks;
use crate::model::{AgentMode, SessionInfo, SessionOrigin};
use crate::policy::Mode;
use crate::policy::agent_mode::{self, ModeAsks};
use crate::sanitize::one_line;

use super::{ChatState, Connection, Effect, EntryKind};

impl ChatState {
    /// A session is open: find the agent's asking mode and move the agent
    /// there (or into its plan mode in Plan) before the chat is ready.
    pub(super) fn on_session_started(&mut self, info: SessionInfo) -> Vec<Effect> {
        // A session/load replay is over: a call it left open is not
        // running (the agent replayed no result for it).
        if info.origin == SessionOrigin::Loaded {
            self.session.transcript.close_open_tools();
        }
        let session_id = info.session_id;
        self.session.agent_modes = info.modes;
        self.gate.asking_mode = None;
        self.gate.no_asking_mode = false;
        self.session.expected_agent_mode = None;
        self.gate.prompt_blocked = None;
        let Some(modes) = self
            .session
            .agent_modes
            .clone()
            .filter(|m| !m.available.is_empty())
        else {
            // No mode switch to check or use: the gate decides what it asks
            // about (the README says so; a line in every chat would be noise).
            self.session.connection = Connection::Ready { session_id };
            return Vec::new();
        };
        let configured = self.gate.configured_asking_mode.clone();
        let configured = configured.filter(|id| {
            let offered = modes.available.iter().any(|m| &m.id == id);
            if !offered {
                self.warn(format!(
                    "asking_mode = \"{}\" is not one of {}'s modes ({}): warden looks for one that asks",
                    one_line(id),
                    one_line(&self.session.agent_name),
                    mode_list(&modes.available)
                ));
            }
            offered
        });
        let agent = self.session.agent;
        let asks = |m: &AgentMode| quirks::mode_asks(agent, m);
        match agent_mode::asking_mode(&modes.available, configured.as_deref(), asks) {
            Some(asking) => self.gate.asking_mode = Some(asking.id.clone()),
            None => {
                self.gate.no_asking_mode = true;
                let settled = modes
                    .available
                    .iter()
                    .find_map(|m| quirks::settings_hint(agent, m).map(|hint| (m, hint)));
                if let Some((mode, hint)) = settled {
                    // A mode that asks where the agent's own settings say "ask".
                    self.warn(format!(
                        "{}'s mode `{}` asks only where {}'s own permission settings say \"ask\" ({hint}): warden's gate sees only what it asks, and refuses its turns in Plan",
                        one_line(&self.session.agent_name),
                        one_line(&mode.id),
                        one_line(&self.session.agent_name),
                    ));
                } else {
                    self.warn(format!(
                    "none of {}'s modes ({}) is known to ask before acting: warden's gate sees only what it asks, and refuses its turns in Plan; if one of them asks, name it with asking_mode = \"ID\" in its [agents.NAME] block",
                    one_line(&self.session.agent_name),
                    mode_list(&modes.available)
                ));
                }
            }
        }
        if let Some(configured) = self.gate.agent_plan_mode.clone()
            && self.plan_mode().is_none()
        {
            self.warn(format!(
                "agent_plan_mode = \"{}\" is not one of {}'s modes ({}): in Plan it stays in its asking mode",
                one_line(&configured),
                one_line(&self.session.agent_name),
                mode_list(&modes.available)
            ));
        }
        let target = match (self.plan_mode(), self.gate.mode) {
            (Some(plan), Mode::Plan) => {
                self.info(format!(
                    "Plan is enforced by {}'s own mode `{}` (agent_plan_mode): in it the agent may act without asking, and warden sees only what it asks",
                    one_line(&self.session.agent_name),
                    self.agent_mode_name(&plan)
                ));
                Some(plan)
            }
            _ => self.gate.asking_mode.clone(),
        };
        match target {
            Some(target) if target != modes.current => {
                if Some(&target) == self.gate.asking_mode.as_ref() {
                    self.info(format!(
                        "{} started in its mode `{}`, which may act without asking: warden moves it to `{}` before the first prompt",
                        one_line(&self.session.agent_name),
                        self.agent_mode_name(&modes.current),
                        self.agent_mode_name(&target)
                    ));
                }
                self.session.opening = Some((session_id, target.clone()));
                vec![self.switch_agent_mode(&target)]
            }
            _ => {
                self.session.connection = Connection::Ready { session_id };
                Vec::new()
            }
        }
    }

    /// The agent answered a `session/set_mode` (or `set_config_option`).
    pub(super) fn on_agent_mode_set(
        &mut self,
        mode_id: String,
        result: Result<(), String>,
    ) -> Vec<Effect> {
        let opening = self
            .session
            .opening
            .take_if(|(_, awaited)| *awaited == mode_id)
            .map(|(session_id, _)| session_id);
        match result {
            Ok(()) => {
                if self.session.expected_agent_mode.as_deref() == Some(mode_id.as_str()) {
                    self.session.expected_agent_mode = None;
                }
                if let Some(modes) = &mut self.session.agent_modes
                    && modes.current != mode_id
                {
                    modes.current.clone_from(&mode_id);
                    let name = self.agent_mode_name(&mode_id);
                    self.info(format!("agent mode: {name}"));
                }
                if let Some(session_id) = opening {
                    self.session.connection = Connection::Ready { session_id };
                }
            }
            Err(message) => {
                let name = self.agent_mode_name(&mode_id);
                match opening {
                    Some(session_id) => {
                        let why = format!(
                            "{} did not switch to its mode `{name}` ({}): warden sends it no prompt, because it may act without asking; restart it or name another asking_mode",
                            one_line(&self.session.agent_name),
                            one_line(&message)
                        );
                        self.error(why.clone(), Vec::new());
                        self.gate.prompt_blocked = Some(why.clone());
                        self.session.failed.get_or_insert(why);
                        self.session.connection = Connection::Ready { session_id };
                    }
                    None => self.error(
                        format!(
                            "the agent did not switch to its mode `{name}`: {}",
                            one_line(&message)
                        ),
                        Vec::new(),
                    ),
                }
            }
        }
        Vec::new()
    }

    /// The agent says its mode is now `mode` (`current_mode_update`, or a
    /// mode config option): a move warden did not ask for into a mode that
    /// may act without asking is a warning, and warden moves it back.
    pub(super) fn on_agent_mode_now(&mut self, mode: &str) -> Vec<Effect> {
        let modes = self
            .session
            .agent_modes
            .get_or_insert_with(Default::default);
        if modes.current == mode {
            return Vec::new();
        }
        modes.current = mode.to_string();
        let name = self.agent_mode_name(mode);
        self.info(format!("agent mode: {name}"));
        let open = matches!(self.session.connection, Connection::Ready { .. })
            || self.session.opening.is_some();
        if !open {
            return Vec::new();
        }
        // The move warden (or the user) asked for: expected once, so that
        // the agent's own later move back into it is judged like any other.
        if self.session.expected_agent_mode.as_deref() == Some(mode) {
            self.session.expected_agent_mode = None;
            return Vec::new();
        }
        if self.gate.asking_mode.as_deref() == Some(mode) || self.mode_asks(mode) == ModeAsks::Asks
        {
            return Vec::new();
        }
        match self.gate.asking_mode.clone() {
            Some(asking) => {
                self.warn(format!(
                    "{} moved itself into its mode `{name}`, which may act without asking: warden moves it back to `{}`",
                    one_line(&self.session.agent_name),
                    self.agent_mode_name(&asking)
                ));
                vec![self.switch_agent_mode(&asking)]
            }
            None => {
                self.warn(format!(
                    "{} moved itself into its mode `{name}`, which may act without asking; warden knows no asking mode to move it back to",
                    one_line(&self.session.agent_name)
                ));
                Vec::new()
            }
        }
    }

    /// The agent's mode to keep in step with warden's Plan: only the
    /// `agent_plan_mode` setting of the agent's block, an explicit opt-in,
    /// and only when the agent offers that mode. Never found by name: in
    /// its own plan mode Claude Code runs commands without asking, so
    /// warden's Plan never relies on an agent's mode unless the user said
    /// so, and then the footer says that the agent enforces it.
    pub(crate) fn plan_mode(&self) -> Option<String> {
        let configured = self.gate.agent_plan_mode.as_ref()?;
        let offered = self
            .session
            .agent_modes
            .as_ref()
            .is_none_or(|m| m.available.iter().any(|a| &a.id == configured));
        offered.then(|| configured.clone())
    }

    /// Whether the chat's Plan is the agent's own plan mode's to enforce
    /// (the user opted in with `agent_plan_mode`): in that mode the agent
    /// may act without asking, so warden sees only what it still asks.
    pub fn agent_enforces_plan(&self) -> bool {
        self.gate.mode == Mode::Plan && self.plan_mode().is_some()
    }

    /// Ask the agent to switch to its mode `mode_id`, remembering that
    /// warden asked (so the agent's confirmation is no surprise).
    pub(crate) fn switch_agent_mode(&mut self, mode_id: &str) -> Effect {
        self.session.expected_agent_mode = Some(mode_id.to_string());
        self.agent_mode_effect(mode_id)
    }

    /// Whether a turn may not be sent: the agent could not be moved into
    /// its asking mode, or it has none and the chat is in Plan.
    pub(super) fn refuse_turn(&mut self) -> bool {
        if let Some(why) = self.gate.prompt_blocked.clone() {
            self.view.notice = Some(why);
            return true;
        }
        if self.gate.mode == Mode::Plan && self.gate.no_asking_mode {
            let why = format!(
                "Plan is refused for {}: none of its modes is known to ask, so warden cannot hold it to planning; switch to Default (Shift+Tab), or name its asking mode with asking_mode",
                one_line(&self.session.agent_name)
            );
            self.error(why.clone(), Vec::new());
            self.session.failed.get_or_insert(why);
            return true;
        }
        false
    }

    /// What warden can tell about the agent's mode `id`: the agent's own
    /// table first (`agents::quirks`), then the mode's words.
    pub(super) fn mode_asks(&self, id: &str) -> ModeAsks {
        self.session
            .agent_modes
            .as_ref()
            .and_then(|m| m.available.iter().find(|a| a.id == id))
            .map_or_else(
                || agent_mode::classify(id, id, None),
                |m| quirks::mode_asks(self.session.agent, m),
            )
    }

    /// The name of the agent's mode `id` (its id when unknown), one line.
    pub(super) fn agent_mode_name(&self, id: &str) -> String {
        let name = self
            .session
            .agent_modes
            .as_ref()
            .and_then(|m| m.available.iter().find(|a| a.id == id))
            .map_or(id, |m| m.name.as_str());
        one_line(name)
    }

    fn warn(&mut self, text: String) {
        self.session.transcript.push(EntryKind::Error {
            message: format!("warning: {text}"),
            detail: Vec::new(),
        });
    }
}

/// "`plan`, `default`": the ids of modes, for messages.
fn mode_list(modes: &[AgentMode]) -> String {
    modes
        .iter()
        .map(|m| format!("`{}`", one_line(&m.id)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::quirks::Agent;
    use crate::model::AgentModes;
    use crate::state::Msg;

    /// A chat whose agent is `agent`, opening a session that offers
    /// `modes` (current the first).
    fn opened(agent: Option<Agent>, modes: Vec<AgentMode>) -> (ChatState, Vec<Effect>) {
        let mut s = ChatState::new("agent", "/w");
        s.update(Msg::AgentKnown(agent));
        let effects = s.update(Msg::SessionStarted(SessionInfo {
            session_id: "s".into(),
            modes: Some(AgentModes {
                current: modes[0].id.clone(),
                available: modes,
                config_option_id: None,
            }),
            origin: SessionOrigin::New,
        }));
        (s, effects)
    }

    fn mode(id: &str, description: &str) -> AgentMode {
        AgentMode {
            id: id.into(),
            name: id.into(),
            description: Some(description.into()),
        }
    }

    /// The agent known at `initialize` picks how its modes read: a `plan`
    /// that says it asks is its asking mode for an agent warden does not
    /// know, never for Claude Code, whose own `plan` runs commands
    /// without asking.
    #[test]
    fn the_known_agents_table_picks_the_asking_mode() {
        let modes = vec![
            mode("bypassPermissions", "Bypass all permission checks"),
            mode("plan", "Asks before every edit"),
        ];
        let (s, effects) = opened(None, modes.clone());
        assert_eq!(s.gate.asking_mode.as_deref(), Some("plan"));
        assert_eq!(effects.len(), 1, "moved to plan: {effects:?}");
        let (s, effects) = opened(Some(Agent::Claude), modes);
        assert_eq!(s.session.agent, Some(Agent::Claude));
        assert_eq!(s.gate.asking_mode, None);
        assert!(s.gate.no_asking_mode, "fail closed");
        assert_eq!(effects, Vec::new());
    }

    /// opencode's `build` says what to set, from opencode's file.
    #[test]
    fn opencodes_hint_comes_from_its_file() {
        let build = mode(
            "build",
            "The default agent. Executes tools based on configured permissions.",
        );
        let (s, _) = opened(Some(Agent::OpenCode), vec![build.clone()]);
        let said = |s: &ChatState| {
            s.session.transcript.entries().iter().any(|e| {
                matches!(&e.kind, EntryKind::Error { message, .. }
                    if message.contains("in opencode.json"))
            })
        };
        assert!(said(&s));
        // Another known agent with such a mode gets no opencode advice.
        let (s, _) = opened(Some(Agent::Gemini), vec![build]);
        assert!(!said(&s));
    }
}
