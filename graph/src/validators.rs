//! Validators and failure patterns (PRODUCT §3.11, after Climpt's
//! `validators` and `failurePatterns`): commands an agent task or a coding
//! module runs when it has done its
//! work; all pass, it completes; one fails, the failure pattern it names
//! gives the follow-up prompt, filled with what was extracted from the
//! validator's output, sent as a new turn in the same session — up to
//! `on_failure.max_attempts` times, then it gives up.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Extra;

/// The most fix turns a module may have.
pub const FIX_LIMIT: u32 = 10;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Validation {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub validators: Vec<Validator>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failure_patterns: Vec<FailurePattern>,
    #[serde(skip_serializing_if = "OnFailure::is_default")]
    pub on_failure: OnFailure,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Validator {
    /// A plain name: `git-clean`, `tests`; the state key `.gate.<name>`.
    pub name: String,
    /// Run by `sh -c`, confined, in the module's workspace (a coding
    /// module's) or the run's commands folder.
    pub command: String,
    /// `empty` (no output) or `exit_code:N`.
    pub success_when: String,
    /// The failure pattern whose prompt follows when it fails.
    pub failure_pattern: String,
    /// Parameter name → what of the output it is (see [`Extraction`]).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extract_params: BTreeMap<String, String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailurePattern {
    pub name: String,
    pub description: String,
    /// The follow-up prompt; `{{ param }}` for each of `params`.
    pub prompt: String,
    pub params: Vec<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OnFailure {
    /// Fix turns before giving up.
    pub max_attempts: u32,
}

impl Default for OnFailure {
    fn default() -> OnFailure {
        OnFailure { max_attempts: 3 }
    }
}

impl OnFailure {
    fn is_default(&self) -> bool {
        *self == OnFailure::default()
    }
}

/// When a validator passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuccessWhen {
    /// Nothing on stdout (whitespace aside).
    Empty,
    ExitCode(i32),
}

impl SuccessWhen {
    pub fn parse(text: &str) -> Option<SuccessWhen> {
        let text = text.trim();
        if text == "empty" {
            return Some(SuccessWhen::Empty);
        }
        let code = text.strip_prefix("exit_code:")?.trim();
        // By hand: Rust's integer parser is small, but a sign and digits
        // are all there is to read.
        let (negative, digits) = match code.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, code),
        };
        if digits.is_empty() || digits.len() > 9 || !digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let value = digits
            .bytes()
            .fold(0i32, |value, digit| value * 10 + i32::from(digit - b'0'));
        Some(SuccessWhen::ExitCode(if negative { -value } else { value }))
    }
}

/// What a parameter takes from a validator's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extraction {
    /// Stdout and stderr as one text.
    Output,
    Stdout,
    Stderr,
    FirstLine,
    LastLine,
    /// The number of non-empty lines of stdout.
    LineCount,
    ExitCode,
}

impl Extraction {
    pub const NAMES: [&'static str; 7] = [
        "output",
        "stdout",
        "stderr",
        "first_line",
        "last_line",
        "line_count",
        "exit_code",
    ];

    pub fn parse(text: &str) -> Option<Extraction> {
        Some(match text.trim() {
            "output" => Extraction::Output,
            "stdout" => Extraction::Stdout,
            "stderr" => Extraction::Stderr,
            "first_line" => Extraction::FirstLine,
            "last_line" => Extraction::LastLine,
            "line_count" => Extraction::LineCount,
            "exit_code" => Extraction::ExitCode,
            _ => return None,
        })
    }
}

/// A problem at a field of the validation settings, relative to the config
/// (`validators[1].success_when`).
pub struct Problem {
    pub field: String,
    pub message: String,
}

fn plain(name: &str) -> bool {
    crate::kinds::poll::plain_name(name)
}

impl Validation {
    pub fn is_empty(&self) -> bool {
        self.validators.is_empty()
    }

    pub fn pattern(&self, name: &str) -> Option<&FailurePattern> {
        self.failure_patterns
            .iter()
            .find(|pattern| pattern.name.trim() == name.trim())
    }

