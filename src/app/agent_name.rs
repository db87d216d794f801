//! The name an agent gives itself (`agentInfo.name`): checked against the
//! settings file off the loop (its further events wait meanwhile), then
//! shown in its chats, or refused where it would pass for another agent.
//! Display only: the agent's identity (its process slot, rules, bypass,
//! decision log) keeps the name its command gave it.

use super::{App, Incoming};
use crate::acp;
use crate::sanitize::one_line;
use crate::settings;
use crate::state::{ChatId, Msg};

/// The settings file's verdict on the name an agent gave itself, read off
/// the loop.
#[derive(Debug)]
pub struct NameCheck {
    key: u64,
    old: String,
    new: String,
    /// What the agent called itself (at most 80 characters).
    claim: String,
    /// Why the file refuses the name, if it does.
    verdict: Option<String>,
}

impl App {
    /// An agent named from its command (no settings block runs it) is
    /// shown by the name it gives itself (`agentInfo.name`, made a safe
    /// word), unless that word says nothing, is an interpreter's, or is
    /// another agent's (a settings block, the demo, an agent of this run),
    /// which would mislead. Display only: an agent never gets the rules or
    /// the bypass of another by what it calls itself; its identity stays.
    ///
    /// The settings file is read off the loop; until its verdict is in, the
    /// process's further events wait (parked in its slot), so that no
    /// session or request of it is seen under the old name.
    pub(super) fn on_agent_info(&mut self, key: u64, info: &acp::AgentInfo) {
        let Some(old) = self.slot_of(key).map(|(name, _)| name.clone()) else {
            return;
        };
        let Some(ids) = self.named_by_command(&old) else {
            return;
        };
        let new = settings::agent_slug(&info.name);
        if new == old {
            return;
        }
        let claim: String = info.name.chars().take(80).collect();
        if let Some(reason) = self.name_taken(&new, &old) {
            self.refuse_name(&ids, &old, &new, &claim, &reason);
            return;
        }
        let Some(link) = self.chats.get(&ids[0]).map(|c| c.settings.clone()) else {
            return;
        };
        self.hold_events(key);
        let inbox = self.inbox_tx.clone();
        tokio::spawn(async move {
            let wanted = new.clone();
            let verdict = tokio::task::spawn_blocking(move || {
                settings::name_refused_by_file(link.path.as_deref(), link.writable, &wanted)
            })
            .await
            .unwrap_or_else(|err| Some(format!("the settings file could not be read ({err})")));
            let check = NameCheck {
                key,
                old,
                new,
                claim,
                verdict,
            };
            let _ = inbox.send(Incoming::AgentName(check));
        });
    }

    /// The settings file's verdict is in: rename the agent (unless this run
    /// changed meanwhile), then route the events that waited for it.
    pub(super) fn on_name_checked(&mut self, check: NameCheck) {
        let NameCheck {
            key,
            old,
            new,
            claim,
            verdict,
        } = check;
        let current = self.slot_of(key).map(|(name, _)| name.clone());
        if current.as_deref() == Some(old.as_str())
            && let Some(ids) = self.named_by_command(&old)
        {
            match verdict.or_else(|| self.name_taken(&new, &old)) {
                Some(reason) => self.refuse_name(&ids, &old, &new, &claim, &reason),
                None => self.rename_agent(&ids, &old, &new),
            }
        }
        self.release_events(key);
    }

    /// The chats of agent `old` (in id order), when it has chats and every
    /// one of them was named from its command.
    fn named_by_command(&self, old: &str) -> Option<Vec<ChatId>> {
        let mut ids: Vec<ChatId> = self
            .chats
            .iter()
            .filter(|(_, chat)| chat.command.name == old)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        let by_command = !ids.is_empty()
            && ids.iter().all(|id| {
                self.chats
                    .get(id)
                    .is_some_and(|c| c.settings.named_by_command)
            });
        by_command.then_some(ids)
    }

    /// Why the agent `old` may not be called `new` by the name itself or by
    /// this run (another agent has it); the settings file is asked apart.
    fn name_taken(&self, new: &str, old: &str) -> Option<String> {
        if let Some(reason) = settings::name_refused(new) {
            return Some(reason);
        }
        let running = self
            .agents
            .keys()
            .chain(self.choices.iter().map(|c| &c.command.name))
            .chain(self.chats.values().map(|c| &c.command.name))
            .any(|name| name != old && name == new);
        running.then(|| format!("another agent of this run is `{new}`"))
    }

    /// The agent keeps its name: its chats say why.
    fn refuse_name(&mut self, ids: &[ChatId], old: &str, new: &str, claim: &str, reason: &str) {
        tracing::info!(agent = %old, wanted = %new, "agent name from agentInfo refused: {reason}");
        let line = format!(
            "the agent calls itself `{}`, but {reason}: it stays `{}`",
            one_line(claim),
            one_line(old)
        );
        for id in ids {
            self.send_chat(*id, Msg::Note(line.clone()));
        }
    }

    /// The agent `old` is shown as `new` from now on: display only. Its
    /// identity (process slot, chats' commands, the block `b` writes, the
    /// decision log, allow rules and bypasses) keeps `old`.
    fn rename_agent(&mut self, ids: &[ChatId], old: &str, new: &str) {
        tracing::info!(agent = %old, shown = %new, "agent shown by its agentInfo name");
        for id in ids {
            self.send_chat(*id, Msg::AgentNamed(new.to_string()));
        }
    }
}
