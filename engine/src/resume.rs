//! Resuming a run that a server process left unfinished (PRODUCT §8): it
//! was killed, stopped, or lost its lease to another process.
//!
//! The run value (`run.rs`) replays the run. An activation that had ended
//! is not run again: its ending comes from the record, and the run handles
//! the endings in the order it handled them the first time. That brings the
//! run to the point where it stopped, with the same values on the same
//! cables, the same run state and the same sessions. Replay is exact because
//! the run is a deterministic value given the order of endings. The activation
//! that was in flight runs again from its last checkpoint: an agent task
//! takes the turns already answered from the record instead of asking the
//! provider again, and continues the session from there.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use wire::activation::{
    ActivationRecord, FinishedVariant, ResponseRecord, ToolCallRecord, TranscriptEntry,
    TranscriptRole,
};

use crate::activation::ActivationOutput;
use crate::provider::ChatMessage;
use crate::session::Session;

/// Where an activation in progress is kept after each answered turn: the
/// future ends once the record is queued to be stored (not stored; the
/// queue is bounded, so a slow database slows the activation down instead
/// of filling memory).
pub type CheckpointSink =
    Arc<dyn Fn(ActivationRecord) -> futures::future::BoxFuture<'static, ()> + Send + Sync>;

/// How an activation ended, kept with its record (the `ending` the
/// recorder stores) so that a resume replays it.
#[derive(Debug, Serialize, Deserialize)]
pub struct RecordedEnding {
    /// Its place among the endings the run handled, from 1.
    pub order: u32,
    pub ended: Ended,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "ended", rename_all = "snake_case")]
pub enum Ended {
    Output { output: Box<ActivationOutput> },
    Error { error: String },
    TimedOut { seconds: u32 },
    Cancelled,
}

/// What a resume starts from, read from the record.
#[derive(Clone, Debug, Default)]
pub struct Resume {
    /// The last event number in the log: the resumed run's events follow.
    pub last_seq: u64,
    /// Activations that ended, with their recorded ending (JSON).
    pub ended: Vec<(ActivationRecord, String)>,
    /// Activations in progress when the run stopped, as of their last
    /// checkpoint.
    pub in_progress: Vec<ActivationRecord>,
    /// When the run first started (Unix ms): its maximum duration counts
    /// from then, not from the resume.
    pub started_at: Option<i64>,
    /// How long the run has waited for people, with nothing running: time
    /// its maximum duration does not count (PRODUCT §3.14).
    pub waited_ms: i64,
    /// Since when it waits for people, when it did as it stopped.
    pub waiting_since: Option<i64>,
    /// Decisions taken on its waiting approvals and not yet acted on.
    pub decisions: Vec<PendingDecision>,
}

/// A decision a person took on an approval of a run that was not running
/// it then, or that has not acted on it yet.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingDecision {
    pub module_id: String,
    pub activation: u32,
    pub decided: Decided,
}

/// What was decided: an approval module's round, or one tool call an
/// agent task's activation waits on (PRODUCT §3.17).
#[derive(Clone, Debug, PartialEq)]
pub enum Decided {
    Approval(wire::approval::DecisionRecord),
    Call {
        call_id: String,
        decision: wire::approval::CallDecision,
    },
}

/// An ending waiting to be replayed.
pub struct Replayed {
    pub order: u32,
    pub record: ActivationRecord,
    pub ended: Ended,
}

/// The replay's state inside the run.
pub struct Replay {
    ended: HashMap<(String, u32), Replayed>,
    in_progress: HashMap<(String, u32), ActivationRecord>,
}

impl Replay {
    /// Reads a resume; an ending that cannot be read makes its activation
    /// run again, like one in flight.
    pub fn new(resume: Resume) -> Replay {
        let mut ended = HashMap::new();
        for (record, json) in resume.ended {
            let Ok(recorded) = serde_json::from_str::<RecordedEnding>(&json) else {
                continue;
            };
            ended.insert(
                (record.module_id.clone(), record.activation),
                Replayed {
                    order: recorded.order,
                    record: as_the_activation_left_it(record),
                    ended: recorded.ended,
                },
            );
        }
        let in_progress = resume
            .in_progress
            .into_iter()
            .map(|record| ((record.module_id.clone(), record.activation), record))
            .collect();
        Replay { ended, in_progress }
    }

    /// The recorded ending of this activation, if it had one.
    pub fn take_ended(&mut self, module_id: &str, activation: u32) -> Option<Replayed> {
        self.ended.remove(&(module_id.to_owned(), activation))
    }

    /// Whether this activation had ended before the run stopped.
    pub fn has_ended(&self, module_id: &str, activation: u32) -> bool {
        self.ended.contains_key(&(module_id.to_owned(), activation))
    }

