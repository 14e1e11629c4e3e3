//! What an activation's ending comes to: a result, a failure with what it
//! left for the next attempt, an abort or a cancel; and how an ending is
//! kept with its record for a resume.

use wire::activation::ActivationRecord;

use graph::kinds::coding::DIFF_OUT;

use super::command::Ending;
use crate::activation::ActivationOutput;

/// What an attempt came to, as the run acts on it.
pub(super) enum AttemptEnd {
    Succeeded(ActivationOutput),
    /// Its reply chose `abort` (the intent holds the reason).
    Aborted(ActivationOutput),
    Failed(Failure),
    Cancelled,
}

/// An attempt that failed: why, and what it left for the next one.
pub(super) struct Failure {
    pub kind: FailureKind,
    pub reason: String,
    pub output: String,
    pub diff: String,
}

pub(super) enum FailureKind {
    Error,
    TimedOut,
    /// A failure outcome fired (a failed check) in a module that retries.
    Check(ActivationOutput),
    /// The reply chose `repeat`.
    Repeat(ActivationOutput),
    /// Its validators still failed when its fix turns were used.
    Validators(ActivationOutput),
}

impl FailureKind {
    /// What the attempt produced before it counted as failed: kept, and
    /// sent nowhere.
    pub fn produced(self) -> Option<ActivationOutput> {
        match self {
            FailureKind::Check(output)
            | FailureKind::Repeat(output)
            | FailureKind::Validators(output) => Some(output),
            FailureKind::Error | FailureKind::TimedOut => None,
        }
    }
}

/// Sorts an ending into what the run does next. A failed check is a
/// failure only to a module that retries: otherwise it is a result like
/// any other, which goes where its port is wired.
pub(super) fn classify(
    ending: Ending,
    retries: bool,
    label: &str,
    record: &ActivationRecord,
) -> AttemptEnd {
    // What a failed attempt had answered before it failed.
    let partial = || {
        record
            .responses
            .iter()
            .rev()
            .find(|response| !response.text.trim().is_empty())
            .map(|response| response.text.clone())
            .unwrap_or_default()
    };
    let output = match ending {
        // A pause is never handled as an end (`Run::on_finished`).
        Ending::Cancelled | Ending::WaitsForCalls(_) => return AttemptEnd::Cancelled,
        Ending::TimedOut(seconds) => {
            return AttemptEnd::Failed(Failure {
                kind: FailureKind::TimedOut,
                reason: format!(
                    "\"{label}\" timed out after {}",
                    graph::attempts::duration_words(seconds)
                ),
                output: partial(),
                diff: String::new(),
            });
        }
        Ending::Done(done) => match *done {
            Err(error) => {
                return AttemptEnd::Failed(Failure {
                    kind: FailureKind::Error,
                    reason: error.to_string(),
                    output: partial(),
                    diff: String::new(),
                });
            }
            Ok(output) => output,
        },
    };
    let failed =
        |reason: String, kind: fn(ActivationOutput) -> FailureKind, output: ActivationOutput| {
            AttemptEnd::Failed(Failure {
                reason,
                output: output.output_text.clone(),
                diff: port_text(&output, DIFF_OUT),
                kind: kind(output),
            })
        };
    match &output.intent {
        Some((graph::intent::Intent::Abort, _)) => AttemptEnd::Aborted(output),
        Some((graph::intent::Intent::Repeat, reason)) => {
            failed(reason.clone(), FailureKind::Repeat, output)
        }
        _ if output.checks_failed.is_some() => failed(
            output.checks_failed.clone().unwrap_or_default(),
            FailureKind::Validators,
            output,
        ),
        _ => match failed_check(&output) {
            Some(reason) if retries => failed(reason, FailureKind::Check, output),
            _ => AttemptEnd::Succeeded(output),
        },
    }
}

/// What the failure outcome an activation's ports fired (`fail_out`, …)
/// carried, which is what the next attempt needs to hear (Gump's
/// `{error}`: the failed gate's output); what it was when it carried
/// nothing.
fn failed_check(output: &ActivationOutput) -> Option<String> {
    output.ports.iter().find_map(|(port, value)| {
        let outcome = graph::ports::failure_outcome(port)?;
        let text = value
            .as_bundle()
            .map(|bundle| bundle.as_text())
            .unwrap_or_default();
        Some(if text.trim().is_empty() {
            format!("it ended with {outcome} ({port})")
        } else {
            text.trim().to_owned()
        })
    })
}

/// The text an activation's output port carried, empty when it fired none.
pub(super) fn port_text(output: &ActivationOutput, port: &str) -> String {
    output
        .ports
        .iter()
        .find(|(id, _)| id == port)
        .and_then(|(_, value)| value.as_bundle())
        .map(|bundle| bundle.as_text())
        .unwrap_or_default()
}

/// How an activation ended, as the record keeps it for a resume: a
/// `RecordedEnding`, written from borrowed parts (an output can be large,
/// and every activation's is written).
pub(super) fn encode_ending(order: u32, ending: &Ending) -> Option<String> {
    #[derive(serde::Serialize)]
    #[serde(tag = "ended", rename_all = "snake_case")]
    enum EndedRef<'a> {
        Output { output: &'a ActivationOutput },
        Error { error: String },
        TimedOut { seconds: u32 },
        Cancelled,
    }
    #[derive(serde::Serialize)]
    struct RecordedEndingRef<'a> {
        order: u32,
        ended: EndedRef<'a>,
    }
    let ended = match ending {
        Ending::Done(done) => match done.as_ref() {
            Ok(output) => EndedRef::Output { output },
            Err(error) => EndedRef::Error {
                error: error.to_string(),
            },
        },
        Ending::TimedOut(seconds) => EndedRef::TimedOut { seconds: *seconds },
        Ending::Cancelled | Ending::WaitsForCalls(_) => EndedRef::Cancelled,
    };
    serde_json::to_string(&RecordedEndingRef { order, ended }).ok()
}
