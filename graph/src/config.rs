//! Module configs: what kinds' configs share (`agent_config`, the re-prompt
//! lists) and the questions asked of any config, each answered by the
//! config's kind in `kinds/`. The configs themselves live there, with the
//! DOC23 field names of PRODUCT §1.2; the ones below are named here too
//! because the other crates import them from here. A new kind's config is
//! imported from its own file instead.
//!
//! Every config keeps the fields it does not know in `extra`, so a document
//! written by a newer Patchbay survives a load and save here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::attempts::Retry;
use crate::kinds::KindConfig;
use crate::reprompt::RePrompt;
use crate::{Extra, ModuleKind};

pub use crate::kinds::ModuleConfig;
pub use crate::kinds::agent_task::{AgentTaskConfig, SessionMode};
pub use crate::kinds::claim_extractor::ClaimExtractorConfig;
pub use crate::kinds::coding::{
    CodingAgentAssignment, CodingConfig, CompletionMode, Coordination, SessionStyle,
    WorkspaceConfig,
};
pub use crate::kinds::command::CommandConfig;
pub use crate::kinds::input::InputConfig;
pub use crate::kinds::judge::{Criterion, JudgeConfig};
pub use crate::kinds::output::OutputConfig;
pub use crate::kinds::panel::{PanelConfig, Persona};
pub use crate::kinds::poll::PollConfig;
pub use crate::kinds::red_team::RedTeamConfig;
pub use crate::kinds::review_gate::ReviewGateConfig;
pub use crate::kinds::transform::TransformConfig;

/// The LLM a module talks to. Provider settings (base URLs, keys) live in the
/// server configuration; a document only names the provider.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// A provider id from `GET /api/providers`; empty means the server default.
    pub provider: String,
    pub model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// At most this many US dollars for the module in one run: when its
    /// calls have cost that much, what it still has in flight stops and
    /// it fails with `budget_exceeded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl AgentConfig {
    /// The built-in simulated provider, the default for new modules.
    pub fn simulated() -> AgentConfig {
        AgentConfig {
            provider: "sim".to_owned(),
            model: "sim-1".to_owned(),
            ..AgentConfig::default()
        }
    }
}

/// Where a config failed to deserialize: a path inside the config and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

/// Whose re-prompts: the module's own, or one coding agent's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RePromptOwner {
    Module,
    Agent(usize),
}

/// One list of re-prompts inside a config, with the path of the list and, for
/// coding, the agent it belongs to.
pub struct RePromptList<'a> {
    pub path: String,
    pub agent_role: Option<&'a str>,
    pub re_prompts: &'a [RePrompt],
}

impl RePromptList<'_> {
    pub(crate) fn module_level(re_prompts: &[RePrompt]) -> RePromptList<'_> {
        RePromptList {
            path: "config.re_prompts".to_owned(),
            agent_role: None,
            re_prompts,
        }
    }
}

pub(crate) fn typed<T: serde::de::DeserializeOwned>(config: Value) -> Result<T, ConfigError> {
    // An absent or null config is the kind's defaults.
    let config = if config.is_null() {
        Value::Object(Extra::new())
    } else {
        config
    };
    #[cfg(feature = "error-paths")]
    let result = serde_path_to_error::deserialize(config).map_err(|error| {
        let path = error.path().to_string();
        ConfigError {
            path: if path == "." { String::new() } else { path },
            message: error.into_inner().to_string(),
        }
    });
    #[cfg(not(feature = "error-paths"))]
    let result = serde_json::from_value(config).map_err(|error| ConfigError {
        path: String::new(),
        message: error.to_string(),
    });
    result
}

impl ModuleConfig {
    /// Types a raw config by its kind. Unknown kinds are kept as they are.
    pub fn from_kind_and_value(kind: &str, config: Value) -> Result<ModuleConfig, ConfigError> {
        match ModuleKind::parse(kind) {
            Some(known) => ModuleConfig::typed_for(known, config),
            None => Ok(ModuleConfig::Unknown {
                kind: kind.to_owned(),
                config,
            }),
        }
    }

