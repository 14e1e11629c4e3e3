//! `step.transform`: one LLM call that rewrites its input.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::config::AgentConfig;
use crate::kinds::{KindChecks, KindConfig, KindDefinition, standard_fields};
use crate::ports::{ModulePorts, one_answer_ports};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransformConfig {
    pub instruction: String,
    pub agent_config: AgentConfig,
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
    #[serde(flatten)]
    pub extra: Extra,
}

impl KindDefinition for TransformConfig {
    const WIRE_NAME: &'static str = "step.transform";
    const TITLE: &'static str = "Transform";
    const DESCRIPTION: &'static str = "One LLM call that rewrites its input";
    const USES_PROVIDER: bool = true;
}

impl KindConfig for TransformConfig {
    standard_fields!(
        extra,
        instruction,
        agent_config,
        retry,
        retry_instruction,
        timeout,
        join
    );

    fn ports(&self) -> ModulePorts {
        one_answer_ports(true, "Output", "The rewritten input")
    }
}

impl KindChecks for TransformConfig {}
