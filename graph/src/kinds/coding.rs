//! `step.coding`: coding agents over ACP in a workspace, sequential,
//! parallel or as a review chain, each agent with re-prompts of its own
//! (DOC23 §2.2–2.3). The engine plugs the `coding` crate in to run it.

use serde::{Deserialize, Serialize};

use crate::config::{AgentConfig, RePromptList, RePromptOwner};
use crate::intent::IntentGate;
use crate::kinds::{
    KindChecks, KindConfig, KindDefinition, OutputSession, RePromptLevel, standard_fields,
};
use crate::ports::{
    DATA_OUT, ModulePorts, PortAccent, activation_outputs, bundle, output, spec, task_inputs,
};
use crate::validate::{Code, ModuleFindings};
use crate::{Extra, RePrompt};

mod sessions;

/// `git diff` of the workspace.
pub const DIFF_OUT: &str = "diff_out";
/// The files the agents changed (`wire::content::ChangedFile`s).
pub const FILES_OUT: &str = "files_out";
/// The last agent's final message.
pub const SUMMARY_OUT: &str = "summary_out";
/// The last tests the agents ran (`wire::content::TestResults`).
pub const TEST_RESULTS_OUT: &str = "test_results_out";

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
    /// The ACP session mode to select (`session/set_mode`), one the agent
    /// offers (e.g. `code`, `ask`); `null` leaves the agent's default. The
    /// model is `agent_config.model`, chosen through the agent's model
    /// option.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acp_mode: Option<String>,
    /// `continue` takes up the ACP session of the upstream coding module
    /// that fed it (its `data_out`'s `source_session_key`) with
    /// `session/load`: the first agent of a sequential or review chain
    /// module only, with the same ACP profile (DOC23 §7.1).
    #[serde(skip_serializing_if = "crate::config::SessionMode::is_new")]
    pub session_mode: crate::config::SessionMode,
    /// The operator's MCP servers (by id) given to the agent in its ACP
    /// session (`session/new` `mcpServers`, PRODUCT §3.17): the tools an
    /// agent task may call, an agent over ACP may too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<String>,
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
    /// The last agent's (or the reviewer's) last turn answers with an
    /// intent (PRODUCT §3.8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent_gate: Option<IntentGate>,
    /// Attempts and the wait between them (PRODUCT §3.9).
    #[serde(flatten)]
    pub retry: crate::attempts::Retry,
    /// The instruction of attempts after the first; empty means the
    /// instruction. Only it may use the retry variables.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub retry_instruction: String,
    /// Seconds one activation may take; `None` is 30 minutes. Set, it
    /// gives the module a `timeout_out` port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    /// Whether it waits for every input or runs on the first (PRODUCT §3.1).
    #[serde(skip_serializing_if = "crate::join::Join::is_all")]
    pub join: crate::join::Join,
    /// Checks run when it has done its work, and the prompts that follow
    /// a failed one (PRODUCT §3.11).
    #[serde(flatten)]
    pub validation: crate::validators::Validation,
    /// Variants compared side by side (DOC23 §7.2): each its own
    /// instruction or agents' ACP profiles, in a workspace of its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<crate::experiment::Variant>,
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
            intent_gate: None,
            retry: crate::attempts::Retry::default(),
            retry_instruction: String::new(),
            timeout_seconds: None,
            join: crate::join::Join::All,
            validation: crate::validators::Validation::default(),
            variants: Vec::new(),
            extra: Extra::new(),
        }
    }
}

impl CodingConfig {
    /// The agent whose ACP session the module hands on with its `data_out`
    /// (DOC23 §7.1): the last of a sequential chain, the builder of a
    /// review chain; parallel agents none, since no one session holds
    /// their work.
    pub fn session_holder(&self) -> Option<usize> {
        match self.coordination {
            Coordination::Sequential => self.agents.len().checked_sub(1),
            Coordination::ReviewChain => (!self.agents.is_empty()).then_some(0),
            Coordination::Parallel => None,
        }
    }

    /// Why agent `index` may not take up an upstream session
    /// (`session_mode: continue`), when it may not: only the first of a
    /// sequential or review chain may, since parallel agents work at once,
    /// and a later agent of a chain works on what the one before it did.
    pub fn continue_refusal(&self, index: usize) -> Option<&'static str> {
        if self.coordination == Coordination::Parallel {
            Some("parallel agents work at once, so none of them can take up one session")
        } else if index > 0 {
            Some(
                "only the first agent (the builder of a review chain) can take up an upstream session; the others work in sessions of their own",
            )
        } else {
            None
        }
    }
}

impl KindDefinition for CodingConfig {
    const WIRE_NAME: &'static str = "step.coding";
    const TITLE: &'static str = "Coding";
    const DESCRIPTION: &'static str =
        "Coding agents over ACP: sequential, parallel or review chain";
    const RE_PROMPTS: RePromptLevel = RePromptLevel::PerAgent;
    const STARTS_PROCESSES: bool = true;
    const OUTPUT_SESSION: OutputSession = OutputSession::CodingAgent;
    /// `{{ diff }}`: what the agents had changed when the attempt failed.
    const RETRY_VARIABLES: &'static [&'static str] = &["diff"];

    /// A coding module without agents cannot run, so a new one has a first.
    fn new_module() -> CodingConfig {
        CodingConfig {
            agents: vec![CodingAgentAssignment {
                role: "builder".to_owned(),
                ..CodingAgentAssignment::default()
            }],
            ..CodingConfig::default()
        }
    }
}

impl KindConfig for CodingConfig {
    standard_fields!(
        extra,
        instruction,
        intent_gate,
        retry,
        retry_instruction,
        timeout,
        join,
        validation
    );

