//! The driver: the task that holds the ACP connection to the agent. It
//! answers the agent's requests with the handlers, initializes the
//! connection, opens the session (or loads the one it is to continue),
//! then runs the turns it is handed one
//! after another until the session is idle too long, cancelled or dropped.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, FileSystemCapabilities, Implementation, InitializeRequest,
    LoadSessionRequest, McpServer, NewSessionRequest, ReadTextFileRequest,
    RequestPermissionRequest, SessionConfigOptionValue, SessionId, SetSessionConfigOptionRequest,
    SetSessionModeRequest, WriteTextFileRequest,
};
use agent_client_protocol::v1::{ActiveSession, ConnectionTo, SessionSetup};
use agent_client_protocol::{Agent, Client};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::AgentError;
use super::choices::{self, ChoiceRequests, SessionChoices};
use super::continuation::{Continuation, read_replay};
use super::handlers::{NoteSink, answer_permission, read_text_file, write_text_file};
use super::turn::{TurnRequest, run_turn};
use crate::confine::Confinement;
use crate::profile::AcpProfile;

/// A session opened and ready for turns.
pub(super) struct Opened {
    /// The agent's name as it introduced itself.
    pub(super) agent_name: String,
    pub(super) session_id: String,
    pub(super) continuation: Continuation,
    pub(super) offers: wire::providers::AgentOffers,
}

pub(super) struct Driver {
    pub(super) profile: AcpProfile,
    pub(super) commands_enabled: bool,
    pub(super) confinement: Confinement,
    pub(super) idle_timeout: Duration,
    pub(super) cancel: CancellationToken,
    /// The model and mode the assignment asks the session for.
    pub(super) choices: SessionChoices,
    /// The MCP servers a new session is given, as ACP declares them.
    pub(super) tool_servers: Vec<serde_json::Value>,
}

