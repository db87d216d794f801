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

use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::Incoming;
use super::chat::Chat;
use crate::acp::{ClientCall, ClientError, ClientReply, ClientResponder, ExitInfo};
use crate::client::fs::{self, FsError};
use crate::client::terminal::{
    ExitStatus, TerminalError, TerminalEvent, TerminalSpec, command_line,
};
use crate::model::{
    Location, OptionKind, PermissionOption, PermissionRequest, ToolCallFields, ToolContent,
    ToolKind, WireStatus,
};
use crate::policy::{self, CLIENT_READ, CLIENT_TERMINAL, CLIENT_WRITE, Category, RequestView};
use crate::state::{ChatId, ChatState, Msg, RequestId, TerminalView};

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

fn fs_error(err: FsError) -> ClientError {
    match err {
        FsError::NotFound { .. } => ClientError::NotFound(err.to_string()),
        FsError::Io { .. } => ClientError::Failed(err.to_string()),
        _ => ClientError::InvalidParams(err.to_string()),
    }
}

/// A read of a file that does not exist (inside the roots: `fs::resolve`
/// checks them first) is answered with empty content, as Zed answers it (it
/// opens a missing path as a new, empty buffer). gemini-cli reads a file
/// before writing it and does not recognise a `-32002` error, so it could not
/// create a new file otherwise; an agent that checks for the error sees an
/// empty file, which it may write over. The one place for it: a read whose
/// path does not resolve yet, and a read whose file is gone when it runs.
fn missing_reads_empty(err: FsError) -> Result<ClientReply, FsError> {
    match err {
        FsError::NotFound { .. } => Ok(ClientReply::Text(String::new())),
        other => Err(other),
    }
}

/// A file call's IO, run by the [`FileWorker`] off the loop.
pub(super) type FileJob = Box<dyn FnOnce() -> FsStep + Send>;

/// A file job and the chat it is for.
type ChatJob = (ChatId, FileJob);

