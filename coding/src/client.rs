//! The ACP client: one coding agent process, one ACP session in it, turns
//! sent one after another in that session (the first prompt, then each
//! re-prompt). Updates stream back as they come; each is parsed on its own,
//! and a malformed one is logged and skipped rather than failing the turn.
//! The agent's file requests are confined to the workspace and its
//! permission requests answered by the profile's policy. Dropping the
//! session cancels the turn in flight (`session/cancel`) and stops the
//! process.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::util::MatchDispatch;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, Content, ContentBlock, ContentChunk,
    FileSystemCapabilities, Implementation, InitializeRequest, PermissionOptionKind,
    PromptResponse, ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionNotification, SessionUpdate, StopReason, ToolCallContent, ToolCallStatus, ToolKind,
    WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::v1::{ActiveSession, SessionMessage, SessionSetup};
use agent_client_protocol::{Agent, ByteStreams, Client};
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tokio_util::sync::CancellationToken;

use engine::sandbox::{Reach, RunFolder, Sandbox};

use crate::confine::{Confinement, FileProblem};
use crate::profile::{AcpProfile, PermissionPolicy};

/// How much of the agent's stderr is kept to explain a crash.
const STDERR_TAIL_BYTES: usize = 4000;
/// How long a cancelled turn may take to end before the process is stopped.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// How long a stopping agent may take to exit on its own.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long starting (initialize, session/new) may take.
const START_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AgentError {
    #[error("{0}")]
    Failed(String),
    #[error("the agent's turn was cancelled")]
    Cancelled,
}

/// A test command the agent ran, as seen in its tool calls.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TestRun {
    pub command: String,
    pub exit_code: Option<i64>,
    pub passed: bool,
    pub output: String,
}

/// What streams out of a turn while it runs.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnEvent {
    /// Text of the agent's reply.
    Text(String),
    /// A tool call started or finished, a permission decided, an update
    /// skipped: a line for the transcript.
    Note(String),
}

/// A finished turn.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnOutcome {
    /// The agent's reply: its message chunks, joined.
    pub text: String,
    pub stop_reason: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub tests: Vec<TestRun>,
}

struct TurnRequest {
    text: String,
    events: mpsc::UnboundedSender<TurnEvent>,
    done: oneshot::Sender<Result<TurnOutcome, AgentError>>,
}

/// A running agent with its session open, ready for turns.
pub struct AgentSession {
    turns: mpsc::UnboundedSender<TurnRequest>,
    cancel: CancellationToken,
    /// The driver's last word: why the agent stopped, when it did.
    ended: Arc<Mutex<Option<String>>>,
    /// The agent's name as it introduced itself.
    pub agent_name: String,
    pub process_id: Option<u32>,
}

impl Drop for AgentSession {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Where an agent runs: confined by `sandbox`, in its run's folder (HOME,
/// temporary folder), with `workspace` as the one folder it may write.
pub struct Place<'a> {
    pub sandbox: &'a Sandbox,
    pub folder: &'a RunFolder,
    pub workspace: &'a Path,
    /// The operator's switch: without it, no request to execute something
    /// is allowed, whatever the profile says.
    pub commands_enabled: bool,
}

