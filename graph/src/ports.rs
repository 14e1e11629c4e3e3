//! Ports, computed from a module's config by its kind (PRODUCT §2). Nothing
//! stores ports: the editor, the validator and the run engine all call
//! [`ports`], so a port exists exactly when the config says it does.

use serde::{Deserialize, Serialize};

use crate::config::ModuleConfig;
use crate::{Module, RePrompt};

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
    /// An output whose loops are bounded (a retry port), see `validate`.
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

/// Port id of the k-th re-prompt's response (1-based, as in `Re-prompt k`).
pub fn reprompt_port_id(index: usize) -> String {
    format!("reprompt_{index}_out")
}

/// Port id of a named output.
pub fn named_output_port_id(name: &str) -> String {
    format!("named:{name}")
}

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

fn ordinal(index: usize) -> String {
    const WORDS: [&str; 10] = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth",
    ];
    match WORDS.get(index.wrapping_sub(1)) {
        Some(word) => (*word).to_owned(),
        None => format!("{index}th"),
    }
}

struct Spec {
    id: &'static str,
    port_type: PortType,
    label: &'static str,
    description: &'static str,
    accent: PortAccent,
}

fn input(spec: Spec, required: bool, accepts_many: bool) -> Port {
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

fn output(spec: Spec) -> Port {
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
        retry: matches!(spec.id, "fail_out" | "error_out"),
    }
}

