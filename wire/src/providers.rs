//! `GET /api/providers`: what a module may name — the chat providers and
//! their models, the coding agents' profiles — and what the operator allows
//! graphs. Never a secret.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::cost::Price;

/// A chat provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// Whether its models can call tools (the operator's `tools = false`
    /// says they cannot).
    #[serde(default = "calls_tools", skip_serializing_if = "is_true")]
    pub tool_calling: bool,
}

fn calls_tools() -> bool {
    true
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
fn is_true(value: &bool) -> bool {
    *value
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AgentOffers {
    pub models: Vec<String>,
    pub modes: Vec<String>,
    pub load_session: bool,
}

/// An MCP server the operator configured, with its tools (PRODUCT
/// §3.17): never its command line, environment, headers or paths.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolServerInfo {
    pub id: String,
    pub name: String,
    /// `built_in` (in the server itself), `stdio` or `http`.
    pub transport: String,
    /// Whether its tools' annotations are believed (the operator's
    /// `trusted`; the built-in server's always are).
    #[serde(default)]
    pub trusted: bool,
    /// Whether its calls wait for a person, the operator's word: `ask`,
    /// `auto` or `by_annotation`.
    #[serde(default)]
    pub approval: graph::tool_approval::ToolApproval,
    pub tools: Vec<ToolInfo>,
    /// Why it cannot be given to a coding agent (PRODUCT §3.17), when it
    /// cannot: its configuration holds values the agent would see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_for_agents: Option<String>,
    /// Why its tools could not be listed, when they could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// One tool of an MCP server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolInfo {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub input_schema: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    #[serde(default)]
    pub annotations: ToolHints,
}

/// What a tool says of itself (MCP's annotations): hints the server gives,
/// shown as they are. A resumed run reads `read_only` to decide whether a
/// call in flight may be made again (PRODUCT §3.17).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolHints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolServerInfo {
    /// What validation knows of it.
    pub fn spec(&self) -> graph::tools::ServerSpec {
        graph::tools::ServerSpec {
            tools: self
                .tools
                .iter()
                .map(|tool| graph::tools::ToolSpec {
                    name: tool.name.clone(),
                    arguments: tool.arguments(),
                })
                .collect(),
            problem: self.problem.clone(),
            not_for_agents: self.not_for_agents.clone(),
        }
    }
}

impl ToolInfo {
    /// The names of the arguments its input takes.
    pub fn arguments(&self) -> Vec<String> {
        self.input_schema
            .get("properties")
            .and_then(serde_json::Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// Everything `GET /api/providers` says.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The MCP servers agent tasks may call tools of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_servers: Vec<ToolServerInfo>,
}

impl Catalogue {
    /// The tools of each server, as validation knows them.
    pub fn tool_specs(&self) -> graph::tools::ToolCatalogue {
        self.tool_servers
            .iter()
            .map(|server| (server.id.clone(), server.spec()))
            .collect()
    }
}
