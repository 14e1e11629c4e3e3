//! `step.command`: a shell command as a validator, passing when it exits 0.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::kinds::{KindConfig, KindDefinition, standard_fields};
use crate::ports::{
    DATA_IN, ERROR_OUT, ModulePorts, PortAccent, SIGNAL_IN, SIGNAL_OUT, bundle, input, output,
};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandConfig {
    /// Run by `sh -c` in the run's workspace; exit status 0 means pass.
    pub command: String,
    pub timeout_seconds: u32,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for CommandConfig {
    fn default() -> CommandConfig {
        CommandConfig {
            command: String::new(),
            timeout_seconds: 60,
            extra: Extra::new(),
        }
    }
}

impl KindDefinition for CommandConfig {
    const WIRE_NAME: &'static str = "step.command";
    const TITLE: &'static str = "Command";
    const DESCRIPTION: &'static str = "Runs a shell command as a validator";
    const STARTS_PROCESSES: bool = true;
}

impl KindConfig for CommandConfig {
    standard_fields!(extra);

    fn ports(&self) -> ModulePorts {
        ModulePorts {
            inputs: vec![input(DATA_IN, false, true), input(SIGNAL_IN, false, false)],
            outputs: vec![
                output(bundle(
                    "pass_out",
                    "Pass",
                    "The command's output when it exits 0",
                    PortAccent::Green,
                )),
                output(bundle(
                    "fail_out",
                    "Fail",
                    "The command's output when it fails (a retry port)",
                    PortAccent::Red,
                )),
                output(SIGNAL_OUT),
                output(ERROR_OUT),
            ],
        }
    }

    fn further_prompt_texts(&self) -> Vec<(String, &str)> {
        vec![("config.command".to_owned(), &self.command)]
    }
}
