//! `step.transform`: one LLM call that rewrites its input.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::config::AgentConfig;
use crate::kinds::{KindConfig, KindDefinition, standard_fields};
use crate::ports::{ModulePorts, one_answer_ports};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransformConfig {
    pub instruction: String,
    pub agent_config: AgentConfig,
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
    standard_fields!(extra, instruction, agent_config);

    fn ports(&self) -> ModulePorts {
        one_answer_ports(true, "Output", "The rewritten input")
    }
}
