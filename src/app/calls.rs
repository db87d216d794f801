//! Files and terminals on the agent's behalf. Reads, writes and new
//! terminals go through the same gate as permission requests: each becomes a
//! synthetic request (kind read / edit / execute, with allow and reject
//! options) that the policy decides or a card asks about; the IO happens only
//! once it is allowed. Output, wait, kill and release need no decision.
//!
//! The file IO (the content on disk a write's card shows, reads, writes with
//! their fsync) runs off the event loop on one [`FileWorker`], one call
//! after another in the order they came: every gated call passes through it
//! on its way to the gate and again once decided, so the gate sees the calls
//! and the agent gets its answers in the order it asked. The IO goes
//! through `client::fs` exactly as before (resolved path, openat2 beneath
//! its root, warden's own files refused).

use std::path::{Path, PathBuf};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::Incoming;
use super::chat::Chat;
use super::facts::{self, fs_error, missing_reads_empty, safety_refusal};
use crate::acp::{ClientCall, ClientError, ClientReply, ClientResponder, ExitInfo};
use crate::client::fs::{self, FsError};
use crate::client::terminal::{ExitStatus, TerminalError, TerminalEvent, TerminalSpec};
use crate::model::{
    OptionKind, PermissionOption, PermissionRequest, ToolCallFields, ToolContent, WireStatus,
};
use crate::state::{ChatId, Msg, Refusal, RequestFacts, RequestId, TerminalView};

/// The option id of "allow" on a synthetic request.
pub(super) const CLIENT_ALLOW: &str = "allow";
const CLIENT_REJECT: &str = "reject";

/// Terminal output kept when the agent sets no `outputByteLimit`.
const DEFAULT_OUTPUT_LIMIT: usize = 1 << 20;

/// The most terminal output kept whatever the agent asks (the terminal
/// buffer's own cap, 16 MiB), so that a chatty command with a huge
/// `outputByteLimit` cannot grow warden without bound, and the output still
/// fits one message.
const MAX_OUTPUT_LIMIT: usize = crate::client::terminal::MAX_OUTPUT;

/// The output a terminal keeps: the agent's `outputByteLimit`, else 1 MiB,
/// at most [`MAX_OUTPUT_LIMIT`].
fn output_limit(asked: Option<u64>) -> usize {
    asked
        .map_or(DEFAULT_OUTPUT_LIMIT, |l| {
            usize::try_from(l).unwrap_or(usize::MAX)
        })
        .min(MAX_OUTPUT_LIMIT)
}

/// A file call's IO, run by the [`FileWorker`] off the loop.
pub(super) type FileJob = Box<dyn FnOnce() -> FsStep + Send>;

/// A file job and the chat it is for.
type ChatJob = (ChatId, FileJob);

/// What a [`FileJob`] hands back to its chat.
#[derive(Debug)]
pub enum FsStep {
    /// A call answered before the gate (a read of a missing file, a path
    /// that does not resolve): the agent gets `result`, in its turn.
    Reply {
        responder: ClientResponder,
        result: Result<ClientReply, ClientError>,
    },
    /// The facts of the agent's permission request `id` are gathered: the
    /// gate decides it.
    Checked {
        /// The spawn key of the agent whose events wait for it.
        key: u64,
        id: RequestId,
        request: Box<PermissionRequest>,
        facts: Box<RequestFacts>,
    },
    /// A call is ready for the gate (a write with the change against the
    /// file on disk), for the session it came in.
    Gate {
        call: ClientCall,
        responder: ClientResponder,
        real: PathBuf,
        fields: Box<ToolCallFields>,
        session: Option<String>,
        /// Refused for safety before any IO: the gate refuses it (and logs
        /// it), and the agent gets this error.
        refused: Option<(Refusal, ClientError)>,
    },
    /// An allowed read or write ran: the agent gets `result`.
    Done {
        id: RequestId,
        verb: &'static str,
        real: PathBuf,
        result: Result<ClientReply, FsError>,
        responder: ClientResponder,
    },
    /// A call the gate refused, or a terminal it allowed: every call before
    /// it is answered, so it is answered (or started) now.
    Decided {
        id: RequestId,
        call: ClientCall,
        responder: ClientResponder,
        real: PathBuf,
        allowed: bool,
    },
}

/// Runs file jobs on the blocking pool, one after another in the order they
/// were sent; each result comes back as [`Incoming::Files`]. Started with
/// the first job.
pub(super) struct FileWorker {
    inbox: mpsc::UnboundedSender<Incoming>,
    running: Option<(mpsc::UnboundedSender<ChatJob>, JoinHandle<()>)>,
}

