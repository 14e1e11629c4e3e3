//! Running a module's validators (PRODUCT §3.11, after Climpt's
//! `validators` and `failurePatterns`): each in order, confined, until one
//! fails; its failure pattern's prompt,
//! filled with what its parameters take from the validator's output, is
//! the follow-up turn. The kinds (agent task, coding) send that turn in
//! their own session and come back here.

use std::collections::BTreeMap;
use std::path::Path;

use graph::template::variables;
use graph::validators::{Extraction, SuccessWhen, Validation, Validator};
use wire::event::RunEvent;

use crate::activation::shell::{self, Ran};
use crate::activation::{ActivationContext, ActivationError};
use crate::attempts::cut;

/// How much of a validator's output an event and a failure carry.
const DETAIL_CHARACTERS: usize = 2000;

/// A validator that failed, and what follows.
#[derive(Clone, Debug, PartialEq)]
pub struct Failed {
    pub validator: String,
    /// The failure pattern's prompt, filled.
    pub prompt: String,
    /// What the validator printed (cut), for the give-up message.
    pub detail: String,
}

/// What one round of validation found: each validator run and whether it
/// passed (the `.gate.<name>` state keys), and the first that failed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Round {
    pub gates: Vec<(String, bool)>,
    pub failed: Option<Failed>,
}

fn extracted(rule: Extraction, ran: &Ran) -> String {
    let lines = || {
        ran.stdout
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
    };
    // Trailing newlines are the shell's, not the message's.
    match rule {
        Extraction::Output => ran.text().trim_end().to_owned(),
        Extraction::Stdout => ran.stdout.trim_end().to_owned(),
        Extraction::Stderr => ran.stderr.trim_end().to_owned(),
        Extraction::FirstLine => lines().next().unwrap_or_default().to_owned(),
        Extraction::LastLine => lines().next_back().unwrap_or_default().to_owned(),
        Extraction::LineCount => lines().count().to_string(),
        Extraction::ExitCode => ran
            .exit_code
            .map_or_else(|| "none (a signal)".to_owned(), |code| code.to_string()),
    }
}

fn passed(validator: &Validator, ran: &Ran) -> bool {
    match SuccessWhen::parse(&validator.success_when) {
        Some(SuccessWhen::Empty) => ran.stdout.trim().is_empty(),
        Some(SuccessWhen::ExitCode(code)) => ran.exit_code == Some(code),
        // Validation refuses this before a run; should one get here, it
        // cannot pass.
        None => false,
    }
}

/// The failure pattern's prompt with its parameters (and `input`,
/// `run_id`) filled; a parameter with no value is an error, never empty.
fn fill(prompt: &str, values: &BTreeMap<String, String>) -> Result<String, String> {
    let mut filled = String::with_capacity(prompt.len());
    let mut cursor = 0;
    for variable in variables(prompt) {
        filled.push_str(&prompt[cursor..variable.start]);
        let value = values
            .get(variable.name)
            .ok_or_else(|| format!("{{{{ {} }}}} has no value", variable.name))?;
        filled.push_str(value);
        cursor = variable.end;
    }
    filled.push_str(&prompt[cursor..]);
    Ok(filled)
}

