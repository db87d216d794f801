//! Plays a list of [`Step`]s as one ACP turn: notifications, permission
//! requests, pauses, and the stop reason the prompt answers with.
//!
//! The runner lives in a task spawned off the dispatch loop, so it may wait
//! for the client's answers. A cancelled turn stops at the next step, pause
//! or permission wait and answers `cancelled`. The steps that use the
//! client's files and terminals are in `client.rs`.

mod client;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, Diff, PermissionOption, Plan, PlanEntry,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SessionId,
    SessionNotification, SessionUpdate, StopReason, Terminal, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::v1::{ConnectionTo, SentRequest};
use agent_client_protocol::{Client, Error};
use tokio_util::sync::CancellationToken;

use super::Sessions;
use super::builtin::flood_chunk;
use super::scenario::{
    ClientFeatures, ContentItem, Location, OnReject, OptionSpec, PermissionStep, PlanEntryStep,
    Step, ToolCallStep, ToolUpdateStep,
};

/// How long a cancelled turn still waits for the client to answer an open
/// permission request itself (ACP asks clients to answer `cancelled`).
const CANCEL_GRACE: Duration = Duration::from_millis(500);
/// How long `exit` waits so that the updates already sent reach stdout.
const EXIT_FLUSH: Duration = Duration::from_millis(100);
/// Flood chunks between two cancel checks.
const FLOOD_BATCH: u64 = 256;

