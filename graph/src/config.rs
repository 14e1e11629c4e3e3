//! Module configs per kind, with the DOC23 field names of PRODUCT §1.2.
//!
//! Every config keeps the fields it does not know in `extra`, so a document
//! written by a newer Patchbay survives a load and save here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::reprompt::{Attachment, RePrompt};
use crate::{Extra, ModuleKind};

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

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionMode {
    #[default]
    New,
    /// Continue the session of the upstream bundle's `source_session_key`.
    Continue,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentTaskConfig {
    pub instruction: String,
    pub attachments: Vec<Attachment>,
    pub agent_config: AgentConfig,
    pub re_prompts: Vec<RePrompt>,
    pub separate_outputs: bool,
    pub named_outputs: Vec<String>,
    pub session_mode: SessionMode,
    pub session_persist: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coordination {
    #[default]
    Sequential,
    Parallel,
    ReviewChain,
}

/// `agent_signals` is the only completion mode since DOC23 R3.2; older
/// documents are migrated before they reach this type (see `migrate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionMode {
    #[default]
    AgentSignals,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStyle {
    #[default]
    Close,
    Park,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkspaceConfig {
    /// A working directory on the server; absent means a fresh temporary git
    /// repository per run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CodingAgentAssignment {
    pub role: String,
    pub agent_config: AgentConfig,
    /// `null` means the server's default ACP profile.
    pub acp_profile_id: Option<String>,
    pub instruction_override: Option<String>,
    pub re_prompts: Vec<RePrompt>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CodingConfig {
    pub instruction: String,
    pub workspace: WorkspaceConfig,
    pub agents: Vec<CodingAgentAssignment>,
    pub coordination: Coordination,
    /// Review rounds of `review_chain`.
    pub max_rounds: u32,
    pub completion_mode: CompletionMode,
    /// A safety cap on total agent turns, never a completion trigger.
    pub max_iterations: u32,
    pub capture_test_results: bool,
    pub session_style: SessionStyle,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for CodingConfig {
    fn default() -> CodingConfig {
        CodingConfig {
            instruction: String::new(),
            workspace: WorkspaceConfig::default(),
            agents: Vec::new(),
            coordination: Coordination::Sequential,
            max_rounds: 3,
            completion_mode: CompletionMode::AgentSignals,
            max_iterations: 20,
            capture_test_results: false,
            session_style: SessionStyle::Close,
            extra: Extra::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReviewGateConfig {
    pub instruction: String,
    pub agent_config: AgentConfig,
    pub re_prompts: Vec<RePrompt>,
    /// How many times a revision loop through this gate may go round.
    pub max_rounds: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for ReviewGateConfig {
    fn default() -> ReviewGateConfig {
        ReviewGateConfig {
            instruction: String::new(),
            agent_config: AgentConfig::default(),
            re_prompts: Vec::new(),
            max_rounds: 3,
            extra: Extra::new(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RedTeamConfig {
    pub instruction: String,
    pub agent_config: AgentConfig,
    pub re_prompts: Vec<RePrompt>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Persona {
    pub name: String,
    /// Who this persona is and what it argues for.
    pub perspective: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PanelConfig {
    /// The question the panel discusses.
    pub instruction: String,
    pub agent_config: AgentConfig,
    pub personas: Vec<Persona>,
    pub rounds: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for PanelConfig {
    fn default() -> PanelConfig {
        PanelConfig {
            instruction: String::new(),
            agent_config: AgentConfig::default(),
            personas: Vec::new(),
            rounds: 2,
            extra: Extra::new(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Criterion {
    pub name: String,
    pub description: String,
    pub weight: f64,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JudgeConfig {
    pub instruction: String,
    pub agent_config: AgentConfig,
    pub rubric: Vec<Criterion>,
    /// Scores run from 0 to this.
    pub scale_max: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for JudgeConfig {
    fn default() -> JudgeConfig {
        JudgeConfig {
            instruction: String::new(),
            agent_config: AgentConfig::default(),
            rubric: Vec::new(),
            scale_max: 10,
            extra: Extra::new(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransformConfig {
    pub instruction: String,
    pub agent_config: AgentConfig,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClaimExtractorConfig {
    /// Extra guidance on what counts as a claim.
    pub instruction: String,
    pub agent_config: AgentConfig,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InputConfig {
    /// Shown in the run dialog above the input box.
    pub description: String,
    /// Pre-filled in the run dialog.
    pub default_text: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OutputConfig {
    pub description: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandConfig {
    /// Run by `sh -c` in the run's workspace; exit status 0 means pass.
    pub command: String,
    pub timeout_seconds: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for CommandConfig {
    fn default() -> CommandConfig {
        CommandConfig {
            command: String::new(),
            timeout_seconds: 60,
            extra: Extra::new(),
        }
    }
}

/// A module's config, typed by its kind.
#[derive(Clone, Debug, PartialEq)]
pub enum ModuleConfig {
    Input(InputConfig),
    Output(OutputConfig),
    AgentTask(AgentTaskConfig),
    Coding(CodingConfig),
    ReviewGate(ReviewGateConfig),
    RedTeam(RedTeamConfig),
    Panel(PanelConfig),
    Judge(JudgeConfig),
    Transform(TransformConfig),
    ClaimExtractor(ClaimExtractorConfig),
    Command(CommandConfig),
    /// A kind this build does not know: kept verbatim, rendered as "unknown
    /// module", refused by validation.
    Unknown {
        kind: String,
        config: Value,
    },
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

fn typed<T: serde::de::DeserializeOwned>(
    config: Value,
    wrap: fn(T) -> ModuleConfig,
) -> Result<ModuleConfig, ConfigError> {
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
    result.map(wrap)
}

impl ModuleConfig {
    /// Types a raw config by its kind. Unknown kinds are kept as they are.
    pub fn from_kind_and_value(kind: &str, config: Value) -> Result<ModuleConfig, ConfigError> {
        let Some(known) = ModuleKind::parse(kind) else {
            return Ok(ModuleConfig::Unknown {
                kind: kind.to_owned(),
                config,
            });
        };
        match known {
            ModuleKind::Input => typed(config, ModuleConfig::Input),
            ModuleKind::Output => typed(config, ModuleConfig::Output),
            ModuleKind::AgentTask => typed(config, ModuleConfig::AgentTask),
            ModuleKind::Coding => typed(config, ModuleConfig::Coding),
            ModuleKind::ReviewGate => typed(config, ModuleConfig::ReviewGate),
            ModuleKind::RedTeam => typed(config, ModuleConfig::RedTeam),
            ModuleKind::Panel => typed(config, ModuleConfig::Panel),
            ModuleKind::Judge => typed(config, ModuleConfig::Judge),
            ModuleKind::Transform => typed(config, ModuleConfig::Transform),
            ModuleKind::ClaimExtractor => typed(config, ModuleConfig::ClaimExtractor),
            ModuleKind::Command => typed(config, ModuleConfig::Command),
        }
    }

    /// The defaults a new module of this kind starts with in the editor.
    pub fn new_for(kind: ModuleKind) -> ModuleConfig {
        let agent_config = AgentConfig::simulated();
        match kind {
            ModuleKind::Input => ModuleConfig::Input(InputConfig::default()),
            ModuleKind::Output => ModuleConfig::Output(OutputConfig::default()),
            ModuleKind::AgentTask => ModuleConfig::AgentTask(AgentTaskConfig {
                agent_config,
                ..AgentTaskConfig::default()
            }),
            ModuleKind::Coding => ModuleConfig::Coding(CodingConfig {
                agents: vec![CodingAgentAssignment {
                    role: "builder".to_owned(),
                    ..CodingAgentAssignment::default()
                }],
                ..CodingConfig::default()
            }),
            ModuleKind::ReviewGate => ModuleConfig::ReviewGate(ReviewGateConfig {
                agent_config,
                ..ReviewGateConfig::default()
            }),
            ModuleKind::RedTeam => ModuleConfig::RedTeam(RedTeamConfig {
                agent_config,
                ..RedTeamConfig::default()
            }),
            ModuleKind::Panel => ModuleConfig::Panel(PanelConfig {
                agent_config,
                ..PanelConfig::default()
            }),
            ModuleKind::Judge => ModuleConfig::Judge(JudgeConfig {
                agent_config,
                ..JudgeConfig::default()
            }),
            ModuleKind::Transform => ModuleConfig::Transform(TransformConfig {
                agent_config,
                ..TransformConfig::default()
            }),
            ModuleKind::ClaimExtractor => ModuleConfig::ClaimExtractor(ClaimExtractorConfig {
                agent_config,
                ..ClaimExtractorConfig::default()
            }),
            ModuleKind::Command => ModuleConfig::Command(CommandConfig::default()),
        }
    }

    /// The known kind, or `None` for an unknown one.
    pub fn kind(&self) -> Option<ModuleKind> {
        Some(match self {
            ModuleConfig::Input(_) => ModuleKind::Input,
            ModuleConfig::Output(_) => ModuleKind::Output,
            ModuleConfig::AgentTask(_) => ModuleKind::AgentTask,
            ModuleConfig::Coding(_) => ModuleKind::Coding,
            ModuleConfig::ReviewGate(_) => ModuleKind::ReviewGate,
            ModuleConfig::RedTeam(_) => ModuleKind::RedTeam,
            ModuleConfig::Panel(_) => ModuleKind::Panel,
            ModuleConfig::Judge(_) => ModuleKind::Judge,
            ModuleConfig::Transform(_) => ModuleKind::Transform,
            ModuleConfig::ClaimExtractor(_) => ModuleKind::ClaimExtractor,
            ModuleConfig::Command(_) => ModuleKind::Command,
            ModuleConfig::Unknown { .. } => return None,
        })
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
        Some(match self {
            ModuleConfig::Input(config) => &config.extra,
            ModuleConfig::Output(config) => &config.extra,
            ModuleConfig::AgentTask(config) => &config.extra,
            ModuleConfig::Coding(config) => &config.extra,
            ModuleConfig::ReviewGate(config) => &config.extra,
            ModuleConfig::RedTeam(config) => &config.extra,
            ModuleConfig::Panel(config) => &config.extra,
            ModuleConfig::Judge(config) => &config.extra,
            ModuleConfig::Transform(config) => &config.extra,
            ModuleConfig::ClaimExtractor(config) => &config.extra,
            ModuleConfig::Command(config) => &config.extra,
            ModuleConfig::Unknown { .. } => return None,
        })
    }

    /// The LLM settings of kinds that call a provider directly.
    pub fn agent_config(&self) -> Option<&AgentConfig> {
        match self {
            ModuleConfig::AgentTask(config) => Some(&config.agent_config),
            ModuleConfig::ReviewGate(config) => Some(&config.agent_config),
            ModuleConfig::RedTeam(config) => Some(&config.agent_config),
            ModuleConfig::Panel(config) => Some(&config.agent_config),
            ModuleConfig::Judge(config) => Some(&config.agent_config),
            ModuleConfig::Transform(config) => Some(&config.agent_config),
            ModuleConfig::ClaimExtractor(config) => Some(&config.agent_config),
            _ => None,
        }
    }

    /// The primary instruction of kinds that have one.
    pub fn instruction(&self) -> Option<&str> {
        match self {
            ModuleConfig::AgentTask(config) => Some(&config.instruction),
            ModuleConfig::Coding(config) => Some(&config.instruction),
            ModuleConfig::ReviewGate(config) => Some(&config.instruction),
            ModuleConfig::RedTeam(config) => Some(&config.instruction),
            ModuleConfig::Panel(config) => Some(&config.instruction),
            ModuleConfig::Judge(config) => Some(&config.instruction),
            ModuleConfig::Transform(config) => Some(&config.instruction),
            ModuleConfig::ClaimExtractor(config) => Some(&config.instruction),
            _ => None,
        }
    }

    pub fn instruction_mut(&mut self) -> Option<&mut String> {
        match self {
            ModuleConfig::AgentTask(config) => Some(&mut config.instruction),
            ModuleConfig::Coding(config) => Some(&mut config.instruction),
            ModuleConfig::ReviewGate(config) => Some(&mut config.instruction),
            ModuleConfig::RedTeam(config) => Some(&mut config.instruction),
            ModuleConfig::Panel(config) => Some(&mut config.instruction),
            ModuleConfig::Judge(config) => Some(&mut config.instruction),
            ModuleConfig::Transform(config) => Some(&mut config.instruction),
            ModuleConfig::ClaimExtractor(config) => Some(&mut config.instruction),
            _ => None,
        }
    }

    pub fn agent_config_mut(&mut self) -> Option<&mut AgentConfig> {
        match self {
            ModuleConfig::AgentTask(config) => Some(&mut config.agent_config),
            ModuleConfig::ReviewGate(config) => Some(&mut config.agent_config),
            ModuleConfig::RedTeam(config) => Some(&mut config.agent_config),
            ModuleConfig::Panel(config) => Some(&mut config.agent_config),
            ModuleConfig::Judge(config) => Some(&mut config.agent_config),
            ModuleConfig::Transform(config) => Some(&mut config.agent_config),
            ModuleConfig::ClaimExtractor(config) => Some(&mut config.agent_config),
            _ => None,
        }
    }

    /// One re-prompt list: the module's, or a coding agent's.
    pub fn re_prompts(&self, owner: RePromptOwner) -> Option<&Vec<RePrompt>> {
        match (self, owner) {
            (ModuleConfig::AgentTask(config), RePromptOwner::Module) => Some(&config.re_prompts),
            (ModuleConfig::ReviewGate(config), RePromptOwner::Module) => Some(&config.re_prompts),
            (ModuleConfig::RedTeam(config), RePromptOwner::Module) => Some(&config.re_prompts),
            (ModuleConfig::Coding(config), RePromptOwner::Agent(index)) => {
                config.agents.get(index).map(|agent| &agent.re_prompts)
            }
            _ => None,
        }
    }

    pub fn re_prompts_mut(&mut self, owner: RePromptOwner) -> Option<&mut Vec<RePrompt>> {
        match (self, owner) {
            (ModuleConfig::AgentTask(config), RePromptOwner::Module) => {
                Some(&mut config.re_prompts)
            }
            (ModuleConfig::ReviewGate(config), RePromptOwner::Module) => {
                Some(&mut config.re_prompts)
            }
            (ModuleConfig::RedTeam(config), RePromptOwner::Module) => Some(&mut config.re_prompts),
            (ModuleConfig::Coding(config), RePromptOwner::Agent(index)) => config
                .agents
                .get_mut(index)
                .map(|agent| &mut agent.re_prompts),
            _ => None,
        }
    }

    /// Every re-prompt list of the config: one for module-level kinds, one
    /// per agent for coding.
    pub fn re_prompt_lists(&self) -> Vec<RePromptList<'_>> {
        fn module_level(re_prompts: &[RePrompt]) -> RePromptList<'_> {
            RePromptList {
                path: "config.re_prompts".to_owned(),
                agent_role: None,
                re_prompts,
            }
        }
        match self {
            ModuleConfig::AgentTask(config) => vec![module_level(&config.re_prompts)],
            ModuleConfig::ReviewGate(config) => vec![module_level(&config.re_prompts)],
            ModuleConfig::RedTeam(config) => vec![module_level(&config.re_prompts)],
            ModuleConfig::Coding(config) => config
                .agents
                .iter()
                .enumerate()
                .map(|(index, agent)| RePromptList {
                    path: format!("config.agents[{index}].re_prompts"),
                    agent_role: Some(agent.role.as_str()),
                    re_prompts: &agent.re_prompts,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Every prompt text that may hold `{{ … }}` template variables, with its
    /// path inside the module.
    pub fn prompt_texts(&self) -> Vec<(String, &str)> {
        let mut pairs: Vec<(String, &str)> = Vec::new();
        if let Some(agent) = self.agent_config()
            && let Some(system) = &agent.system
        {
            pairs.push(("config.agent_config.system".to_owned(), system));
        }
        match self {
            ModuleConfig::AgentTask(config) => {
                pairs.push(("config.instruction".to_owned(), &config.instruction));
            }
            ModuleConfig::ReviewGate(config) => {
                pairs.push(("config.instruction".to_owned(), &config.instruction));
            }
            ModuleConfig::RedTeam(config) => {
                pairs.push(("config.instruction".to_owned(), &config.instruction));
            }
            ModuleConfig::Transform(config) => {
                pairs.push(("config.instruction".to_owned(), &config.instruction));
            }
            ModuleConfig::ClaimExtractor(config) => {
                pairs.push(("config.instruction".to_owned(), &config.instruction));
            }
            ModuleConfig::Judge(config) => {
                pairs.push(("config.instruction".to_owned(), &config.instruction));
                for (index, criterion) in config.rubric.iter().enumerate() {
                    pairs.push((
                        format!("config.rubric[{index}].description"),
                        &criterion.description,
                    ));
                }
            }
            ModuleConfig::Panel(config) => {
                pairs.push(("config.instruction".to_owned(), &config.instruction));
                for (index, persona) in config.personas.iter().enumerate() {
                    pairs.push((
                        format!("config.personas[{index}].perspective"),
                        &persona.perspective,
                    ));
                }
            }
            ModuleConfig::Coding(config) => {
                pairs.push(("config.instruction".to_owned(), &config.instruction));
                for (index, agent) in config.agents.iter().enumerate() {
                    if let Some(text) = &agent.instruction_override {
                        pairs.push((format!("config.agents[{index}].instruction_override"), text));
                    }
                }
            }
            ModuleConfig::Command(config) => {
                pairs.push(("config.command".to_owned(), &config.command));
            }
            ModuleConfig::Input(_) | ModuleConfig::Output(_) | ModuleConfig::Unknown { .. } => {}
        }
        for list in self.re_prompt_lists() {
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
