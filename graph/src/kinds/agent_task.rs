//! `step.agent_task`: one LLM session, the instruction and then each
//! re-prompt in the same session (DOC23 §2.1, §3.1), with an output port
//! per response when `separate_outputs` is on (DOC23 §5).

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::config::AgentConfig;
use crate::intent::IntentGate;
use crate::kinds::{
    KindChecks, KindConfig, KindDefinition, OutputSession, RePromptLevel, standard_fields,
};
use crate::ports::{
    Direction, ModulePorts, Port, PortAccent, PortType, activation_outputs, bundle,
    named_output_port_id, output, reprompt_port_id, reprompt_port_label, spec, task_inputs,
};
use crate::reprompt::{Attachment, RePrompt};
use crate::validate::{Code, ModuleFindings, ToolsOffer};

/// The port of the primary response alone, with `separate_outputs` on.
pub const ORIGINAL_OUT: &str = "original_out";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionMode {
    #[default]
    New,
    /// Continue the session of the upstream bundle's `source_session_key`.
    Continue,
}

impl SessionMode {
    pub fn is_new(&self) -> bool {
        *self == SessionMode::New
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentTaskConfig {
    pub instruction: String,
    pub attachments: Vec<Attachment>,
    pub agent_config: AgentConfig,
    pub re_prompts: Vec<RePrompt>,
    pub separate_outputs: bool,
    pub named_outputs: Vec<String>,
    pub session_mode: SessionMode,
    pub session_persist: bool,
    /// The last turn answers with an intent (PRODUCT §3.8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent_gate: Option<IntentGate>,
    /// Attempts and the wait between them (PRODUCT §3.9).
    #[serde(flatten)]
    pub retry: crate::attempts::Retry,
    /// The instruction of attempts after the first; empty means the
    /// instruction. Only it may use the retry variables.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub retry_instruction: String,
    /// Seconds one activation may take; `None` is 30 minutes. Set, it
    /// gives the module a `timeout_out` port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    /// Whether it waits for every input or runs on the first (PRODUCT §3.1).
    #[serde(skip_serializing_if = "crate::join::Join::is_all")]
    pub join: crate::join::Join,
    /// Checks run when it has done its work, and the prompts that follow
    /// a failed one (PRODUCT §3.11).
    #[serde(flatten)]
    pub validation: crate::validators::Validation,
    /// Variants compared side by side (DOC23 §7.2); set, each runs the
    /// whole activation and `comparison_out` carries them all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<crate::experiment::Variant>,
    /// Tools of the operator's MCP servers it may call (PRODUCT §3.17).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<crate::tools::ToolChoice>,
    /// At most this many tool calls an activation; `None` is
    /// [`crate::tools::DEFAULT_MAX_TOOL_CALLS`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u32>,
    /// The operator's webhooks told when one of its tool calls waits for a
    /// person (PRODUCT §3.17), as an approval's `notify`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl AgentTaskConfig {
    /// How many tool calls one activation may make.
    pub fn tool_call_limit(&self) -> u32 {
        self.max_tool_calls
            .unwrap_or(crate::tools::DEFAULT_MAX_TOOL_CALLS)
    }
}

impl KindDefinition for AgentTaskConfig {
    const WIRE_NAME: &'static str = "step.agent_task";
    const TITLE: &'static str = "Agent task";
    const DESCRIPTION: &'static str =
        "One LLM session: instruction, then re-prompts in the same session";
    const RE_PROMPTS: RePromptLevel = RePromptLevel::Module;
    const USES_PROVIDER: bool = true;
    const OUTPUT_SESSION: OutputSession = OutputSession::Chat;
}

impl KindConfig for AgentTaskConfig {
    standard_fields!(
        extra,
        instruction,
        agent_config,
        re_prompts,
        intent_gate,
        retry,
        retry_instruction,
        timeout,
        join,
        validation
    );

    fn further_prompt_texts(&self) -> Vec<(String, &str)> {
        crate::tools::locked_texts(&self.tools, "config.")
    }

    fn ports(&self) -> ModulePorts {
        let mut outputs = vec![output(spec::DATA_OUT)];
        outputs.extend(named_outputs(&self.named_outputs));
        if self.separate_outputs {
            outputs.push(Port {
                title: "Original Response".to_owned(),
                ..output(bundle(
                    ORIGINAL_OUT,
                    "📄 Original",
                    "Response to primary instruction only",
                    PortAccent::Accent,
                ))
            });
            // At most ten: a list is enough.
            let mut labels: Vec<String> = Vec::new();
            for (offset, re_prompt) in self.re_prompts.iter().enumerate() {
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
        if let Some(gate) = &self.intent_gate {
            outputs.extend(gate.ports());
        }
        if !self.variants.is_empty() {
            outputs.push(crate::experiment::comparison_port());
        }
        ModulePorts {
            inputs: task_inputs(false),
            outputs: activation_outputs(outputs),
        }
    }
}

impl KindChecks for AgentTaskConfig {
    fn validate(&self, findings: &mut ModuleFindings<'_>) {
        crate::experiment::report(
            findings,
            &self.variants,
            crate::experiment::VariedKind::AgentTask,
            self.intent_gate.is_some(),
            !self.validation.validators.is_empty(),
        );
        for (index, variant) in self.variants.iter().enumerate() {
            if let Some(provider) = &variant.config_overrides.provider {
                findings.provider(
                    provider,
                    &format!("config.variants[{index}].config_overrides.provider"),
                );
            }
        }
        findings.webhooks(&self.notify);
        let owner = format!("The instruction of \"{}\"", findings.name());
        findings.attachments(&self.attachments, "config.attachments", &owner);
        findings.tools(
            ToolsOffer {
                tools: &self.tools,
                tools_at: Some("config."),
                re_prompts: Some((&self.re_prompts, "config.")),
                provider: Some((
                    &self.agent_config.provider,
                    "config.agent_config.provider".to_owned(),
                )),
            },
            self.max_tool_calls,
        );
        self.validate_variants_tools(findings);
        if self.intent_gate.is_some() && self.re_prompts.is_empty() && !self.tools.is_empty() {
            // Its one turn answers the gate, and a turn answering a gate
            // offers no tools: they would never be called.
            let name = findings.name();
            findings.report(
                Code::ToolInvalid,
                Some("config.tools".to_owned()),
                format!(
                    "\"{name}\" has tools and an intent gate but no re-prompt: its only turn answers the gate, which offers no tools. Add a re-prompt for the tools' work"
                ),
            );
        }
        if let Some(gate) = &self.intent_gate {
            findings.intent_gate(gate);
            if self
                .named_outputs
                .iter()
                .any(|name| !name.trim().is_empty())
            {
                let name = findings.name();
                findings.report(
                    Code::IntentGateInvalid,
                    Some("config.named_outputs".to_owned()),
                    format!(
                        "\"{name}\" has an intent gate and named outputs: both shape its last reply, which the gate makes JSON. Hand the sections on as handoff fields instead"
                    ),
                );
            }
        }
    }

    fn validate_cables(&self, findings: &mut ModuleFindings<'_>) {
        if !self.session_mode.is_new() {
            findings.chat_continued();
        }
    }
}

impl AgentTaskConfig {
    /// A variant that changes the tools, the re-prompts that narrow them
    /// or the provider that calls them is checked as the module is (the
    /// run would refuse it in the same words); what it keeps of the
    /// module's was checked with the module.
    fn validate_variants_tools(&self, findings: &mut ModuleFindings<'_>) {
        for (index, variant) in self.variants.iter().enumerate() {
            let overrides = &variant.config_overrides;
            let at = format!("config.variants[{index}].config_overrides.");
            let tools = overrides.tools.as_deref().unwrap_or(&self.tools);
            let tools_changed = overrides.tools.is_some();
            let re_prompts = match &overrides.re_prompts {
                Some(re_prompts) => Some((re_prompts.as_slice(), at.as_str())),
                None => tools_changed.then_some((self.re_prompts.as_slice(), "config.")),
            };
            let provider = match &overrides.provider {
                Some(provider) => Some((provider.as_str(), format!("{at}provider"))),
                None => tools_changed.then(|| {
                    (
                        self.agent_config.provider.as_str(),
                        "config.agent_config.provider".to_owned(),
                    )
                }),
            };
            findings.tools(
                ToolsOffer {
                    tools,
                    tools_at: tools_changed.then_some(at.as_str()),
                    re_prompts,
                    provider,
                },
                None,
            );
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModuleConfig;
    use crate::ports::ports_of;

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
}
