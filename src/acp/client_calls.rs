//! Requests an agent makes of the client: files and terminals. The handlers
//! translate them into [`ClientCall`]s and forward them with a
//! [`ClientResponder`]; the runtime decides (through the gate) and answers.

use std::path::PathBuf;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;

/// What the agent asks the client to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientCall {
    /// `fs/read_text_file`.
    ReadTextFile {
        session_id: String,
        path: PathBuf,
        line: Option<u32>,
        limit: Option<u32>,
    },
    /// `fs/write_text_file`.
    WriteTextFile {
        session_id: String,
        path: PathBuf,
        content: String,
    },
    /// `terminal/create`.
    CreateTerminal {
        session_id: String,
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
        output_byte_limit: Option<u64>,
    },
    /// `terminal/output`.
    TerminalOutput {
        session_id: String,
        terminal_id: String,
    },
    /// `terminal/wait_for_exit`.
    WaitForExit {
        session_id: String,
        terminal_id: String,
    },
    /// `terminal/kill`.
    KillTerminal {
        session_id: String,
        terminal_id: String,
    },
    /// `terminal/release`.
    ReleaseTerminal {
        session_id: String,
        terminal_id: String,
    },
}

impl ClientCall {
    /// The session the call belongs to.
    pub(crate) fn session_id(&self) -> &str {
        match self {
            ClientCall::ReadTextFile { session_id, .. }
            | ClientCall::WriteTextFile { session_id, .. }
            | ClientCall::CreateTerminal { session_id, .. }
            | ClientCall::TerminalOutput { session_id, .. }
            | ClientCall::WaitForExit { session_id, .. }
            | ClientCall::KillTerminal { session_id, .. }
            | ClientCall::ReleaseTerminal { session_id, .. } => session_id,
        }
    }
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExitInfo {
    pub exit_code: Option<u32>,
    pub signal: Option<String>,
}

/// The answer to a [`ClientCall`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientReply {
    /// The file's text.
    Text(String),
    /// A terminal was created.
    TerminalId(String),
    /// A terminal's output so far.
    Output {
        output: String,
        truncated: bool,
        exit: Option<ExitInfo>,
    },
    /// A terminal exited.
    Exited(ExitInfo),
    /// Done, nothing to say (write, kill, release).
    Done,
}

/// Why a [`ClientCall`] was refused or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// The request is wrong (bad path, unknown terminal, outside the roots).
    InvalidParams(String),
    /// The file or terminal does not exist.
    NotFound(String),
    /// The permission gate refused it.
    Denied(String),
    /// Something failed while doing it.
    Failed(String),
}

impl ClientError {
    fn into_sdk(self) -> agent_client_protocol::Error {
        use agent_client_protocol::Error;
        match self {
            ClientError::InvalidParams(message) => Error::new(-32602, message),
            ClientError::NotFound(message) => Error::new(-32002, message),
            ClientError::Denied(message) => Error::new(
                -32000,
                format!("refused by the user's permission policy: {message}"),
            ),
            ClientError::Failed(message) => Error::new(-32603, message),
        }
    }
}

/// Answers one client call; dropping it answers with an error.
pub struct ClientResponder(Option<Box<Sink>>);

impl std::fmt::Debug for ClientResponder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientResponder")
    }
}

enum Sink {
    Read(Responder<acp::ReadTextFileResponse>),
    Write(Responder<acp::WriteTextFileResponse>),
    Create(Responder<acp::CreateTerminalResponse>),
    Output(Responder<acp::TerminalOutputResponse>),
    Wait(Responder<acp::WaitForTerminalExitResponse>),
    Kill(Responder<acp::KillTerminalResponse>),
    Release(Responder<acp::ReleaseTerminalResponse>),
}

fn exit_status(exit: ExitInfo) -> acp::TerminalExitStatus {
    acp::TerminalExitStatus::new()
        .exit_code(exit.exit_code)
        .signal(exit.signal)
}

impl ClientResponder {
    /// Send the answer.
    pub(crate) fn respond(mut self, result: Result<ClientReply, ClientError>) {
        self.send(result);
    }

