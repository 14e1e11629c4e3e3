//! `step.input`: where a run's input text and files enter the graph.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::kinds::{KindChecks, KindConfig, KindDefinition, standard_fields};
use crate::ports::{DATA_OUT, ModulePorts, PortAccent, bundle, output, spec};

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

impl KindDefinition for InputConfig {
    const WIRE_NAME: &'static str = "step.input";
    const TITLE: &'static str = "Input";
    const DESCRIPTION: &'static str = "The run's input text and files";
    /// The run's input arrives here, whatever else is wired in.
    const STARTS_A_RUN: bool = true;
}

impl KindConfig for InputConfig {
    standard_fields!(extra);

    fn ports(&self) -> ModulePorts {
        ModulePorts {
            inputs: Vec::new(),
            outputs: vec![
                output(bundle(
                    DATA_OUT,
                    "Input",
                    "The text and files given when the run starts",
                    PortAccent::Accent,
                )),
                output(spec::SIGNAL_OUT),
                output(spec::ERROR_OUT),
            ],
        }
    }
}

impl KindChecks for InputConfig {}