    /// The `kind` string as written in the document.
    pub fn kind_name(&self) -> &str {
        match self {
            ModuleConfig::Unknown { kind, .. } => kind,
            known => known.kind().map_or("", ModuleKind::as_str),
        }
    }

    /// Fields this build does not know, where unknown-field checks look.
    pub fn extra(&self) -> Option<&Extra> {
        self.kind_config().map(KindConfig::extra)
    }

    /// The LLM settings of kinds that call a provider directly.
    pub fn agent_config(&self) -> Option<&AgentConfig> {
        self.kind_config()?.agent_config()
    }

    /// The primary instruction of kinds that have one.
    pub fn instruction(&self) -> Option<&str> {
        self.kind_config()?.instruction()
    }

    pub fn instruction_mut(&mut self) -> Option<&mut String> {
        self.kind_config_mut()?.instruction_mut()
    }

    /// The structured gate, when the module has one (PRODUCT §3.8).
    pub fn intent_gate(&self) -> Option<&crate::intent::IntentGate> {
        self.kind_config()?.intent_gate()
    }

    /// The place of the gate in kinds that may have one.
    pub fn intent_gate_slot(&mut self) -> Option<&mut Option<crate::intent::IntentGate>> {
        self.kind_config_mut()?.intent_gate_slot()
    }

    pub fn agent_config_mut(&mut self) -> Option<&mut AgentConfig> {
        self.kind_config_mut()?.agent_config_mut()
    }

    /// Attempts and backoff, in kinds that retry (PRODUCT §3.9).
    /// The module's own budget in US dollars, in kinds that call a model.
    pub fn budget_usd(&self) -> Option<f64> {
        self.agent_config()?.budget_usd
    }

    pub fn retry(&self) -> Option<&Retry> {
        self.kind_config()?.retry()
    }

    pub fn retry_mut(&mut self) -> Option<&mut Retry> {
        self.kind_config_mut()?.retry_mut()
    }

    /// The attempts a module has: 1 in kinds that do not retry.
    pub fn max_attempts(&self) -> u32 {
        self.retry().map_or(1, |retry| retry.max_attempts)
    }

    pub fn retry_instruction(&self) -> Option<&str> {
        self.kind_config()?.retry_instruction()
    }

    pub fn retry_instruction_mut(&mut self) -> Option<&mut String> {
        self.kind_config_mut()?.retry_instruction_mut()
    }

    /// Validators and failure patterns, in kinds that may have them.
    pub fn validation(&self) -> Option<&crate::validators::Validation> {
        self.kind_config()?.validation()
    }

    pub fn validation_mut(&mut self) -> Option<&mut crate::validators::Validation> {
        self.kind_config_mut()?.validation_mut()
    }

    /// Whether its activations start processes (coding agents, commands,
    /// polls, validators), which the server runs only confined.
    pub fn starts_processes(&self) -> bool {
        self.kind().is_some_and(crate::ModuleKind::starts_processes) || self.runs_commands()
    }

    /// Whether its activations run shell commands of the graph's own (a
    /// command, a poll, validators), which only a server started with
    /// commands enabled allows.
    pub fn runs_commands(&self) -> bool {
        self.kind().is_some_and(ModuleKind::runs_a_command)
            || self
                .validation()
                .is_some_and(|validation| !validation.is_empty())
    }

    /// How the module's inputs join; `all` in kinds without inputs.
    pub fn join(&self) -> crate::join::Join {
        self.kind_config()
            .and_then(KindConfig::join)
            .unwrap_or_default()
    }

    pub fn join_slot(&mut self) -> Option<&mut crate::join::Join> {
        self.kind_config_mut()?.join_slot()
    }

    /// The timeout the module sets itself, which gives it `timeout_out`.
    pub fn timeout_seconds(&self) -> Option<u32> {
        self.kind_config()?.timeout_seconds()
    }