    /// The record of an approval, or of an agent task's tool calls, that
    /// was waiting for a person.
    pub fn take_waiting(&mut self, module_id: &str, activation: u32) -> Option<ActivationRecord> {
        let key = (module_id.to_owned(), activation);
        let waiting = self.in_progress.get(&key).is_some_and(|record| {
            record.waiting.is_some() || crate::tools::waiting::waits_on_calls(record)
        });
        if waiting {
            self.in_progress.remove(&key)
        } else {
            None
        }
    }

    /// This activation's last checkpoint, if it was in progress.
    pub fn take_in_progress(&mut self, module_id: &str, activation: u32) -> Option<Recovered> {
        self.in_progress
            .remove(&(module_id.to_owned(), activation))
            .map(Recovered::new)
    }

    /// Checkpoints of activations the resumed run never came back to.
    pub fn left_over(&mut self) -> Vec<ActivationRecord> {
        self.in_progress.drain().map(|(_, record)| record).collect()
    }
}

/// A record as the activation's task left it, before the run added
/// how it ended (which replaying adds again).
pub(crate) fn as_the_activation_left_it(mut record: ActivationRecord) -> ActivationRecord {
    record.error = None;
    record.receipt = None;
    record.outputs.clear();
    record.routes.clear();
    record.retried = None;
    record.gave_up = None;
    record.ignored_inputs.clear();
    record
}

/// The turns an interrupted activation had answered, taken in order while
/// its new run asks the same turns; an experiment's variants that had
/// finished, taken up whole.
#[derive(Debug)]
pub struct Recovered {
    pub started_at: i64,
    responses: Vec<ResponseRecord>,
    tool_calls: Vec<ToolCallRecord>,
    next: std::sync::Mutex<usize>,
    live: AtomicBool,
    transcript: Vec<TranscriptEntry>,
    finished_variants: Vec<FinishedVariant>,
}

/// A variant that had finished before the run stopped: how it ended, and
/// its part of the record (its responses and transcript lines).
pub struct RecoveredVariant {
    pub finished: FinishedVariant,
    pub responses: Vec<ResponseRecord>,
    pub transcript: Vec<TranscriptEntry>,
}

impl Recovered {
    pub(crate) fn new(record: ActivationRecord) -> Recovered {
        Recovered {
            started_at: record.started_at,
            responses: record.responses,
            tool_calls: record.tool_calls,
            next: std::sync::Mutex::new(0),
            live: AtomicBool::new(true),
            transcript: record.transcript,
            finished_variants: record.finished_variants,
        }
    }

    /// Variant `index` (`name`), if it had finished: its responses are
    /// the ones numbered in its range, its transcript lines the ones that
    /// name it (`ActivationContext::scoped`, `transcript`).
    pub fn finished_variant(&self, index: u32, name: &str) -> Option<RecoveredVariant> {
        let finished = self
            .finished_variants
            .iter()
            .find(|finished| finished.name == name)?
            .clone();
        let per_variant = crate::activation::RESPONSES_PER_VARIANT;
        let range = (index + 1) * per_variant..(index + 2) * per_variant;
        let prefix = format!("[{name}] ");
        Some(RecoveredVariant {
            finished,
            responses: self
                .responses
                .iter()
                .filter(|response| range.contains(&response.index))
                .cloned()
                .collect(),
            transcript: self
                .transcript
                .iter()
                .filter(|entry| entry.text.starts_with(&prefix))
                .cloned()
                .collect(),
        })
    }

    /// Turn `index` (`label`) as the record has it, when every turn before
    /// it was recovered too: answered whole, or stopped among its tool
    /// calls. The first turn that is neither (half streamed, another turn)
    /// ends recovery, and so does one taken among its calls.
    pub fn take(&self, index: u32, label: &str) -> Option<Taken> {
        if !self.live.load(Ordering::Acquire) {
            return None;
        }
        let mut next = self.next.lock().ok()?;
        let taken = match self.responses.get(*next) {
            Some(response) if response.index == index && response.label == label => {
                let calls: Vec<ToolCallRecord> = self
                    .tool_calls
                    .iter()
                    .filter(|call| call.response_index == index)
                    .cloned()
                    .collect();
                let response = response.clone();
                if response.complete {
                    Some(Taken::Answered { response, calls })
                } else if calls.is_empty() {
                    None
                } else {
                    Some(Taken::AmongCalls { response, calls })
                }
            }
            _ => None,
        };
        match &taken {
            Some(Taken::Answered { .. }) => *next += 1,
            _ => self.live.store(false, Ordering::Release),
        }
        taken
    }
}

/// A turn taken from an interrupted activation's record.
#[derive(Clone, Debug, PartialEq)]
pub enum Taken {
    /// Answered whole: its reply, and the tool calls made on the way.
    Answered {
        response: ResponseRecord,
        calls: Vec<ToolCallRecord>,
    },
    /// Stopped among its tool calls: what the model had said and spent,
    /// and the calls it had asked for, some perhaps still in flight
    /// (`ToolOutcome::Pending`). The turn goes on from there.
    AmongCalls {
        response: ResponseRecord,
        calls: Vec<ToolCallRecord>,
    },
}

