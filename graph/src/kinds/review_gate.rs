//! `step.agent_review_gate`: an LLM reviewer that approves its input or
//! sends it round again with feedback.

use serde::{Deserialize, Serialize};

use crate::config::AgentConfig;
use crate::kinds::{
    KindChecks, KindConfig, KindDefinition, OutputSession, RePromptLevel, standard_fields,
};
use crate::ports::{
    DATA_OUT, ModulePorts, PortAccent, activation_outputs, bundle, output, spec, task_inputs,
};

/// The reviewed input, once approved.
pub const APPROVED_OUT: &str = "approved_out";
/// The reviewer's feedback, for another round.
pub const REVISE_OUT: &str = "revise_out";
use crate::{Extra, RePrompt};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReviewGateConfig {
    pub instruction: String,
    pub agent_config: AgentConfig,
    pub re_prompts: Vec<RePrompt>,
    /// How many times a revision loop through this gate may go round.
    pub max_rounds: u32,
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

impl Default for ReviewGateConfig {
    fn default() -> ReviewGateConfig {
        ReviewGateConfig {
            instruction: String::new(),
            agent_config: AgentConfig::default(),
            re_prompts: Vec::new(),
            max_rounds: 3,
            timeout_seconds: None,
            join: crate::join::Join::All,
            extra: Extra::new(),
        }
    }
}

impl KindDefinition for ReviewGateConfig {
    const WIRE_NAME: &'static str = "step.agent_review_gate";
    const TITLE: &'static str = "Review gate";
    const DESCRIPTION: &'static str = "An LLM reviewer that approves or asks for revision";
    const RE_PROMPTS: RePromptLevel = RePromptLevel::Module;
    const USES_PROVIDER: bool = true;
    /// A revision loop through the gate stops after `max_rounds`.
    const BOUNDS_LOOPS: bool = true;
    const OUTPUT_SESSION: OutputSession = OutputSession::Chat;
}

impl KindConfig for ReviewGateConfig {
    standard_fields!(extra, instruction, agent_config, re_prompts, timeout, join);

    fn ports(&self) -> ModulePorts {
        ModulePorts {
            inputs: task_inputs(true),
            outputs: activation_outputs([
                output(bundle(
                    APPROVED_OUT,
                    "Approved",
                    "The reviewed input, once approved",
                    PortAccent::Green,
                )),
                output(bundle(
                    REVISE_OUT,
                    "Revise",
                    "Feedback for another round",
                    PortAccent::Amber,
                )),
                output(spec::EXHAUSTED_OUT),
                output(bundle(
                    DATA_OUT,
                    "Review",
                    "The reviewer's merged responses",
                    PortAccent::Accent,
                )),
            ]),
        }
    }
}

impl KindChecks for ReviewGateConfig {}
