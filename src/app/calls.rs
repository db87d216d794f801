//! Files and terminals on the agent's behalf. Reads, writes and new
//! terminals go through the same gate as permission requests: each becomes a
//! synthetic request (kind read / edit / execute, with allow and reject
//! options) that the policy decides or a card asks about; the IO happens only
//! once it is allowed. Output, wait, kill and release need no decision.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::chat::Chat;
use crate::acp::{ClientCall, ClientError, ClientReply, ClientResponder, ExitInfo};
use crate::client::fs::{self, FsError};
use crate::client::terminal::{
    ExitStatus, TerminalError, TerminalEvent, TerminalSpec, command_line,
};
use crate::model::{
    Location, OptionKind, PermissionOption, PermissionRequest, SessionUpdate, ToolCallFields,
    ToolContent, ToolKind, WireStatus,
};
use crate::policy::{self, CLIENT_READ, CLIENT_TERMINAL, CLIENT_WRITE, Category, RequestView};
use crate::state::{AppState, Msg, RequestId, TerminalView};

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
/// empty file, which it may write over.
fn missing_reads_empty(err: FsError) -> Result<String, FsError> {
    match err {
        FsError::NotFound { .. } => Ok(String::new()),
        other => Err(other),
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
    state: &AppState,
    roots: &fs::Roots,
) -> Option<String> {
    let known = state
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
            state.home.as_deref(),
            &state.cwd_path,
        ));
        let resolved = fs::resolve_lenient(&expanded);
        for candidate in [&resolved, &fs::normalize(&expanded)] {
            if let Err(err) = roots.protected().check_path(candidate, access) {
                refusal.get_or_insert_with(|| err.to_string());
            }
        }
        if resolved == fs::normalize(&expanded) {
            continue;
        }
        let resolved = resolved.display().to_string();
        if !sent.contains(&resolved) && !extra.contains(&resolved) {
            extra.push(resolved);
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
                if let ClientCall::WriteTextFile { content, .. } = &call {
                    // The card and the transcript show the change against the file on disk.
                    fields.content = Some(vec![ToolContent::Diff {
                        path: shown,
                        old: fs::current_text(&self.roots, &real),
                        new: content.clone(),
                    }]);
                }
                self.gate(call, responder, real, fields);
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
                        let fields = ToolCallFields {
                            title: Some(format!("Run {line}")),
                            kind: Some(ToolKind::Execute),
                            raw_input: Some(input),
                            tool_name: Some(CLIENT_TERMINAL.to_string()),
                            ..ToolCallFields::default()
                        };
                        self.gate(call, responder, real, fields);
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
        self.out.push_back(Msg::PermissionRequested { id, request });
    }

    /// The gate decided: do it (or refuse) and answer the agent.
    pub(super) fn finish_client_call(
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
            ClientCall::ReadTextFile { line, limit, .. } => {
                let result = fs::read_text(&self.roots, &real, line, limit)
                    .or_else(missing_reads_empty)
                    .map(ClientReply::Text);
                self.complete_fs(id, "read", &real, result, responder);
            }
            ClientCall::WriteTextFile { content, .. } => {
                let result =
                    fs::write_text(&self.roots, &real, &content).map(|_| ClientReply::Done);
                self.complete_fs(id, "write", &real, result, responder);
            }
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
        if verb == "read" && matches!(err, FsError::NotFound { .. }) {
            // A file inside the roots that does not exist yet: an agent
            // about to create it reads it first (gemini's write_file does).
            tracing::debug!(path = %path.display(), "read of a missing file answered empty");
            responder.respond(Ok(ClientReply::Text(String::new())));
            return;
        }
        if matches!(
            err,
            FsError::OutsideRoots { .. } | FsError::Protected { .. } | FsError::Changed { .. }
        ) {
            tracing::warn!(path = %path.display(), %err, "agent file call refused");
            self.refusals.push(format!(
                "refused the agent's {verb} of {}: {err}",
                path.display()
            ));
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
        self.out
            .push_back(Msg::Update(SessionUpdate::ToolCallUpdate {
                id: tool_id(id),
                fields,
            }));
    }

    pub(super) fn on_terminal_event(&mut self, event: TerminalEvent) {
        let id = match &event {
            TerminalEvent::Output { id } | TerminalEvent::Exited { id, .. } => id.clone(),
        };
        let Some((output, truncated, exit)) = self.terminals.snapshot(&id) else {
            return;
        };
        let view = TerminalView {
            output,
            truncated,
            exit: exit.as_ref().map(describe_exit),
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
            self.out
                .push_back(Msg::Update(SessionUpdate::ToolCallUpdate {
                    id: tool,
                    fields,
                }));
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
