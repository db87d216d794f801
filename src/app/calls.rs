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
    ExitStatus, TerminalError, TerminalEvent, TerminalSpec, command_line, needs_shell_char,
};
use crate::model::{
    Location, OptionKind, PermissionOption, PermissionRequest, ToolCallFields, ToolContent,
    ToolKind, WireStatus,
};
use crate::policy::{self, CLIENT_READ, CLIENT_TERMINAL, CLIENT_WRITE, Category};
use crate::state::{ChatId, ChatState, Msg, Refusal, RequestFacts, RequestId, TerminalView};

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

/// Why warden refuses a file call for safety, whatever the mode (the gate
/// refuses it and logs it): one of warden's own files, a path outside the
/// roots, one that changed under warden or reads two ways. Other errors are
/// plain failures.
fn safety_refusal(err: &FsError) -> Option<Refusal> {
    match err {
        FsError::Protected { .. } => Some(Refusal::Protected(err.to_string())),
        FsError::OutsideRoots { .. } | FsError::Changed { .. } | FsError::Ambiguous { .. } => {
            Some(Refusal::Safety(err.to_string()))
        }
        _ => None,
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

/// Gather the facts the gate needs about a permission request from the
/// agent: its view (built once, here), and each path it names resolved as
/// the IO would (symlinks, `..`, `/proc` magic links; the longest existing
/// prefix canonicalized, the rest kept). Each reading that differs is added
/// to the request's locations (the card shows it) and the view's (the
/// policy matches its rules on the path as sent and as resolved: deny and
/// ask when either matches, allow only when all do). `~` is the chat's
/// home, a relative path is taken from its cwd.
///
/// A path that (as sent or resolved) is one of warden's own files is a
/// [`Refusal::Protected`]: the gate refuses the request whatever the mode
/// and logs it. Nothing is decided here.
pub(super) fn request_facts(
    request: &mut PermissionRequest,
    state: &ChatState,
    roots: &fs::Roots,
) -> RequestFacts {
    let known = state
        .session
        .transcript
        .tool(&request.tool_call_id)
        .map(|t| t.call.clone());
    let mut view = crate::gate::facts::view(request, known.as_ref());
    let access = if view.category() == Category::Read {
        fs::Access::Read
    } else {
        fs::Access::Write
    };
    let sent = view.paths();
    let mut extra: Vec<String> = Vec::new();
    let mut readings = Vec::new();
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
        let mut meant = vec![normalized.display().to_string()];
        for candidate in fs::lenient_readings(&expanded) {
            if let Err(err) = roots.protected().check_path(&candidate, access) {
                refusal.get_or_insert_with(|| Refusal::Protected(err.to_string()));
            }
            let candidate = candidate.display().to_string();
            if !meant.contains(&candidate) {
                meant.push(candidate.clone());
            }
            if Path::new(&candidate) == normalized {
                continue;
            }
            if !sent.contains(&candidate) && !extra.contains(&candidate) {
                extra.push(candidate);
            }
        }
        readings.push((meant[0].clone(), meant));
    }
    if !extra.is_empty() {
        // The request's own locations (with their lines), else the known call's.
        let mut locations = request
            .fields
            .locations
            .clone()
            .filter(|l| !l.is_empty())
            .or_else(|| known.map(|k| k.locations))
            .unwrap_or_default();
        locations.extend(extra.iter().map(|path| Location {
            path: path.clone(),
            line: None,
        }));
        request.fields.locations = Some(locations);
        view.locations.extend(extra);
    }
    RequestFacts {
        view,
        readings,
        refusal,
        in_session: true,
    }
}

/// What the card and the log show of a client call refused before any IO:
/// the path or command as the agent sent it.
fn refused_fields(call: &ClientCall, cwd: &Path) -> ToolCallFields {
    let (title, kind, input, tool, path) = match call {
        ClientCall::ReadTextFile { path, .. } => (
            format!("Read {}", path.display()),
            ToolKind::Read,
            json!({ "path": path.display().to_string() }),
            CLIENT_READ,
            Some(path),
        ),
        ClientCall::WriteTextFile { path, .. } => (
            format!("Write {}", path.display()),
            ToolKind::Edit,
            json!({ "path": path.display().to_string() }),
            CLIENT_WRITE,
            Some(path),
        ),
        ClientCall::CreateTerminal {
            command,
            args,
            cwd: dir,
            ..
        } => {
            let line = command_line(command, args);
            let dir = dir.as_deref().unwrap_or(cwd).display().to_string();
            (
                format!("Run {line}"),
                ToolKind::Execute,
                json!({ "command": line, "cwd": dir }),
                CLIENT_TERMINAL,
                None,
            )
        }
        other => (
            format!("{other:?}"),
            ToolKind::Other,
            serde_json::Value::Null,
            "",
            None,
        ),
    };
    ToolCallFields {
        title: Some(title),
        kind: Some(kind),
        raw_input: Some(input),
        locations: path.map(|p| {
            vec![Location {
                path: p.display().to_string(),
                line: None,
            }]
        }),
        tool_name: (!tool.is_empty()).then(|| tool.to_string()),
        ..ToolCallFields::default()
    }
}

/// A `terminal/create` resolved as it will run (see [`terminal_run`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TerminalRun {
    /// The shell line the policy judges and the card shows.
    judged: String,
    /// The line the terminal runs: the same, except that a program found
    /// on PATH is named by the path it was found at.
    spawned: String,
    /// The file a program and arguments run, resolved.
    program: Option<String>,
    /// The PATH the child gets, when it looks in a relative directory (the
    /// cwd, where the agent can put a program of any name).
    relative_path: Option<String>,
    /// Where the arguments that name existing files really lead, when a
    /// symlink or `..` takes them elsewhere (`k/id_rsa` with `k` linking to
    /// `~/.ssh`): path rules see them as the request's paths.
    resolved_args: Vec<String>,
}