/// Wait while more than [`FLOOD_BATCH`] of the `sent` chunks are queued
/// unwritten (stdout had written `from` lines when the flood began): the
/// SDK's queue is unbounded, and a flood that ran ahead of a reader kept
/// every message of it (100 MB for 100,000 chunks).
async fn wait_for_stdout(from: u64, sent: u64, cancel: &CancellationToken) {
    let mut last = None;
    let mut idle = 0u32;
    while let Some(written) = super::stdio::lines_written()
        .filter(|written| sent.saturating_sub(written.saturating_sub(from)) > FLOOD_BATCH)
    {
        if cancel.is_cancelled() {
            return;
        }
        if last == Some(written) {
            idle += 1;
        } else {
            (last, idle) = (Some(written), 0);
        }
        if idle < 64 {
            // Writes are plain blocking writes on this thread: each yield
            // lets the writer take a line, or blocks in it until the
            // client reads.
            tokio::task::yield_now().await;
        } else {
            // The writer is held up elsewhere: wait without spinning.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

/// Whether the turn goes on after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// Run the next step.
    Continue,
    /// The turn is over; the prompt answers with this reason.
    Stop(StopReason),
}

/// The answer to one permission request, as the agent understood it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// An option was chosen; `allowed` when its kind is an allow kind.
    Selected { option_id: String, allowed: bool },
    /// The request was cancelled: by the client's answer, by an error
    /// answer, or because the turn was cancelled while waiting.
    Cancelled,
    /// Nothing was asked: the session's mode (named) acts without asking.
    Unasked(String),
}

impl Outcome {
    /// The text line every permission outcome is reported with.
    fn line(&self) -> String {
        match self {
            Self::Selected { option_id, .. } => {
                format!("permission outcome: selected {option_id}\n")
            }
            Self::Cancelled => "permission outcome: cancelled\n".to_owned(),
            Self::Unasked(mode) => format!("ran unasked in mode {mode}\n"),
        }
    }
}

/// Plays the steps of one turn of one session.
pub(crate) struct Runner {
    cx: ConnectionTo<Client>,
    session_id: SessionId,
    cancel: CancellationToken,
    sessions: Arc<Sessions>,
    /// What the client advertised at `initialize`.
    offered: ClientFeatures,
    /// The session's working directory: relative paths of client steps
    /// are taken from it.
    cwd: PathBuf,
    /// The scenario's `models` (for the `model` step).
    pub(crate) models: Option<serde_json::Value>,
}

impl Runner {
    pub(crate) fn new(
        cx: ConnectionTo<Client>,
        session_id: SessionId,
        cancel: CancellationToken,
        sessions: Arc<Sessions>,
        offered: ClientFeatures,
        cwd: PathBuf,
    ) -> Self {
        Self {
            cx,
            session_id,
            cancel,
            sessions,
            offered,
            cwd,
            models: None,
        }
    }

    /// Play `steps`; the stop reason the prompt answers with. A turn that was
    /// cancelled answers `cancelled` whatever its steps did. Steps that need
    /// a client capability the client did not advertise are not played: the
    /// agent says what is missing and ends the turn.
    pub(crate) async fn run(&self, steps: &[Step]) -> Result<StopReason, Error> {
        let missing = ClientFeatures::needed_by(steps).missing_from(self.offered);
        if !missing.is_empty() {
            for line in missing {
                self.say(&format!("{line}\n"))?;
            }
            return Ok(StopReason::EndTurn);
        }
        let flow = self.run_steps(steps, false).await?;
        if self.cancel.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
        Ok(match flow {
            Flow::Continue => StopReason::EndTurn,
            Flow::Stop(reason) => reason,
        })
    }

    /// Run `steps` in order. In `cleanup` mode (after a cancel) nothing
    /// waits: pauses are skipped and permission requests count as cancelled.
    async fn run_steps(&self, steps: &[Step], cleanup: bool) -> Result<Flow, Error> {
        for step in steps {
            if !cleanup && self.cancel.is_cancelled() {
                return Ok(Flow::Stop(StopReason::Cancelled));
            }
            if let Flow::Stop(reason) = self.run_step(step, cleanup).await? {
                return Ok(Flow::Stop(reason));
            }
        }
        Ok(Flow::Continue)
    }

    async fn run_step(&self, step: &Step, cleanup: bool) -> Result<Flow, Error> {
        match step {
            Step::Text { text } => self.send(SessionUpdate::AgentMessageChunk(chunk(text)))?,
            Step::Thought { text } => self.send(SessionUpdate::AgentThoughtChunk(chunk(text)))?,
            Step::User { text } => self.send(SessionUpdate::UserMessageChunk(chunk(text)))?,
            Step::Update { update } => {
                let update: SessionUpdate =
                    serde_json::from_value(update.clone()).map_err(|err| {
                        Error::new(
                            agent_client_protocol::ErrorCode::INTERNAL_ERROR,
                            format!("the scenario's update step is not a session update: {err}"),
                        )
                    })?;
                self.send(update)?;
            }
            Step::ToolCall(call) => self.send(SessionUpdate::ToolCall(tool_call(call)))?,
            Step::ToolUpdate(update) => {
                self.send(SessionUpdate::ToolCallUpdate(tool_update(update)))?;
            }
            Step::Plan { entries } => self.send(SessionUpdate::Plan(plan(entries)))?,
            Step::Permission(request) => {
                return self
                    .permissions(std::slice::from_ref(request), cleanup)
                    .await;
            }
            Step::Permissions { requests } => return self.permissions(requests, cleanup).await,
            Step::Sleep { ms } => {
                if !cleanup {
                    tokio::select! {
                        () = self.cancel.cancelled() => return Ok(Flow::Stop(StopReason::Cancelled)),
                        () = tokio::time::sleep(Duration::from_millis(*ms)) => {}
                    }
                }
            }
            Step::Mode { mode } => {
                self.sessions.set_mode(&self.session_id, mode);
                self.send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                    mode.clone(),
                )))?;
            }
            Step::Flood {
                count,
                per_second,
                text,
            } => {
                return self
                    .flood(*count, *per_second, text.as_deref(), cleanup)
                    .await;
            }
            Step::Stop { reason } => return Ok(Flow::Stop(*reason)),
            Step::Exit { code } => {
                // What the turn sent so far stays loadable.
                self.sessions.save(&self.session_id, true);
                tokio::time::sleep(EXIT_FLUSH).await;
                std::process::exit(*code);
            }
            Step::Stderr { text, repeat } => {
                use std::io::Write as _;
                let mut err = std::io::stderr().lock();
                for _ in 0..repeat.unwrap_or(1) {
                    let _ = err.write_all(text.as_bytes());
                }
                let _ = writeln!(err);
            }
            Step::Fail { message, data } => {
                return Err(Error::new(
                    agent_client_protocol::ErrorCode::INTERNAL_ERROR,
                    message.clone(),
                )
                .data(data.clone()));
            }
            Step::Touch { path } if !cleanup => {
                let cwd = self.sessions.cwd(&self.session_id);
                let target = cwd.join(path);
                let line = match std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&target)
                {
                    Ok(_) => format!("touched {}\n", path.display()),
                    Err(error) => format!("touch failed: {error}\n"),
                };
                self.say(&line)?;
            }
            Step::Touch { .. } => {}
            Step::Save { path, content } if !cleanup => {
                let target = self.sessions.cwd(&self.session_id).join(path);
                let line = match std::fs::write(&target, content) {
                    Ok(()) => format!("saved {}\n", path.display()),
                    Err(error) => format!("save failed: {error}\n"),
                };
                self.say(&line)?;
            }
            Step::Save { .. } => {}
            Step::RequireMode { mode, message } => {
                let now = self.sessions.mode(&self.session_id).unwrap_or_default();
                if now != *mode {
                    self.say(&format!("{message}\n"))?;
                    return Ok(Flow::Stop(StopReason::EndTurn));
                }
            }
            Step::Raw { text, bytes } => {
                let mut line = text.clone().into_bytes();
                line.extend_from_slice(bytes);
                line.push(b'\n');
                super::write_stdout(&line).await;
            }
            Step::CloseStdout => super::close_stdout().await,
            Step::Hang => std::future::pending::<()>().await,
            // Client requests wait for answers: not in cleanup.
            Step::ReadFile(read) if !cleanup => return self.read_file(read).await,
            Step::WriteFile(write) if !cleanup => return self.write_file(write).await,
            Step::Terminal(terminal) if !cleanup => return self.terminal(terminal).await,
            Step::ReadFile(_) | Step::WriteFile(_) | Step::Terminal(_) => {}
            Step::Elicitation { request } if !cleanup => self.elicit(request).await?,
            Step::Elicitation { .. } => {}
            Step::Mcp => {
                let servers = self.sessions.mcp(&self.session_id);
                if servers.is_empty() {
                    self.say("mcp servers: none\n")?;
                }
                for server in servers {
                    self.say(&format!("mcp server: {server}\n"))?;
                }
            }
            Step::Usage {
                used,
                size,
                cost,
                currency,
            } => {
                let cost = cost.map(|amount| {
                    agent_client_protocol::v1::schema::Cost::new(
                        amount,
                        currency.clone().unwrap_or_else(|| "USD".to_owned()),
                    )
                });
                match used {
                    Some(used) => self.send(SessionUpdate::UsageUpdate(
                        agent_client_protocol::v1::schema::UsageUpdate::new(*used, *size)
                            .cost(cost),
                    ))?,
                    None => {
                        // The SDK's type has no null `used`: sent as JSON.
                        let params = serde_json::json!({
                            "sessionId": self.session_id.to_string(),
                            "update": {"sessionUpdate": "usage_update", "used": null,
                                "size": size, "cost": cost},
                        });
                        self.cx
                            .send_notification(agent_client_protocol::UntypedMessage::new(
                                "session/update",
                                &params,
                            )?)?;
                    }
                }
            }
            Step::Model => {
                let model = super::extras::current_model(self.models.as_ref());
                self.say(&format!("model: {}\n", model.as_deref().unwrap_or("none")))?;
            }
        }
        Ok(Flow::Continue)
    }

    /// `elicitation/create` with `params` in this session; the answer (or
    /// the error) is reported as a text line.
    async fn elicit(&self, params: &serde_json::Value) -> Result<(), Error> {
        let mut params = params.clone();
        if let Some(object) = params.as_object_mut() {
            object
                .entry("sessionId")
                .or_insert_with(|| serde_json::Value::String(self.session_id.to_string()));
        }
        let request: agent_client_protocol::v1::schema::CreateElicitationRequest =
            match serde_json::from_value(params) {
                Ok(request) => request,
                Err(err) => return self.say(&format!("elicitation failed: {err}\n")),
            };
        let line = match self.cx.send_request(request).block_task().await {
            Ok(response) => format!(
                "elicitation answer: {}\n",
                serde_json::to_string(&response).unwrap_or_default()
            ),
            Err(err) => format!("elicitation failed: {err}\n"),
        };
        self.say(&line)
    }

    /// Send an update to the client; it also goes into the session's record.
    fn send(&self, update: SessionUpdate) -> Result<(), Error> {
        self.sessions.record_update(&self.session_id, &update);
        self.cx
            .send_notification(SessionNotification::new(self.session_id.clone(), update))
    }

    /// An agent message chunk.
    fn say(&self, text: &str) -> Result<(), Error> {
        self.send(SessionUpdate::AgentMessageChunk(chunk(text)))
    }

    async fn flood(
        &self,
        count: u64,
        per_second: Option<u64>,
        text: Option<&str>,
        cleanup: bool,
    ) -> Result<Flow, Error> {
        let start = tokio::time::Instant::now();
        let mut cut = text
            .filter(|t| !t.is_empty())
            .map(|t| t.chars().cycle().peekable());
        let written_from = super::stdio::lines_written();
        for index in 0..count {
            if let Some(rate) = per_second.filter(|&rate| rate > 0 && !cleanup) {
                // Chunk `index` is due `index / rate` seconds after the first;
                // a late sender catches up without sleeping.
                let due = start + Duration::from_micros(index.saturating_mul(1_000_000) / rate);
                tokio::select! {
                    () = self.cancel.cancelled() => return Ok(Flow::Stop(StopReason::Cancelled)),
                    () = tokio::time::sleep_until(due) => {}
                }
            } else if index % FLOOD_BATCH == 0 && index > 0 {
                if !cleanup && self.cancel.is_cancelled() {
                    return Ok(Flow::Stop(StopReason::Cancelled));
                }
                tokio::task::yield_now().await;
            }
            let text = match cut.as_mut() {
                Some(chars) => {
                    let mut piece = String::new();
                    while let Some(c) = chars.next_if(|c| piece.len() + c.len_utf8() <= 64) {
                        piece.push(c);
                    }
                    piece
                }
                None => flood_chunk(index, count),
            };
            self.send(SessionUpdate::AgentMessageChunk(chunk(&text)))?;
            if let Some(written) = written_from {
                wait_for_stdout(written, index + 1, &self.cancel).await;
            }
        }
        Ok(Flow::Continue)
    }

    /// Send every request at once, wait for all answers, report each outcome
    /// as a text line (in order), then run each request's branch. The first
    /// branch that stops the turn decides the stop reason.
    async fn permissions(&self, requests: &[PermissionStep], cleanup: bool) -> Result<Flow, Error> {
        let options: Vec<Vec<OptionSpec>> = requests
            .iter()
            .map(|request| {
                request
                    .options
                    .clone()
                    .unwrap_or_else(OptionSpec::default_four)
            })
            .collect();
        let mode = self.sessions.mode(&self.session_id).unwrap_or_default();
        let unasked: Vec<bool> = requests
            .iter()
            .map(|request| request.unasked_in_modes.contains(&mode))
            .collect();
        let outcomes = if cleanup || self.cancel.is_cancelled() {
            vec![Outcome::Cancelled; requests.len()]
        } else {
            let sent: Vec<Option<SentRequest<RequestPermissionResponse>>> = requests
                .iter()
                .zip(&options)
                .zip(&unasked)
                .map(|((request, options), unasked)| {
                    (!unasked).then(|| {
                        self.cx.send_request(RequestPermissionRequest::new(
                            self.session(&request.session_id),
                            permission_tool_call(request),
                            options.iter().map(permission_option).collect(),
                        ))
                    })
                })
                .collect();
            for request in requests {
                Box::pin(self.run_steps(&request.meanwhile, cleanup)).await?;
            }
            let answers = sent.into_iter().zip(&options).zip(requests).map(
                |((sent, options), request)| async {
                    match sent {
                        Some(sent) => {
                            let withdraw = async {
                                if let Some(ms) = request.withdraw_after_ms {
                                    tokio::time::sleep(Duration::from_millis(ms)).await;
                                    let fields = ToolCallUpdateFields::new()
                                        .status(Some(ToolCallStatus::Completed));
                                    let _ = self.send(SessionUpdate::ToolCallUpdate(
                                        ToolCallUpdate::new(request.tool_call_id.clone(), fields),
                                    ));
                                }
                            };
                            let (outcome, ()) =
                                futures::join!(self.answer(sent, options), withdraw);
                            outcome
                        }
                        None => Outcome::Unasked(mode.clone()),
                    }
                },
            );
            futures::future::join_all(answers).await
        };
        for outcome in &outcomes {
            self.send(SessionUpdate::AgentMessageChunk(chunk(&outcome.line())))?;
        }
        let mut flow = Flow::Continue;
        for (request, outcome) in requests.iter().zip(&outcomes) {
            let branch = Box::pin(self.branch(request, outcome, cleanup)).await?;
            if flow == Flow::Continue {
                flow = branch;
            }
        }
        Ok(flow)
    }

    /// Wait for the client's answer to one permission request, or for the
    /// turn to be cancelled (then give the client a moment to answer).
    async fn answer(
        &self,
        sent: SentRequest<RequestPermissionResponse>,
        options: &[OptionSpec],
    ) -> Outcome {
        let answer = sent.block_task();
        tokio::pin!(answer);
        let result = tokio::select! {
            biased;
            () = self.cancel.cancelled() => {
                // Report what the client answered (it may have decided just
                // before cancelling); no answer in time reads as cancelled.
                match tokio::time::timeout(CANCEL_GRACE, &mut answer).await {
                    Ok(result) => result,
                    Err(_) => return Outcome::Cancelled,
                }
            }
            result = &mut answer => result,
        };
        match result {
            Ok(response) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => {
                    let option_id = selected.option_id.to_string();
                    let allowed = options
                        .iter()
                        .find(|option| option.id == option_id)
                        .is_some_and(|option| is_allow(option.kind));
                    Outcome::Selected { option_id, allowed }
                }
                _ => Outcome::Cancelled,
            },
            Err(err) => {
                eprintln!("demo-agent: permission request failed: {err}");
                Outcome::Cancelled
            }
        }
    }

    async fn branch(
        &self,
        request: &PermissionStep,
        outcome: &Outcome,
        cleanup: bool,
    ) -> Result<Flow, Error> {
        match outcome {
            Outcome::Selected { allowed: true, .. } | Outcome::Unasked(_) => {
                self.run_steps(&request.allowed, cleanup).await
            }
            Outcome::Selected { allowed: false, .. } => {
                let flow = self.run_steps(&request.rejected, cleanup).await?;
                Ok(match (flow, request.on_reject) {
                    (Flow::Stop(reason), _) => Flow::Stop(reason),
                    (Flow::Continue, OnReject::Stop) => Flow::Stop(StopReason::EndTurn),
                    (Flow::Continue, OnReject::Continue) => Flow::Continue,
                })
            }
            Outcome::Cancelled => {
                let flow = self.run_steps(&request.cancelled, true).await?;
                Ok(match flow {
                    Flow::Stop(reason) => Flow::Stop(reason),
                    Flow::Continue => Flow::Stop(StopReason::Cancelled),
                })
            }
        }
    }
}

