//! `step.poll` (Cloche's `poll`): a shell command run every interval until
//! it reports a decision with a `PATCHBAY_RESULT:<name>` line on stdout;
//! each declared result is a port, with `fail_out` for a script that fails
//! and `timeout_out` for a decision that never comes (72 hours unless set).

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::kinds::{KindChecks, KindConfig, KindDefinition, standard_fields};
use crate::ports::{
    Direction, FAIL_OUT, ModulePorts, Port, PortAccent, PortType, bundle, input, output, spec,
};
use crate::validate::{Code, ModuleFindings};

/// A poll's timeout when it sets none: Cloche's 72 hours.
pub const POLL_TIMEOUT_SECONDS: u32 = 72 * 3600;
/// The longest interval between two polls: a day.
pub const INTERVAL_LIMIT_SECONDS: u32 = 24 * 3600;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PollConfig {
    /// Run by `sh -c`, confined like a command, on every poll.
    pub command: String,
    /// Seconds from the end of one poll to the start of the next; the first
    /// runs at once.
    pub interval_seconds: u32,
    /// The decisions the script may report, each a port.
    pub results: Vec<String>,
    /// 72 hours from the start (`null` too).
    pub timeout_seconds: Option<u32>,
    #[serde(skip_serializing_if = "crate::join::Join::is_all")]
    pub join: crate::join::Join,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for PollConfig {
    fn default() -> PollConfig {
        PollConfig {
            command: String::new(),
            interval_seconds: 300,
            results: vec!["ready".to_owned()],
            timeout_seconds: Some(POLL_TIMEOUT_SECONDS),
            join: crate::join::Join::All,
            extra: Extra::new(),
        }
    }
}

impl KindDefinition for PollConfig {
    const WIRE_NAME: &'static str = "step.poll";
    const TITLE: &'static str = "Poll";
    const DESCRIPTION: &'static str = "Runs a command every interval until it reports a decision";
    const STARTS_PROCESSES: bool = true;
    const RUNS_A_COMMAND: bool = true;
}

/// The port of a declared result.
pub fn result_port_id(name: &str) -> String {
    format!("result:{name}")
}

/// The declared result a port id names, if it is one.
pub fn result_of_port(port_id: &str) -> Option<&str> {
    port_id.strip_prefix("result:")
}

/// Whether a result name may stand in a port id and a marker line.
pub fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "_-".contains(character))
}

impl PollConfig {
    /// The declared results, trimmed, each once.
    pub fn result_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for name in self.results.iter().map(|name| name.trim()) {
            if !name.is_empty() && !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }
}

impl KindConfig for PollConfig {
    standard_fields!(extra, timeout, join);

    fn ports(&self) -> ModulePorts {
        let mut outputs: Vec<Port> = self
            .result_names()
            .into_iter()
            .map(|name| Port {
                id: result_port_id(name),
                direction: Direction::Output,
                port_type: PortType::Bundle,
                label: format!("→ {name}"),
                title: name.to_owned(),
                description: format!("The script reported “{name}”"),
                accent: PortAccent::Green,
                required: false,
                accepts_many: false,
                retry: false,
            })
            .collect();
        outputs.extend([
            output(bundle(
                FAIL_OUT,
                "Fail",
                "The script failed (a non-zero exit with no decision, or three skipped polls)",
                PortAccent::Red,
            )),
            // Always: waiting has an end even when the timeout is the default.
            output(spec::TIMEOUT_OUT),
            output(spec::SIGNAL_OUT),
            output(spec::ERROR_OUT),
        ]);
        ModulePorts {
            inputs: vec![
                input(spec::DATA_IN, false, true),
                input(spec::SIGNAL_IN, false, false),
            ],
            outputs,
        }
    }

    fn default_timeout_seconds(&self) -> u32 {
        POLL_TIMEOUT_SECONDS
    }

    fn further_prompt_texts(&self) -> Vec<(String, &str)> {
        vec![("config.command".to_owned(), &self.command)]
    }
}

impl KindChecks for PollConfig {
    fn validate(&self, findings: &mut ModuleFindings<'_>) {
        let name = findings.name();
        if self.result_names().is_empty() {
            findings.report(
                Code::PollInvalid,
                Some("config.results".to_owned()),
                format!("\"{name}\" declares no result, so it can never decide: name at least one"),
            );
        }
        for (index, result) in self.results.iter().enumerate() {
            let result = result.trim();
            if result.is_empty() {
                continue;
            }
            if !plain_name(result) {
                findings.report(
                    Code::PollInvalid,
                    Some(format!("config.results[{index}]")),
                    format!(
                        "The result “{result}” of \"{name}\" is not a plain name: use letters, digits, _ and - (up to 64)"
                    ),
                );
            } else if matches!(result, "fail" | "timeout") {
                findings.report(
                    Code::PollInvalid,
                    Some(format!("config.results[{index}]")),
                    format!(
                        "The result “{result}” of \"{name}\" is built in: a poll always has “fail” and “timeout”"
                    ),
                );
            }
        }
        if !(1..=INTERVAL_LIMIT_SECONDS).contains(&self.interval_seconds) {
            findings.report(
                Code::PollInvalid,
                Some("config.interval_seconds".to_owned()),
                format!(
                    "\"{name}\" polls every {} s: the interval must be between 1 s and a day",
                    self.interval_seconds
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModuleConfig;
    use crate::ports::ports_of;

    #[test]
    fn each_declared_result_is_a_port_before_fail_and_timeout() {
        let config = ModuleConfig::from_kind_and_value(
            "step.poll",
            serde_json::json!({"command": "check.sh", "results": ["approved", " fix ", "approved", ""]}),
        )
        .unwrap();
        let ids: Vec<String> = ports_of(&config)
            .outputs
            .into_iter()
            .map(|port| port.id)
            .collect();
        assert_eq!(
            ids,
            [
                "result:approved",
                "result:fix",
                "fail_out",
                "timeout_out",
                "signal_out",
                "error_out"
            ]
        );
        assert_eq!(result_of_port("result:fix"), Some("fix"));
        assert_eq!(
            config.effective_timeout_seconds(),
            Some(POLL_TIMEOUT_SECONDS)
        );
        let unset = ModuleConfig::from_kind_and_value(
            "step.poll",
            serde_json::json!({"timeout_seconds": null}),
        )
        .unwrap();
        assert_eq!(
            unset.effective_timeout_seconds(),
            Some(POLL_TIMEOUT_SECONDS)
        );
        assert!(ports_of(&unset).output("timeout_out").is_some());
    }
}
