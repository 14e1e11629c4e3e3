//! `step.claim_extractor`: one LLM call that lists the claims in its input.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::config::AgentConfig;
use crate::kinds::{KindChecks, KindConfig, KindDefinition, standard_fields};
use crate::ports::{ModulePorts, one_answer_ports};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClaimExtractorConfig {
    /// Extra guidance on what counts as a claim.
    pub instruction: String,
    pub agent_config: AgentConfig,
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

impl KindDefinition for ClaimExtractorConfig {
    const WIRE_NAME: &'static str = "step.claim_extractor";
    const TITLE: &'static str = "Claim extractor";
    const DESCRIPTION: &'static str = "One LLM call that lists the claims in its input";
    const USES_PROVIDER: bool = true;
}

impl KindConfig for ClaimExtractorConfig {
    standard_fields!(extra, instruction, agent_config, timeout, join);

    fn ports(&self) -> ModulePorts {
        one_answer_ports(true, "Claims", "A JSON list of the claims found")
    }
}

impl KindChecks for ClaimExtractorConfig {}