fn is_allow(kind: agent_client_protocol::v1::schema::PermissionOptionKind) -> bool {
    use agent_client_protocol::v1::schema::PermissionOptionKind as Kind;
    matches!(kind, Kind::AllowOnce | Kind::AllowAlways)
}

fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text))
}

fn content(item: &ContentItem) -> ToolCallContent {
    match item {
        ContentItem::Text { text } => ToolCallContent::from(text.as_str()),
        ContentItem::Diff {
            path,
            old_text,
            new_text,
        } => ToolCallContent::Diff(
            Diff::new(path.clone(), new_text.clone()).old_text(old_text.clone()),
        ),
        ContentItem::Terminal { terminal_id } => {
            ToolCallContent::Terminal(Terminal::new(terminal_id.clone()))
        }
    }
}

fn location(location: &Location) -> ToolCallLocation {
    ToolCallLocation::new(location.path.clone()).line(location.line)
}

fn tool_call(step: &ToolCallStep) -> ToolCall {
    let mut call = ToolCall::new(step.id.clone(), step.title.clone())
        .content(step.content.iter().map(content).collect())
        .locations(step.locations.iter().map(location).collect())
        .raw_input(step.raw_input.clone())
        .raw_output(step.raw_output.clone());
    if let Some(kind) = step.kind {
        call = call.kind(kind);
    }
    if let Some(status) = step.status {
        call = call.status(status);
    }
    call
}

