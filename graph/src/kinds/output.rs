//! `step.output`: collects a run's final results for the run panel.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::kinds::{KindConfig, KindDefinition, standard_fields};
use crate::ports::{ERROR_OUT, ModulePorts, PortAccent, bundle, input, output};

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
                    "data_in",
                    "Results",
                    "Collected into the run panel",
                    PortAccent::Accent,
                ),
                true,
                true,
            )],
            outputs: vec![output(ERROR_OUT)],
        }
    }
}
