//! `step.command`: a shell command as a validator, passing when it exits 0.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::kinds::{KindChecks, KindConfig, KindDefinition, standard_fields};
use crate::ports::{FAIL_OUT, ModulePorts, PortAccent, bundle, input, output, spec};

/// The command's output when it exits 0 (`fail_out`, shared with the poll,
/// is [`crate::ports::FAIL_OUT`]).
pub const PASS_OUT: &str = "pass_out";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandConfig {
    /// Run by `sh -c` in the run's workspace; exit status 0 means pass.
    pub command: String,
    /// A command is a quick check, so it has a timeout of its own from the
    /// start (60 s) and with it a `timeout_out` port; `null` is the
    /// modules' default of 30 minutes.
    pub timeout_seconds: Option<u32>,
    /// Attempts and the wait between them (PRODUCT §3.9).
    #[serde(flatten)]
    pub retry: crate::attempts::Retry,
    /// Whether it waits for every input or runs on the first (PRODUCT §3.1).
    #[serde(skip_serializing_if = "crate::join::Join::is_all")]
    pub join: crate::join::Join,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for CommandConfig {
    fn default() -> CommandConfig {
        CommandConfig {
            command: String::new(),
            timeout_seconds: Some(60),
            retry: crate::attempts::Retry::default(),
            join: crate::join::Join::All,
            extra: Extra::new(),
        }
    }
}

impl KindDefinition for CommandConfig {
    const WIRE_NAME: &'static str = "step.command";
    const TITLE: &'static str = "Command";
    const DESCRIPTION: &'static str = "Runs a shell command as a validator";
    const STARTS_PROCESSES: bool = true;
    const RUNS_A_COMMAND: bool = true;
}

impl KindConfig for CommandConfig {
    standard_fields!(extra, retry, timeout, join);

    fn ports(&self) -> ModulePorts {
        ModulePorts {
            inputs: vec![
                input(spec::DATA_IN, false, true),
                input(spec::SIGNAL_IN, false, false),
            ],
            outputs: vec![
                output(bundle(
                    PASS_OUT,
                    "Pass",
                    "The command's output when it exits 0",
                    PortAccent::Green,
                )),
                output(bundle(
                    FAIL_OUT,
                    "Fail",
                    "The command's output when it exits with another status",
                    PortAccent::Red,
                )),
                output(spec::SIGNAL_OUT),
                output(spec::ERROR_OUT),
            ],
        }
    }

    fn further_prompt_texts(&self) -> Vec<(String, &str)> {
        vec![("config.command".to_owned(), &self.command)]
    }
}

impl KindChecks for CommandConfig {}