impl AgentSession {
    /// Starts the profile's agent in the place's workspace, confined, and
    /// opens a session there. A parked session stays open between turns for
    /// `idle_timeout` at most.
    pub async fn start(
        profile: &AcpProfile,
        place: &Place<'_>,
        idle_timeout: Duration,
    ) -> Result<AgentSession, AgentError> {
        let confinement = Confinement::new(place.workspace)
            .map_err(|refusal| AgentError::Failed(format!("workspace: {refusal}")))?;
        place.folder.prepare().await.map_err(|error| {
            AgentError::Failed(format!("cannot make the run's folder: {error}"))
        })?;
        let reach = Reach {
            writable: vec![confinement.root().to_path_buf()],
            read_only: profile.read_only.clone(),
            network: profile.network,
        };
        let mut environment = profile.env.clone();
        for name in &profile.pass_env {
            if let Ok(value) = std::env::var(name) {
                environment.insert(name.clone(), value);
            }
        }
        let mut command = place
            .sandbox
            .command(
                place.folder,
                &reach,
                &profile.command,
                &profile.args,
                &environment,
                confinement.root(),
            )
            .map_err(|problem| {
                AgentError::Failed(format!(
                    "could not start the agent of profile \"{}\": {problem}",
                    profile.id
                ))
            })?;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|error| {
            AgentError::Failed(format!(
                "could not start the agent of profile \"{}\" ({}): {error}",
                profile.id, profile.command
            ))
        })?;
        let process_id = child.id();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(AgentError::Failed(
                "the agent's standard streams are not available".to_owned(),
            ));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        tokio::spawn(keep_tail(stderr, tail.clone()));

        let (turns, turn_requests) = mpsc::unbounded_channel();
        let (ready_sender, ready) = oneshot::channel();
        let cancel = CancellationToken::new();
        let ended = Arc::new(Mutex::new(None));
        let driver = Driver {
            profile: profile.clone(),
            commands_enabled: place.commands_enabled,
            confinement,
            idle_timeout,
            cancel: cancel.clone(),
        };
        let ended_by_driver = ended.clone();
        let stop = cancel.clone();
        let tail_of_driver = tail.clone();
        tokio::spawn(async move {
            let tail = tail_of_driver;
            let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
            let connection = driver.run(transport, turn_requests, ready_sender);
            let outcome = tokio::select! {
                outcome = connection => outcome,
                status = child.wait() => Err(match status {
                    Ok(status) => format!("the agent exited ({status})"),
                    Err(error) => format!("the agent could not be watched: {error}"),
                }),
                // An agent that hangs (in initialize, or ignoring
                // session/cancel) is stopped once the grace has passed.
                () = async {
                    stop.cancelled().await;
                    tokio::time::sleep(CANCEL_GRACE + EXIT_GRACE).await;
                } => Ok(()),
            };
            // The transport is gone, so the agent's stdin is closed: give it
            // a moment to leave by itself, then stop it.
            if tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
            if let Err(reason) = outcome {
                let stderr = tail_text(&tail);
                let message = if stderr.is_empty() {
                    reason
                } else {
                    format!("{reason}; its last words on stderr:\n{stderr}")
                };
                if let Ok(mut ended) = ended_by_driver.lock() {
                    *ended = Some(message);
                }
            }
        });

        let agent_name = match tokio::time::timeout(START_TIMEOUT, ready).await {
            Ok(Ok(Ok(name))) => name,
            Ok(Ok(Err(message))) => {
                // Why it could not start is usually on its stderr.
                tokio::time::sleep(Duration::from_millis(200)).await;
                let stderr = tail_text(&tail);
                return Err(AgentError::Failed(if stderr.is_empty() {
                    message
                } else {
                    format!("{message}; its last words on stderr:\n{stderr}")
                }));
            }
            Ok(Err(_)) => {
                return Err(AgentError::Failed(
                    wait_for_reason(&ended)
                        .await
                        .unwrap_or_else(|| "the agent stopped while starting".to_owned()),
                ));
            }
            Err(_) => {
                cancel.cancel();
                return Err(AgentError::Failed(format!(
                    "the agent did not open a session within {} s",
                    START_TIMEOUT.as_secs()
                )));
            }
        };
        Ok(AgentSession {
            turns,
            cancel,
            ended,
            agent_name: if agent_name.is_empty() {
                profile.name.clone()
            } else {
                agent_name
            },
            process_id,
        })
    }

    /// Sends `text` as a new turn in the session and waits until the agent
    /// ends it, passing what streams out to `on_event`.
    pub async fn prompt(
        &self,
        text: &str,
        mut on_event: impl FnMut(TurnEvent),
    ) -> Result<TurnOutcome, AgentError> {
        let (events, mut event_receiver) = mpsc::unbounded_channel();
        let (done, mut done_receiver) = oneshot::channel();
        let request = TurnRequest {
            text: text.to_owned(),
            events,
            done,
        };
        if self.turns.send(request).is_err() {
            return Err(self.stopped().await);
        }
        loop {
            tokio::select! {
                Some(event) = event_receiver.recv() => on_event(event),
                result = &mut done_receiver => {
                    while let Ok(event) = event_receiver.try_recv() {
                        on_event(event);
                    }
                    return match result {
                        // A turn that fails because the agent died says why
                        // it died (its exit and stderr), not just that the
                        // connection closed.
                        Ok(Err(AgentError::Failed(message))) => Err(AgentError::Failed(
                            wait_for_reason(&self.ended).await.unwrap_or(message),
                        )),
                        Ok(outcome) => outcome,
                        Err(_) => Err(self.stopped().await),
                    };
                }
            }
        }
    }

    /// Whether the agent is still there to take a turn.
    pub fn is_open(&self) -> bool {
        !self.turns.is_closed()
    }

    async fn stopped(&self) -> AgentError {
        AgentError::Failed(
            wait_for_reason(&self.ended)
                .await
                .unwrap_or_else(|| "the agent stopped".to_owned()),
        )
    }
}

