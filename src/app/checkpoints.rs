//! The runtime's side of checkpoints: which workspace each chat has, the
//! worker that snapshots it, and the prompt held until its "before"
//! checkpoint is taken (at most [`PROMPT_WAIT`]), so that what the turn
//! writes is never in its own "before".

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use super::{App, Incoming};
use crate::checkpoint::worker::{self, Job, Target, Worker, Workspace};
use crate::checkpoint::{CheckpointOptions, ref_safe};
use crate::model::PromptBlock;
use crate::state::checkpoints::{CheckpointEffect, CheckpointMsg};
use crate::state::{ChatId, Msg};

/// The longest a prompt waits for its "before" checkpoint (a workspace
/// whose snapshot takes longer has its checkpoints switched off).
const PROMPT_WAIT: Duration = Duration::from_secs(2);

/// A prompt waiting for its checkpoint.
struct Held {
    token: u64,
    session: String,
    text: String,
    blocks: Vec<PromptBlock>,
}

/// Every chat's checkpoint workspace, and the worker.
#[derive(Default)]
pub(super) struct Checkpoints {
    worker: Option<Worker>,
    chats: HashMap<ChatId, Workspace>,
    held: HashMap<ChatId, Held>,
    next_token: u64,
}

impl Checkpoints {
    /// A new chat: checkpointed when `options` say where.
    pub(super) fn register(
        &mut self,
        id: ChatId,
        options: Option<CheckpointOptions>,
        roots: Vec<PathBuf>,
        chat: &str,
    ) {
        let Some(options) = options else {
            return;
        };
        if roots.is_empty() {
            return;
        }
        self.worker.get_or_insert_with(Worker::start);
        self.chats.insert(
            id,
            Workspace {
                base: options.dir,
                roots,
                chat: ref_safe(chat),
                limits: options.limits,
                keep: options.keep,
                tell_agent: options.tell_agent,
                own: options.own,
            },
        );
    }

    /// A chat closed.
    pub(super) fn forget(&mut self, id: ChatId) {
        self.chats.remove(&id);
        self.held.remove(&id);
    }
}

impl App {
    /// Queue a job for chat `id`'s workspace; false when it has none.
    fn checkpoint_job(&self, id: ChatId, job: impl FnOnce(Workspace) -> Job) -> bool {
        let (Some(worker), Some(ws)) = (&self.checkpoints.worker, self.checkpoints.chats.get(&id))
        else {
            return false;
        };
        let inbox = self.inbox_tx.clone();
        let reply = Box::new(move |msg: CheckpointMsg| {
            let _ = inbox.send(Incoming::Checkpoint(id, Box::new(msg)));
        });
        worker.send(job(ws.clone()), reply)
    }

    /// Send the prompt now, or hold it until its "before" checkpoint is
    /// taken (the worker answers, or [`PROMPT_WAIT`] passes).
    pub(super) fn prompt_after_checkpoint(
        &mut self,
        id: ChatId,
        session: String,
        text: String,
        blocks: Vec<PromptBlock>,
    ) {
        let prompt = worker::prompt_label(&text);
        if !self.checkpoint_job(id, |ws| Job::Before { ws, prompt }) {
            self.send_held(id, session, &text, blocks);
            return;
        }
        self.checkpoints.next_token += 1;
        let token = self.checkpoints.next_token;
        self.checkpoints.held.insert(
            id,
            Held {
                token,
                session,
                text,
                blocks,
            },
        );
        let inbox = self.inbox_tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(PROMPT_WAIT).await;
            let _ = inbox.send(Incoming::CheckpointWait(id, token));
        });
    }

    fn send_held(&self, id: ChatId, session: String, text: &str, blocks: Vec<PromptBlock>) {
        let agent = self.chats.get(&id).and_then(|chat| self.agent_of(chat));
        match agent {
            Some(agent) => agent.prompt_with(&session, text, blocks),
            None => self.send_chat_later(id, Msg::TurnFailed("the agent is not connected".into())),
        }
    }

    fn send_chat_later(&self, id: ChatId, msg: Msg) {
        let _ = self.inbox_tx.send(Incoming::Chat(id, msg));
    }

    /// The held prompt goes (its checkpoint is taken, or it waited long enough).
    fn release(&mut self, id: ChatId, token: Option<u64>) {
        let due = self
            .checkpoints
            .held
            .get(&id)
            .is_some_and(|held| token.is_none_or(|t| t == held.token));
        if !due {
            return;
        }
        if let Some(held) = self.checkpoints.held.remove(&id) {
            if token.is_some() {
                tracing::warn!(chat = id, "the prompt went before its checkpoint was taken");
            }
            self.send_held(id, held.session, &held.text, held.blocks);
        }
    }

    /// What the checkpoint worker answered.
    pub(super) fn on_checkpoint(&mut self, id: ChatId, msg: CheckpointMsg) {
        if matches!(msg, CheckpointMsg::Before { .. }) {
            self.release(id, None);
        }
        self.send_chat(id, Msg::Checkpoint(Box::new(msg)));
    }

    /// [`PROMPT_WAIT`] passed for the prompt `token`.
    pub(super) fn on_checkpoint_wait(&mut self, id: ChatId, token: u64) {
        self.release(id, Some(token));
    }

    /// The state's checkpoint effects.
    pub(super) fn run_checkpoint(&mut self, id: ChatId, effect: CheckpointEffect) {
        let asked = !matches!(effect, CheckpointEffect::TurnEnded);
        let queued = match effect {
            CheckpointEffect::TurnEnded => {
                // A prompt still held when its turn ended (it failed) goes no more.
                self.checkpoints.held.remove(&id);
                self.checkpoint_job(id, |ws| Job::After { ws })
            }
            CheckpointEffect::Undo => self.checkpoint_job(id, |ws| Job::Plan {
                ws,
                target: Target::Undo,
            }),
            CheckpointEffect::Redo => self.checkpoint_job(id, |ws| Job::Plan {
                ws,
                target: Target::Redo,
            }),
            CheckpointEffect::Plan(step) => self.checkpoint_job(id, |ws| Job::Plan {
                ws,
                target: Target::Step(step),
            }),
            CheckpointEffect::Restore(plan, resolution) => {
                self.checkpoint_job(id, |ws| Job::Restore {
                    ws,
                    plan,
                    resolution,
                })
            }
            CheckpointEffect::List => self.checkpoint_job(id, |ws| Job::List { ws }),
            CheckpointEffect::Changes(step) => {
                self.checkpoint_job(id, |ws| Job::Changes { ws, step })
            }
        };
        if asked && !queued {
            let why = "checkpoints are not kept for this chat ([checkpoints] enabled = false)";
            self.send_chat(
                id,
                Msg::Checkpoint(Box::new(CheckpointMsg::Nothing(why.into()))),
            );
        }
    }
}