    fn ports(&self) -> ModulePorts {
        let intents = self
            .intent_gate
            .as_ref()
            .map(IntentGate::ports)
            .unwrap_or_default();
        ModulePorts {
            inputs: task_inputs(false),
            outputs: activation_outputs(
                [
                    output(bundle(
                        DATA_OUT,
                        "Output",
                        "Every agent's summary and re-prompt responses",
                        PortAccent::Accent,
                    )),
                    output(bundle(
                        DIFF_OUT,
                        "Diff",
                        "git diff of the workspace",
                        PortAccent::Green,
                    )),
                    output(bundle(
                        FILES_OUT,
                        "Files",
                        "The files the agents changed",
                        PortAccent::Green,
                    )),
                    output(bundle(
                        SUMMARY_OUT,
                        "Summary",
                        "The last agent's final message",
                        PortAccent::Cyan,
                    )),
                    output(bundle(
                        TEST_RESULTS_OUT,
                        "Test results",
                        "The last tests the agents ran",
                        PortAccent::Amber,
                    )),
                ]
                .into_iter()
                .chain(
                    (self.coordination == Coordination::ReviewChain)
                        .then(|| output(spec::EXHAUSTED_OUT)),
                )
                .chain(intents)
                .chain((!self.variants.is_empty()).then(crate::experiment::comparison_port)),
            ),
        }
    }

    fn re_prompts(&self, owner: RePromptOwner) -> Option<&Vec<RePrompt>> {
        match owner {
            RePromptOwner::Agent(index) => self.agents.get(index).map(|agent| &agent.re_prompts),
            RePromptOwner::Module => None,
        }
    }

    fn re_prompts_mut(&mut self, owner: RePromptOwner) -> Option<&mut Vec<RePrompt>> {
        match owner {
            RePromptOwner::Agent(index) => self
                .agents
                .get_mut(index)
                .map(|agent| &mut agent.re_prompts),
            RePromptOwner::Module => None,
        }
    }

    fn re_prompt_lists(&self) -> Vec<RePromptList<'_>> {
        self.agents
            .iter()
            .enumerate()
            .map(|(index, agent)| RePromptList {
                path: format!("config.agents[{index}].re_prompts"),
                agent_role: Some(agent.role.as_str()),
                re_prompts: &agent.re_prompts,
            })
            .collect()
    }

    fn further_prompt_texts(&self) -> Vec<(String, &str)> {
        self.agents
            .iter()
            .enumerate()
            .filter_map(|(index, agent)| {
                let text = agent.instruction_override.as_deref()?;
                Some((format!("config.agents[{index}].instruction_override"), text))
            })
            .collect()
    }
}

impl KindChecks for CodingConfig {
    fn validate(&self, findings: &mut ModuleFindings<'_>) {
        let name = findings.name();
        let context = findings.context();
        if self.agents.is_empty() {
            findings.report(
                Code::CodingNoAgents,
                Some("config.agents".to_owned()),
                format!("Coding module \"{name}\" has no agents"),
            );
        }
        let roles: Vec<&str> = self
            .agents
            .iter()
            .map(|agent| agent.role.as_str())
            .collect();
        let kind = crate::experiment::VariedKind::Coding { roles: &roles };
        crate::experiment::report(
            findings,
            &self.variants,
            kind,
            self.intent_gate.is_some(),
            !self.validation.validators.is_empty(),
        );
        for (index, agent) in self.agents.iter().enumerate() {
            findings.agent_tool_servers(&agent.mcp_servers, &format!("config.agents[{index}]"));
        }
        for (index, variant) in self.variants.iter().enumerate() {
            for (role, profile) in variant.config_overrides.agent_profiles.iter().flatten() {
                findings.acp_profile(
                    profile,
                    &format!("config.variants[{index}].config_overrides.agent_profiles.{role}"),
                );
            }
        }
        if let Some(gate) = &self.intent_gate {
            findings.intent_gate(gate);
            if self.coordination == Coordination::Parallel {
                findings.report(
                    Code::IntentGateInvalid,
                    Some("config.coordination".to_owned()),
                    format!(
                        "\"{name}\" has an intent gate, but its agents work in parallel, so no one agent has the last word. Use sequential (the last agent decides) or a review chain (the reviewer decides)"
                    ),
                );
            }
        }
        if let (Some(roots), Some(path)) = (&context.workspace_roots, &self.workspace.path)
            && !path.trim().is_empty()
            && let Err(problem) = crate::workspace_roots::check(path, roots)
        {
            findings.report(
                Code::WorkspacePathNotAllowed,
                Some("config.workspace.path".to_owned()),
                format!("\"{name}\": {}", problem.describe(path, roots)),
            );
        }
        if let Some(profiles) = &context.acp_profiles {
            for (position, agent) in self.agents.iter().enumerate() {
                if let Some(profile) = &agent.acp_profile_id
                    && !profiles.contains(profile)
                {
                    findings.report(
                        Code::UnknownAcpProfile,
                        Some(format!("config.agents[{position}].acp_profile_id")),
                        format!(
                            "Agent {} of \"{name}\" uses ACP profile \"{profile}\", which this server does not have",
                            position + 1
                        ),
                    );
                }
            }
        }
    }

    fn validate_cables(&self, findings: &mut ModuleFindings<'_>) {
        sessions::check(self, findings);
    }

    /// The last agent's session does the fixing, so there must be one.
    fn validators_unsupported(&self) -> Option<&'static str> {
        (self.coordination != Coordination::Sequential)
            .then_some("which need sequential agents: the last one's session does the fixing")
    }
}
