//! The runtime's side of checkpoints: which workspace each chat has and
//! the worker that snapshots it. A prompt goes to the agent at once: its
//! "before" checkpoint is queued with the instant it was sent, and the
//! worker takes the workspace as it was then (`Store::as_of`), however
//! late it runs. Only a chat's first prompt may wait, for the chat-open
//! snapshot that base needs (at most [`PROMPT_WAIT`]).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use super::{App, Incoming};
use crate::checkpoint::worker::{self, Job, Target, Worker, Workspace};
use crate::checkpoint::{self as cp, CheckpointOptions, ref_safe};
use crate::model::PromptBlock;
use crate::state::checkpoints::{CheckpointEffect, CheckpointMsg};
use crate::state::{ChatId, Msg};

/// The longest a chat's first prompt waits for the chat-open snapshot.
const PROMPT_WAIT: Duration = Duration::from_secs(2);

/// A prompt waiting for the chat-open snapshot.
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
    /// Chats whose chat-open snapshot is taken (or failed).
    ready: HashSet<ChatId>,
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
                writable: options.writable,
            },
        );
    }

    /// A chat closed.
    pub(super) fn forget(&mut self, id: ChatId) {
        self.chats.remove(&id);
        self.held.remove(&id);
        self.ready.remove(&id);
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
        let reply = Box::new(move |report: cp::Report| {
            let msg: CheckpointMsg = report;
            let _ = inbox.send(Incoming::Checkpoint(id, Box::new(msg)));
        });
        worker.send(job(ws.clone()), reply)
    }

    /// Snapshot a new chat's workspace as it opens: the base its first
    /// prompt's "before" is taken from.
    pub(super) fn checkpoint_baseline(&mut self, id: ChatId) {
        if !self.checkpoint_job(id, |ws| Job::Baseline { ws }) {
            self.checkpoints.ready.insert(id);
        }
    }

    /// Queue the prompt's "before" checkpoint, as of now, and send the
    /// prompt: at once, or, before the chat-open snapshot is taken, when
    /// it is (or [`PROMPT_WAIT`] passes).
    pub(super) fn prompt_after_checkpoint(
        &mut self,
        id: ChatId,
        session: String,
        text: String,
        blocks: Vec<PromptBlock>,
    ) {
        let prompt = worker::prompt_label(&text);
        let sent = std::time::SystemTime::now();
        let queued = self.checkpoint_job(id, |ws| Job::Before { ws, prompt, sent });
        if !queued || self.checkpoints.ready.contains(&id) {
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

    /// The held prompt goes (the chat-open snapshot is taken, or it waited
    /// long enough).
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
                tracing::warn!(chat = id, "the prompt went before the chat-open snapshot");
            }
            self.send_held(id, held.session, &held.text, held.blocks);
        }
    }

    /// What the checkpoint worker answered.
    pub(super) fn on_checkpoint(&mut self, id: ChatId, msg: CheckpointMsg) {
        if matches!(msg, CheckpointMsg::Baseline { .. }) {
            self.checkpoints.ready.insert(id);
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
                self.checkpoint_job(id, |ws| Job::After {
                    ws,
                    ended: std::time::SystemTime::now(),
                })
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

/// The checkpoint worker kept busy until this is dropped (tests: a slow
/// snapshot without a clock).
#[doc(hidden)]
#[derive(Debug)]
pub struct CheckpointHold(#[allow(dead_code)] std::sync::mpsc::Sender<()>);

impl App {
    /// Keep the checkpoint worker busy, from after the jobs queued so far,
    /// until the answer is dropped; `None` when no chat is checkpointed.
    #[doc(hidden)]
    pub fn hold_checkpoints(&self) -> Option<CheckpointHold> {
        let worker = self.checkpoints.worker.as_ref()?;
        let (tx, until) = std::sync::mpsc::channel();
        worker
            .send(Job::Hold { until }, Box::new(|_| {}))
            .then_some(CheckpointHold(tx))
    }

    /// Prompts held back, waiting for a checkpoint.
    #[doc(hidden)]
    pub fn prompts_held(&self) -> usize {
        self.checkpoints.held.len()
    }
}
