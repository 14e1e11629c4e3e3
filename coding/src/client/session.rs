//! The agent's process and the session it holds: the agent started
//! confined in its workspace, its session opened, each turn handed to the
//! driver and waited for, and the process stopped when the session is
//! dropped or the agent dies, with its last words on stderr kept to say why.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::ByteStreams;
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};
use tokio_util::sync::CancellationToken;

use engine::sandbox::{Reach, RunFolder, Sandbox};

use super::AgentError;
use super::choices::SessionChoices;
use super::continuation::Continuation;
use super::driver::Driver;
use super::turn::{CANCEL_GRACE, TurnEvent, TurnOutcome, TurnRequest};
use crate::confine::Confinement;
use crate::profile::AcpProfile;

/// How much of the agent's stderr is kept to explain a crash.
const STDERR_TAIL_BYTES: usize = 4000;
/// How long a stopping agent may take to exit on its own.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long starting (initialize, session/new) may take.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running agent with its session open, ready for turns.
pub struct AgentSession {
    turns: mpsc::UnboundedSender<TurnRequest>,
    cancel: CancellationToken,
    /// The driver's last word: why the agent stopped, when it did.
    ended: Arc<Mutex<Option<String>>>,
    /// The agent's name as it introduced itself.
    pub agent_name: String,
    pub process_id: Option<u32>,
    /// The profile whose agent it is, and the ACP session's id: what a
    /// downstream module needs to continue it.
    pub profile_id: String,
    pub session_id: String,
    /// Whether it is the session it was asked to continue.
    pub continuation: Continuation,
    /// The folder it works in, as it sees it.
    pub folder: PathBuf,
    /// What the agent offered when the session opened.
    pub offers: wire::providers::AgentOffers,
    /// The session's cost as last reported, so that each turn's is what
    /// it added.
    reported_cost: Mutex<Option<f64>>,
}

impl AgentSession {
    /// What a turn that ended with the session at `session_cost` cost:
    /// `None` when the agent does not report cost.
    pub fn turn_cost(&self, session_cost: Option<f64>) -> Option<f64> {
        let now = session_cost?;
        let mut reported = self.reported_cost.lock().ok()?;
        let before = reported.replace(now).unwrap_or(0.0);
        Some((now - before).max(0.0))
    }
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
    /// Where the agent sees the workspace, when not at its own path: a copy
    /// of an upstream's workspace at the upstream's path, so that an agent
    /// that keys its sessions by folder can load the session it continues.
    pub shown_at: Option<&'a Path>,
    /// The operator's switch: without it, no request to execute something
    /// is allowed, whatever the profile says.
    pub commands_enabled: bool,
    /// The MCP servers its session is given.
    pub tool_servers: ToolServers,
}

/// MCP servers an agent's session is given (`session/new` `mcpServers`,
/// PRODUCT §3.17): the agent starts each inside its own confinement,
/// which lets it read what they need.
#[derive(Clone, Debug, Default)]
pub struct ToolServers {
    /// As ACP declares a stdio server: `{ name, command, args, env }`.
    pub declared: Vec<serde_json::Value>,
    /// What the servers read: their install, the binary of the built-in.
    pub read_only: Vec<std::path::PathBuf>,
}

impl AgentSession {
    /// Starts the profile's agent in the place's workspace, confined, and
    /// opens a session there. A parked session stays open between turns for
    /// `idle_timeout` at most.
    pub async fn start(
        profile: &AcpProfile,
        place: &Place<'_>,
        idle_timeout: Duration,
        choices: SessionChoices,
    ) -> Result<AgentSession, AgentError> {
        let (mut command, confinement) = sandboxed_command(profile, place).await?;
        let mut child = command.piped().spawn().map_err(|error| {
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
        let folder = confinement.seen_root().to_path_buf();
        let driver = Driver {
            profile: profile.clone(),
            commands_enabled: place.commands_enabled,
            confinement,
            idle_timeout,
            cancel: cancel.clone(),
            choices,
            tool_servers: place.tool_servers.declared.clone(),
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

        let opened = match tokio::time::timeout(START_TIMEOUT, ready).await {
            Ok(Ok(Ok(opened))) => opened,
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
            reported_cost: Mutex::new(None),
            agent_name: if opened.agent_name.is_empty() {
                profile.name.clone()
            } else {
                opened.agent_name
            },
            process_id,
            profile_id: profile.id.clone(),
            session_id: opened.session_id,
            continuation: opened.continuation,
            offers: opened.offers,
            folder,
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

/// The agent's command, confined: it may write its workspace (shown at
/// `place.shown_at` when set, where the confinement takes that path too),
/// read its install, reach the network only if the profile says so, and
/// gets the profile's environment.
async fn sandboxed_command(
    profile: &AcpProfile,
    place: &Place<'_>,
) -> Result<(engine::sandbox::ConfinedCommand, Confinement), AgentError> {
    let mut confinement = Confinement::new(place.workspace)
        .map_err(|refusal| AgentError::Failed(format!("workspace: {refusal}")))?;
    place
        .folder
        .prepare()
        .await
        .map_err(|error| AgentError::Failed(format!("cannot make the run's folder: {error}")))?;
    let mut read_only = profile.read_only.clone();
    read_only.extend(place.tool_servers.read_only.iter().cloned());
    let mut reach = Reach {
        read_only,
        network: profile.network,
        ..Reach::default()
    };
    match place.shown_at {
        Some(seen) => {
            reach
                .writable_shown_at
                .push((confinement.root().to_path_buf(), seen.to_path_buf()));
            confinement = confinement.shown_at(seen);
        }
        None => reach.writable.push(confinement.root().to_path_buf()),
    }
    let mut environment = profile.env.clone();
    for name in &profile.pass_env {
        if let Ok(value) = std::env::var(name) {
            environment.insert(name.clone(), value);
        }
    }
    let command = place
        .sandbox
        .command(
            place.folder,
            &reach,
            &profile.command,
            &profile.args,
            &environment,
            confinement.seen_root(),
        )
        .map_err(|problem| {
            AgentError::Failed(format!(
                "could not start the agent of profile \"{}\": {problem}",
                profile.id
            ))
        })?;
    Ok((command, confinement))
}