/// Runs the validators in order, in `place` (a coding workspace) or the
/// run's commands folder, until one fails.
pub async fn check(
    context: &ActivationContext,
    validation: &Validation,
    place: Option<&Path>,
) -> Result<Round, ActivationError> {
    let label = context.module.display_label();
    let mut round = Round::default();
    for validator in &validation.validators {
        let name = validator.name.trim().to_owned();
        context
            .emit(RunEvent::ModuleValidating {
                module_id: context.module.id.clone(),
                activation: context.activation,
                validator: name.clone(),
            })
            .await;
        let command = shell::script(context, &validator.command)?;
        let ran = shell::run_in(context, &command, &[], place).await?;
        let ok = passed(validator, &ran);
        let detail = cut(ran.text().trim(), DETAIL_CHARACTERS);
        context.transcript(
            wire::activation::TranscriptRole::System,
            &format!(
                "validator {name}: $ {command}\n{}{detail}",
                if ok { "passed\n" } else { "failed\n" }
            ),
        );
        context
            .emit(RunEvent::ModuleValidated {
                module_id: context.module.id.clone(),
                activation: context.activation,
                validator: name.clone(),
                passed: ok,
                detail: detail.clone(),
            })
            .await;
        round.gates.push((name.clone(), ok));
        if ok {
            continue;
        }
        let pattern = validation.pattern(&validator.failure_pattern).ok_or_else(|| {
            ActivationError::Failed(format!(
                "\"{label}\": validator “{name}” names the failure pattern “{}”, which it does not have",
                validator.failure_pattern
            ))
        })?;
        let mut values: BTreeMap<String, String> = validator
            .extract_params
            .iter()
            .filter_map(|(param, rule)| {
                Some((
                    param.trim().to_owned(),
                    extracted(Extraction::parse(rule)?, &ran),
                ))
            })
            .collect();
        for built_in in graph::template::BUILT_INS {
            if let Some(value) = context.state.get(built_in) {
                values.insert(built_in.to_owned(), value.clone());
            }
        }
        let prompt = fill(&pattern.prompt, &values).map_err(|problem| {
            ActivationError::Failed(format!(
                "\"{label}\": the prompt of failure pattern “{}”: {problem}",
                pattern.name
            ))
        })?;
        round.failed = Some(Failed {
            validator: name,
            prompt,
            detail,
        });
        break;
    }
    Ok(round)
}

/// The reason a module gives up when its fix turns are used.
pub fn exhausted(fixes: u32, failed: &Failed) -> String {
    let plural = if fixes == 1 { "" } else { "s" };
    format!(
        "validator “{}” still failed after {fixes} fix turn{plural}: {}",
        failed.validator, failed.detail
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(stdout: &str, stderr: &str, exit_code: i32) -> Ran {
        Ran {
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
            exit_code: Some(exit_code),
            success: exit_code == 0,
            state_set: Vec::new(),
        }
    }

    #[test]
    fn parameters_take_what_their_rule_says() {
        let output = ran("\n M src/lib.rs\n?? notes.md\n", "warning: dirty", 1);
        assert_eq!(extracted(Extraction::FirstLine, &output), "M src/lib.rs");
        assert_eq!(extracted(Extraction::LastLine, &output), "?? notes.md");
        assert_eq!(extracted(Extraction::LineCount, &output), "2");
        assert_eq!(extracted(Extraction::ExitCode, &output), "1");
        assert_eq!(extracted(Extraction::Stderr, &output), "warning: dirty");
        assert!(extracted(Extraction::Output, &output).contains("--- stderr ---"));
    }

    #[test]
    fn a_validator_passes_by_its_rule() {
        let validator = |rule: &str| Validator {
            success_when: rule.to_owned(),
            ..Validator::default()
        };
        assert!(passed(&validator("empty"), &ran("  \n", "noise", 1)));
        assert!(!passed(&validator("empty"), &ran("M a.rs", "", 0)));
        assert!(passed(&validator("exit_code:0"), &ran("all good", "", 0)));
        assert!(!passed(&validator("exit_code:0"), &ran("", "", 2)));
        assert!(!passed(&validator("sometimes"), &ran("", "", 0)));
    }

    #[test]
    fn a_prompt_is_filled_or_says_what_is_missing() {
        let values = BTreeMap::from([("files".to_owned(), "a.rs, b.rs".to_owned())]);
        assert_eq!(
            fill("Commit {{ files }} now.", &values).unwrap(),
            "Commit a.rs, b.rs now."
        );
        assert_eq!(
            fill("Fix {{ failures }}", &values).unwrap_err(),
            "{{ failures }} has no value"
        );
    }
}
