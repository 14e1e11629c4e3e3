//! `step.judge`: scores its target, alone or beside a comparison, against a
//! rubric (DOC23 §7.3).

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::config::AgentConfig;
use crate::kinds::{KindChecks, KindConfig, KindDefinition, standard_fields};
use crate::ports::{DATA_OUT, ModulePorts, PortAccent, bundle, input, output, spec};
use crate::validate::{Code, ModuleFindings};

/// What the judge scores.
pub const TARGET_IN: &str = "target_in";
/// What the target is scored beside, or a module's variants to score
/// instead (`experiment::COMPARISON_OUT`).
pub const COMPARISON_IN: &str = "comparison_in";
/// The scores, as `wire::content::JudgeScores` or, for variants,
/// `wire::content::ComparisonScores`.
pub const SCORES_OUT: &str = "scores_out";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Criterion {
    pub name: String,
    pub description: String,
    pub weight: f64,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JudgeConfig {
    pub instruction: String,
    pub agent_config: AgentConfig,
    pub rubric: Vec<Criterion>,
    /// Scores run from 0 to this.
    pub scale_max: u32,
    /// Seconds one activation may take; `None` is 30 minutes. Set, it
    /// gives the module a `timeout_out` port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    /// Whether it waits for every input or runs on the first (PRODUCT §3.1).
    #[serde(skip_serializing_if = "crate::join::Join::is_all")]
    pub join: crate::join::Join,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for JudgeConfig {
    fn default() -> JudgeConfig {
        JudgeConfig {
            instruction: String::new(),
            agent_config: AgentConfig::default(),
            rubric: Vec::new(),
            scale_max: 10,
            timeout_seconds: None,
            join: crate::join::Join::All,
            extra: Extra::new(),
        }
    }
}

impl KindDefinition for JudgeConfig {
    const WIRE_NAME: &'static str = "step.judge";
    const TITLE: &'static str = "Judge";
    const DESCRIPTION: &'static str = "Scores its target against a rubric";
    const USES_PROVIDER: bool = true;
}

impl KindConfig for JudgeConfig {
    standard_fields!(extra, instruction, agent_config, timeout, join);

    fn ports(&self) -> ModulePorts {
        ModulePorts {
            inputs: vec![
                // Required unless variants come in to be compared
                // (validation asks for one of the two).
                input(
                    bundle(TARGET_IN, "Target", "What is scored", PortAccent::Accent),
                    false,
                    false,
                ),
                input(
                    bundle(
                        COMPARISON_IN,
                        "Compare with",
                        "Scored side by side with the target",
                        PortAccent::Cyan,
                    ),
                    false,
                    false,
                ),
                input(spec::SIGNAL_IN, false, false),
            ],
            outputs: vec![
                output(bundle(
                    SCORES_OUT,
                    "Scores",
                    "Structured scores per criterion",
                    PortAccent::Amber,
                )),
                output(bundle(
                    DATA_OUT,
                    "Verdict",
                    "The judge's reasoning and scores as text",
                    PortAccent::Accent,
                )),
                output(spec::SIGNAL_OUT),
                output(spec::ERROR_OUT),
            ],
        }
    }

    fn further_prompt_texts(&self) -> Vec<(String, &str)> {
        self.rubric
            .iter()
            .enumerate()
            .map(|(index, criterion)| {
                (
                    format!("config.rubric[{index}].description"),
                    criterion.description.as_str(),
                )
            })
            .collect()
    }
}

impl KindChecks for JudgeConfig {
    /// A judge scores its target, or the variants of a comparison.
    fn validate_cables(&self, findings: &mut ModuleFindings<'_>) {
        if !findings.wired(TARGET_IN)
            && !findings.wired_from(COMPARISON_IN, Some(crate::experiment::COMPARISON_OUT))
        {
            let name = findings.name();
            findings.report(
                Code::RequiredInputMissing,
                None,
                format!(
                    "\"{name}\" needs a cable into its \"Target\" input, or a module's variants (⚖ Variants) into \"Compare with\""
                ),
            );
        }
    }
}
