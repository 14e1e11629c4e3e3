//! `GET /api/providers`: what a module may name — the chat providers and
//! their models, the coding agents' profiles — and what the operator allows
//! graphs. Never a secret.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::cost::Price;

/// A chat provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderInfo {
    pub id: String,
    pub label: String,
    pub models: Vec<String>,
    /// The built-in simulated provider, always labelled as such.
    pub simulated: bool,
    /// Each model's price, as the operator configured it; a model not
    /// here has no price (and its calls no cost).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prices: BTreeMap<String, Price>,
}

impl ProviderInfo {
    /// What `model` costs: nothing on the simulated provider, else the
    /// configured price, if there is one.
    pub fn price(&self, model: &str) -> Option<Price> {
        if self.simulated {
            Some(Price::FREE)
        } else {
            self.prices.get(model).copied()
        }
    }
}

/// A coding agent's profile (an ACP agent the operator configured).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AcpProfileInfo {
    pub id: String,
    pub name: String,
    pub simulated: bool,
    /// The session modes the operator lets graphs choose for it.
    #[serde(default)]
    pub modes: Vec<String>,
    /// What the agent offers, as it said when a session of it last opened
    /// on this server; `null` until one has.
    #[serde(default)]
    pub offers: Option<AgentOffers>,
}

/// What an ACP agent offers a session: the models of its model option,
/// its session modes (all of them, whether or not the operator allows
/// them), and whether it can take up an earlier session (`session/load`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentOffers {
    pub models: Vec<String>,
    pub modes: Vec<String>,
    pub load_session: bool,
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
    /// Whether it can confine the processes graphs start (coding agents,
    /// commands); `None` from a server that does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_available: Option<bool>,
    /// The webhooks approvals may notify (the operator's list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<String>,
}
