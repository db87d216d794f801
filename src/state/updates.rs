//! The agent's `session/update`s: the transcript, the agent's own modes
//! and options, a session being loaded.

use super::*;

impl ChatState {
    pub(in crate::state) fn on_update(&mut self, update: SessionUpdate) -> Vec<Effect> {
        // The agent shows a terminal in its own tool call: warden's entry for
        // the same terminal stops showing it, so the output appears once.
        let embedded = match &update {
            SessionUpdate::ToolCall(call) => Some((call.id.as_str(), call.content.as_slice())),
            SessionUpdate::ToolCallUpdate { id, fields } => {
                fields.content.as_deref().map(|c| (id.as_str(), c))
            }
            _ => None,
        };
        if let Some((tool_id, content)) = embedded {
            for item in content {
                if let crate::model::ToolContent::Terminal { id: terminal } = item {
                    self.session
                        .transcript
                        .hand_over_terminal(terminal, tool_id);
                }
            }
        }
        if let SessionUpdate::ToolCallUpdate { id, fields } = &update
            && matches!(
                fields.status,
                Some(WireStatus::Completed | WireStatus::Failed)
            )
        {
            let effects = self.drop_stale_for_tool(id);
            self.session.transcript.update_tool(id, fields);
            return effects;
        }
        match update {
            // Only a session/load replay speaks for the user: it comes
            // before the session is open. Any other user message is the
            // agent's text, marked.
            SessionUpdate::UserChunk(text) if !self.replaying() => {
                self.session.transcript.push_agent_sent_user(&text);
            }
            SessionUpdate::UserChunk(text) => {
                if let Some(Entry {
                    kind: EntryKind::User(last),
                    ..
                }) = self.session.transcript.entries().last()
                {
                    let joined = format!("{last}{text}");
                    self.replace_last_user(joined);
                } else {
                    self.session.transcript.push(EntryKind::User(text));
                }
            }
            SessionUpdate::AgentChunk(text) => self.session.transcript.push_agent_text(&text),
            SessionUpdate::ThoughtChunk(text) => self.session.transcript.push_thought(&text),
            SessionUpdate::MessageChunk {
                message_id,
                text,
                thought,
            } => self
                .session
                .transcript
                .push_message_chunk(&message_id, &text, thought),
            SessionUpdate::ToolCall(call) => self.session.transcript.upsert_tool(*call),
            SessionUpdate::ToolCallUpdate { id, fields } => {
                self.session.transcript.update_tool(&id, &fields)
            }
            SessionUpdate::Plan(plan) => self.session.transcript.set_plan(plan),
            SessionUpdate::AvailableCommands(commands) => self.view.drafts.commands = commands,
            SessionUpdate::Other(_) => {}
            SessionUpdate::Options(options) => self.on_options(options),
            SessionUpdate::Usage(usage) => {
                self.session.transcript.end_answer();
                self.on_usage(usage);
            }
            SessionUpdate::CurrentMode(mode) => return self.on_agent_mode_now(&mode),
            SessionUpdate::ConfigModes(modes) => {
                let current = modes.current.clone();
                let known = self.session.agent_modes.as_ref().map(|m| m.current.clone());
                self.session.agent_modes = Some(AgentModes {
                    current: known.unwrap_or_else(|| current.clone()),
                    ..modes
                });
                return self.on_agent_mode_now(&current);
            }
            SessionUpdate::SessionInfo { title } => self.session.title = title,
        }
        Vec::new()
    }

    /// Whether the agent is replaying a session being loaded: its updates
    /// reach the chat before the session opens (`SessionStarted`); a new
    /// session's early updates come after it.
    pub(in crate::state) fn replaying(&self) -> bool {
        self.session.connection == Connection::Starting && self.session.opening.is_none()
    }

    pub(in crate::state) fn replace_last_user(&mut self, text: String) {
        // Replayed user messages arrive in chunks; keep them one entry.
        self.session.transcript.replace_last(EntryKind::User(text));
    }
}
