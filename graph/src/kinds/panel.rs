//! `step.panel`: several personas discuss a question over a number of
//! rounds.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::config::AgentConfig;
use crate::kinds::{KindChecks, KindConfig, KindDefinition, standard_fields};
use crate::ports::{ModulePorts, one_answer_ports};

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

impl Default for PanelConfig {
    fn default() -> PanelConfig {
        PanelConfig {
            instruction: String::new(),
            agent_config: AgentConfig::default(),
            personas: Vec::new(),
            rounds: 2,
            timeout_seconds: None,
            join: crate::join::Join::All,
            extra: Extra::new(),
        }
    }
}

impl KindDefinition for PanelConfig {
    const WIRE_NAME: &'static str = "step.panel";
    const TITLE: &'static str = "Panel";
    const DESCRIPTION: &'static str = "Several personas discuss over a number of rounds";
    const USES_PROVIDER: bool = true;
}

impl KindConfig for PanelConfig {
    standard_fields!(extra, instruction, agent_config, timeout, join);

    fn ports(&self) -> ModulePorts {
        one_answer_ports(
            false,
            "Discussion",
            "The whole discussion and its conclusion",
        )
    }

    fn further_prompt_texts(&self) -> Vec<(String, &str)> {
        self.personas
            .iter()
            .enumerate()
            .map(|(index, persona)| {
                (
                    format!("config.personas[{index}].perspective"),
                    persona.perspective.as_str(),
                )
            })
            .collect()
    }
}

impl KindChecks for PanelConfig {}