impl FileWorker {
    pub(super) fn new(inbox: mpsc::UnboundedSender<Incoming>) -> Self {
        FileWorker {
            inbox,
            running: None,
        }
    }

    /// Queue a job of chat `id`. Should the worker be gone, the job is
    /// dropped, and with it its responder, which answers the agent an error.
    pub(super) fn send(&mut self, id: ChatId, job: FileJob) {
        let (tx, _) = self.running.get_or_insert_with(|| {
            let (tx, mut rx) = mpsc::unbounded_channel::<ChatJob>();
            let inbox = self.inbox.clone();
            let task = tokio::spawn(async move {
                while let Some((id, job)) = rx.recv().await {
                    match tokio::task::spawn_blocking(job).await {
                        Ok(step) => {
                            if inbox.send(Incoming::Files(id, Box::new(step))).is_err() {
                                break;
                            }
                        }
                        // The job's responder went with it: the agent got an error.
                        Err(err) => tracing::warn!("a file call failed: {err}"),
                    }
                }
            });
            (tx, task)
        });
        if tx.send((id, job)).is_err() {
            tracing::warn!("the file worker is gone: a file call is answered with an error");
        }
    }

    /// Wait for the queued jobs (on quit: an allowed write still lands).
    pub(super) async fn finish(&mut self) {
        if let Some((tx, task)) = self.running.take() {
            drop(tx);
            let _ = task.await;
        }
    }
}

/// Run a decided call's IO (off the loop): a read or a write when allowed;
/// anything else goes back as [`FsStep::Decided`].
fn run_decided(
    roots: &fs::Roots,
    id: RequestId,
    call: ClientCall,
    responder: ClientResponder,
    real: PathBuf,
    allowed: bool,
) -> FsStep {
    match call {
        ClientCall::ReadTextFile { line, limit, .. } if allowed => {
            let result = fs::read_text(roots, &real, line, limit)
                .map(ClientReply::Text)
                .or_else(missing_reads_empty);
            FsStep::Done {
                id,
                verb: "read",
                real,
                result,
                responder,
            }
        }
        ClientCall::WriteTextFile { content, .. } if allowed => {
            let result = fs::write_text(roots, &real, &content).map(|_| ClientReply::Done);
            FsStep::Done {
                id,
                verb: "write",
                real,
                result,
                responder,
            }
        }
        call => FsStep::Decided {
            id,
            call,
            responder,
            real,
            allowed,
        },
    }
}

fn terminal_error(err: TerminalError) -> ClientError {
    match err {
        TerminalError::UnknownTerminal { .. } => ClientError::NotFound(err.to_string()),
        _ => ClientError::Failed(err.to_string()),
    }
}

fn exit_info(status: &ExitStatus) -> ExitInfo {
    ExitInfo {
        exit_code: status.exit_code.and_then(|c| u32::try_from(c).ok()),
        signal: status.signal.clone(),
    }
}

fn describe_exit(status: &ExitStatus) -> String {
    match (&status.exit_code, &status.signal) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by {signal}"),
        _ => "ended".to_string(),
    }
}

/// The options of warden's own requests (a client call, a connection):
/// allow once, reject.
pub(super) fn client_options() -> Vec<PermissionOption> {
    vec![
        PermissionOption {
            id: CLIENT_ALLOW.into(),
            name: "Allow".into(),
            kind: OptionKind::AllowOnce,
        },
        PermissionOption {
            id: CLIENT_REJECT.into(),
            name: "Reject".into(),
            kind: OptionKind::RejectOnce,
        },
    ]
}

/// The tool call id warden gives the transcript entry of a client call.
fn tool_id(id: RequestId) -> String {
    format!("warden-{id}")
}

