//! The server's configuration file (`--config`, `PATCHBAY_CONFIG`): LLM
//! providers, the simulator, ACP profiles and run limits. API keys are never
//! written here: a provider names the environment variable that holds its key.
//!
//! ```toml
//! default_provider = "sim"
//!
//! [sim]
//! latency_ms_per_token = 25
//!
//! [[providers]]
//! id = "openai"
//! kind = "openai"                 # openai (any Chat Completions server) | anthropic
//! base_url = "https://api.openai.com/v1"
//! api_key_env = "OPENAI_API_KEY"
//! models = ["gpt-4o-mini", "gpt-4o"]
//!
//! # US dollars per million tokens; a model with no price has no cost.
//! [providers.prices.gpt-4o-mini]
//! input_per_million = 0.15
//! output_per_million = 0.60
//! cached_input_per_million = 0.075
//!
//! [[webhooks]]                      # where approvals may send a notice
//! id = "ops"
//! url = "https://hooks.example/patchbay"
//!
//! [engine]
//! max_activations = 500
//! max_concurrency = 8
//! max_run_seconds = 86400
//! run_budget_usd = 5.0              # runs started without a budget get this one
//!
//! [schedules]                       # ticks seen later than this fell while no server was up
//! late_after_seconds = 60
//!
//! [telemetry]                       # traces over OTLP/HTTP (telemetry.rs); off by default
//! otlp_endpoint = "http://collector:4318"
//! headers_env = { "authorization" = "OTLP_AUTH" }
//! ```

use std::path::Path;

use serde::Deserialize;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The provider of modules that name none; `sim` when unset.
    pub default_provider: Option<String>,
    #[serde(default)]
    pub sim: SimConfig,
    #[serde(default)]
    pub providers: Vec<ProviderConfig>,
    #[serde(default)]
    pub engine: EngineConfig,
    /// Coding agents spoken to over ACP, besides the built-in simulated one.
    #[serde(default)]
    pub acp_profiles: Vec<coding::AcpProfile>,
    /// The profile of coding agents that name none; the simulated agent
    /// when unset.
    pub default_acp_profile: Option<String>,
    /// Where approvals may send a notice when they wait (PRODUCT §3.14):
    /// the operator's list, which a graph names by id; none by default.
    #[serde(default)]
    pub webhooks: Vec<WebhookConfig>,
    /// The address people open this server at (`https://patchbay.example`),
    /// which makes the approver links in notices whole; without it they are
    /// paths.
    pub public_url: Option<String>,
    /// MCP servers whose tools agent tasks may call (PRODUCT §3.17),
    /// besides the built-in one (`tool_servers.rs`).
    #[serde(default)]
    pub mcp_servers: Vec<crate::tool_servers::McpServerEntry>,
    /// Traces to the operator's collector (PRODUCT §9); none by default.
    #[serde(default)]
    pub telemetry: crate::telemetry::TelemetryConfig,
    /// How schedules treat ticks they see late (PRODUCT §6.5).
    #[serde(default)]
    pub schedules: SchedulesConfig,
}

/// `[schedules]`: a tick seen more than `late_after_seconds` after its time
/// fell while no server was up, and its schedule's `catch_up` decides
/// whether one run stands for it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulesConfig {
    pub late_after_seconds: Option<u64>,
}

/// A webhook an approval may notify.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    pub id: String,
    /// Where the notice is POSTed (http or https).
    pub url: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Delay per streamed word, so progress is visible (default 25 ms).
    pub latency_ms_per_token: Option<u64>,
    /// What the built-in simulated agent may do (default `workspace_edits`;
    /// its "run the tests" needs `workspace_edits_and_commands` and
    /// `--enable-commands`).
    pub agent_permissions: Option<coding::PermissionPolicy>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI Chat Completions and compatible servers.
    Openai,
    Anthropic,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub id: String,
    pub kind: ProviderKind,
    pub label: Option<String>,
    pub base_url: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub models: Vec<String>,
    /// The longest wait for the next piece of a reply (default 120 s).
    pub timeout_seconds: Option<u64>,
    /// The longest one call may take in all, however steadily it streams
    /// (default 600 s).
    pub deadline_seconds: Option<u64>,
    /// Whether its models can call tools (PRODUCT §3.17; default true):
    /// `false` for a local model that cannot, so that validation says so.
    pub tools: Option<bool>,
    /// Each model's price; a model not here has no price.
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, wire::cost::Price>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    pub max_activations: Option<u32>,
    pub max_concurrency: Option<usize>,
    /// A run that has not ended after this long fails (default a day).
    pub max_run_seconds: Option<u64>,
    /// The budget of a run started without one, in US dollars (none when
    /// unset).
    pub run_budget_usd: Option<f64>,
}