/// What a [`FileJob`] hands back to its chat.
#[derive(Debug)]
pub enum FsStep {
    /// A call is ready for the gate (a write with the change against the
    /// file on disk), for the session it came in.
    Gate {
        call: ClientCall,
        responder: ClientResponder,
        real: PathBuf,
        fields: Box<ToolCallFields>,
        session: Option<String>,
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

/// Resolve the paths a permission request from the agent names, as the IO
/// would (symlinks, `..`, `/proc` magic links; the longest existing prefix
/// canonicalized, the rest kept), and add each that differs to the
/// request's locations: the policy then matches its rules on the path as
/// sent and as resolved (deny and ask when either matches, allow only when
/// all do), and the card shows both. `~` is the chat's home, a relative
/// path is taken from its cwd.
///
/// Returns why warden refuses the request outright when a path it names
/// (as sent or resolved) is one of warden's own files: the agent's own
/// tools may not write them (nor read the settings) whatever the mode.
pub(super) fn resolve_request_paths(
    request: &mut PermissionRequest,
    state: &ChatState,
    roots: &fs::Roots,
) -> Option<String> {
    let known = state
        .session
        .transcript
        .tool(&request.tool_call_id)
        .map(|t| t.call.clone());
    let view = RequestView::from_request(request, known.as_ref());
    let access = if view.category() == Category::Read {
        fs::Access::Read
    } else {
        fs::Access::Write
    };
    let sent = view.paths();
    let mut extra: Vec<String> = Vec::new();
    let mut refusal = None;
    for path in &sent {
        let expanded = PathBuf::from(policy::expand_path(
            path,
            state.gate.home.as_deref(),
            &state.session.cwd_path,
        ));
        // Every file the path can mean (the kernel's reading, a tool's that
        // applies `..` first): warden's own files are refused on each, and
        // the user's rules see each as one more location.
        let normalized = fs::normalize(&expanded);
        for candidate in fs::lenient_readings(&expanded) {
            if let Err(err) = roots.protected().check_path(&candidate, access) {
                refusal.get_or_insert_with(|| err.to_string());
            }
            if candidate == normalized {
                continue;
            }
            let candidate = candidate.display().to_string();
            if !sent.contains(&candidate) && !extra.contains(&candidate) {
                extra.push(candidate);
            }
        }
    }
    if extra.is_empty() {
        return refusal;
    }
    // The request's own locations (with their lines), else the known call's.
    let mut locations = request
        .fields
        .locations
        .clone()
        .filter(|l| !l.is_empty())
        .or_else(|| known.map(|k| k.locations))
        .unwrap_or_default();
    locations.extend(extra.into_iter().map(|path| Location { path, line: None }));
    request.fields.locations = Some(locations);
    refusal
}

/// The tool call id warden gives the transcript entry of a client call.
fn tool_id(id: RequestId) -> String {
    format!("warden-{id}")
}

impl Chat {
    pub(super) fn on_client_call(&mut self, call: ClientCall, responder: ClientResponder) {
        match &call {
            ClientCall::ReadTextFile { path, .. } | ClientCall::WriteTextFile { path, .. } => {
                let write = matches!(call, ClientCall::WriteTextFile { .. });
                let verb = if write { "write" } else { "read" };
                let real = match fs::resolve(&self.roots, path, write) {
                    Ok(real) => real,
                    Err(err) if !write => match missing_reads_empty(err) {
                        Ok(empty) => {
                            tracing::debug!(path = %path.display(), "read of a missing file answered empty");
                            return responder.respond(Ok(empty));
                        }
                        Err(err) => return self.refuse(verb, path, err, responder),
                    },
                    Err(err) => return self.refuse(verb, path, err, responder),
                };
                // The card shows the path that will be opened, and the path
                // as sent when they differ; the policy sees both.
                let shown = real.display().to_string();
                let sent = path.display().to_string();
                let differs = shown != sent;
                let mut locations = vec![Location {
                    path: shown.clone(),
                    line: None,
                }];
                let mut raw_input = json!({ "path": shown });
                let mut title = format!("{} {shown}", if write { "Write" } else { "Read" });
                if differs {
                    locations.push(Location {
                        path: sent.clone(),
                        line: None,
                    });
                    raw_input["requested_path"] = json!(sent);
                    title.push_str(&format!(" (requested as {sent})"));
                }
                let mut fields = ToolCallFields {
                    title: Some(title),
                    kind: Some(if write {
                        ToolKind::Edit
                    } else {
                        ToolKind::Read
                    }),
                    raw_input: Some(raw_input),
                    locations: Some(locations),
                    // Its own tool name: grants and `tool` rules on the
                    // agent's `Write` or `Read` never cover warden's calls.
                    tool_name: Some(if write { CLIENT_WRITE } else { CLIENT_READ }.to_string()),
                    ..ToolCallFields::default()
                };
                let roots = self.roots.clone();
                let session = self.session.clone();
                self.jobs.push(Box::new(move || {
                    if let ClientCall::WriteTextFile { content, .. } = &call {
                        // The card and the transcript show the change against the file on disk.
                        fields.content = Some(vec![ToolContent::Diff {
                            path: shown,
                            old: fs::current_text(&roots, &real),
                            new: content.clone(),
                        }]);
                    }
                    FsStep::Gate {
                        call,
                        responder,
                        real,
                        fields: Box::new(fields),
                        session,
                    }
                }));
            }
            ClientCall::CreateTerminal {
                command,
                args,
                env,
                cwd,
                ..
            } => {
                let dir = cwd.clone().unwrap_or_else(|| self.command.cwd.clone());
                match fs::resolve(&self.roots, &dir, false).map_err(fs_error) {
                    Ok(real) => {
                        let line = command_line(command, args);
                        let mut input =
                            json!({ "command": line, "cwd": real.display().to_string() });
                        // The environment the agent sets: shown on the card,
                        // and no allow rule covers one that changes what runs.
                        if !env.is_empty() {
                            let env: serde_json::Map<String, serde_json::Value> =
                                env.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
                            input["env"] = serde_json::Value::Object(env);
                        }
                        let fields = Box::new(ToolCallFields {
                            title: Some(format!("Run {line}")),
                            kind: Some(ToolKind::Execute),
                            raw_input: Some(input),
                            tool_name: Some(CLIENT_TERMINAL.to_string()),
                            ..ToolCallFields::default()
                        });
                        // Through the worker too: after the file calls before it.
                        let session = self.session.clone();
                        self.jobs.push(Box::new(move || FsStep::Gate {
                            call,
                            responder,
                            real,
                            fields,
                            session,
                        }));
                    }
                    Err(err) => responder.respond(Err(err)),
                }
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
            FsStep::Gate {
                call,
                responder,
                real,
                fields,
                session,
            } => {
                if session.is_none() || session != self.session {
                    // Its session ended while the file was read.
                    return responder.respond(Err(ClientError::Denied("the session ended".into())));
                }
                self.gate(call, responder, real, *fields);
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
    ) {
        let id = self.next_request;
        self.next_request += 1;
        self.client_pending.insert(id, (call, responder, real));
        let request = PermissionRequest {
            session_id: self.session.clone().unwrap_or_default(),
            tool_call_id: tool_id(id),
            fields,
            options: vec![
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
            ],
            client: true,
        };
        self.out.push_back(Msg::PermissionRequested {
            id,
            request: Box::new(request),
        });
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
            Err(err) => self.refuse(verb, real, err, responder),
        }
    }

    /// A file call failed: the agent gets the error; one warden refuses for
    /// safety (outside the roots, one of warden's own files, a path that
    /// changed under it) is also an error line the user sees.
    fn refuse(&mut self, verb: &str, path: &Path, err: FsError, responder: ClientResponder) {
        if matches!(
            err,
            FsError::OutsideRoots { .. }
                | FsError::Protected { .. }
                | FsError::Changed { .. }
                | FsError::Ambiguous { .. }
        ) {
            tracing::warn!(path = %path.display(), %err, "agent file call refused");
            self.out.push_back(Msg::ErrorLine(format!(
                "refused the agent's {verb} of {}: {err}",
                path.display()
            )));
        }
        responder.respond(Err(fs_error(err)));
    }

    /// Update the transcript entry of a client call.
    fn mark(&mut self, id: RequestId, status: WireStatus, content: Option<Vec<ToolContent>>) {
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

    /// `proj/up/../link/key` where `proj/up` links to `other/sub`: the
    /// kernel opens `other/link/key` (missing), a tool that applies `..`
    /// first opens `proj/link/key`, which `proj/link` sends into `vault`.
    /// The rules must see both, or a deny rule on the vault is walked past.
    #[test]
    fn the_rules_see_every_reading_of_a_path_with_dot_dot_after_a_symlink() {
        use crate::model::{Location, ToolCallFields, ToolKind};
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        for sub in ["proj", "other/sub", "vault"] {
            std::fs::create_dir_all(base.join(sub)).expect("mkdir");
        }
        std::os::unix::fs::symlink(base.join("other/sub"), base.join("proj/up")).expect("link");
        std::os::unix::fs::symlink(base.join("vault"), base.join("proj/link")).expect("link");
        let sent = base.join("proj/up/../link/key").display().to_string();
        let mut request = crate::test_support::permission_request(
            "t1",
            ToolCallFields {
                title: Some("Read".into()),
                kind: Some(ToolKind::Read),
                locations: Some(vec![Location {
                    path: sent.clone(),
                    line: None,
                }]),
                ..Default::default()
            },
            crate::test_support::claude_options(),
        );
        let mut state = ChatState::new("demo", base.join("proj").display().to_string());
        state.session.cwd_path = base.join("proj");
        let roots = fs::Roots::new(&base.join("proj"), &[]);
        assert_eq!(resolve_request_paths(&mut request, &state, &roots), None);
        let seen: Vec<String> = request
            .fields
            .locations
            .unwrap_or_default()
            .into_iter()
            .map(|l| l.path)
            .collect();
        for reading in ["other/link/key", "vault/key"] {
            let reading = base.join(reading).display().to_string();
            assert!(seen.contains(&reading), "{reading} not in {seen:?}");
        }
    }
}
