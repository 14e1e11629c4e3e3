//! Attempts after the first (PRODUCT §3.9): what the one before left for
//! the next — the retry variables of the retry instruction, after Gump —
//! and the note an attempt without a retry instruction starts with.

use graph::attempts::{DIFF_CHARACTERS, ERROR_CHARACTERS};

use crate::render::RunState;

/// Why an activation is an attempt after the first, and what the attempt
/// before it left.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attempt {
    /// The attempts the module has (`max_attempts`); 1 for a repeat of a
    /// module that does not retry, which gives up instead.
    pub of: u32,
    /// The previous attempt failed (or chose `repeat`) and this one runs on
    /// the same inputs; otherwise a loop brought the module new ones.
    pub retried: bool,
    /// The previous reply chose `repeat`: `error` is its reason.
    pub repeat: bool,
    /// What went wrong, in words (`{{ error }}`).
    pub error: String,
    /// The previous attempt's output (`{{ prev.output }}`).
    pub previous_output: String,
    /// The previous attempt's diff, in coding modules (`{{ diff }}`).
    pub previous_diff: String,
}

/// `{{ error }}` when the attempt before did not fail, so it is never empty.
pub const NOT_A_FAILURE: &str =
    "(the previous attempt did not fail: the loop brought this one new input)";

impl Attempt {
    /// The run state with the retry variables of attempt `number` added,
    /// for rendering the retry instruction.
    pub fn variables(&self, number: u32, state: &RunState) -> RunState {
        let mut variables = state.clone();
        variables.insert("attempt".to_owned(), number.to_string());
        variables.insert("error".to_owned(), cut(&self.error, ERROR_CHARACTERS));
        variables.insert(
            "prev.output".to_owned(),
            if self.previous_output.trim().is_empty() {
                "(the previous attempt gave no output)".to_owned()
            } else {
                self.previous_output.clone()
            },
        );
        variables.insert(
            "diff".to_owned(),
            if self.previous_diff.trim().is_empty() {
                "(the previous attempt changed no files)".to_owned()
            } else {
                cut(&self.previous_diff, DIFF_CHARACTERS)
            },
        );
        variables
    }

    /// The note the first turn of attempt `number` starts with when the
    /// module has no retry instruction, so the model (in a new session or
    /// the same one) knows why it is asked again. A loop that brings new
    /// input needs none: the input says it.
    pub fn note(&self, number: u32) -> Option<String> {
        if !self.retried {
            return None;
        }
        let of = if self.of > 1 {
            format!("attempt {number} of {}", self.of)
        } else {
            format!("attempt {number}")
        };
        let reason = self.error.trim();
        Some(if self.repeat {
            let reason = if reason.is_empty() {
                "no reason was given".to_owned()
            } else {
                format!("“{reason}”")
            };
            format!(
                "This step runs again ({of}) because your last reply chose to repeat it: {reason}."
            )
        } else {
            format!(
                "This step runs again ({of}) because the last attempt failed: “{}”. Do it again, avoiding that failure.",
                cut(reason, ERROR_CHARACTERS)
            )
        })
    }
}

/// `text` cut to `characters`, saying so.
pub fn cut(text: &str, characters: usize) -> String {
    match text.char_indices().nth(characters) {
        Some((end, _)) => format!("{}… (cut at {characters} characters)", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_variables_are_never_empty_and_long_ones_are_cut() {
        let attempt = Attempt {
            of: 3,
            retried: true,
            error: "e".repeat(2500),
            ..Attempt::default()
        };
        let variables = attempt.variables(2, &RunState::new());
        assert_eq!(variables["attempt"], "2");
        assert!(variables["error"].ends_with("(cut at 2000 characters)"));
        assert_eq!(variables["error"].split('…').next().unwrap().len(), 2000);
        assert_eq!(
            variables["prev.output"],
            "(the previous attempt gave no output)"
        );
        assert_eq!(variables["diff"], "(the previous attempt changed no files)");
    }

    #[test]
    fn the_note_says_why_it_runs_again() {
        let failed = Attempt {
            of: 3,
            retried: true,
            error: "tests failed".to_owned(),
            ..Attempt::default()
        };
        assert_eq!(
            failed.note(2).unwrap(),
            "This step runs again (attempt 2 of 3) because the last attempt failed: “tests failed”. Do it again, avoiding that failure."
        );
        let repeat = Attempt {
            repeat: true,
            error: "not sure yet".to_owned(),
            ..failed.clone()
        };
        assert_eq!(
            repeat.note(3).unwrap(),
            "This step runs again (attempt 3 of 3) because your last reply chose to repeat it: “not sure yet”."
        );
        let looped = Attempt {
            retried: false,
            ..failed
        };
        assert_eq!(looped.note(2), None);
    }
}