    /// Everything that would keep the validators from working.
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut report = |field: String, message: String| problems.push(Problem { field, message });
        let mut names: Vec<&str> = Vec::new();
        for (index, validator) in self.validators.iter().enumerate() {
            let at = |field: &str| format!("validators[{index}].{field}");
            let name = validator.name.trim();
            if !plain(name) {
                report(
                    at("name"),
                    format!(
                        "validator {} needs a plain name (letters, digits, _ and -)",
                        index + 1
                    ),
                );
            } else if names.contains(&name) {
                report(at("name"), format!("two validators are named “{name}”"));
            }
            names.push(name);
            if validator.command.trim().is_empty() {
                report(at("command"), format!("validator “{name}” has no command"));
            }
            if SuccessWhen::parse(&validator.success_when).is_none() {
                report(
                    at("success_when"),
                    format!(
                        "validator “{name}” passes when “{}”, which is neither `empty` nor `exit_code:N`",
                        validator.success_when
                    ),
                );
            }
            for (param, rule) in &validator.extract_params {
                if Extraction::parse(rule).is_none() {
                    report(
                        at(&format!("extract_params.{param}")),
                        format!(
                            "validator “{name}” takes “{param}” as “{rule}”, which is not one of {}",
                            Extraction::NAMES.join(", ")
                        ),
                    );
                }
            }
            match self.pattern(&validator.failure_pattern) {
                None => report(
                    at("failure_pattern"),
                    format!(
                        "validator “{name}” names the failure pattern “{}”, which the module does not have",
                        validator.failure_pattern
                    ),
                ),
                Some(pattern) => {
                    for param in &pattern.params {
                        if !validator.extract_params.contains_key(param.trim()) {
                            report(
                                at("extract_params"),
                                format!(
                                    "validator “{name}” does not extract “{}”, which its failure pattern “{}” needs",
                                    param.trim(),
                                    pattern.name
                                ),
                            );
                        }
                    }
                }
            }
        }
        for (index, pattern) in self.failure_patterns.iter().enumerate() {
            let at = |field: &str| format!("failure_patterns[{index}].{field}");
            if !plain(pattern.name.trim()) {
                report(
                    at("name"),
                    format!("failure pattern {} needs a plain name", index + 1),
                );
            }
            if pattern.prompt.trim().is_empty() {
                report(
                    at("prompt"),
                    format!("failure pattern “{}” has no prompt", pattern.name),
                );
            }
            for variable in crate::template::variables(&pattern.prompt) {
                let known = pattern
                    .params
                    .iter()
                    .any(|param| param.trim() == variable.name)
                    || crate::template::BUILT_INS.contains(&variable.name);
                if !known {
                    report(
                        at("prompt"),
                        format!(
                            "the prompt of failure pattern “{}” uses {{{{ {} }}}}, which is not one of its params",
                            pattern.name, variable.name
                        ),
                    );
                }
            }
        }
        if !self.validators.is_empty() && !(1..=FIX_LIMIT).contains(&self.on_failure.max_attempts) {
            report(
                "on_failure.max_attempts".to_owned(),
                format!(
                    "fix turns must be between 1 and {FIX_LIMIT}, not {}",
                    self.on_failure.max_attempts
                ),
            );
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_rules_read_as_written() {
        assert_eq!(SuccessWhen::parse("empty"), Some(SuccessWhen::Empty));
        assert_eq!(
            SuccessWhen::parse(" exit_code:0 "),
            Some(SuccessWhen::ExitCode(0))
        );
        assert_eq!(
            SuccessWhen::parse("exit_code:-2"),
            Some(SuccessWhen::ExitCode(-2))
        );
        for wrong in [
            "",
            "exit_code:",
            "exit_code:x",
            "exitCode:0",
            "exit_code:9999999999",
        ] {
            assert_eq!(SuccessWhen::parse(wrong), None, "{wrong}");
        }
    }

    fn validation(value: serde_json::Value) -> Validation {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn problems_name_their_fields() {
        let good = validation(serde_json::json!({
            "validators": [{"name": "tests", "command": "cargo test", "success_when": "exit_code:0",
                            "failure_pattern": "failing", "extract_params": {"failures": "output"}}],
            "failure_patterns": [{"name": "failing", "description": "Tests fail", "prompt": "Fix these: {{ failures }}", "params": ["failures"]}],
        }));
        assert!(good.problems().is_empty());
        let bad = validation(serde_json::json!({
            "validators": [{"name": "tests", "command": "", "success_when": "zero",
                            "failure_pattern": "missing", "extract_params": {"x": "regex"}}],
            "failure_patterns": [{"name": "failing", "prompt": "Fix {{ what }}", "params": []}],
            "on_failure": {"max_attempts": 0},
        }));
        let fields: Vec<String> = bad
            .problems()
            .into_iter()
            .map(|problem| problem.field)
            .collect();
        assert_eq!(
            fields,
            [
                "validators[0].command",
                "validators[0].success_when",
                "validators[0].extract_params.x",
                "validators[0].failure_pattern",
                "failure_patterns[0].prompt",
                "on_failure.max_attempts",
            ]
        );
    }
}