impl ConfigFile {
    pub fn load(path: &Path) -> Result<ConfigFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        ConfigFile::parse(&text).map_err(|error| format!("{}: {error}", path.display()))
    }

    pub fn parse(text: &str) -> Result<ConfigFile, String> {
        let file: ConfigFile = toml::from_str(text).map_err(|error| error.to_string())?;
        for provider in &file.providers {
            for (model, price) in &provider.prices {
                if !price.is_valid() {
                    return Err(format!(
                        "providers \"{}\": the price of \"{model}\" must be amounts of US dollars, 0 or more",
                        provider.id
                    ));
                }
            }
        }
        for webhook in &file.webhooks {
            if !(webhook.url.starts_with("http://") || webhook.url.starts_with("https://")) {
                return Err(format!(
                    "webhooks \"{}\": the url must start with http:// or https://",
                    webhook.id
                ));
            }
        }
        crate::tool_servers::check(&file.mcp_servers)?;
        if let Some(budget) = file.engine.run_budget_usd
            && !(budget.is_finite() && budget > 0.0)
        {
            return Err(
                "engine.run_budget_usd must be an amount of US dollars more than 0".to_owned(),
            );
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_and_the_default_budget_are_read_and_nonsense_is_refused() {
        let config = ConfigFile::parse(
            r#"
            [[providers]]
            id = "openai"
            kind = "openai"
            models = ["gpt-4o-mini"]
            [providers.prices.gpt-4o-mini]
            input_per_million = 0.15
            output_per_million = 0.6
            cached_input_per_million = 0.075

            [engine]
            run_budget_usd = 2.5
            "#,
        )
        .unwrap();
        let price = config.providers[0].prices["gpt-4o-mini"];
        assert_eq!(price.cached_input_per_million, Some(0.075));
        assert_eq!(config.engine.run_budget_usd, Some(2.5));
        let negative = ConfigFile::parse(
            "[[providers]]\nid = \"x\"\nkind = \"openai\"\n[providers.prices.m]\ninput_per_million = -1.0\noutput_per_million = 1.0\n",
        )
        .unwrap_err();
        assert!(negative.contains("the price of \"m\""), "{negative}");
        let budget = ConfigFile::parse("[engine]\nrun_budget_usd = 0.0\n").unwrap_err();
        assert!(budget.contains("run_budget_usd"), "{budget}");
    }

    #[test]
    fn acp_profiles_and_the_default_one_are_read() {
        let config = ConfigFile::parse(
            r#"
            default_acp_profile = "gemini"

            [[acp_profiles]]
            id = "gemini"
            name = "Gemini CLI"
            command = "gemini"
            args = ["--acp"]
            env = { GEMINI_API_KEY_FILE = "/etc/gemini" }
            permissions = "workspace_edits_and_commands"
            "#,
        )
        .unwrap();
        assert_eq!(config.default_acp_profile.as_deref(), Some("gemini"));
        let profile = &config.acp_profiles[0];
        assert_eq!(profile.args, ["--acp"]);
        assert_eq!(
            profile.permissions,
            coding::PermissionPolicy::WorkspaceEditsAndCommands
        );
        assert!(!profile.simulated);
        // No session mode a graph may choose unless the operator lists it.
        assert!(profile.modes.is_empty());
        let settings = crate::settings::Settings::for_database("sqlite::memory:");
        let ids: Vec<String> = crate::acp_profiles(&settings, &config)
            .into_iter()
            .map(|profile| profile.id)
            .collect();
        assert_eq!(ids, ["gemini", "sim-agent"], "the default comes first");
        assert!(
            ConfigFile::parse("[[acp_profiles]]\nid = \"x\"\n").is_err(),
            "a profile needs a command"
        );
    }

    #[test]
    fn a_config_file_names_key_variables_not_keys() {
        let config = ConfigFile::parse(
            r#"
            [[providers]]
            id = "local"
            kind = "openai"
            base_url = "http://127.0.0.1:11434/v1"
            models = ["llama3.2"]

            [[providers]]
            id = "claude"
            kind = "anthropic"
            api_key_env = "ANTHROPIC_API_KEY"
            models = ["claude-sonnet-4-5"]
            "#,
        )
        .unwrap();
        assert_eq!(config.providers.len(), 2);
        assert_eq!(config.providers[1].kind, ProviderKind::Anthropic);
        let error = ConfigFile::parse(
            "[[providers]]\nid = \"x\"\nkind = \"openai\"\napi_key = \"sk-123\"\n",
        )
        .unwrap_err();
        assert!(error.contains("api_key"), "{error}");
    }
}
