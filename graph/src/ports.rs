//! Ports, computed from a module's config by its kind (PRODUCT §2). Nothing
//! stores ports: the editor, the validator and the run engine all call
//! [`ports`], so a port exists exactly when the config says it does.

use serde::{Deserialize, Serialize};

use crate::{Module, ModuleConfig, RePrompt};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Input,
    Output,
}

/// What a port carries (PRODUCT §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum PortType {
    /// A ContextBundle.
    Bundle,
    /// "This module finished".
    Signal,
    /// Run metadata of one activation.
    Receipt,
}

impl PortType {
    /// Whether a cable may go from an output of this type to an input of
    /// type `input`.
    pub fn connects_to(self, input: PortType) -> bool {
        matches!(
            (self, input),
            (PortType::Bundle, PortType::Bundle)
                | (PortType::Signal, PortType::Signal)
                | (PortType::Receipt, PortType::Bundle | PortType::Receipt)
        )
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The colour a port is drawn in, as a design token the stylesheet maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum PortAccent {
    Accent,
    Cyan,
    Green,
    Amber,
    Red,
    Violet,
    Muted,
}

impl PortAccent {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Port {
    /// The id cables use, e.g. `data_out`, `reprompt_2_out`, `named:Summary`.
    pub id: String,
    pub direction: Direction,
    pub port_type: PortType,
    /// Shown next to the port on the canvas.
    pub label: String,
    /// Shown in the output popup (DOC23 §5).
    pub title: String,
    pub description: String,
    pub accent: PortAccent,
    /// An input that must be wired for the module to run.
    pub required: bool,
    /// An input that accepts several cables.
    pub accepts_many: bool,
    /// An output a loop through which ends by itself (an intent chosen by
    /// a model under the attempts of its module), see `topology`.
    pub retry: bool,
}

/// A module's ports, inputs and outputs in display order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModulePorts {
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
}

impl ModulePorts {
    pub fn input(&self, id: &str) -> Option<&Port> {
        self.inputs.iter().find(|port| port.id == id)
    }

    pub fn output(&self, id: &str) -> Option<&Port> {
        self.outputs.iter().find(|port| port.id == id)
    }
}

/// The ids of the ports several kinds have, which the engine, the coding
/// modules, the app and the server name; a port only one kind has keeps
/// its id in the kind's file (`kinds::judge::SCORES_OUT`, …).
pub const DATA_IN: &str = "data_in";
pub const CONTEXT_IN: &str = "context_in";
pub const INSTRUCTION_IN: &str = "instruction_in";
pub const SIGNAL_IN: &str = "signal_in";
pub const DATA_OUT: &str = "data_out";
pub const SIGNAL_OUT: &str = "signal_out";
pub const RECEIPT_OUT: &str = "receipt_out";
pub const ERROR_OUT: &str = "error_out";
pub const GIVE_UP_OUT: &str = "give_up_out";
pub const EXHAUSTED_OUT: &str = "exhausted_out";
pub const TIMEOUT_OUT: &str = "timeout_out";
/// A command's or a poll's failed check.
pub const FAIL_OUT: &str = "fail_out";

/// Port id of the k-th re-prompt's response (1-based, as in `Re-prompt k`).
pub fn reprompt_port_id(index: usize) -> String {
    format!("reprompt_{index}_out")
}

/// Port id of a named output.
pub fn named_output_port_id(name: &str) -> String {
    format!("{NAMED_OUTPUT_PREFIX}{name}")
}

/// What every named output's port id starts with.
pub const NAMED_OUTPUT_PREFIX: &str = "named:";

/// A re-prompt port's canvas label: the text itself when it is short.
pub fn reprompt_port_label(index: usize, re_prompt: &RePrompt) -> String {
    let text = re_prompt.text.trim();
    let length = text.chars().count();
    if length > 0 && length <= 30 {
        format!("📄 \"{text}\"")
    } else {
        format!("📄 Re-prompt {index}")
    }
}

/// What a port reports when it is one of its module's failure outcomes (an
/// error, a failed check, a request for revision). A failure that fires on
/// a port no cable leaves fails the run, as Cloche's default "abort" does;
/// a success outcome with no cable only ends its branch.
pub fn failure_outcome(port_id: &str) -> Option<&'static str> {
    match port_id {
        ERROR_OUT => Some("an error"),
        FAIL_OUT => Some("a failed check"),
        crate::kinds::review_gate::REVISE_OUT => Some("a request for revision"),
        crate::kinds::approval::REJECTED_OUT => Some("a rejection"),
        GIVE_UP_OUT => Some("giving up"),
        EXHAUSTED_OUT => Some("running out of rounds"),
        TIMEOUT_OUT => Some("a timeout"),
        _ => None,
    }
}

/// Failure outcomes that end the run naming the module when nothing takes
/// them, which is what a person expects of an error, a timeout, giving up
/// after the attempts they asked for, or a person's rejection ("stop");
/// an unwired one is not warned about (see `validate`). A decision a model
/// or a check makes (a failed check, a revision) is.
pub fn failure_without_warning(port_id: &str) -> bool {
    matches!(
        port_id,
        ERROR_OUT
            | TIMEOUT_OUT
            | GIVE_UP_OUT
            | EXHAUSTED_OUT
            | crate::kinds::approval::REJECTED_OUT
    )
}

pub(crate) struct Spec {
    id: &'static str,
    port_type: PortType,
    label: &'static str,
    description: &'static str,
    accent: PortAccent,
}

pub(crate) fn input(spec: Spec, required: bool, accepts_many: bool) -> Port {
    Port {
        id: spec.id.to_owned(),
        direction: Direction::Input,
        port_type: spec.port_type,
        label: spec.label.to_owned(),
        title: spec.label.to_owned(),
        description: spec.description.to_owned(),
        accent: spec.accent,
        required,
        accepts_many,
        retry: false,
    }
}

pub(crate) fn output(spec: Spec) -> Port {
    Port {
        id: spec.id.to_owned(),
        direction: Direction::Output,
        port_type: spec.port_type,
        label: spec.label.to_owned(),
        title: spec.label.to_owned(),
        description: spec.description.to_owned(),
        accent: spec.accent,
        required: false,
        accepts_many: false,
        retry: false,
    }
}

pub(crate) const fn bundle(
    id: &'static str,
    label: &'static str,
    description: &'static str,
    accent: PortAccent,
) -> Spec {
    Spec {
        id,
        port_type: PortType::Bundle,
        label,
        description,
        accent,
    }
}

/// What the ports several kinds have are: id, type, label, description
/// and colour.
pub(crate) mod spec {
    use super::{PortAccent, PortType, Spec, bundle};

