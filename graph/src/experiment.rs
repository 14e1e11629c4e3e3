//! Experiments (DOC23 §7.2): variants of an agent task or a coding module,
//! compared. An
//! experiment lives on the module it varies — a "Variants" section of the
//! agent task — rather than in a module of its own that names a target:
//! on the canvas the variants are where the prompt is, the module keeps
//! its inputs (each variant runs on exactly them), and the comparison
//! leaves by one more port, `comparison_out`, for a judge's
//! `comparison_in`. A module of its own would need the target's inputs
//! wired twice and a link to the target that no cable shows.
//!
//! Each variant is the module's configuration with its overrides: it runs
//! the whole activation, re-prompt chain included, in its own session.
//! `instruction_override` replaces only the primary instruction; the
//! re-prompts change only through `config_overrides.re_prompts`. A coding
//! module's variant may change its instruction and its agents' ACP
//! profiles (`agent_profiles`, by role), and works in a workspace of its
//! own.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::ModuleConfig;
use crate::kinds::agent_task::AgentTaskConfig;
use crate::kinds::coding::CodingConfig;
use crate::ports::{Port, PortAccent, bundle, output};
use crate::reprompt::RePrompt;
use crate::validate::MAX_RE_PROMPTS;

/// The output port of a module with variants: every variant's result.
pub const COMPARISON_OUT: &str = "comparison_out";
/// The content type of the bundle on `comparison_out`.
pub const COMPARISON_CONTENT_TYPE: &str = "application/vnd.patchbay.comparison+json";
/// More would be a sweep, not a comparison a person reads side by side.
pub const MAX_VARIANTS: usize = 8;
/// Each variant numbers its responses from `(index + 1) × this` (a chain
/// is at most 11 turns), so that the record and the log keep them apart.
pub const RESPONSES_PER_VARIANT: u32 = 100;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Variant {
    pub name: String,
    /// Replaces the primary instruction only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction_override: Option<String>,
    #[serde(skip_serializing_if = "ConfigOverrides::is_empty")]
    pub config_overrides: ConfigOverrides,
    #[serde(flatten)]
    pub extra: Extra,
}

/// What a variant changes besides the instruction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConfigOverrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub re_prompts: Option<Vec<RePrompt>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub separate_outputs: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// A coding module's agents' ACP profiles, by role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_profiles: Option<BTreeMap<String, String>>,
    /// An agent task's tools, in place of the module's (PRODUCT §3.17).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<crate::tools::ToolChoice>>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The `⚖ Variants` port of a module with variants.
pub fn comparison_port() -> Port {
    Port {
        title: "Comparison".to_owned(),
        ..output(bundle(
            COMPARISON_OUT,
            "⚖ Variants",
            "Every variant's merged output, receipt, cost and duration, for a judge's \"Compare with\"",
            PortAccent::Amber,
        ))
    }
}

/// The kind of module whose variants are checked, and what it allows.
#[derive(Clone, Copy, Debug)]
pub enum VariedKind<'a> {
    AgentTask,
    /// A coding module with agents of these roles.
    Coding {
        roles: &'a [&'a str],
    },
}

impl ConfigOverrides {
    pub fn is_empty(&self) -> bool {
        self == &ConfigOverrides::default()
    }
}

impl Variant {
    pub fn new(name: impl Into<String>) -> Variant {
        Variant {
            name: name.into(),
            ..Variant::default()
        }
    }

    /// The module's configuration as this variant runs it: one activation
    /// of its own, with no variants.
    pub fn apply(&self, base: &AgentTaskConfig) -> AgentTaskConfig {
        let mut config = base.clone();
        config.variants = Vec::new();
        if let Some(instruction) = &self.instruction_override {
            config.instruction.clone_from(instruction);
        }
        let overrides = &self.config_overrides;
        if let Some(re_prompts) = &overrides.re_prompts {
            config.re_prompts.clone_from(re_prompts);
        }
        if let Some(separate) = overrides.separate_outputs {
            config.separate_outputs = separate;
        }
        if let Some(provider) = &overrides.provider {
            config.agent_config.provider.clone_from(provider);
        }
        if let Some(model) = &overrides.model {
            config.agent_config.model.clone_from(model);
        }
        if overrides.temperature.is_some() {
            config.agent_config.temperature = overrides.temperature;
        }
        if let Some(tools) = &overrides.tools {
            config.tools.clone_from(tools);
        }
        config
    }

