//! `step.output`: collects a run's final results for the run panel.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::kinds::{KindChecks, KindConfig, KindDefinition, standard_fields};
use crate::ports::{DATA_IN, ModulePorts, PortAccent, bundle, input, output, spec};

/// Where an output module's record keeps the `number`-th result it
/// collected (from 1), among its outputs.
pub fn result_key(number: usize) -> String {
    format!("result_{number}")
}

/// The number of the result a record's output key holds, if it is one.
pub fn result_number(key: &str) -> Option<usize> {
    key.strip_prefix("result_")?.parse().ok()
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OutputConfig {
    pub description: String,
    /// Whether it waits for every input or runs on the first (PRODUCT §3.1).
    #[serde(skip_serializing_if = "crate::join::Join::is_all")]
    pub join: crate::join::Join,
    #[serde(flatten)]
    pub extra: Extra,
}

impl KindDefinition for OutputConfig {
    const WIRE_NAME: &'static str = "step.output";
    const TITLE: &'static str = "Output";
    const DESCRIPTION: &'static str = "Collects final results for the run panel";
}

impl KindConfig for OutputConfig {
    standard_fields!(extra, join);

    fn ports(&self) -> ModulePorts {
        ModulePorts {
            inputs: vec![input(
                bundle(
                    DATA_IN,
                    "Results",
                    "Collected into the run panel",
                    PortAccent::Accent,
                ),
                true,
                true,
            )],
            outputs: vec![output(spec::ERROR_OUT)],
        }
    }
}

impl KindChecks for OutputConfig {}
