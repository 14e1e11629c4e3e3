//! `step.red_team`: an LLM adversary that attacks its input.

use serde::{Deserialize, Serialize};

use crate::config::AgentConfig;
use crate::kinds::{
    KindChecks, KindConfig, KindDefinition, OutputSession, RePromptLevel, standard_fields,
};
use crate::ports::{
    DATA_OUT, ModulePorts, PortAccent, activation_outputs, bundle, output, task_inputs,
};
use crate::{Extra, RePrompt};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RedTeamConfig {
    pub instruction: String,
    pub agent_config: AgentConfig,
    pub re_prompts: Vec<RePrompt>,
    /// Seconds one activation may take; `None` is 30 minutes. Set, it
    /// gives the module a `timeout_out` port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    /// Whether it waits for every input or runs on the first (PRODUCT §3.1).
    #[serde(skip_serializing_if = "crate::join::Join::is_all")]
    pub join: crate::join::Join,
    #[serde(flatten)]
    pub extra: Extra,
}

impl KindDefinition for RedTeamConfig {
    const WIRE_NAME: &'static str = "step.red_team";
    const TITLE: &'static str = "Red team";
    const DESCRIPTION: &'static str = "An LLM adversary that attacks its input";
    const RE_PROMPTS: RePromptLevel = RePromptLevel::Module;
    const USES_PROVIDER: bool = true;
    const OUTPUT_SESSION: OutputSession = OutputSession::Chat;
}

impl KindConfig for RedTeamConfig {
    standard_fields!(extra, instruction, agent_config, re_prompts, timeout, join);

    fn ports(&self) -> ModulePorts {
        ModulePorts {
            inputs: task_inputs(true),
            outputs: activation_outputs([output(bundle(
                DATA_OUT,
                "Attacks",
                "The red team's merged responses",
                PortAccent::Accent,
            ))]),
        }
    }
}

impl KindChecks for RedTeamConfig {}