impl Driver {
    pub(super) async fn run(
        self,
        transport: impl agent_client_protocol::ConnectTo<Client> + 'static,
        mut turn_requests: mpsc::UnboundedReceiver<TurnRequest>,
        ready: oneshot::Sender<Result<Opened, String>>,
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
        let wanted = self.choices.clone();
        let result = Client
            .v1()
            .name("patchbay")
            .on_receive_request(
                async move |request: RequestPermissionRequest, responder, _connection| {
                    answer_permission(
                        request,
                        responder,
                        policy,
                        commands_enabled,
                        &permission_confinement,
                        &permission_sink,
                    )
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: ReadTextFileRequest, responder, _connection| {
                    read_text_file(request, responder, &read_confinement, &read_sink).await
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: WriteTextFileRequest, responder, _connection| {
                    write_text_file(request, responder, &write_confinement, &write_sink).await
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_with(transport, async |connection| {
                let initialize = connection
                    .send_request(initialize_request())
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
                // The session asked for, when the agent can load it; else a
                // new one, with the reason kept for the transcript.
                let (loaded, continuation) = match &wanted.continue_session {
                    Some(id) => {
                        take_up(
                            &connection,
                            id,
                            self.confinement.seen_root(),
                            initialize.agent_capabilities.load_session,
                            declared(&self.tool_servers),
                        )
                        .await
                    }
                    None => (None, Continuation::New),
                };
                let (mut session, session_id, offered) = match loaded {
                    Some(loaded) => loaded,
                    None => {
                        let request = NewSessionRequest::new(self.confinement.seen_root())
                            .mcp_servers(declared(&self.tool_servers));
                        let setup = connection
                            .build_session_from(request)
                            .block_task()
                            .start_session()
                            .await;
                        match setup {
                            Ok(SessionSetup {
                                session, response, ..
                            }) => {
                                let offered = serde_json::to_value(&response).unwrap_or_default();
                                (session, response.session_id, offered)
                            }
                            Err(error) => {
                                // Why no session could be loaded first, too.
                                let before = match &continuation {
                                    Continuation::NotLoaded(reason) => format!("{reason}; then "),
                                    _ => String::new(),
                                };
                                if let Some(ready) = ready.take() {
                                    let _ = ready
                                        .send(Err(format!("{before}session/new failed: {error}")));
                                }
                                return Ok(());
                            }
                        }
                    }
                };
                let offers = choices::offers(&offered, initialize.agent_capabilities.load_session);
                let chosen = match choices::requests(&wanted, &offered) {
                    Ok(chosen) => chosen,
                    Err(message) => {
                        if let Some(ready) = ready.take() {
                            let _ = ready.send(Err(message));
                        }
                        return Ok(());
                    }
                };
                if let Err(message) = apply_choices(&connection, &session_id, chosen).await {
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(Err(message));
                    }
                    return Ok(());
                }
                if let Some(ready) = ready.take() {
                    let _ = ready.send(Ok(Opened {
                        agent_name: name,
                        session_id: session_id.to_string(),
                        continuation,
                        offers,
                    }));
                }
                serve_turns(
                    &mut session,
                    &mut turn_requests,
                    &sink,
                    &cancel,
                    idle_timeout,
                )
                .await;
                Ok(())
            })
            .await;
        result.map_err(|error| format!("the connection to the agent failed: {error}"))
    }
}

/// What the client tells the agent it is and can do: read and write text
/// files (through the confined handlers).
fn initialize_request() -> InitializeRequest {
    InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(
            ClientCapabilities::new().fs(FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(true)),
        )
        .client_info(Implementation::new("patchbay", env!("CARGO_PKG_VERSION")))
}

/// Sets the mode and the model option the assignment asked for, as the
/// agent offered them; why not, when it refuses.
async fn apply_choices(
    connection: &ConnectionTo<Agent>,
    session_id: &SessionId,
    chosen: ChoiceRequests,
) -> Result<(), String> {
    if let Some(mode) = chosen.mode {
        connection
            .send_request(SetSessionModeRequest::new(session_id.clone(), mode.clone()))
            .block_task()
            .await
            .map_err(|error| format!("session/set_mode \"{mode}\" failed: {error}"))?;
    }
    if let Some((option, value)) = chosen.option {
        connection
            .send_request(SetSessionConfigOptionRequest::new(
                session_id.clone(),
                option.clone(),
                SessionConfigOptionValue::value_id(value.clone()),
            ))
            .block_task()
            .await
            .map_err(|error| {
                format!("session/set_config_option {option} = \"{value}\" failed: {error}")
            })?;
    }
    Ok(())
}

/// Runs the turns handed over, one after another, until none comes for
/// `idle_timeout`, the session is cancelled, or a turn is.
async fn serve_turns(
    session: &mut ActiveSession<'static, Agent>,
    turn_requests: &mut mpsc::UnboundedReceiver<TurnRequest>,
    sink: &NoteSink,
    cancel: &CancellationToken,
    idle_timeout: Duration,
) {
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
        let outcome = run_turn(session, &request, cancel).await;
        if let Ok(mut sink) = sink.lock() {
            *sink = None;
        }
        let stop = matches!(outcome, Err(AgentError::Cancelled));
        let _ = request.done.send(outcome);
        if stop {
            break;
        }
    }
}

/// A session a module's agent opened before, loaded to be continued in
/// `cwd` (its replay read and counted), or why it could not be.
async fn take_up(
    connection: &ConnectionTo<Agent>,
    id: &str,
    cwd: &std::path::Path,
    agent_can_load: bool,
    tool_servers: Vec<McpServer>,
) -> (
    Option<(ActiveSession<'static, Agent>, SessionId, serde_json::Value)>,
    Continuation,
) {
    if !agent_can_load {
        return (
            None,
            Continuation::NotLoaded(
                "the agent does not offer to load a session (ACP loadSession)".to_owned(),
            ),
        );
    }
    // A session taken up is given the servers a new one would be.
    let request = LoadSessionRequest::new(id.to_owned(), cwd).mcp_servers(tool_servers);
    let setup = connection
        .load_session_from(request)
        .block_task()
        .start_session()
        .await;
    match setup {
        Ok(SessionSetup {
            mut session,
            response,
            ..
        }) => {
            let earlier_turns = read_replay(&mut session).await;
            let offered = serde_json::to_value(&response).unwrap_or_default();
            (
                Some((session, SessionId::new(id.to_owned()), offered)),
                Continuation::Loaded { earlier_turns },
            )
        }
        Err(error) => (
            None,
            Continuation::NotLoaded(format!("the agent could not load session {id} ({error})")),
        ),
    }
}

/// The MCP servers a session is given, as ACP types them (each was
/// written as ACP declares a stdio server, `engine::tools`).
fn declared(tool_servers: &[serde_json::Value]) -> Vec<McpServer> {
    tool_servers
        .iter()
        .filter_map(|declared| serde_json::from_value(declared.clone()).ok())
        .collect()
}
