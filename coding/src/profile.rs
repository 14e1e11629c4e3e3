//! ACP profiles: how to start a coding agent (`{id, name, command, args,
//! env}` from the server configuration) and how to answer its permission
//! requests. The built-in simulated agent is a profile like any other.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The id of the built-in simulated agent's profile.
pub const SIMULATED_PROFILE_ID: &str = "sim-agent";

/// How the agent's permission requests are answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionPolicy {
    /// Reading and editing files inside the workspace; everything else,
    /// commands included, is refused.
    #[default]
    WorkspaceEdits,
    /// As above, and running commands in the workspace.
    WorkspaceEditsAndCommands,
    AllowAll,
    RejectAll,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcpProfile {
    pub id: String,
    pub name: String,
    /// The program; found on PATH when not a path.
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment of the agent (e.g. `ANTHROPIC_BASE_URL`). Keys for
    /// the agent's vendor belong here or in the server's environment, never
    /// in a graph.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub permissions: PermissionPolicy,
    /// Shown as "Simulated" wherever the profile is listed.
    #[serde(default)]
    pub simulated: bool,
}

impl AcpProfile {
    /// The built-in simulated agent: `<patchbay> sim-agent`, speaking ACP
    /// over stdio. It runs the workspace's tests when asked, so commands are
    /// allowed for it.
    pub fn simulated(patchbay: &Path) -> AcpProfile {
        AcpProfile {
            id: SIMULATED_PROFILE_ID.to_owned(),
            name: "Simulated agent".to_owned(),
            command: patchbay.display().to_string(),
            args: vec!["sim-agent".to_owned()],
            env: BTreeMap::new(),
            permissions: PermissionPolicy::WorkspaceEditsAndCommands,
            simulated: true,
        }
    }
}
