//! ACP profiles: how to start a coding agent (`{id, name, command, args,
//! env}` from the server configuration), what of the host it may reach
//! besides its workspace (its own install read-only, the network), and how
//! to answer its permission requests. The built-in simulated agent is a
//! profile like any other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// The agent's environment (e.g. `ANTHROPIC_BASE_URL`); it starts from
    /// an empty one. `HOME` and `TMPDIR` are always its run's own.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of the server's environment passed on as they are (the
    /// vendor's key, say), so that the key need not be written here. Keys
    /// never belong in a graph.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Files and folders the agent may read besides the system's programs:
    /// its own install (a `node_modules` folder, a Python environment).
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// Whether the agent keeps the host's network, to call its vendor's API.
    #[serde(default = "network_by_default")]
    pub network: bool,
    #[serde(default)]
    pub permissions: PermissionPolicy,
    /// The session modes a graph may choose for this agent (ACP
    /// `session/set_mode`, a coding agent's `acp_mode`). A mode can change
    /// what the agent does without asking — some agents have one that skips
    /// permission requests, and with them this profile's `permissions` and
    /// the operator's `--enable-commands` — so modes are the operator's to
    /// allow: none by default.
    #[serde(default)]
    pub modes: Vec<String>,
    /// Shown as "Simulated" wherever the profile is listed.
    #[serde(default)]
    pub simulated: bool,
}

fn network_by_default() -> bool {
    true
}

impl AcpProfile {
    /// The built-in simulated agent: `<patchbay> sim-agent`, speaking ACP
    /// over stdio, offline. Like every profile it may edit its workspace
    /// and nothing else: running the tests it is asked to run needs the
    /// operator's `--enable-commands` and a configured policy that allows
    /// commands (`permissions` of an `[[acp_profiles]]` with its id).
    pub fn simulated(patchbay: &Path) -> AcpProfile {
        AcpProfile {
            id: SIMULATED_PROFILE_ID.to_owned(),
            name: "Simulated agent".to_owned(),
            command: patchbay.display().to_string(),
            args: vec!["sim-agent".to_owned()],
            env: BTreeMap::new(),
            pass_env: Vec::new(),
            read_only: Vec::new(),
            network: false,
            permissions: PermissionPolicy::WorkspaceEdits,
            // What it offers; neither changes what it may do.
            modes: vec!["code".to_owned(), "ask".to_owned()],
            simulated: true,
        }
    }
}
