//! Where each agent's session comes from: a session parked by an earlier
//! activation of the module when it parks them, else a new agent started
//! in the workspace — in a new session, or, for an agent set to continue
//! its input's session, the upstream coding module's taken up with
//! `session/load` (DOC23 §7.1); and where it goes when the agent is done:
//! parked or closed, and, for the agent that holds the module's session,
//! named for the modules downstream.

use engine::activation::ActivationError;
use engine::session::AgentSessionReference;
use graph::config::SessionStyle;
use wire::activation::TranscriptRole;

use super::turns::{Work, role_of};
use crate::CodingModules;
use crate::client::{AgentSession, Continuation, Place, SessionChoices};
use crate::profile::AcpProfile;
use crate::workspace::Workspace;

impl CodingModules {
    /// The `patchbay` program, which serves the simulated agent and the
    /// built-in tools (`patchbay tools`).
    fn patchbay_program(&self) -> std::path::PathBuf {
        self.profiles
            .iter()
            .find(|profile| profile.id == crate::profile::SIMULATED_PROFILE_ID)
            .map(|profile| std::path::PathBuf::from(&profile.command))
            .or_else(|| std::env::current_exe().ok())
            .unwrap_or_else(|| std::path::PathBuf::from("patchbay"))
    }

    /// The agent's session: a parked one from an earlier activation when the
    /// module parks its sessions, else a new one.
    pub(super) async fn session(
        &self,
        work: &Work<'_>,
        index: usize,
        profile: &AcpProfile,
        workspace: &Workspace,
    ) -> Result<std::sync::Arc<AgentSession>, ActivationError> {
        let key = format!(
            "{}/{}/{index}",
            work.context.run_id,
            work.context.own_name()
        );
        // A parked session goes on first: it already holds what it was
        // given before, an upstream session it continued included.
        if work.config.session_style == SessionStyle::Park
            && let Some(session) = self
                .parked
                .lock()
                .ok()
                .and_then(|mut parked| parked.remove(&key))
            && session.is_open()
        {
            return Ok(session);
        }
        let mut choices = choices(work, index);
        let upstream = self.upstream_session(work, index, profile);
        choices.continue_session = upstream
            .as_ref()
            .map(|(_, reference)| reference.session_id.clone());
        let role_and_name = || format!("{} ({})", role_of_index(work, index), profile.name);
        choices.allowed_by(profile).map_err(|refusal| {
            ActivationError::Failed(format!("{}: {refusal}", role_and_name()))
        })?;
        let settings = &work.context.settings;
        let sandbox = settings
            .sandbox
            .as_ref()
            .map_err(|unavailable| ActivationError::Failed(unavailable.to_string()))?;
        let tool_servers =
            tool_servers(work, index, &self.patchbay_program()).map_err(|refusal| {
                ActivationError::Failed(format!("{}: {refusal}", role_and_name()))
            })?;
        let session = AgentSession::start(
            profile,
            &Place {
                sandbox,
                folder: &settings.run_folder(&work.context.run_id),
                workspace: &workspace.path,
                // Where the session it continues was opened, if it was
                // elsewhere: there the agent can load it.
                shown_at: upstream
                    .as_ref()
                    .and_then(|(_, reference)| reference.folder.as_deref())
                    .filter(|folder| *folder != workspace.path),
                commands_enabled: settings.commands_enabled,
                tool_servers,
            },
            self.idle_timeout,
            choices,
        )
        .await
        .map_err(|error| ActivationError::Failed(format!("{}: {error}", role_and_name())))?;
        if let Ok(mut offers) = self.offers.lock() {
            offers.insert(profile.id.clone(), session.offers.clone());
        }
        if let Some((key, reference)) = &upstream {
            let role = role_of_index(work, index);
            let note = match &session.continuation {
                Continuation::Loaded { earlier_turns } => {
                    if reference.holds_whole_output
                        && let Ok(mut continued) = work.continued.lock()
                    {
                        *continued = Some((index, key.clone()));
                    }
                    format!(
                        "[{role}] continues the session of {} (ACP session {}, {earlier_turns} earlier turns)",
                        reference.held_by, session.session_id
                    )
                }
                Continuation::NotLoaded(reason) => format!(
                    "[{role}] could not continue the session of {}: {reason}; it works in a new session",
                    reference.held_by
                ),
                Continuation::New => String::new(),
            };
            if !note.is_empty() {
                work.context.transcript(TranscriptRole::System, &note);
            }
        }
        Ok(std::sync::Arc::new(session))
    }

