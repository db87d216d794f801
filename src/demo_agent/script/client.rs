//! The steps that use the client's files and terminals: `fs/*` and
//! `terminal/*` requests sent from the turn task, each answer reported as
//! an agent message line (tests rely on these texts).
//!
//! A JSON-RPC error answer is reported with its message and ends the turn
//! with `end_turn`. A cancel of the turn while a request is open gives the
//! client a moment to answer still; a running terminal is killed.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReadTextFileRequest,
    ReleaseTerminalRequest, SessionUpdate, StopReason, Terminal, TerminalExitStatus, TerminalId,
    TerminalOutputRequest, TerminalOutputResponse, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, WaitForTerminalExitRequest, WaitForTerminalExitResponse,
    WriteTextFileRequest,
};
use agent_client_protocol::{Error, JsonRpcRequest};

use super::{CANCEL_GRACE, Flow, Runner};
use crate::demo_agent::scenario::{ReadFileStep, TerminalStep, WriteFileStep};

/// How long a cancelled turn waits for each request that cleans up its
/// terminal (kill, the exit, output, release).
const CLEANUP_WAIT: Duration = Duration::from_secs(2);

/// What became of one request to the client.
enum Answer<T> {
    Ok(T),
    /// A JSON-RPC error answer (or one the SDK could not decode).
    Failed(Error),
    /// The turn was cancelled and the client did not answer in time.
    Cancelled,
}

/// How a terminal step's command ended, as the agent saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// It exited and its output was read; `success` when with code 0.
    Exited { success: bool },
    /// A request failed: the turn ends with `end_turn`.
    Failed,
    /// The turn was cancelled (the command was killed).
    Cancelled,
}

impl Runner {
    /// `path` made absolute from the session's cwd, with `{cwd}` in it
    /// replaced by the cwd (for `/proc/self/root{cwd}/...`).
    fn absolute(&self, path: &Path) -> PathBuf {
        let text = path.to_string_lossy();
        if text.contains("{cwd}") {
            let cwd = self.cwd.to_string_lossy();
            return self.cwd.join(text.replace("{cwd}", &cwd));
        }
        self.cwd.join(path)
    }

    /// Send `request` to the client and wait for the answer. When the turn
    /// is (or gets) cancelled, the client still has `grace` to answer.
    async fn call<Req: JsonRpcRequest>(
        &self,
        request: Req,
        grace: Duration,
    ) -> Answer<Req::Response>
    where
        Req::Response: Send + 'static,
    {
        let answer = self.cx.send_request(request).block_task();
        tokio::pin!(answer);
        let result = tokio::select! {
            biased;
            result = &mut answer => result,
            () = self.cancel.cancelled() => {
                match tokio::time::timeout(grace, &mut answer).await {
                    Ok(result) => result,
                    Err(_) => return Answer::Cancelled,
                }
            }
        };
        match result {
            Ok(response) => Answer::Ok(response),
            Err(error) => Answer::Failed(error),
        }
    }

    /// The session a step's request names: its own `session_id` when it
    /// sets one (a hostile agent acting through another session), else the
    /// turn's.
    pub(super) fn session(
        &self,
        other: &Option<String>,
    ) -> agent_client_protocol::v1::schema::SessionId {
        other
            .as_ref()
            .map_or_else(|| self.session_id.clone(), |id| id.clone().into())
    }