/// The most arguments [`resolved_args`] looks at on disk.
const MAX_RESOLVED_ARGS: usize = 64;

/// Where the words of a terminal's arguments that name existing files
/// really lead (symlinks and `..` followed), for those whose real path
/// differs from the path as written. A shell line is split on blanks,
/// quotes dropped: a word too many only adds a path for the rules to see.
fn resolved_args(words: &[String], cwd: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for word in words.iter().take(MAX_RESOLVED_ARGS) {
        let word = word.trim_matches(|c| c == '\'' || c == '"');
        let word = match word.split_once('=') {
            Some((option, value)) if option.starts_with('-') => value,
            _ if word.starts_with('-') => continue,
            _ => word,
        };
        if word.is_empty() || word.starts_with('~') {
            continue;
        }
        let written = cwd.join(word);
        let Ok(real) = std::fs::canonicalize(&written) else {
            continue;
        };
        if real != fs::normalize(&written) {
            let real = real.display().to_string();
            if !out.contains(&real) {
                out.push(real);
            }
        }
    }
    out
}

/// What a `terminal/create` runs. A `command` without `args` that holds a
/// shell character is a shell line, run by `/bin/sh -c` and judged as
/// written. Otherwise `command` is one program, resolved as exec resolves
/// it: a name with a `/` is a path from the terminal's cwd, resolved to the
/// real file (`ls /../../bin/sh` through a directory named `ls `, or a
/// symlink `./ls` to `/bin/sh`, is `/usr/bin/dash`); a bare name is looked
/// up on the PATH the child gets (the agent's `env` overrides warden's).
/// The program and its arguments are then quoted into one line, judged
/// with the resolved program (a bare name found in an absolute directory
/// of warden's own PATH keeps its name, so `allow ls *` still reads it) and
/// spawned with the path it was found at, so what runs is what was judged.
fn terminal_run(
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> Result<TerminalRun, String> {
    let own_path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let path = own_path
        .clone()
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    let relative = path.split(':').any(|dir| !dir.starts_with('/'));
    let relative_path = (relative && own_path.is_none()).then(|| path.clone());
    if args.is_empty() && command.contains(needs_shell_char) {
        let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        return Ok(TerminalRun {
            judged: command.to_string(),
            spawned: command.to_string(),
            program: None,
            relative_path,
            resolved_args: resolved_args(&words, cwd),
        });
    }
    if command.trim().is_empty() {
        return Err("the command is empty".to_string());
    }
    let line = |program: &str| {
        let mut argv = vec![program.to_string()];
        argv.extend(args.iter().cloned());
        policy::shell_join(&argv)
    };
    if command.contains('/') {
        let real = std::fs::canonicalize(cwd.join(command))
            .map_err(|err| format!("cannot run `{command}`: {err}"))?;
        let real = real.display().to_string();
        return Ok(TerminalRun {
            judged: line(&real),
            spawned: line(&real),
            program: Some(real),
            relative_path: None,
            resolved_args: resolved_args(args, cwd),
        });
    }
    for dir in path.split(':') {
        let dir_relative = !dir.starts_with('/');
        let found = cwd.join(dir).join(command);
        if !is_executable(&found) {
            continue;
        }
        let found_text = found.display().to_string();
        if dir_relative || own_path.is_some() {
            // Found where the agent can put a program: judged by its path.
            let real = std::fs::canonicalize(&found)
                .map_err(|err| format!("cannot run `{command}`: {err}"))?
                .display()
                .to_string();
            return Ok(TerminalRun {
                judged: line(&real),
                spawned: line(&real),
                program: Some(real),
                relative_path: None,
                resolved_args: resolved_args(args, cwd),
            });
        }
        return Ok(TerminalRun {
            judged: line(command),
            spawned: line(&found_text),
            program: Some(found_text),
            relative_path: None,
            resolved_args: resolved_args(args, cwd),
        });
    }
    Err(format!(
        "no program `{command}` on the PATH the terminal gets"
    ))
}

/// A regular file (through symlinks) with an execute bit.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The tool call id warden gives the transcript entry of a client call.
fn tool_id(id: RequestId) -> String {
    format!("warden-{id}")
}

impl Chat {
    pub(super) fn on_client_call(&mut self, call: ClientCall, responder: ClientResponder) {
        match &call {
            ClientCall::ReadTextFile { path, .. } | ClientCall::WriteTextFile { path, .. } => {
                // The call itself may go to the gate below, refused.
                let path = &path.clone();
                let write = matches!(call, ClientCall::WriteTextFile { .. });
                let real = match fs::resolve(&self.roots, path, write) {
                    Ok(real) => real,
                    Err(err) => {
                        let err = match missing_reads_empty(err) {
                            Ok(empty) if !write => {
                                tracing::debug!(path = %path.display(), "read of a missing file answered empty");
                                return responder.respond(Ok(empty));
                            }
                            Ok(_) => FsError::NotFound { path: path.clone() },
                            Err(err) => err,
                        };
                        return match safety_refusal(&err) {
                            // The gate refuses it, and logs it.
                            Some(refusal) => {
                                self.gate_refused(call, responder, fs_error(err), refusal);
                            }
                            None => responder.respond(Err(fs_error(err))),
                        };
                    }
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
                        refused: None,
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
                let real = match fs::resolve(&self.roots, &dir, false) {
                    Ok(real) => real,
                    Err(err) => {
                        return match safety_refusal(&err) {
                            // The gate refuses it, and logs it.
                            Some(refusal) => {
                                self.gate_refused(call, responder, fs_error(err), refusal);
                            }
                            None => responder.respond(Err(fs_error(err))),
                        };
                    }
                };
                // What runs, resolved once here: the policy judges exactly
                // the line that `sh -c` (or a direct exec) is given.
                let run = match terminal_run(command, args, env, &real) {
                    Ok(run) => run,
                    // Nothing to run (no such program, an empty line): the
                    // gate refuses it and logs it, like every request.
                    Err(err) => {
                        let refusal = Refusal::Safety(format!("nothing to run: {err}"));
                        let error = ClientError::InvalidParams(err);
                        return self.gate_refused(call, responder, error, refusal);
                    }
                };
                let line = run.judged.clone();
                let mut input = json!({ "command": line, "cwd": real.display().to_string() });
                if let Some(program) = &run.program {
                    input["program"] = json!(program);
                }
                if !run.resolved_args.is_empty() {
                    input["paths"] = json!(run.resolved_args);
                }
                // The environment the agent sets: shown on the card, and no
                // allow rule covers one that changes what runs. An inherited
                // PATH that looks in relative directories changes it too.
                let mut shown: Vec<(String, String)> = env.clone();
                if let Some(path) = run.relative_path {
                    shown.push(("PATH".to_string(), path));
                }
                if !shown.is_empty() {
                    let env: serde_json::Map<String, serde_json::Value> =
                        shown.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
                    input["env"] = serde_json::Value::Object(env);
                }
                let fields = Box::new(ToolCallFields {
                    title: Some(format!("Run {line}")),
                    kind: Some(ToolKind::Execute),
                    raw_input: Some(input),
                    tool_name: Some(CLIENT_TERMINAL.to_string()),
                    ..ToolCallFields::default()
                });
                // The terminal spawns the resolved line, never the agent's
                // words again.
                let call = match call {
                    ClientCall::CreateTerminal {
                        session_id,
                        env,
                        cwd,
                        output_byte_limit,
                        ..
                    } => ClientCall::CreateTerminal {
                        session_id,
                        command: run.spawned,
                        args: Vec::new(),
                        env,
                        cwd,
                        output_byte_limit,
                    },
                    other => other,
                };
                // Through the worker too: after the file calls before it.
                let session = self.session.clone();
                self.jobs.push(Box::new(move || FsStep::Gate {
                    call,
                    responder,
                    real,
                    fields,
                    session,
                    refused: None,
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
        tracing::warn!(?error, "agent client call refused");
        let fields = refused_fields(&call, &self.command.cwd);
        let session = self.session.clone();
        self.jobs.push(Box::new(move || FsStep::Gate {
            call,
            responder,
            real: PathBuf::new(),
            fields: Box::new(fields),
            session,
            refused: Some((refusal, error)),
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

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_string()).collect()
    }

    #[test]
    fn a_terminals_program_is_judged_as_what_exec_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
        let sh = std::fs::canonicalize("/bin/sh")
            .expect("/bin/sh")
            .display()
            .to_string();
        // A directory named `ls ` and `..` up to /bin/sh.
        std::fs::create_dir(cwd.join("ls ")).expect("ls dir");
        let climb = format!("ls {}", "/..".repeat(20) + "/bin/sh");
        let run = terminal_run(&climb, &args(&["-c", "rm -rf x"]), &[], &cwd).expect("resolved");
        assert_eq!(run.judged, format!("{sh} -c 'rm -rf x'"));
        assert_eq!(run.spawned, run.judged);
        // A symlink named `ls` in the cwd.
        std::os::unix::fs::symlink("/bin/sh", cwd.join("ls")).expect("symlink");
        let run = terminal_run("./ls", &args(&["-c", "x"]), &[], &cwd).expect("resolved");
        assert_eq!(run.judged, format!("{sh} -c x"));
        // A bare name found on warden's own PATH keeps its name; it runs
        // from where it was found.
        let run = terminal_run("sh", &args(&["-c", "rm x"]), &[], &cwd).expect("resolved");
        assert_eq!(run.judged, "sh -c 'rm x'");
        assert!(run.spawned.starts_with('/') && run.spawned.ends_with("/sh -c 'rm x'"));
        // The agent's PATH: found in the cwd, judged by its real path.
        let bin = cwd.join("bin");
        std::fs::create_dir(&bin).expect("bin");
        std::fs::copy("/bin/sh", bin.join("cargo")).expect("fake cargo");
        let env = vec![("PATH".to_string(), "bin:/usr/bin:/bin".to_string())];
        let run = terminal_run("cargo", &args(&["test"]), &env, &cwd).expect("resolved");
        assert_eq!(run.judged, format!("{}/bin/cargo test", cwd.display()));
        // A shell line is judged as written.
        let run = terminal_run("ls -la | wc -l", &[], &[], &cwd).expect("a line");
        assert_eq!((run.judged.as_str(), run.program), ("ls -la | wc -l", None));
        // Arguments through a symlink: their real paths are facts too.
        std::os::unix::fs::symlink("/etc", cwd.join("k")).expect("symlink k");
        let run = terminal_run("cat", &args(&["k/hostname"]), &[], &cwd).expect("resolved");
        let etc = std::fs::canonicalize("/etc/hostname");
        if let Ok(etc) = etc {
            assert_eq!(run.resolved_args, [etc.display().to_string()]);
        }
        // No such program: refused before the gate.
        assert!(terminal_run("./missing", &[], &[], &cwd).is_err());
        assert!(terminal_run("no-such-program-here", &args(&["x"]), &[], &cwd).is_err());
    }

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
        let facts = request_facts(&mut request, &state, &roots);
        assert_eq!(facts.refusal, None);
        let view = facts.view;
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
            assert!(
                view.locations.contains(&reading),
                "the policy sees {reading}"
            );
            assert!(
                facts
                    .readings
                    .iter()
                    .any(|(_, meant)| meant.contains(&reading)),
                "{reading} is a reading of the path sent"
            );
        }
    }
}
