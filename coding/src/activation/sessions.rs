//! Where each agent's session comes from: a session parked by an earlier
//! activation of the module when it parks them, else a new agent started
//! in the workspace; and where it goes when the agent is done.

use engine::activation::ActivationError;
use graph::config::SessionStyle;

use super::turns::{Work, role_of};
use crate::CodingModules;
use crate::client::{AgentSession, Place, SessionChoices};
use crate::profile::AcpProfile;
use crate::workspace::Workspace;

impl CodingModules {
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
        let choices = choices(work, index);
        let role_and_name = || {
            let role = work
                .config
                .agents
                .get(index)
                .map(role_of)
                .unwrap_or_default();
            format!("{role} ({})", profile.name)
        };
        choices
            .allowed_by(profile)
            .map_err(|refusal| ActivationError(format!("{}: {refusal}", role_and_name())))?;
        let settings = &work.context.settings;
        let sandbox = settings
            .sandbox
            .as_ref()
            .map_err(|unavailable| ActivationError(unavailable.to_string()))?;
        let session = AgentSession::start(
            profile,
            &Place {
                sandbox,
                folder: &settings.run_folder(&work.context.run_id),
                workspace: &workspace.path,
                commands_enabled: settings.commands_enabled,
            },
            self.idle_timeout,
            choices,
        )
        .await
        .map_err(|error| ActivationError(format!("{}: {error}", role_and_name())))?;
        Ok(std::sync::Arc::new(session))
    }

    pub(super) fn release(
        &self,
        work: &Work<'_>,
        index: usize,
        session: std::sync::Arc<AgentSession>,
    ) {
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
    }
}