    /// Set the status of the tool call a step belongs to, if any.
    fn tool_status(&self, id: Option<&str>, status: ToolCallStatus) -> Result<(), Error> {
        let Some(id) = id else {
            return Ok(());
        };
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_owned(),
            ToolCallUpdateFields::new().status(status),
        )))
    }

    /// Report a failed request; the turn then ends with `end_turn`.
    fn failed(&self, what: &str, error: &Error, tool_call: Option<&str>) -> Result<Flow, Error> {
        self.say(&format!("{what} failed: {}\n", error_text(error)))?;
        self.tool_status(tool_call, ToolCallStatus::Failed)?;
        Ok(Flow::Stop(StopReason::EndTurn))
    }

    pub(super) async fn read_file(&self, step: &ReadFileStep) -> Result<Flow, Error> {
        let tool_call = step.tool_call_id.as_deref();
        let request =
            ReadTextFileRequest::new(self.session(&step.session_id), self.absolute(&step.path))
                .line(step.line)
                .limit(step.limit);
        match self.call(request, CANCEL_GRACE).await {
            Answer::Ok(response) => {
                self.say(&read_report(&response.content))?;
                self.tool_status(tool_call, ToolCallStatus::Completed)?;
                Ok(Flow::Continue)
            }
            Answer::Failed(error) => self.failed("read", &error, tool_call),
            Answer::Cancelled => {
                self.tool_status(tool_call, ToolCallStatus::Failed)?;
                Ok(Flow::Stop(StopReason::Cancelled))
            }
        }
    }

    pub(super) async fn write_file(&self, step: &WriteFileStep) -> Result<Flow, Error> {
        let tool_call = step.tool_call_id.as_deref();
        let request = WriteTextFileRequest::new(
            self.session(&step.session_id),
            self.absolute(&step.path),
            step.content.clone(),
        );
        match self.call(request, CANCEL_GRACE).await {
            Answer::Ok(_) => {
                self.say("write ok\n")?;
                self.tool_status(tool_call, ToolCallStatus::Completed)?;
                Ok(Flow::Continue)
            }
            Answer::Failed(error) => self.failed("write", &error, tool_call),
            Answer::Cancelled => {
                self.tool_status(tool_call, ToolCallStatus::Failed)?;
                Ok(Flow::Stop(StopReason::Cancelled))
            }
        }
    }

    /// Create the terminal, embed it in the tool call, wait for the exit
    /// (or kill it on cancel), read the output, release it.
    pub(super) async fn terminal(&self, step: &TerminalStep) -> Result<Flow, Error> {
        let tool_call = step.tool_call_id.as_deref();
        let mut request =
            CreateTerminalRequest::new(self.session(&step.session_id), step.command.clone())
                .args(step.args.clone())
                .env(
                    step.env
                        .iter()
                        .map(|var| EnvVariable::new(var.name.clone(), var.value.clone()))
                        .collect(),
                )
                .output_byte_limit(step.output_byte_limit);
        if let Some(cwd) = &step.cwd {
            request = request.cwd(self.absolute(cwd));
        }
        let terminal_id = match self.call(request, CANCEL_GRACE).await {
            Answer::Ok(response) => response.terminal_id,
            Answer::Failed(error) => return self.failed("terminal/create", &error, tool_call),
            Answer::Cancelled => {
                self.tool_status(tool_call, ToolCallStatus::Failed)?;
                return Ok(Flow::Stop(StopReason::Cancelled));
            }
        };
        if let Some(id) = tool_call {
            self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                id.to_owned(),
                ToolCallUpdateFields::new()
                    .status(ToolCallStatus::InProgress)
                    .content(vec![ToolCallContent::Terminal(Terminal::new(
                        terminal_id.clone(),
                    ))]),
            )))?;
        }
        let ended = self.run_terminal(step, &terminal_id).await?;
        let status = match ended {
            Ended::Exited { success: true } => ToolCallStatus::Completed,
            _ => ToolCallStatus::Failed,
        };
        self.tool_status(tool_call, status)?;
        let mut flow = match ended {
            Ended::Exited { .. } => Flow::Continue,
            Ended::Failed => Flow::Stop(StopReason::EndTurn),
            Ended::Cancelled => Flow::Stop(StopReason::Cancelled),
        };
        if step.release {
            let release = ReleaseTerminalRequest::new(self.session_id.clone(), terminal_id);
            match self.call(release, CLEANUP_WAIT).await {
                Answer::Ok(_) => self.say("released\n")?,
                Answer::Failed(error) => {
                    self.say(&format!(
                        "terminal/release failed: {}\n",
                        error_text(&error)
                    ))?;
                    if flow == Flow::Continue {
                        flow = Flow::Stop(StopReason::EndTurn);
                    }
                }
                Answer::Cancelled => {}
            }
        }
        Ok(flow)
    }

    /// Wait for the exit and read the output, reporting both; on a cancel,
    /// kill the command and report what the output says then.
    async fn run_terminal(&self, step: &TerminalStep, id: &TerminalId) -> Result<Ended, Error> {
        let wait = self
            .cx
            .send_request(WaitForTerminalExitRequest::new(
                self.session_id.clone(),
                id.clone(),
            ))
            .block_task();
        tokio::pin!(wait);
        let waited = tokio::select! {
            biased;
            result = &mut wait => Some(result),
            () = self.cancel.cancelled() => None,
        };
        let Some(waited) = waited else {
            return self.kill(id, wait).await;
        };
        let exit = match waited {
            Ok(response) => response.exit_status,
            Err(error) => {
                self.say(&format!(
                    "terminal/wait_for_exit failed: {}\n",
                    error_text(&error)
                ))?;
                return Ok(Ended::Failed);
            }
        };
        self.say(&format!("terminal exited: {}\n", exit_text(&exit)))?;
        let output = TerminalOutputRequest::new(self.session_id.clone(), id.clone());
        match self.call(output, CANCEL_GRACE).await {
            Answer::Ok(output) => {
                if step.report_output {
                    self.say(&output_report(&output, step.output_byte_limit.is_some()))?;
                } else {
                    self.say(&format!(
                        "output: {} bytes, truncated: {}\n",
                        output.output.len(),
                        output.truncated
                    ))?;
                }
                Ok(Ended::Exited {
                    success: exit.exit_code == Some(0) && exit.signal.is_none(),
                })
            }
            Answer::Failed(error) => {
                self.say(&format!("terminal/output failed: {}\n", error_text(&error)))?;
                Ok(Ended::Failed)
            }
            Answer::Cancelled => Ok(Ended::Cancelled),
        }
    }

    /// The turn was cancelled while the command ran: `terminal/kill`, let
    /// the open wait see the exit, then `terminal/output`; reports
    /// `killed: <exit status>`.
    async fn kill<F>(&self, id: &TerminalId, wait: Pin<&mut F>) -> Result<Ended, Error>
    where
        F: Future<Output = Result<WaitForTerminalExitResponse, Error>>,
    {
        let kill = KillTerminalRequest::new(self.session_id.clone(), id.clone());
        match self.call(kill, CLEANUP_WAIT).await {
            Answer::Ok(_) => {}
            Answer::Failed(error) => {
                self.say(&format!("terminal/kill failed: {}\n", error_text(&error)))?;
            }
            Answer::Cancelled => return Ok(Ended::Cancelled),
        }
        let waited = tokio::time::timeout(CLEANUP_WAIT, wait).await;
        let waited = match waited {
            Ok(Ok(response)) => Some(response.exit_status),
            _ => None,
        };
        let output = TerminalOutputRequest::new(self.session_id.clone(), id.clone());
        match self.call(output, CLEANUP_WAIT).await {
            Answer::Ok(output) => {
                let status = output.exit_status.or(waited);
                let status = status.map_or_else(|| "no exit status".to_owned(), |s| exit_text(&s));
                self.say(&format!("killed: {status}\n"))?;
            }
            Answer::Failed(error) => {
                self.say(&format!("terminal/output failed: {}\n", error_text(&error)))?;
            }
            Answer::Cancelled => {}
        }
        Ok(Ended::Cancelled)
    }
}