    pub(crate) const DATA_IN: Spec = bundle(
        super::DATA_IN,
        "Data",
        "Upstream outputs (chain history)",
        PortAccent::Accent,
    );
    pub(crate) const CONTEXT_IN: Spec = bundle(
        super::CONTEXT_IN,
        "Context",
        "Extra context, and revision feedback",
        PortAccent::Cyan,
    );
    pub(crate) const INSTRUCTION_IN: Spec = bundle(
        super::INSTRUCTION_IN,
        "Instruction",
        "Appended to the instruction",
        PortAccent::Violet,
    );
    pub(crate) const SIGNAL_IN: Spec = Spec {
        id: super::SIGNAL_IN,
        port_type: PortType::Signal,
        label: "Start after",
        description: "Waits until the wired module has finished",
        accent: PortAccent::Muted,
    };
    pub(crate) const DATA_OUT: Spec = bundle(
        super::DATA_OUT,
        "Output",
        "The merged output of every response",
        PortAccent::Accent,
    );
    pub(crate) const SIGNAL_OUT: Spec = Spec {
        id: super::SIGNAL_OUT,
        port_type: PortType::Signal,
        label: "Done",
        description: "Fires when the module has finished (after its last re-prompt, if it has any)",
        accent: PortAccent::Muted,
    };
    pub(crate) const RECEIPT_OUT: Spec = Spec {
        id: super::RECEIPT_OUT,
        port_type: PortType::Receipt,
        label: "Receipt",
        description: "Tokens, duration, cost and re-prompt count of the activation",
        accent: PortAccent::Muted,
    };
    pub(crate) const ERROR_OUT: Spec = bundle(
        super::ERROR_OUT,
        "Error",
        "The failure, when wired, instead of failing the run",
        PortAccent::Red,
    );
    pub(crate) const GIVE_UP_OUT: Spec = bundle(
        super::GIVE_UP_OUT,
        "Gave up",
        "Why the module gave up, once its attempts are used",
        PortAccent::Red,
    );
    /// One rule for every review loop that can run out of rounds (the review
    /// gate, a coding module's review chain): the work goes out here, with the
    /// last feedback, instead of on the ports that pass approved work on; like
    /// any failure outcome, with no cable it fails the run.
    pub(crate) const EXHAUSTED_OUT: Spec = bundle(
        super::EXHAUSTED_OUT,
        "Out of rounds",
        "The last work and feedback, when the rounds ran out unapproved",
        PortAccent::Red,
    );
    pub(crate) const TIMEOUT_OUT: Spec = bundle(
        super::TIMEOUT_OUT,
        "Timed out",
        "What the module had when its timeout fired",
        PortAccent::Amber,
    );
}

/// The standard inputs of the LLM kinds that take an instruction.
pub(crate) fn task_inputs(data_required: bool) -> Vec<Port> {
    vec![
        input(spec::DATA_IN, data_required, true),
        input(spec::CONTEXT_IN, false, true),
        input(spec::INSTRUCTION_IN, false, false),
        input(spec::SIGNAL_IN, false, false),
    ]
}

/// The ports of an LLM kind that answers its input in one `data_out`
/// (transform, claim extractor, panel): no instruction input, and the
/// activation outputs after `data_out`.
pub(crate) fn one_answer_ports(
    data_required: bool,
    label: &'static str,
    description: &'static str,
) -> ModulePorts {
    ModulePorts {
        inputs: vec![
            input(spec::DATA_IN, data_required, true),
            input(spec::CONTEXT_IN, false, true),
            input(spec::SIGNAL_IN, false, false),
        ],
        outputs: activation_outputs([output(bundle(
            DATA_OUT,
            label,
            description,
            PortAccent::Accent,
        ))]),
    }
}

/// `outputs`, then the outputs every LLM activation ends with.
pub(crate) fn activation_outputs(outputs: impl IntoIterator<Item = Port>) -> Vec<Port> {
    outputs
        .into_iter()
        .chain([
            output(spec::SIGNAL_OUT),
            output(spec::RECEIPT_OUT),
            output(spec::ERROR_OUT),
        ])
        .collect()
}

/// The ports of a module, computed from its kind and config.
pub fn ports(module: &Module) -> ModulePorts {
    ports_of(&module.config)
}

/// The ports a config gives, whichever module holds it; an unknown kind
/// has none.
pub fn ports_of(config: &ModuleConfig) -> ModulePorts {
    let Some(kind_config) = config.kind_config() else {
        return ModulePorts::default();
    };
    let mut ports = kind_config.ports();
    // The ways an attempt ends badly that the config turns on (PRODUCT
    // §3.9), in every kind alike, just before `error_out`.
    let mut endings = Vec::new();
    // Attempts to use up, or fix turns (validators), end in giving up.
    let gives_up = kind_config
        .retry()
        .is_some_and(crate::attempts::Retry::retries)
        || kind_config
            .validation()
            .is_some_and(|validation| !validation.is_empty());
    if gives_up {
        endings.push(output(spec::GIVE_UP_OUT));
    }
    if kind_config.timeout_seconds().is_some() && ports.output(TIMEOUT_OUT).is_none() {
        endings.push(output(spec::TIMEOUT_OUT));
    }
    let at = ports
        .outputs
        .iter()
        .position(|port| port.id == ERROR_OUT)
        .unwrap_or(ports.outputs.len());
    ports.outputs.splice(at..at, endings);
    ports
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_limit_is_thirty_characters() {
        let exactly_thirty = "a".repeat(30);
        let thirty_one = "a".repeat(31);
        assert_eq!(
            reprompt_port_label(1, &RePrompt::new(exactly_thirty.clone())),
            format!("📄 \"{exactly_thirty}\"")
        );
        assert_eq!(
            reprompt_port_label(1, &RePrompt::new(thirty_one)),
            "📄 Re-prompt 1"
        );
        // Characters, not bytes.
        let accented = "é".repeat(30);
        assert_eq!(
            reprompt_port_label(3, &RePrompt::new(accented.clone())),
            format!("📄 \"{accented}\"")
        );
        assert_eq!(
            reprompt_port_label(2, &RePrompt::new("   ")),
            "📄 Re-prompt 2"
        );
    }

    #[test]
    fn compatibility_follows_the_product_rule() {
        use PortType::*;
        assert!(Bundle.connects_to(Bundle));
        assert!(Signal.connects_to(Signal));
        assert!(Receipt.connects_to(Bundle));
        assert!(Receipt.connects_to(Receipt));
        assert!(!Bundle.connects_to(Signal));
        assert!(!Signal.connects_to(Bundle));
        assert!(!Bundle.connects_to(Receipt));
        assert!(!Receipt.connects_to(Signal));
    }

    #[test]
    fn every_kind_has_the_ports_the_product_names() {
        use crate::ModuleKind;
        let expect = |kind: ModuleKind, inputs: &[&str], outputs: &[&str]| {
            let ports = ports_of(&ModuleConfig::new_for(kind));
            for id in inputs {
                assert!(ports.input(id).is_some(), "{kind} lacks input {id}");
            }
            for id in outputs {
                assert!(ports.output(id).is_some(), "{kind} lacks output {id}");
            }
        };
        let task_in = ["data_in", "context_in", "instruction_in", "signal_in"];
        expect(
            ModuleKind::AgentTask,
            &task_in,
            &["data_out", "signal_out", "receipt_out", "error_out"],
        );
        expect(
            ModuleKind::Coding,
            &task_in,
            &[
                "data_out",
                "diff_out",
                "files_out",
                "summary_out",
                "test_results_out",
                "signal_out",
                "receipt_out",
            ],
        );
        expect(
            ModuleKind::ReviewGate,
            &task_in,
            &[
                "approved_out",
                "revise_out",
                "data_out",
                "signal_out",
                "receipt_out",
            ],
        );
        expect(
            ModuleKind::Judge,
            &["target_in", "comparison_in"],
            &["scores_out", "data_out", "signal_out"],
        );
        expect(ModuleKind::Command, &[], &["pass_out", "fail_out"]);
        let judge = ports_of(&ModuleConfig::new_for(ModuleKind::Judge));
        assert!(!judge.input("target_in").unwrap().required);
        assert!(!judge.input("comparison_in").unwrap().required);
        let coding = ports_of(&ModuleConfig::new_for(ModuleKind::Coding));
        assert!(
            coding
                .outputs
                .iter()
                .all(|port| !port.id.starts_with("reprompt_"))
        );
    }
}