fn tool_update(step: &ToolUpdateStep) -> ToolCallUpdate {
    let fields = ToolCallUpdateFields::new()
        .title(step.title.clone())
        .kind(step.kind)
        .status(step.status)
        .raw_input(step.raw_input.clone())
        .raw_output(step.raw_output.clone())
        .content(
            step.content
                .as_ref()
                .map(|items| items.iter().map(content).collect()),
        )
        .locations(
            step.locations
                .as_ref()
                .map(|items| items.iter().map(location).collect()),
        );
    ToolCallUpdate::new(step.id.clone(), fields)
}

/// The tool call a permission request is about: only the fields the step
/// gives (agents often send little more than the id).
fn permission_tool_call(step: &PermissionStep) -> ToolCallUpdate {
    tool_update(&ToolUpdateStep {
        id: step.tool_call_id.clone(),
        title: step.title.clone(),
        kind: step.kind,
        status: None,
        raw_input: step.raw_input.clone(),
        raw_output: None,
        content: step.content.clone(),
        locations: step.locations.clone(),
    })
}

fn permission_option(option: &OptionSpec) -> PermissionOption {
    PermissionOption::new(option.id.clone(), option.name.clone(), option.kind)
}

fn plan(entries: &[PlanEntryStep]) -> Plan {
    Plan::new(
        entries
            .iter()
            .map(|entry| {
                PlanEntry::new(
                    entry.content.clone(),
                    entry.priority.clone(),
                    entry.status.clone(),
                )
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn outcome_lines_are_exact() {
        let selected = Outcome::Selected {
            option_id: "reject-once".into(),
            allowed: false,
        };
        assert_eq!(
            selected.line(),
            "permission outcome: selected reject-once\n"
        );
        assert_eq!(Outcome::Cancelled.line(), "permission outcome: cancelled\n");
    }

    #[test]
    fn tool_call_serializes_like_agents_send_it() {
        let step = ToolCallStep {
            id: "c1".into(),
            title: "Edit a".into(),
            kind: Some(agent_client_protocol::v1::schema::ToolKind::Edit),
            status: None,
            raw_input: Some(json!({"path": "a"})),
            raw_output: None,
            content: vec![ContentItem::Diff {
                path: "a".into(),
                old_text: None,
                new_text: "x\n".into(),
            }],
            locations: vec![Location {
                path: "a".into(),
                line: Some(2),
            }],
        };
        let value = serde_json::to_value(SessionUpdate::ToolCall(tool_call(&step))).unwrap();
        assert_eq!(
            value,
            json!({
                "sessionUpdate": "tool_call",
                "toolCallId": "c1",
                "title": "Edit a",
                "kind": "edit",
                "rawInput": {"path": "a"},
                "content": [{"type": "diff", "path": "a", "newText": "x\n"}],
                "locations": [{"path": "a", "line": 2}],
            })
        );
    }

    #[test]
    fn tool_update_sends_only_the_given_fields() {
        let step = ToolUpdateStep {
            id: "c1".into(),
            status: Some(agent_client_protocol::v1::schema::ToolCallStatus::Failed),
            ..ToolUpdateStep::default()
        };
        let value =
            serde_json::to_value(SessionUpdate::ToolCallUpdate(tool_update(&step))).unwrap();
        assert_eq!(
            value,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "failed"})
        );
    }
}
