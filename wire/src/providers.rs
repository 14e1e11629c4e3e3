//! `GET /api/providers`: what a module may name — the chat providers and
//! their models, the coding agents' profiles — and what the operator allows
//! graphs. Never a secret.

use serde::{Deserialize, Serialize};

/// A chat provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderInfo {
    pub id: String,
    pub label: String,
    pub models: Vec<String>,
    /// The built-in simulated provider, always labelled as such.
    pub simulated: bool,
}

/// A coding agent's profile (an ACP agent the operator configured).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AcpProfileInfo {
    pub id: String,
    pub name: String,
    pub simulated: bool,
}

/// Everything `GET /api/providers` says.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalogue {
    pub providers: Vec<ProviderInfo>,
    pub acp_profiles: Vec<AcpProfileInfo>,
    /// The folders a coding module's `workspace.path` may name.
    pub workspace_roots: Vec<String>,
    /// Whether the server runs commands (`--enable-commands`).
    pub commands_enabled: bool,
}
