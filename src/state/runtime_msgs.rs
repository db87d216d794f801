//! Messages the runtime sends instead of writing into the state: lines it
//! shows, a reopened chat's saved transcript, the picker's items, notices.

use super::workspace::{Workspace, WsEffect, WsMsg};
use super::{ChatState, Msg};

impl ChatState {
    /// A line or a saved transcript from the runtime.
    pub(super) fn on_runtime_line(&mut self, msg: Msg) {
        match msg {
            Msg::Note(text) => self.info(text),
            Msg::ErrorLine(message) => self.error(message, Vec::new()),
            Msg::Restored(entries) => {
                for entry in entries {
                    self.session.transcript.push(entry);
                }
                self.session.transcript.end_turn();
            }
            _ => {}
        }
    }
}

/// How many transcript entries applying `msg` adds (the runtime counts what
/// it queued before a session opens, so that the chat's record starts after
/// them).
pub(crate) fn lines_added(msg: &Msg) -> usize {
    match msg {
        Msg::Note(_) | Msg::ErrorLine(_) => 1,
        Msg::Restored(entries) => entries.len(),
        _ => 0,
    }
}

impl Workspace {
    /// A workspace message from the runtime.
    pub(super) fn on_runtime(&mut self, msg: WsMsg) -> Vec<WsEffect> {
        match msg {
            WsMsg::Notice(text) => self.notice = Some(text),
            WsMsg::ShowPicker(items) => self.show_picker(items),
            WsMsg::PickerItems(items) => self.add_to_picker(items),
            WsMsg::AgentRenamed { old, new } => self.rename_agent(&old, &new),
            WsMsg::Agents(agents) => self.agents = agents,
            WsMsg::DiscardUntouched(id) => return self.discard_untouched(id),
            WsMsg::Action(_) | WsMsg::Key(..) | WsMsg::Tick(_) | WsMsg::Chat(..) => {}
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::EntryKind;

    #[test]
    fn restored_entries_and_lines_count_what_they_add() {
        let mut state = ChatState::new("demo", "/tmp");
        let msgs = [
            Msg::Restored(vec![
                EntryKind::User("hi".into()),
                EntryKind::Agent("hello".into()),
            ]),
            Msg::Note("reopened".into()),
            Msg::ErrorLine("oops".into()),
        ];
        let expected: usize = msgs.iter().map(lines_added).sum();
        for msg in msgs {
            state.update(msg);
        }
        assert_eq!(state.session.transcript.len(), expected);
        assert_eq!(expected, 4);
    }
}