/// The session an activation's transcript shows (the session as sent:
/// system prompt, user turns, replies), up to its last reply: what a later
/// `session_mode: continue` or a persisting session picks up. Attachments
/// sent in a turn are not in the transcript and are not sent again.
pub fn session_from_record(record: &ActivationRecord) -> Option<Session> {
    let receipt = record.receipt.as_ref()?;
    let mut session = Session {
        provider: receipt.provider.clone(),
        model: receipt.model.clone(),
        system: None,
        messages: Vec::new(),
    };
    for entry in &record.transcript {
        match entry.role {
            TranscriptRole::System => session.system = Some(entry.text.clone()),
            TranscriptRole::User => session.messages.push(ChatMessage::user(&entry.text)),
            // What a turn said around its tool calls is one reply: the
            // calls and their results are in the record, not sent again
            // (a call without its result would not be taken).
            TranscriptRole::Assistant => match session.messages.last_mut() {
                Some(last) if last.role == crate::provider::Role::Assistant => {
                    let joined = format!("{}\n\n{}", last.text(), entry.text);
                    *last = ChatMessage::assistant(joined);
                }
                _ => session.messages.push(ChatMessage::assistant(&entry.text)),
            },
            TranscriptRole::ToolCall | TranscriptRole::ToolResult => {}
        }
    }
    while session
        .messages
        .last()
        .is_some_and(|message| message.role != crate::provider::Role::Assistant)
    {
        session.messages.pop();
    }
    Some(session)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::activation::ToolOutcome;

    fn response(index: u32, label: &str, complete: bool) -> ResponseRecord {
        ResponseRecord {
            index,
            label: label.to_owned(),
            text: format!("answer {index}"),
            complete,
            ..ResponseRecord::default()
        }
    }

    #[test]
    fn answered_turns_are_recovered_in_order_until_the_first_that_was_not() {
        let mut record = ActivationRecord::new("draft", 1, 5);
        record.responses = vec![
            response(0, "Original", true),
            response(1, "Re-prompt 1", true),
            response(2, "Re-prompt 2", false),
        ];
        let recovered = Recovered::new(record);
        assert_eq!(answered(&recovered, 0, "Original"), "answer 0");
        assert_eq!(answered(&recovered, 1, "Re-prompt 1"), "answer 1");
        // Half streamed: asked again, and nothing after it is taken.
        assert!(recovered.take(2, "Re-prompt 2").is_none());
        assert!(recovered.take(3, "Re-prompt 3").is_none());
    }

    fn answered(recovered: &Recovered, index: u32, label: &str) -> String {
        match recovered.take(index, label) {
            Some(Taken::Answered { response, .. }) => response.text,
            other => panic!("{other:?}"),
        }
    }

    fn tool_call(id: &str, response_index: u32, outcome: ToolOutcome) -> ToolCallRecord {
        ToolCallRecord {
            call_id: id.to_owned(),
            response_index,
            server: "patchbay".to_owned(),
            tool: "lookup".to_owned(),
            arguments: serde_json::json!({"key": "tides"}),
            outcome,
            result: serde_json::Value::Null,
            duration_ms: 0,
            ..ToolCallRecord::default()
        }
    }

    #[test]
    fn a_turn_stopped_among_its_tool_calls_is_taken_with_them_and_ends_recovery() {
        let mut record = ActivationRecord::new("draft", 1, 5);
        record.responses = vec![
            response(0, "Original", true),
            response(1, "Re-prompt 1", false),
        ];
        record.tool_calls = vec![
            tool_call("a", 0, ToolOutcome::Ok),
            tool_call("b", 1, ToolOutcome::Ok),
            tool_call("c", 1, ToolOutcome::Pending),
        ];
        let recovered = Recovered::new(record);
        let Some(Taken::Answered { calls, .. }) = recovered.take(0, "Original") else {
            panic!("answered");
        };
        assert_eq!(calls, [tool_call("a", 0, ToolOutcome::Ok)]);
        let Some(Taken::AmongCalls { response, calls }) = recovered.take(1, "Re-prompt 1") else {
            panic!("among its calls");
        };
        assert_eq!(response.text, "answer 1");
        let ids: Vec<&str> = calls.iter().map(|call| call.call_id.as_str()).collect();
        assert_eq!(ids, ["b", "c"]);
        assert!(recovered.take(2, "Re-prompt 2").is_none());
    }

    #[test]
    fn a_different_turn_ends_recovery() {
        let mut record = ActivationRecord::new("draft", 1, 5);
        record.responses = vec![
            response(0, "Original", true),
            response(1, "Re-prompt 1", true),
        ];
        let recovered = Recovered::new(record);
        assert!(recovered.take(0, "Fix 1").is_none());
        assert!(recovered.take(1, "Re-prompt 1").is_none());
    }
}