    pub fn timeout_slot(&mut self) -> Option<&mut Option<u32>> {
        self.kind_config_mut()?.timeout_slot()
    }

    /// How long one activation may take: its own timeout or the default;
    /// `None` for kinds that do no work of their own.
    pub fn effective_timeout_seconds(&self) -> Option<u32> {
        let kind_config = self.kind_config()?;
        kind_config.times_out().then(|| {
            kind_config
                .timeout_seconds()
                .unwrap_or_else(|| kind_config.default_timeout_seconds())
        })
    }

    /// One re-prompt list: the module's, or a coding agent's.
    pub fn re_prompts(&self, owner: RePromptOwner) -> Option<&Vec<RePrompt>> {
        self.kind_config()?.re_prompts(owner)
    }

    pub fn re_prompts_mut(&mut self, owner: RePromptOwner) -> Option<&mut Vec<RePrompt>> {
        self.kind_config_mut()?.re_prompts_mut(owner)
    }

    /// Every re-prompt list of the config: one for module-level kinds, one
    /// per agent for coding.
    pub fn re_prompt_lists(&self) -> Vec<RePromptList<'_>> {
        self.kind_config()
            .map(KindConfig::re_prompt_lists)
            .unwrap_or_default()
    }

    /// Every prompt text that may hold `{{ … }}` template variables, with its
    /// path inside the module.
    pub fn prompt_texts(&self) -> Vec<(String, &str)> {
        let Some(kind_config) = self.kind_config() else {
            return Vec::new();
        };
        let mut pairs: Vec<(String, &str)> = Vec::new();
        if let Some(agent) = kind_config.agent_config()
            && let Some(system) = &agent.system
        {
            pairs.push(("config.agent_config.system".to_owned(), system));
        }
        if let Some(instruction) = kind_config.instruction() {
            pairs.push(("config.instruction".to_owned(), instruction));
        }
        if let Some(retry_instruction) = kind_config.retry_instruction() {
            pairs.push(("config.retry_instruction".to_owned(), retry_instruction));
        }
        pairs.extend(kind_config.further_prompt_texts());
        for list in kind_config.re_prompt_lists() {
            for (index, re_prompt) in list.re_prompts.iter().enumerate() {
                pairs.push((format!("{}[{index}]", list.path), &re_prompt.text));
            }
        }
        pairs.retain(|(_, text)| text.contains("{{"));
        pairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_wrong_type_names_the_field() {
        let error = ModuleConfig::from_kind_and_value(
            "step.agent_task",
            json!({"agent_config": {"temperature": "hot"}}),
        )
        .unwrap_err();
        assert_eq!(error.path, "agent_config.temperature");
        assert!(error.message.contains("invalid type"), "{}", error.message);
    }

    #[test]
    fn an_unknown_enum_value_is_refused() {
        let error =
            ModuleConfig::from_kind_and_value("step.coding", json!({"coordination": "swarm"}))
                .unwrap_err();
        assert_eq!(error.path, "coordination");
    }

    #[test]
    fn unknown_kind_is_kept_verbatim() {
        let config = json!({"beam": "me up"});
        let typed = ModuleConfig::from_kind_and_value("step.teleport", config.clone()).unwrap();
        assert_eq!(
            typed,
            ModuleConfig::Unknown {
                kind: "step.teleport".to_owned(),
                config
            }
        );
        assert_eq!(typed.kind(), None);
        assert_eq!(typed.kind_name(), "step.teleport");
    }

    #[test]
    fn prompt_texts_lists_only_texts_with_variables() {
        let typed = ModuleConfig::from_kind_and_value(
            "step.agent_task",
            json!({"instruction": "Summarise {{ input }}", "re_prompts": ["plain", "use {{ run_id }}"]}),
        )
        .unwrap();
        let paths: Vec<String> = typed
            .prompt_texts()
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(paths, ["config.instruction", "config.re_prompts[1]"]);
    }
}