    /// The upstream coding agent's session agent `index` takes up, with the
    /// key its input named it by, when it is set to continue one and can;
    /// when it cannot, the transcript says why and it starts a new session.
    fn upstream_session(
        &self,
        work: &Work<'_>,
        index: usize,
        profile: &AcpProfile,
    ) -> Option<(String, AgentSessionReference)> {
        let agent = work.config.agents.get(index)?;
        if agent.session_mode.is_new() {
            return None;
        }
        let context = work.context;
        let found = context
            .bundles_on(graph::ports::DATA_IN)
            .into_iter()
            .chain(context.bundles_on(graph::ports::CONTEXT_IN))
            .filter_map(|(_, bundle)| {
                let key = bundle.source_session_key?;
                let reference = context.sessions.agent_session(&key)?;
                Some((key, reference))
            })
            .collect::<Vec<_>>();
        let same_agent = found
            .iter()
            .find(|(_, reference)| reference.profile_id == profile.id);
        let refusal = if let Some(refusal) = work.config.continue_refusal(index) {
            refusal.to_owned()
        } else if let Some((key, reference)) = same_agent {
            // Taking it up continues it: one module (or variant) only.
            match context
                .sessions
                .take_agent_session(key, &context.own_name())
            {
                Ok(()) => return Some((key.clone(), reference.clone())),
                Err(taker) => format!(
                    "the session of {} was taken up by \"{taker}\" first, and continuing it here would write into that conversation",
                    reference.held_by
                ),
            }
        } else if let Some((_, other)) = found.first() {
            format!(
                "the session of {} is held by another agent (profile \"{}\", not \"{}\")",
                other.held_by, other.profile_id, profile.id
            )
        } else {
            "nothing on its inputs hands on a coding agent's session (a coding module with parallel agents, or a module of another kind, hands on none)".to_owned()
        };
        context.transcript(
            TranscriptRole::System,
            &format!(
                "[{}] cannot continue its input's session: {refusal}; it works in a new session",
                role_of(agent)
            ),
        );
        None
    }

    pub(super) fn release(
        &self,
        work: &Work<'_>,
        index: usize,
        session: std::sync::Arc<AgentSession>,
    ) {
        if work.config.session_holder() == Some(index)
            && let Ok(mut handed_on) = work.handed_on.lock()
        {
            *handed_on = Some(AgentSessionReference {
                profile_id: session.profile_id.clone(),
                session_id: session.session_id.clone(),
                held_by: format!(
                    "\"{}\" ({})",
                    work.context.module.display_label(),
                    role_of_index(work, index)
                ),
                holds_whole_output: work.config.agents.len() == 1,
                folder: Some(session.folder.clone()),
            });
        }
        if work.config.session_style == SessionStyle::Park
            && let Ok(mut parked) = self.parked.lock()
        {
            parked.insert(
                format!(
                    "{}/{}/{index}",
                    work.context.run_id,
                    work.context.own_name()
                ),
                session,
            );
        }
        // Otherwise dropping the last handle closes the session and stops the agent.
    }
}

/// The model and ACP mode agent `index`'s assignment asks its session for.
fn choices(work: &Work<'_>, index: usize) -> SessionChoices {
    let assignment = work.config.agents.get(index);
    let given = |value: Option<&String>| {
        value
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
    };
    SessionChoices {
        model: given(assignment.map(|agent| &agent.agent_config.model)),
        mode: given(assignment.and_then(|agent| agent.acp_mode.as_ref())),
        continue_session: None,
    }
}

/// The MCP servers agent `index` is given (PRODUCT §3.17), as its ACP
/// session declares them, with what they must read; a server the
/// operator no longer has, or may not give an agent, is refused in
/// validation's words.
fn tool_servers(
    work: &Work<'_>,
    index: usize,
    binary: &std::path::Path,
) -> Result<crate::client::ToolServers, String> {
    let mut given = crate::client::ToolServers::default();
    let Some(agent) = work.config.agents.get(index) else {
        return Ok(given);
    };
    if agent.mcp_servers.is_empty() {
        return Ok(given);
    }
    let servers = work.context.tools.servers();
    let name = work.context.module.display_label();
    for id in &agent.mcp_servers {
        let Some(server) = servers.server(id) else {
            return Err(
                graph::tools::ToolProblem::UnknownServer { server: id.clone() }.message(name),
            );
        };
        let Some((declared, reads)) = server.for_agent(binary) else {
            let why = server.not_for_agents().unwrap_or_default().to_owned();
            return Err(graph::tools::ToolProblem::NotForAgents {
                server: id.clone(),
                why,
            }
            .message(name));
        };
        given.declared.push(declared);
        given.read_only.extend(reads);
    }
    given.read_only.push(binary.to_path_buf());
    Ok(given)
}

fn role_of_index(work: &Work<'_>, index: usize) -> String {
    work.config
        .agents
        .get(index)
        .map(role_of)
        .unwrap_or_default()
}
