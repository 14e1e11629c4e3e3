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
//! [engine]
//! max_activations = 500
//! max_concurrency = 8
//! max_run_seconds = 86400
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
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    pub max_activations: Option<u32>,
    pub max_concurrency: Option<usize>,
    /// A run that has not ended after this long fails (default a day).
    pub max_run_seconds: Option<u64>,
}

impl ConfigFile {
    pub fn load(path: &Path) -> Result<ConfigFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        ConfigFile::parse(&text).map_err(|error| format!("{}: {error}", path.display()))
    }

    pub fn parse(text: &str) -> Result<ConfigFile, String> {
        toml::from_str(text).map_err(|error| error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
