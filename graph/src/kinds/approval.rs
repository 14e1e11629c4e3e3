//! `step.approval`: a person decides. The run waits here (durably, holding
//! no slot) until someone with the graph's edit link, or an approver link
//! of the run, approves the value (as they may have edited it), rejects it
//! with a reason, or sends it back with feedback; or until its timeout.

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::kinds::{KindChecks, KindConfig, KindDefinition};
use crate::ports::{ModulePorts, PortAccent, bundle, input, output, spec};
use crate::validate::{Code, ModuleFindings};

/// What an approval asks when its config asks nothing.
pub const DEFAULT_ASK: &str = "Approve this?";

/// The longest an approval may wait: 30 days.
pub const TIMEOUT_LIMIT_SECONDS: u32 = 30 * 24 * 3600;

/// The ports of a decision: approved and sent back as a review gate's,
/// and rejected.
pub use super::review_gate::{APPROVED_OUT, REVISE_OUT};
pub const REJECTED_OUT: &str = "rejected_out";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ApprovalConfig {
    /// What the person is asked, with `{{ … }}` as in prompts; empty asks
    /// [`DEFAULT_ASK`].
    #[serde(skip_serializing_if = "String::is_empty")]
    pub ask: String,
    /// The input ports whose values the person is shown; empty shows all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub show: Vec<String>,
    /// How long it waits for a decision, in seconds; then the value goes
    /// to `timeout_out`. `None` waits as long as the run may.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    /// Who is told it waits: ids of webhooks the operator configured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<String>,
    /// How many times a revision loop through it may go round: a decision
    /// to send it back on its last round goes to `exhausted_out`.
    pub max_rounds: u32,
    #[serde(skip_serializing_if = "crate::join::Join::is_all")]
    pub join: crate::join::Join,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for ApprovalConfig {
    fn default() -> ApprovalConfig {
        ApprovalConfig {
            ask: String::new(),
            show: Vec::new(),
            timeout_seconds: None,
            notify: Vec::new(),
            max_rounds: 3,
            join: crate::join::Join::All,
            extra: Extra::new(),
        }
    }
}

impl ApprovalConfig {
    /// What the person is asked, before its variables are filled.
    pub fn question(&self) -> &str {
        if self.ask.trim().is_empty() {
            DEFAULT_ASK
        } else {
            &self.ask
        }
    }

    /// Whether the person is shown what came on `port`.
    pub fn shows(&self, port: &str) -> bool {
        self.show.is_empty() || self.show.iter().any(|shown| shown == port)
    }
}

impl KindDefinition for ApprovalConfig {
    const WIRE_NAME: &'static str = "step.approval";
    const TITLE: &'static str = "Approval";
    const DESCRIPTION: &'static str = "A person approves, rejects or sends the work back";
    /// A revision loop through it stops after `max_rounds`.
    const BOUNDS_LOOPS: bool = true;
}

impl KindConfig for ApprovalConfig {
    fn extra(&self) -> &Extra {
        &self.extra
    }

    fn join(&self) -> Option<crate::join::Join> {
        Some(self.join)
    }

    fn join_slot(&mut self) -> Option<&mut crate::join::Join> {
        Some(&mut self.join)
    }

    fn further_prompt_texts(&self) -> Vec<(String, &str)> {
        vec![("config.ask".to_owned(), &self.ask)]
    }

    fn ports(&self) -> ModulePorts {
        let mut outputs = vec![
            output(bundle(
                APPROVED_OUT,
                "Approved",
                "The value, as the person approved it (and may have edited it)",
                PortAccent::Green,
            )),
            output(bundle(
                REJECTED_OUT,
                "Rejected",
                "The value and the person's reason",
                PortAccent::Red,
            )),
            output(bundle(
                REVISE_OUT,
                "Send back",
                "The person's feedback, for another round in the same session",
                PortAccent::Amber,
            )),
            output(spec::EXHAUSTED_OUT),
        ];
        if self.timeout_seconds.is_some() {
            outputs.push(output(spec::TIMEOUT_OUT));
        }
        outputs.extend([output(spec::SIGNAL_OUT), output(spec::ERROR_OUT)]);
        ModulePorts {
            inputs: vec![
                input(spec::DATA_IN, true, true),
                input(spec::CONTEXT_IN, false, true),
            ],
            outputs,
        }
    }
}

impl KindChecks for ApprovalConfig {
    fn validate(&self, findings: &mut ModuleFindings<'_>) {
        let name = findings.name();
        if let Some(seconds) = self.timeout_seconds
            && !(1..=TIMEOUT_LIMIT_SECONDS).contains(&seconds)
        {
            findings.report(
                Code::ApprovalInvalid,
                Some("config.timeout_seconds".to_owned()),
                format!(
                    "\"{name}\" waits from 1 second to 30 days for a decision, not {seconds} s"
                ),
            );
        }
        if self.max_rounds == 0 {
            findings.report(
                Code::ApprovalInvalid,
                Some("config.max_rounds".to_owned()),
                format!("\"{name}\" needs at least 1 round"),
            );
        }
        for (index, port) in self.show.iter().enumerate() {
            if port != "data_in" && port != "context_in" {
                findings.report(
                    Code::ApprovalInvalid,
                    Some(format!("config.show[{index}]")),
                    format!("\"{name}\" can show data_in and context_in, not “{port}”"),
                );
            }
        }
        findings.webhooks(&self.notify);
    }
}