    fn send(&mut self, result: Result<ClientReply, ClientError>) {
        let Some(sink) = self.0.take() else {
            return;
        };
        let sent = match (*sink, result) {
            (Sink::Read(r), Ok(ClientReply::Text(text))) => {
                r.respond(acp::ReadTextFileResponse::new(text))
            }
            (Sink::Write(r), Ok(_)) => r.respond(acp::WriteTextFileResponse::new()),
            (Sink::Create(r), Ok(ClientReply::TerminalId(id))) => {
                r.respond(acp::CreateTerminalResponse::new(id))
            }
            (
                Sink::Output(r),
                Ok(ClientReply::Output {
                    output,
                    truncated,
                    exit,
                }),
            ) => r.respond(
                acp::TerminalOutputResponse::new(output, truncated)
                    .exit_status(exit.map(exit_status)),
            ),
            (Sink::Wait(r), Ok(ClientReply::Exited(exit))) => {
                r.respond(acp::WaitForTerminalExitResponse::new(exit_status(exit)))
            }
            (Sink::Kill(r), Ok(_)) => r.respond(acp::KillTerminalResponse::new()),
            (Sink::Release(r), Ok(_)) => r.respond(acp::ReleaseTerminalResponse::new()),
            (sink, result) => {
                let error = match result {
                    Err(err) => err.into_sdk(),
                    Ok(reply) => {
                        ClientError::Failed(format!("internal: wrong reply {reply:?}")).into_sdk()
                    }
                };
                match sink {
                    Sink::Read(r) => r.respond_with_error(error),
                    Sink::Write(r) => r.respond_with_error(error),
                    Sink::Create(r) => r.respond_with_error(error),
                    Sink::Output(r) => r.respond_with_error(error),
                    Sink::Wait(r) => r.respond_with_error(error),
                    Sink::Kill(r) => r.respond_with_error(error),
                    Sink::Release(r) => r.respond_with_error(error),
                }
            }
        };
        if let Err(err) = sent {
            tracing::warn!("could not answer a client call: {err}");
        }
    }
}

impl Drop for ClientResponder {
    fn drop(&mut self) {
        self.send(Err(ClientError::Failed(
            "the request was dropped (warden is shutting down)".into(),
        )));
    }
}

pub(super) fn read(
    req: acp::ReadTextFileRequest,
    r: Responder<acp::ReadTextFileResponse>,
) -> (ClientCall, ClientResponder) {
    (
        ClientCall::ReadTextFile {
            session_id: req.session_id.to_string(),
            path: req.path,
            line: req.line,
            limit: req.limit,
        },
        ClientResponder(Some(Box::new(Sink::Read(r)))),
    )
}

pub(super) fn write(
    req: acp::WriteTextFileRequest,
    r: Responder<acp::WriteTextFileResponse>,
) -> (ClientCall, ClientResponder) {
    (
        ClientCall::WriteTextFile {
            session_id: req.session_id.to_string(),
            path: req.path,
            content: req.content,
        },
        ClientResponder(Some(Box::new(Sink::Write(r)))),
    )
}

pub(super) fn create(
    req: acp::CreateTerminalRequest,
    r: Responder<acp::CreateTerminalResponse>,
) -> (ClientCall, ClientResponder) {
    (
        ClientCall::CreateTerminal {
            session_id: req.session_id.to_string(),
            command: req.command,
            args: req.args,
            env: req.env.into_iter().map(|e| (e.name, e.value)).collect(),
            cwd: req.cwd,
            output_byte_limit: req.output_byte_limit,
        },
        ClientResponder(Some(Box::new(Sink::Create(r)))),
    )
}

pub(super) fn output(
    req: acp::TerminalOutputRequest,
    r: Responder<acp::TerminalOutputResponse>,
) -> (ClientCall, ClientResponder) {
    (
        ClientCall::TerminalOutput {
            session_id: req.session_id.to_string(),
            terminal_id: req.terminal_id.to_string(),
        },
        ClientResponder(Some(Box::new(Sink::Output(r)))),
    )
}

pub(super) fn wait(
    req: acp::WaitForTerminalExitRequest,
    r: Responder<acp::WaitForTerminalExitResponse>,
) -> (ClientCall, ClientResponder) {
    (
        ClientCall::WaitForExit {
            session_id: req.session_id.to_string(),
            terminal_id: req.terminal_id.to_string(),
        },
        ClientResponder(Some(Box::new(Sink::Wait(r)))),
    )
}

pub(super) fn kill(
    req: acp::KillTerminalRequest,
    r: Responder<acp::KillTerminalResponse>,
) -> (ClientCall, ClientResponder) {
    (
        ClientCall::KillTerminal {
            session_id: req.session_id.to_string(),
            terminal_id: req.terminal_id.to_string(),
        },
        ClientResponder(Some(Box::new(Sink::Kill(r)))),
    )
}

pub(super) fn release(
    req: acp::ReleaseTerminalRequest,
    r: Responder<acp::ReleaseTerminalResponse>,
) -> (ClientCall, ClientResponder) {
    (
        ClientCall::ReleaseTerminal {
            session_id: req.session_id.to_string(),
            terminal_id: req.terminal_id.to_string(),
        },
        ClientResponder(Some(Box::new(Sink::Release(r)))),
    )
}