/// The driver records why the agent stopped just after the channels close.
async fn wait_for_reason(ended: &Mutex<Option<String>>) -> Option<String> {
    for _ in 0..50 {
        if let Some(reason) = ended.lock().ok().and_then(|ended| ended.clone()) {
            return Some(reason);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

async fn keep_tail(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<u8>>>) {
    let mut buffer = [0_u8; 2048];
    while let Ok(read) = stderr.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        let chunk = buffer.get(..read).unwrap_or_default();
        tracing::debug!(target: "coding::agent_stderr", "{}", String::from_utf8_lossy(chunk).trim_end());
        if let Ok(mut tail) = tail.lock() {
            tail.extend(chunk);
            let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
            tail.drain(..excess);
        }
    }
}

fn tail_text(tail: &Mutex<VecDeque<u8>>) -> String {
    tail.lock()
        .map(|tail| {
            let bytes: Vec<u8> = tail.iter().copied().collect();
            String::from_utf8_lossy(&bytes).trim().to_owned()
        })
        .unwrap_or_default()
}

struct Driver {
    profile: AcpProfile,
    commands_enabled: bool,
    confinement: Confinement,
    idle_timeout: Duration,
    cancel: CancellationToken,
}

/// Where the notes of the builder's handlers go: the turn in flight.
type NoteSink = Arc<Mutex<Option<mpsc::UnboundedSender<TurnEvent>>>>;

fn note(sink: &NoteSink, text: String) {
    if let Ok(sink) = sink.lock()
        && let Some(sender) = sink.as_ref()
    {
        let _ = sender.send(TurnEvent::Note(text));
    }
}

impl Driver {
    async fn run(
        self,
        transport: impl agent_client_protocol::ConnectTo<Client> + 'static,
        mut turn_requests: mpsc::UnboundedReceiver<TurnRequest>,
        ready: oneshot::Sender<Result<String, String>>,
    ) -> Result<(), String> {
        let sink: NoteSink = Arc::new(Mutex::new(None));
        let policy = self.profile.permissions;
        let commands_enabled = self.commands_enabled;
        let (permission_sink, read_sink, write_sink) = (sink.clone(), sink.clone(), sink.clone());
        let (permission_confinement, read_confinement, write_confinement) = (
            self.confinement.clone(),
            self.confinement.clone(),
            self.confinement.clone(),
        );
        let cancel = self.cancel.clone();
        let idle_timeout = self.idle_timeout;
        let mut ready = Some(ready);
        let result = Client
            .v1()
            .name("patchbay")
            .on_receive_request(
                async move |request: RequestPermissionRequest, responder, _connection| {
                    let (outcome, said) = decide_permission(
                        policy,
                        commands_enabled,
                        &request,
                        &permission_confinement,
                    );
                    note(&permission_sink, said);
                    responder.respond(RequestPermissionResponse::new(outcome))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: ReadTextFileRequest, responder, _connection| {
                    match read_confinement.read(&request.path).await {
                        Ok(text) => {
                            let text = slice_lines(&text, request.line, request.limit);
                            note(&read_sink, format!("read {}", request.path.display()));
                            responder.respond(ReadTextFileResponse::new(text))
                        }
                        // ACP's own code for a missing file, so an agent can tell
                        // "create it" from "cannot read it".
                        Err(FileProblem::NotFound(_)) => responder.respond_with_error(
                            agent_client_protocol::v1::schema::Error::resource_not_found(Some(
                                request.path.display().to_string(),
                            ))
                            .into(),
                        ),
                        Err(problem) => {
                            let reason = problem.to_string();
                            note(&read_sink, format!("refused to read: {reason}"));
                            responder.respond_with_error(
                                agent_client_protocol::Error::invalid_params()
                                    .data(Value::String(reason)),
                            )
                        }
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: WriteTextFileRequest, responder, _connection| {
                    match write_confinement
                        .write(&request.path, &request.content)
                        .await
                    {
                        Ok(()) => {
                            note(&write_sink, format!("wrote {}", request.path.display()));
                            responder.respond(WriteTextFileResponse::new())
                        }
                        Err(problem) => {
                            let reason = problem.to_string();
                            note(&write_sink, format!("refused to write: {reason}"));
                            responder.respond_with_error(
                                agent_client_protocol::Error::invalid_params()
                                    .data(Value::String(reason)),
                            )
                        }
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_with(transport, async |connection| {
                let initialize = connection
                    .send_request(
                        InitializeRequest::new(ProtocolVersion::V1)
                            .client_capabilities(
                                ClientCapabilities::new().fs(FileSystemCapabilities::new()
                                    .read_text_file(true)
                                    .write_text_file(true)),
                            )
                            .client_info(Implementation::new(
                                "patchbay",
                                env!("CARGO_PKG_VERSION"),
                            )),
                    )
                    .block_task()
                    .await;
                let initialize = match initialize {
                    Ok(initialize) => initialize,
                    Err(error) => {
                        if let Some(ready) = ready.take() {
                            let _ = ready.send(Err(format!("initialize failed: {error}")));
                        }
                        return Ok(());
                    }
                };
                let name = initialize
                    .agent_info
                    .map(|info| info.title.unwrap_or(info.name))
                    .unwrap_or_default();
                let setup = connection
                    .build_session(self.confinement.root())
                    .block_task()
                    .start_session()
                    .await;
                let SessionSetup { mut session, .. } = match setup {
                    Ok(setup) => setup,
                    Err(error) => {
                        if let Some(ready) = ready.take() {
                            let _ = ready.send(Err(format!("session/new failed: {error}")));
                        }
                        return Ok(());
                    }
                };
                if let Some(ready) = ready.take() {
                    let _ = ready.send(Ok(name));
                }
                loop {
                    let request = tokio::select! {
                        request = turn_requests.recv() => request,
                        () = tokio::time::sleep(idle_timeout) => None,
                        () = cancel.cancelled() => None,
                    };
                    let Some(request) = request else { break };
                    if let Ok(mut sink) = sink.lock() {
                        *sink = Some(request.events.clone());
                    }
                    let outcome = run_turn(&mut session, &request, &cancel).await;
                    if let Ok(mut sink) = sink.lock() {
                        *sink = None;
                    }
                    let stop = matches!(outcome, Err(AgentError::Cancelled));
                    let _ = request.done.send(outcome);
                    if stop {
                        break;
                    }
                }
                Ok(())
            })
            .await;
        result.map_err(|error| format!("the connection to the agent failed: {error}"))
    }
}

/// `line` is 1-based; `limit` counts lines.
fn slice_lines(text: &str, line: Option<u32>, limit: Option<u32>) -> String {
    if line.is_none() && limit.is_none() {
        return text.to_owned();
    }
    let skip = line.map_or(0, |line| line.saturating_sub(1) as usize);
    let take = limit.map_or(usize::MAX, |limit| limit as usize);
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

/// The profile's answer to a permission request, and a line saying it.
/// Executing something needs the operator's switch as well as the policy.
fn decide_permission(
    policy: PermissionPolicy,
    commands_enabled: bool,
    request: &RequestPermissionRequest,
    confinement: &Confinement,
) -> (RequestPermissionOutcome, String) {
    let fields = &request.tool_call.fields;
    let kind = fields.kind.unwrap_or_default();
    let title = fields
        .title
        .clone()
        .unwrap_or_else(|| "a tool call".to_owned());
    // The same test as the file methods: `..`, other folders and links out
    // of the workspace are all outside.
    let inside = fields.locations.as_ref().is_none_or(|locations| {
        locations
            .iter()
            .all(|location| confinement.resolve(&location.path).is_ok())
    });
    let operator_refuses = kind == ToolKind::Execute && !commands_enabled;
    let allowed = !operator_refuses
        && match policy {
            PermissionPolicy::RejectAll => false,
            PermissionPolicy::AllowAll => true,
            PermissionPolicy::WorkspaceEdits => {
                matches!(
                    kind,
                    ToolKind::Edit | ToolKind::Read | ToolKind::Search | ToolKind::Think
                ) && inside
            }
            PermissionPolicy::WorkspaceEditsAndCommands => {
                matches!(
                    kind,
                    ToolKind::Edit
                        | ToolKind::Read
                        | ToolKind::Search
                        | ToolKind::Think
                        | ToolKind::Execute
                ) && inside
            }
        };
    let wanted: &[PermissionOptionKind] = if allowed {
        &[
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ]
    } else {
        &[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    let option = wanted.iter().find_map(|wanted| {
        request
            .options
            .iter()
            .find(|option| option.kind == *wanted)
            .map(|option| option.option_id.clone())
    });
    let verdict = match (allowed, operator_refuses) {
        (true, _) => "allowed",
        (false, true) => "refused (this server does not run commands)",
        (false, false) => "refused",
    };
    match option {
        Some(option) => (
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option)),
            format!("permission {verdict}: {title}"),
        ),
        None => (
            RequestPermissionOutcome::Cancelled,
            format!("permission {verdict} (no matching option, so cancelled): {title}"),
        ),
    }
}

/// A tool call seen in this turn, kept until it finishes.
#[derive(Default)]
struct ToolCallSeen {
    title: String,
    kind: ToolKind,
    raw_input: Option<Value>,
}

async fn run_turn(
    session: &mut ActiveSession<'static, Agent>,
    request: &TurnRequest,
    cancel: &CancellationToken,
) -> Result<TurnOutcome, AgentError> {
    session
        .send_prompt_blocks(vec![ContentBlock::from(request.text.clone())])
        .map_err(|error| AgentError::Failed(format!("could not send the prompt: {error}")))?;
    let mut outcome = TurnOutcome::default();
    let mut tool_calls: HashMap<String, ToolCallSeen> = HashMap::new();
    let mut cancelled = false;
    loop {
        let message = if cancelled {
            match tokio::time::timeout(CANCEL_GRACE, session.read_update()).await {
                Ok(message) => message,
                Err(_) => return Err(AgentError::Cancelled),
            }
        } else {
            tokio::select! {
                message = session.read_update() => message,
                () = cancel.cancelled() => {
                    cancelled = true;
                    let _ = session.connection().send_notification_to(
                        Agent,
                        CancelNotification::new(session.session_id().clone()),
                    );
                    continue;
                }
            }
        };
        let message =
            message.map_err(|error| AgentError::Failed(format!("the session ended: {error}")))?;
        match message {
            SessionMessage::Message(dispatch) => {
                let handled = MatchDispatch::new(dispatch.into_raw())
                    .if_notification(async |notification: SessionNotification| {
                        take_update(
                            notification.update,
                            &mut outcome,
                            &mut tool_calls,
                            &request.events,
                        );
                        Ok(())
                    })
                    .await
                    .otherwise_ignore();
                if let Err(error) = handled {
                    tracing::warn!(%error, "skipped a malformed update from the agent");
                    let _ = request.events.send(TurnEvent::Note(format!(
                        "skipped a malformed update: {error}"
                    )));
                }
            }
            SessionMessage::PromptResponse(response) => {
                let response = response.map_err(|error| {
                    AgentError::Failed(format!("the agent refused the prompt: {error}"))
                })?;
                if cancelled || response.stop_reason == StopReason::Cancelled {
                    return Err(AgentError::Cancelled);
                }
                finish(&mut outcome, &response);
                return Ok(outcome);
            }
            _ => {}
        }
    }
}

fn finish(outcome: &mut TurnOutcome, response: &PromptResponse) {
    outcome.stop_reason = serde_json::to_value(response.stop_reason)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default();
    if let Some(usage) = &response.usage {
        outcome.tokens_in = usage.input_tokens;
        outcome.tokens_out = usage.output_tokens;
    } else if let Some(count) = response
        .meta
        .as_ref()
        .and_then(|meta| meta.get("quota"))
        .and_then(|quota| quota.get("token_count"))
    {
        // Gemini CLI reports its counts here.
        let number = |key: &str| count.get(key).and_then(Value::as_u64).unwrap_or(0);
        outcome.tokens_in = number("input_tokens").max(number("prompt_tokens"));
        outcome.tokens_out = number("output_tokens").max(number("candidates_tokens"));
    }
}

fn take_update(
    update: SessionUpdate,
    outcome: &mut TurnOutcome,
    tool_calls: &mut HashMap<String, ToolCallSeen>,
    events: &mpsc::UnboundedSender<TurnEvent>,
) {
    match update {
        SessionUpdate::AgentMessageChunk(ContentChunk {
            content: ContentBlock::Text(text),
            ..
        }) => {
            outcome.text.push_str(&text.text);
            let _ = events.send(TurnEvent::Text(text.text));
        }
        SessionUpdate::ToolCall(call) => {
            let id = call.tool_call_id.to_string();
            let _ = events.send(TurnEvent::Note(format!("tool: {}", call.title)));
            let seen = ToolCallSeen {
                title: call.title,
                kind: call.kind,
                raw_input: call.raw_input,
            };
            if matches!(
                call.status,
                ToolCallStatus::Completed | ToolCallStatus::Failed
            ) {
                record_test(&seen, call.status, call.raw_output.as_ref(), outcome);
            }
            tool_calls.insert(id, seen);
        }
        SessionUpdate::ToolCallUpdate(update) => {
            let id = update.tool_call_id.to_string();
            let seen = tool_calls.entry(id).or_default();
            let fields = update.fields;
            if let Some(title) = fields.title {
                seen.title = title;
            }
            if let Some(kind) = fields.kind {
                seen.kind = kind;
            }
            if fields.raw_input.is_some() {
                seen.raw_input = fields.raw_input;
            }
            if let Some(status @ (ToolCallStatus::Completed | ToolCallStatus::Failed)) =
                fields.status
            {
                let note = if status == ToolCallStatus::Completed {
                    format!("tool done: {}", seen.title)
                } else {
                    // Why it failed is what a person reading the transcript needs.
                    let reason = fields
                        .content
                        .iter()
                        .flatten()
                        .filter_map(|content| match content {
                            ToolCallContent::Content(Content {
                                content: ContentBlock::Text(text),
                                ..
                            }) => Some(text.text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join(" ");
                    if reason.is_empty() {
                        format!("tool failed: {}", seen.title)
                    } else {
                        format!("tool failed: {}: {reason}", seen.title)
                    }
                };
                let _ = events.send(TurnEvent::Note(note));
                record_test(seen, status, fields.raw_output.as_ref(), outcome);
            }
        }
        _ => {}
    }
}

/// The command line of an execute tool call, from its input or its title.
fn command_of(call: &ToolCallSeen) -> String {
    call.raw_input
        .as_ref()
        .and_then(|input| {
            input.get("command").and_then(|command| match command {
                Value::String(text) => Some(text.clone()),
                Value::Array(parts) => Some(
                    parts
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                _ => None,
            })
        })
        .unwrap_or_else(|| call.title.clone())
}

/// Commands that run a project's tests: `cargo test`, `npm test`, `pytest`,
/// `go test`, `make test`, `sh test.sh`, …
pub fn looks_like_tests(command: &str) -> bool {
    let lower = command.to_lowercase();
    [
        "test", "pytest", "jest", "vitest", "rspec", "phpunit", "ctest",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

fn record_test(
    call: &ToolCallSeen,
    status: ToolCallStatus,
    raw_output: Option<&Value>,
    outcome: &mut TurnOutcome,
) {
    if call.kind != ToolKind::Execute {
        return;
    }
    let command = command_of(call);
    if !looks_like_tests(&command) {
        return;
    }
    let exit_code = raw_output.and_then(|output| {
        ["exit_code", "exitCode", "code"]
            .iter()
            .find_map(|key| output.get(key).and_then(Value::as_i64))
    });
    let output = raw_output
        .and_then(|output| {
            ["output", "stdout", "formatted_output"]
                .iter()
                .find_map(|key| output.get(key).and_then(Value::as_str))
                .map(str::to_owned)
                .or_else(|| output.as_str().map(str::to_owned))
        })
        .unwrap_or_default();
    outcome.tests.push(TestRun {
        command,
        exit_code,
        passed: status == ToolCallStatus::Completed && exit_code.is_none_or(|code| code == 0),
        output,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        PermissionOption, ToolCallLocation, ToolCallUpdate, ToolCallUpdateFields,
    };

    /// Whether the default policy allows an edit of `path`.
    fn edit_allowed(confinement: &Confinement, path: &Path) -> bool {
        let request = RequestPermissionRequest::new(
            "s",
            ToolCallUpdate::new(
                "t",
                ToolCallUpdateFields::new()
                    .kind(ToolKind::Edit)
                    .title("Write".to_owned())
                    .locations(vec![ToolCallLocation::new(path)]),
            ),
            vec![
                PermissionOption::new("yes", "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new("no", "Reject", PermissionOptionKind::RejectOnce),
            ],
        );
        let (outcome, _) = decide_permission(
            PermissionPolicy::WorkspaceEdits,
            false,
            &request,
            confinement,
        );
        match outcome {
            RequestPermissionOutcome::Selected(selected) => selected.option_id.to_string() == "yes",
            _ => false,
        }
    }

    #[test]
    fn edits_are_allowed_inside_the_workspace_only_links_included() {
        let workspace = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), workspace.path().join("out")).unwrap();
        let confinement = Confinement::new(workspace.path()).unwrap();
        assert!(edit_allowed(&confinement, Path::new("src/main.rs")));
        assert!(edit_allowed(
            &confinement,
            &workspace.path().join("README.md")
        ));
        assert!(!edit_allowed(&confinement, Path::new("../x")));
        assert!(!edit_allowed(&confinement, &elsewhere.path().join("x")));
        // Lexically inside, really outside.
        assert!(!edit_allowed(&confinement, Path::new("out/x.txt")));
    }

    #[test]
    fn line_slices_follow_the_acp_meaning() {
        let text = "one\ntwo\nthree\n";
        assert_eq!(slice_lines(text, None, None), text);
        assert_eq!(slice_lines(text, Some(2), None), "two\nthree\n");
        assert_eq!(slice_lines(text, Some(1), Some(1)), "one\n");
    }

    #[test]
    fn test_commands_are_recognised() {
        assert!(looks_like_tests("cargo test --quiet"));
        assert!(looks_like_tests("sh test.sh"));
        assert!(looks_like_tests("pytest -q"));
        assert!(!looks_like_tests("ls -la"));
    }
}