impl Chat {
    pub(super) fn on_client_call(&mut self, call: ClientCall, responder: ClientResponder) {
        match &call {
            ClientCall::ReadTextFile { .. } | ClientCall::WriteTextFile { .. } => {
                // Resolved, and a write's change against the file on disk
                // read, off the loop in the file worker, after the calls
                // before it.
                let roots = self.roots.clone();
                let session = self.session.clone();
                let cwd = self.command.cwd.clone();
                self.jobs.push(Box::new(move || {
                    facts::file_call(call, responder, &roots, &cwd, session)
                }));
            }
            ClientCall::CreateTerminal { .. } => {
                // Its directory resolved and its program looked up on PATH
                // off the loop too.
                let roots = self.roots.clone();
                let session = self.session.clone();
                let cwd = self.command.cwd.clone();
                self.jobs.push(Box::new(move || {
                    facts::terminal_call(call, responder, &roots, &cwd, session)
                }));
            }
            ClientCall::TerminalOutput { terminal_id, .. } => {
                let reply = self
                    .terminals
                    .output(terminal_id)
                    .map(|out| ClientReply::Output {
                        output: out.output,
                        truncated: out.truncated,
                        exit: out.exit.as_ref().map(exit_info),
                    })
                    .map_err(terminal_error);
                responder.respond(reply);
            }
            ClientCall::WaitForExit { terminal_id, .. } => {
                match self.terminals.exit_waiter(terminal_id) {
                    Ok(waiter) => {
                        tokio::spawn(async move {
                            let reply = waiter
                                .await
                                .map(|status| ClientReply::Exited(exit_info(&status)))
                                .map_err(terminal_error);
                            responder.respond(reply);
                        });
                    }
                    Err(err) => responder.respond(Err(terminal_error(err))),
                }
            }
            ClientCall::KillTerminal { terminal_id, .. } => {
                let reply = self
                    .terminals
                    .kill(terminal_id)
                    .map(|()| ClientReply::Done)
                    .map_err(terminal_error);
                responder.respond(reply);
            }
            ClientCall::ReleaseTerminal { terminal_id, .. } => {
                let reply = self
                    .terminals
                    .release(terminal_id)
                    .map(|()| ClientReply::Done)
                    .map_err(terminal_error);
                responder.respond(reply);
            }
        }
    }

    /// A file job finished: gate the call, answer it, or start its terminal.
    pub(super) fn on_file_step(&mut self, step: FsStep) {
        match step {
            FsStep::Reply { responder, result } => responder.respond(result),
            FsStep::Checked {
                id, request, facts, ..
            } => {
                self.out
                    .push_back(Msg::PermissionChecked { id, request, facts });
            }
            FsStep::Gate {
                call,
                responder,
                real,
                fields,
                session,
                refused,
            } => {
                if session.is_none() || session != self.session {
                    // Its session ended while the file was read.
                    return responder.respond(Err(ClientError::Denied("the session ended".into())));
                }
                self.gate(call, responder, real, *fields, refused);
            }
            FsStep::Done {
                id,
                verb,
                real,
                result,
                responder,
            } => self.complete_fs(id, verb, &real, result, responder),
            FsStep::Decided {
                id,
                call,
                responder,
                real,
                allowed,
            } => self.finish_decided(id, call, responder, real, allowed),
        }
    }

    /// Put a read, write or terminal through the gate as a synthetic request.
    fn gate(
        &mut self,
        call: ClientCall,
        responder: ClientResponder,
        real: PathBuf,
        fields: ToolCallFields,
        refused: Option<(Refusal, ClientError)>,
    ) {
        let id = self.next_request;
        self.next_request += 1;
        self.client_pending.insert(id, (call, responder, real));
        let refusal = refused.map(|(refusal, error)| {
            self.client_errors.insert(id, error);
            refusal
        });
        let request = PermissionRequest {
            session_id: self.session.clone().unwrap_or_default(),
            tool_call_id: tool_id(id),
            fields,
            options: client_options(),
            client: true,
        };
        self.out.push_back(Msg::PermissionChecked {
            id,
            facts: Box::new(RequestFacts {
                refusal,
                in_session: true,
                ..RequestFacts::of(&request, None)
            }),
            request: Box::new(request),
        });
    }

    /// A client call refused for safety before any IO (outside the roots,
    /// one of warden's own files): through the file worker in its turn, to
    /// the gate, which refuses it and logs it; the agent gets `error`.
    pub(super) fn gate_refused(
        &mut self,
        call: ClientCall,
        responder: ClientResponder,
        error: ClientError,
        refusal: Refusal,
    ) {
        let cwd = self.command.cwd.clone();
        let session = self.session.clone();
        self.jobs.push(Box::new(move || {
            facts::refused(call, responder, error, refusal, &cwd, session)
        }));
    }

    /// The gate decided: the IO (or the refusal) goes to the file worker,
    /// after the calls decided before it.
    pub(super) fn finish_client_call(
        &mut self,
        id: RequestId,
        call: ClientCall,
        responder: ClientResponder,
        real: PathBuf,
        allowed: bool,
    ) {
        let roots = self.roots.clone();
        self.jobs.push(Box::new(move || {
            run_decided(&roots, id, call, responder, real, allowed)
        }));
    }