/// A JSON-RPC error as one report: its message, then its data (a string
/// as is, anything else as compact JSON).
fn error_text(error: &Error) -> String {
    let mut text = if error.message.is_empty() {
        format!("error {}", error.code.value())
    } else {
        error.message.clone()
    };
    match &error.data {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::String(data)) => {
            text.push_str(": ");
            text.push_str(data);
        }
        Some(data) => {
            text.push_str(": ");
            text.push_str(&data.to_string());
        }
    }
    text
}

/// `code <n>`, `signal <name>`, or both.
fn exit_text(status: &TerminalExitStatus) -> String {
    match (status.exit_code, status.signal.as_deref()) {
        (Some(code), None) => format!("code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (Some(code), Some(signal)) => format!("code {code}, signal {signal}"),
        (None, None) => "no exit code or signal".to_owned(),
    }
}

/// `output: <escaped>`, and with a byte limit `truncated: <bool>, bytes: <len>`.
fn output_report(output: &TerminalOutputResponse, limited: bool) -> String {
    let mut report = format!("output: {:?}\n", output.output);
    if limited || output.truncated {
        report.push_str(&format!(
            "truncated: {}, bytes: {}\n",
            output.truncated,
            output.output.len()
        ));
    }
    report
}

/// `read ok: <N> lines`, then the text in a fenced block (the fence longer
/// than any run of backticks in the text).
fn read_report(content: &str) -> String {
    let lines = content.lines().count();
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let newline = if content.is_empty() || content.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("read ok: {lines} lines\n\n{fence}\n{content}{newline}{fence}\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use agent_client_protocol::ErrorCode;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn read_report_fences_the_text() {
        assert_eq!(
            read_report("two\nthree\n"),
            "read ok: 2 lines\n\n```\ntwo\nthree\n```\n"
        );
        assert_eq!(read_report("x"), "read ok: 1 lines\n\n```\nx\n```\n");
        assert_eq!(
            read_report("a ```` b"),
            "read ok: 1 lines\n\n`````\na ```` b\n`````\n"
        );
    }

    #[test]
    fn error_text_has_message_and_data() {
        let error = Error::new(ErrorCode::RESOURCE_NOT_FOUND, "Resource not found");
        assert_eq!(error_text(&error), "Resource not found");
        let error = error.data(json!("no such file"));
        assert_eq!(error_text(&error), "Resource not found: no such file");
        let error = Error::invalid_params().data(json!({"path": "/x"}));
        assert_eq!(error_text(&error), "Invalid params: {\"path\":\"/x\"}");
    }

    #[test]
    fn exit_and_output_reports() {
        assert_eq!(exit_text(&TerminalExitStatus::new().exit_code(0)), "code 0");
        assert_eq!(
            exit_text(&TerminalExitStatus::new().signal("SIGKILL".to_owned())),
            "signal SIGKILL"
        );
        let output = TerminalOutputResponse::new("a\u{1b}[0m\n", false);
        assert_eq!(
            output_report(&output, false),
            "output: \"a\\u{1b}[0m\\n\"\n"
        );
        assert_eq!(
            output_report(&output, true),
            "output: \"a\\u{1b}[0m\\n\"\ntruncated: false, bytes: 6\n"
        );
    }
}