    /// A coding module's configuration as this variant runs it.
    pub fn apply_coding(&self, base: &CodingConfig) -> CodingConfig {
        let mut config = base.clone();
        config.variants = Vec::new();
        if let Some(instruction) = &self.instruction_override {
            config.instruction.clone_from(instruction);
        }
        for (role, profile) in self.config_overrides.agent_profiles.iter().flatten() {
            for agent in config.agents.iter_mut().filter(|agent| &agent.role == role) {
                agent.acp_profile_id = Some(profile.clone());
            }
        }
        config
    }

    /// The module's configuration as this variant runs it, for the kinds
    /// that have variants; any other is returned as it is.
    pub fn apply_to(&self, base: &ModuleConfig) -> ModuleConfig {
        match base {
            ModuleConfig::AgentTask(task) => ModuleConfig::AgentTask(self.apply(task)),
            ModuleConfig::Coding(coding) => ModuleConfig::Coding(self.apply_coding(coding)),
            other => other.clone(),
        }
    }

    /// What this variant changes, in a few words (`instruction, 3
    /// re-prompts, gpt-4o`), or "as configured".
    pub fn summary(&self) -> String {
        let overrides = &self.config_overrides;
        let mut parts: Vec<String> = Vec::new();
        if self.instruction_override.is_some() {
            parts.push("its own instruction".to_owned());
        }
        if let Some(re_prompts) = &overrides.re_prompts {
            parts.push(match re_prompts.len() {
                0 => "no re-prompts".to_owned(),
                1 => "1 re-prompt".to_owned(),
                many => format!("{many} re-prompts"),
            });
        }
        if let Some(separate) = overrides.separate_outputs {
            parts.push(if separate {
                "separate outputs".to_owned()
            } else {
                "merged output only".to_owned()
            });
        }
        match (&overrides.provider, &overrides.model) {
            (Some(provider), Some(model)) => parts.push(format!("{provider} · {model}")),
            (Some(provider), None) => parts.push(provider.clone()),
            (None, Some(model)) => parts.push(model.clone()),
            (None, None) => {}
        }
        if let Some(temperature) = overrides.temperature {
            parts.push(format!("temperature {temperature}"));
        }
        if let Some(tools) = &overrides.tools {
            parts.push(match tools.len() {
                0 => "no tools".to_owned(),
                1 => format!("tool {}", tools[0].name()),
                many => format!("{many} tools"),
            });
        }
        for (role, profile) in overrides.agent_profiles.iter().flatten() {
            parts.push(format!("{role} on {profile}"));
        }
        if parts.is_empty() {
            "as configured".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// The variants of a module, for the kinds that have them.
pub fn variants_of(config: &ModuleConfig) -> &[Variant] {
    match config {
        ModuleConfig::AgentTask(task) => &task.variants,
        ModuleConfig::Coding(coding) => &coding.variants,
        _ => &[],
    }
}

/// The variants of a module, to change, for the kinds that have them.
pub fn variants_mut(config: &mut ModuleConfig) -> Option<&mut Vec<Variant>> {
    match config {
        ModuleConfig::AgentTask(task) => Some(&mut task.variants),
        ModuleConfig::Coding(coding) => Some(&mut coding.variants),
        _ => None,
    }
}

/// What is wrong with a module's variants, each with the field it is
/// about (under `config.`) and why; `gated` and `validated`: the module
/// has an intent gate, validators.
pub fn problems(
    variants: &[Variant],
    kind: VariedKind<'_>,
    gated: bool,
    validated: bool,
) -> Vec<(String, String)> {
    let mut found = Vec::new();
    if variants.is_empty() {
        return found;
    }
    if variants.len() < 2 {
        found.push((
            "variants".to_owned(),
            "an experiment compares 2 or more variants".to_owned(),
        ));
    }
    if variants.len() > MAX_VARIANTS {
        found.push((
            "variants".to_owned(),
            format!(
                "{} variants; at most {MAX_VARIANTS} are compared",
                variants.len()
            ),
        ));
    }
    let mut names: Vec<&str> = Vec::new();
    for (index, variant) in variants.iter().enumerate() {
        let at = |field: &str| format!("variants[{index}].{field}");
        let name = variant.name.trim();
        if name.is_empty() {
            found.push((at("name"), format!("variant {} has no name", index + 1)));
        } else if names.contains(&name) {
            found.push((at("name"), format!("two variants are called \"{name}\"")));
        }
        names.push(name);
        if variant
            .instruction_override
            .as_deref()
            .is_some_and(|text| text.trim().is_empty())
        {
            found.push((
                at("instruction_override"),
                format!("variant \"{name}\" overrides the instruction with nothing"),
            ));
        }
        let overrides = &variant.config_overrides;
        if let Some(re_prompts) = &overrides.re_prompts {
            if re_prompts.len() > MAX_RE_PROMPTS {
                found.push((
                    at("config_overrides.re_prompts"),
                    format!(
                        "variant \"{name}\" has {} re-prompts; at most {MAX_RE_PROMPTS}",
                        re_prompts.len()
                    ),
                ));
            }
            if let Some(position) = re_prompts.iter().position(RePrompt::is_blank) {
                found.push((
                    format!("variants[{index}].config_overrides.re_prompts[{position}]"),
                    format!("re-prompt {} of variant \"{name}\" is empty", position + 1),
                ));
            }
        }
        match kind {
            VariedKind::AgentTask => {
                if overrides.agent_profiles.is_some() {
                    found.push((
                        at("config_overrides.agent_profiles"),
                        format!("variant \"{name}\": agents' profiles are a coding module's"),
                    ));
                }
            }
            VariedKind::Coding { roles } => {
                let chat_only = overrides.re_prompts.is_some()
                    || overrides.separate_outputs.is_some()
                    || overrides.provider.is_some()
                    || overrides.model.is_some()
                    || overrides.temperature.is_some();
                if chat_only {
                    found.push((
                        at("config_overrides"),
                        format!(
                            "variant \"{name}\": a coding module's variant changes its instruction and its agents' profiles (agent_profiles), not re-prompts, model or temperature"
                        ),
                    ));
                }
                for role in overrides
                    .agent_profiles
                    .iter()
                    .flatten()
                    .map(|(role, _)| role)
                {
                    if !roles.contains(&role.as_str()) {
                        found.push((
                            at(&format!("config_overrides.agent_profiles.{role}")),
                            format!("variant \"{name}\": the module has no agent \"{role}\""),
                        ));
                    }
                }
            }
        }
        if overrides
            .temperature
            .is_some_and(|temperature| !(0.0..=2.0).contains(&temperature))
        {
            found.push((
                at("config_overrides.temperature"),
                format!("variant \"{name}\": a temperature is from 0 to 2"),
            ));
        }
    }
    // Which variant's answer would choose the way on, or be checked?
    if gated {
        found.push((
            "intent_gate".to_owned(),
            "a module with variants has no intent gate: the comparison goes on to a judge, which decides".to_owned(),
        ));
    }
    if validated {
        found.push((
            "validators".to_owned(),
            "a module with variants has no validators: each variant is one activation, compared as it is".to_owned(),
        ));
    }
    found
}

/// Reports the `problems` of a module's variants as its findings
/// (`validation.experiment_invalid`).
pub(crate) fn report(
    findings: &mut crate::validate::ModuleFindings<'_>,
    variants: &[Variant],
    kind: VariedKind<'_>,
    gated: bool,
    validated: bool,
) {
    let name = findings.name();
    for (field, problem) in problems(variants, kind, gated, validated) {
        findings.report(
            crate::validate::Code::ExperimentInvalid,
            Some(format!("config.{field}")),
            format!("\"{name}\": {problem}"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> AgentTaskConfig {
        AgentTaskConfig {
            instruction: "Write about tides.".to_owned(),
            re_prompts: vec![RePrompt::new("Review it."), RePrompt::new("Finalize it.")],
            ..AgentTaskConfig::default()
        }
    }

    #[test]
    fn an_instruction_override_changes_the_primary_instruction_only() {
        let variant = Variant {
            instruction_override: Some("Write a haiku about tides.".to_owned()),
            ..Variant::new("B")
        };
        let applied = variant.apply(&base());
        assert_eq!(applied.instruction, "Write a haiku about tides.");
        assert_eq!(applied.re_prompts, base().re_prompts);
        assert!(applied.variants.is_empty());
    }

    #[test]
    fn config_overrides_replace_the_re_prompts_and_model_settings() {
        let variant = Variant {
            config_overrides: ConfigOverrides {
                re_prompts: Some(vec![RePrompt::new("Shorter.")]),
                separate_outputs: Some(true),
                provider: Some("openai".to_owned()),
                model: Some("gpt-4o".to_owned()),
                temperature: Some(0.2),
                ..ConfigOverrides::default()
            },
            ..Variant::new("C")
        };
        let applied = variant.apply(&base());
        assert_eq!(applied.instruction, base().instruction);
        assert_eq!(applied.re_prompts, vec![RePrompt::new("Shorter.")]);
        assert!(applied.separate_outputs);
        assert_eq!(applied.agent_config.provider, "openai");
        assert_eq!(applied.agent_config.model, "gpt-4o");
        assert_eq!(applied.agent_config.temperature, Some(0.2));
        assert_eq!(
            variant.summary(),
            "1 re-prompt, separate outputs, openai · gpt-4o, temperature 0.2"
        );
        assert_eq!(Variant::new("A").summary(), "as configured");
    }

    #[test]
    fn variants_need_names_of_their_own_and_sane_overrides() {
        let mut config = base();
        config.variants = vec![Variant::new("A")];
        assert_eq!(
            problems(&config.variants, VariedKind::AgentTask, false, false)[0].0,
            "variants"
        );
        config.variants = vec![
            Variant::new("A"),
            Variant::new("A"),
            Variant::new(" "),
            Variant {
                config_overrides: ConfigOverrides {
                    re_prompts: Some(vec![RePrompt::new("")]),
                    temperature: Some(3.0),
                    ..ConfigOverrides::default()
                },
                ..Variant::new("D")
            },
        ];
        let fields: Vec<String> = problems(&config.variants, VariedKind::AgentTask, false, false)
            .into_iter()
            .map(|(field, _)| field)
            .collect();
        assert_eq!(
            fields,
            [
                "variants[1].name",
                "variants[2].name",
                "variants[3].config_overrides.re_prompts[0]",
                "variants[3].config_overrides.temperature"
            ]
        );
        config.variants = vec![Variant::new("A"), Variant::new("B")];
        assert!(problems(&config.variants, VariedKind::AgentTask, false, false).is_empty());
    }

    #[test]
    fn a_coding_variant_changes_its_instruction_and_its_agents_profiles() {
        let base = CodingConfig {
            instruction: "Add a README.".to_owned(),
            agents: vec![
                crate::config::CodingAgentAssignment {
                    role: "builder".to_owned(),
                    ..crate::config::CodingAgentAssignment::default()
                },
                crate::config::CodingAgentAssignment {
                    role: "reviewer".to_owned(),
                    ..crate::config::CodingAgentAssignment::default()
                },
            ],
            ..CodingConfig::default()
        };
        let variant = Variant {
            config_overrides: ConfigOverrides {
                agent_profiles: Some([("builder".to_owned(), "claude".to_owned())].into()),
                ..ConfigOverrides::default()
            },
            ..Variant::new("Claude builds")
        };
        let applied = variant.apply_coding(&base);
        assert_eq!(applied.agents[0].acp_profile_id.as_deref(), Some("claude"));
        assert_eq!(applied.agents[1].acp_profile_id, None);
        assert_eq!(applied.instruction, base.instruction);
        assert_eq!(variant.summary(), "builder on claude");
        let roles = ["builder", "reviewer"];
        let coding = VariedKind::Coding { roles: &roles };
        let wrong = vec![
            Variant {
                config_overrides: ConfigOverrides {
                    agent_profiles: Some([("tester".to_owned(), "x".to_owned())].into()),
                    ..ConfigOverrides::default()
                },
                ..Variant::new("A")
            },
            Variant {
                config_overrides: ConfigOverrides {
                    model: Some("gpt-4o".to_owned()),
                    ..ConfigOverrides::default()
                },
                ..Variant::new("B")
            },
        ];
        let fields: Vec<String> = problems(&wrong, coding, false, false)
            .into_iter()
            .map(|(field, _)| field)
            .collect();
        assert_eq!(
            fields,
            [
                "variants[0].config_overrides.agent_profiles.tester",
                "variants[1].config_overrides"
            ]
        );
        // An agent task's variant cannot name agents' profiles.
        assert_eq!(
            problems(
                &[variant.clone(), Variant::new("B")],
                VariedKind::AgentTask,
                false,
                false
            )[0]
            .0,
            "variants[0].config_overrides.agent_profiles"
        );
    }

    #[test]
    fn variants_read_as_doc23_writes_them() {
        let variant: Variant = serde_json::from_value(serde_json::json!({
            "name": "terse",
            "instruction_override": "Be terse.",
            "config_overrides": {"re_prompts": ["Cut it in half."], "model": "sim-long"}
        }))
        .unwrap();
        assert_eq!(variant.instruction_override.as_deref(), Some("Be terse."));
        assert_eq!(
            variant.config_overrides.re_prompts,
            Some(vec![RePrompt::new("Cut it in half.")])
        );
        let back = serde_json::to_value(&variant).unwrap();
        assert_eq!(back["config_overrides"]["model"], "sim-long");
    }
}