const fn bundle(
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

const DATA_IN: Spec = bundle(
    "data_in",
    "Data",
    "Upstream outputs (chain history)",
    PortAccent::Accent,
);
const CONTEXT_IN: Spec = bundle(
    "context_in",
    "Context",
    "Extra context, and revision feedback",
    PortAccent::Cyan,
);
const INSTRUCTION_IN: Spec = bundle(
    "instruction_in",
    "Instruction",
    "Appended to the instruction",
    PortAccent::Violet,
);
const SIGNAL_IN: Spec = Spec {
    id: "signal_in",
    port_type: PortType::Signal,
    label: "Start after",
    description: "Waits until the wired module has finished",
    accent: PortAccent::Muted,
};
const DATA_OUT: Spec = bundle(
    "data_out",
    "Output",
    "The merged output of every response",
    PortAccent::Accent,
);
const SIGNAL_OUT: Spec = Spec {
    id: "signal_out",
    port_type: PortType::Signal,
    label: "Done",
    description: "Fires when the module has finished (after its last re-prompt, if it has any)",
    accent: PortAccent::Muted,
};
const RECEIPT_OUT: Spec = Spec {
    id: "receipt_out",
    port_type: PortType::Receipt,
    label: "Receipt",
    description: "Tokens, duration, cost and re-prompt count of the activation",
    accent: PortAccent::Muted,
};
const ERROR_OUT: Spec = bundle(
    "error_out",
    "Error",
    "The failure, when wired, instead of failing the run",
    PortAccent::Red,
);

/// The standard inputs of the LLM kinds that take an instruction.
fn task_inputs(data_required: bool) -> Vec<Port> {
    vec![
        input(DATA_IN, data_required, true),
        input(CONTEXT_IN, false, true),
        input(INSTRUCTION_IN, false, false),
        input(SIGNAL_IN, false, false),
    ]
}

/// The ports of a module, computed from its kind and config.
pub fn ports(module: &Module) -> ModulePorts {
    ports_of(&module.config)
}

/// The ports a config gives, whichever module holds it.
pub fn ports_of(config: &ModuleConfig) -> ModulePorts {
    match config {
        ModuleConfig::Input(_) => ModulePorts {
            inputs: Vec::new(),
            outputs: vec![
                output(bundle(
                    "data_out",
                    "Input",
                    "The text and files given when the run starts",
                    PortAccent::Accent,
                )),
                output(SIGNAL_OUT),
            ],
        },
        ModuleConfig::Output(_) => ModulePorts {
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
            outputs: Vec::new(),
        },
        ModuleConfig::AgentTask(config) => {
            let mut outputs = vec![output(DATA_OUT)];
            outputs.extend(named_outputs(&config.named_outputs));
            if config.separate_outputs {
                outputs.push(Port {
                    title: "Original Response".to_owned(),
                    ..output(bundle(
                        "original_out",
                        "📄 Original",
                        "Response to primary instruction only",
                        PortAccent::Accent,
                    ))
                });
                // At most ten: a list is enough.
                let mut labels: Vec<String> = Vec::new();
                for (offset, re_prompt) in config.re_prompts.iter().enumerate() {
                    let index = offset + 1;
                    // Two re-prompts of the same text would read alike:
                    // the second says its number instead.
                    let mut label = reprompt_port_label(index, re_prompt);
                    if labels.contains(&label) {
                        label = format!("📄 Re-prompt {index}");
                    }
                    labels.push(label.clone());
                    outputs.push(Port {
                        id: reprompt_port_id(index),
                        direction: Direction::Output,
                        port_type: PortType::Bundle,
                        label,
                        title: format!("Re-prompt {index}"),
                        description: format!("Response to {} follow-up", ordinal(index)),
                        accent: PortAccent::Cyan,
                        required: false,
                        accepts_many: false,
                        retry: false,
                    });
                }
            }
            outputs.extend([output(SIGNAL_OUT), output(RECEIPT_OUT), output(ERROR_OUT)]);
            ModulePorts {
                inputs: task_inputs(false),
                outputs,
            }
        }
        ModuleConfig::Coding(_) => ModulePorts {
            inputs: task_inputs(false),
            outputs: vec![
                output(bundle(
                    "data_out",
                    "Output",
                    "Every agent's summary and re-prompt responses",
                    PortAccent::Accent,
                )),
                output(bundle(
                    "diff_out",
                    "Diff",
                    "git diff of the workspace",
                    PortAccent::Green,
                )),
                output(bundle(
                    "files_out",
                    "Files",
                    "The files the agents changed",
                    PortAccent::Green,
                )),
                output(bundle(
                    "summary_out",
                    "Summary",
                    "The last agent's final message",
                    PortAccent::Cyan,
                )),
                output(bundle(
                    "test_results_out",
                    "Test results",
                    "The last tests the agents ran",
                    PortAccent::Amber,
                )),
                output(SIGNAL_OUT),
                output(RECEIPT_OUT),
                output(ERROR_OUT),
            ],
        },
        ModuleConfig::ReviewGate(_) => ModulePorts {
            inputs: task_inputs(true),
            outputs: vec![
                output(bundle(
                    "approved_out",
                    "Approved",
                    "The reviewed input, once approved",
                    PortAccent::Green,
                )),
                output(bundle(
                    "revise_out",
                    "Revise",
                    "Feedback for another round",
                    PortAccent::Amber,
                )),
                output(bundle(
                    "data_out",
                    "Review",
                    "The reviewer's merged responses",
                    PortAccent::Accent,
                )),
                output(SIGNAL_OUT),
                output(RECEIPT_OUT),
                output(ERROR_OUT),
            ],
        },
        ModuleConfig::RedTeam(_) => ModulePorts {
            inputs: task_inputs(true),
            outputs: vec![
                output(bundle(
                    "data_out",
                    "Attacks",
                    "The red team's merged responses",
                    PortAccent::Accent,
                )),
                output(SIGNAL_OUT),
                output(RECEIPT_OUT),
                output(ERROR_OUT),
            ],
        },
        ModuleConfig::Panel(_) => ModulePorts {
            inputs: vec![
                input(DATA_IN, false, true),
                input(CONTEXT_IN, false, true),
                input(SIGNAL_IN, false, false),
            ],
            outputs: vec![
                output(bundle(
                    "data_out",
                    "Discussion",
                    "The whole discussion and its conclusion",
                    PortAccent::Accent,
                )),
                output(SIGNAL_OUT),
                output(RECEIPT_OUT),
                output(ERROR_OUT),
            ],
        },
        ModuleConfig::Judge(_) => ModulePorts {
            inputs: vec![
                input(
                    bundle("target_in", "Target", "What is scored", PortAccent::Accent),
                    true,
                    false,
                ),
                input(
                    bundle(
                        "comparison_in",
                        "Compare with",
                        "Scored side by side with the target",
                        PortAccent::Cyan,
                    ),
                    false,
                    false,
                ),
                input(SIGNAL_IN, false, false),
            ],
            outputs: vec![
                output(bundle(
                    "scores_out",
                    "Scores",
                    "Structured scores per criterion",
                    PortAccent::Amber,
                )),
                output(bundle(
                    "data_out",
                    "Verdict",
                    "The judge's reasoning and scores as text",
                    PortAccent::Accent,
                )),
                output(SIGNAL_OUT),
                output(ERROR_OUT),
            ],
        },
        ModuleConfig::Transform(_) => ModulePorts {
            inputs: vec![
                input(DATA_IN, true, true),
                input(CONTEXT_IN, false, true),
                input(SIGNAL_IN, false, false),
            ],
            outputs: vec![
                output(bundle(
                    "data_out",
                    "Output",
                    "The rewritten input",
                    PortAccent::Accent,
                )),
                output(SIGNAL_OUT),
                output(RECEIPT_OUT),
                output(ERROR_OUT),
            ],
        },
        ModuleConfig::ClaimExtractor(_) => ModulePorts {
            inputs: vec![
                input(DATA_IN, true, true),
                input(CONTEXT_IN, false, true),
                input(SIGNAL_IN, false, false),
            ],
            outputs: vec![
                output(bundle(
                    "data_out",
                    "Claims",
                    "A JSON list of the claims found",
                    PortAccent::Accent,
                )),
                output(SIGNAL_OUT),
                output(RECEIPT_OUT),
                output(ERROR_OUT),
            ],
        },
        ModuleConfig::Command(_) => ModulePorts {
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
            ],
        },
        ModuleConfig::Unknown { .. } => ModulePorts::default(),
    }
}