    /// A refused call, or an allowed terminal, in its turn.
    fn finish_decided(
        &mut self,
        id: RequestId,
        call: ClientCall,
        responder: ClientResponder,
        real: PathBuf,
        allowed: bool,
    ) {
        if !allowed {
            self.mark(id, WireStatus::Failed, None);
            if let Some(error) = self.client_errors.remove(&id) {
                return responder.respond(Err(error));
            }
            responder.respond(Err(ClientError::Denied(format!(
                "{} was not allowed",
                match &call {
                    ClientCall::ReadTextFile { .. } => "reading this file",
                    ClientCall::WriteTextFile { .. } => "writing this file",
                    _ => "running this command",
                }
            ))));
            return;
        }
        match call {
            ClientCall::CreateTerminal {
                command,
                args,
                env,
                output_byte_limit,
                ..
            } => {
                let spec = TerminalSpec {
                    command,
                    args,
                    env,
                    cwd: real,
                    output_byte_limit: Some(output_limit(output_byte_limit)),
                };
                match self.terminals.create(spec) {
                    Ok(terminal_id) => {
                        self.terminal_tools.insert(terminal_id.clone(), tool_id(id));
                        self.out.push_back(Msg::TerminalOutput {
                            id: terminal_id.clone(),
                            view: TerminalView::default(),
                        });
                        self.mark(
                            id,
                            WireStatus::InProgress,
                            Some(vec![ToolContent::Terminal {
                                id: terminal_id.clone(),
                            }]),
                        );
                        responder.respond(Ok(ClientReply::TerminalId(terminal_id)));
                    }
                    Err(err) => {
                        self.mark(id, WireStatus::Failed, None);
                        responder.respond(Err(terminal_error(err)));
                    }
                }
            }
            other => responder.respond(Err(ClientError::Failed(format!(
                "internal: {other:?} needs no gate"
            )))),
        }
    }

    /// A file call is done: its entry shows how, and the agent gets the answer.
    fn complete_fs(
        &mut self,
        id: RequestId,
        verb: &str,
        real: &Path,
        result: Result<ClientReply, FsError>,
        responder: ClientResponder,
    ) {
        let status = if result.is_ok() {
            WireStatus::Completed
        } else {
            WireStatus::Failed
        };
        self.mark(id, status, None);
        match result {
            Ok(reply) => responder.respond(Ok(reply)),
            Err(err) => match safety_refusal(&err) {
                // The gate allowed it, the IO found it unsafe: the gate
                // says so and logs it.
                Some(refusal) => {
                    tracing::warn!(path = %real.display(), verb, %err, "agent file call refused");
                    self.out.push_back(Msg::ClientRefused { id, refusal });
                    responder.respond(Err(fs_error(err)));
                }
                None => responder.respond(Err(fs_error(err))),
            },
        }
    }

    /// Update the transcript entry of a client call.
    pub(super) fn mark(
        &mut self,
        id: RequestId,
        status: WireStatus,
        content: Option<Vec<ToolContent>>,
    ) {
        let fields = ToolCallFields {
            status: Some(status),
            content,
            ..ToolCallFields::default()
        };
        self.out.push_back(Msg::OwnToolUpdate {
            id: tool_id(id),
            fields: Box::new(fields),
        });
    }

    pub(super) fn on_terminal_event(&mut self, event: TerminalEvent) {
        let id = match &event {
            TerminalEvent::Output { id } | TerminalEvent::Exited { id, .. } => id.clone(),
        };
        let Some(snapshot) = self.terminals.snapshot(&id) else {
            return;
        };
        let view = TerminalView {
            output: snapshot.output,
            truncated: snapshot.truncated,
            dropped: snapshot.dropped,
            exit: snapshot.exit.as_ref().map(describe_exit),
        };
        self.out.push_back(Msg::TerminalOutput {
            id: id.clone(),
            view,
        });
        if let (TerminalEvent::Exited { status, .. }, Some(tool)) =
            (&event, self.terminal_tools.get(&id))
        {
            let failed = status.exit_code != Some(0);
            let fields = ToolCallFields {
                status: Some(if failed {
                    WireStatus::Failed
                } else {
                    WireStatus::Completed
                }),
                ..ToolCallFields::default()
            };
            let tool = tool.clone();
            self.out.push_back(Msg::OwnToolUpdate {
                id: tool,
                fields: Box::new(fields),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_never_keeps_more_than_the_cap_whatever_the_agent_asks() {
        assert_eq!(output_limit(None), DEFAULT_OUTPUT_LIMIT);
        assert_eq!(output_limit(Some(100)), 100);
        assert_eq!(output_limit(Some(u64::MAX)), MAX_OUTPUT_LIMIT);
        assert_eq!(output_limit(Some(1 << 40)), MAX_OUTPUT_LIMIT);
    }
}