fn named_outputs(names: &[String]) -> Vec<Port> {
    let mut seen = std::collections::HashSet::new();
    names
        .iter()
        .map(|name| name.trim())
        .filter(|name| !name.is_empty() && seen.insert(*name))
        .map(|name| Port {
            id: named_output_port_id(name),
            direction: Direction::Output,
            port_type: PortType::Bundle,
            label: format!("📄 {name}"),
            title: name.to_owned(),
            description: format!("The \"{name}\" section of the last response"),
            accent: PortAccent::Violet,
            required: false,
            accepts_many: false,
            retry: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AgentTaskConfig;

    fn agent_task(re_prompts: &[&str], separate_outputs: bool) -> ModuleConfig {
        ModuleConfig::AgentTask(AgentTaskConfig {
            re_prompts: re_prompts.iter().copied().map(RePrompt::from).collect(),
            separate_outputs,
            ..AgentTaskConfig::default()
        })
    }

    fn output_ids(config: &ModuleConfig) -> Vec<String> {
        ports_of(config)
            .outputs
            .into_iter()
            .map(|port| port.id)
            .collect()
    }

    #[test]
    fn separate_outputs_off_gives_only_the_standard_outputs() {
        let config = agent_task(&["Review your work", "Finalize"], false);
        assert_eq!(
            output_ids(&config),
            ["data_out", "signal_out", "receipt_out", "error_out"]
        );
    }

    #[test]
    fn separate_outputs_on_adds_original_and_one_port_per_re_prompt() {
        let long = "Incorporate your review into a final consolidated version.";
        let config = agent_task(&["Review your work", long], true);
        let ports = ports_of(&config);
        let ids: Vec<&str> = ports.outputs.iter().map(|port| port.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "data_out",
                "original_out",
                "reprompt_1_out",
                "reprompt_2_out",
                "signal_out",
                "receipt_out",
                "error_out"
            ]
        );
        let original = ports.output("original_out").unwrap();
        assert_eq!(original.title, "Original Response");
        assert_eq!(original.description, "Response to primary instruction only");
        let first = ports.output("reprompt_1_out").unwrap();
        assert_eq!(first.label, "📄 \"Review your work\"");
        assert_eq!(first.title, "Re-prompt 1");
        assert_eq!(first.description, "Response to first follow-up");
        assert_eq!(
            ports.output("reprompt_2_out").unwrap().label,
            "📄 Re-prompt 2"
        );
    }

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
    fn re_prompts_of_the_same_text_get_labels_that_differ() {
        let ports = ports_of(&agent_task(&["Again", "Again", "Other"], true));
        let labels: Vec<&str> = ports
            .outputs
            .iter()
            .filter(|port| port.id.starts_with("reprompt_"))
            .map(|port| port.label.as_str())
            .collect();
        assert_eq!(labels, ["📄 \"Again\"", "📄 Re-prompt 2", "📄 \"Other\""]);
    }

    #[test]
    fn named_outputs_get_their_own_ports() {
        let config = ModuleConfig::AgentTask(AgentTaskConfig {
            named_outputs: vec![
                "Analysis".to_owned(),
                "Summary".to_owned(),
                "Summary".to_owned(),
            ],
            ..AgentTaskConfig::default()
        });
        let ports = ports_of(&config);
        let analysis = ports.output("named:Analysis").unwrap();
        assert_eq!(analysis.label, "📄 Analysis");
        assert_eq!(
            ports
                .outputs
                .iter()
                .filter(|port| port.id == "named:Summary")
                .count(),
            1
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
        assert!(judge.input("target_in").unwrap().required);
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
