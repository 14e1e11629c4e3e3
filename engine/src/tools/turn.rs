//! One turn of an agent task with tools, as a plain value (PRODUCT §3.17):
//! the model answers, or asks for tool calls; the calls run (side by side)
//! and their results go back into the session; the model goes on, until it
//! answers without a call. The value decides what happens after each reply
//! and each result, keeps every call paired with a result whatever happened
//! to it (a call past the limit gets one too), and holds the activation to
//! its `max_tool_calls`. The async shell (`activation/tool_loop.rs`) asks
//! the model and the servers and feeds this what they said.

use crate::provider::{ChatMessage, ContentPart, ToolCall};

/// The code an activation that asked for more tool calls than it may make
/// fails with, at the start of its error (on `error_out`).
pub const LIMIT_REACHED: &str = "tools.limit_reached";

/// Why a turn could not go on, as a caller can match it. How one call
/// ended (the tool's error, a timeout, its server gone) is a [`CallEnd`]:
/// it goes back to the model, and the turn goes on.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TurnError {
    /// The model's provider failed, after its retries.
    #[error("\"{module}\": {message}")]
    Provider { module: String, message: String },
    /// The model asked for more calls than the activation may make.
    #[error(
        "{LIMIT_REACHED}: \"{module}\" asked for {asked} tool calls, more than it may make ({limit}, max_tool_calls)"
    )]
    LimitReached {
        module: String,
        asked: u32,
        limit: u32,
    },
    /// A tool the turn offers could not be made ready: its server is not
    /// there or did not list it, or a locked argument it does not take.
    #[error("{0}")]
    ToolUnavailable(String),
}

/// How a tool call ended, as the model is told and the record keeps it.
#[derive(Clone, Debug, PartialEq)]
pub enum CallEnd {
    /// What the tool gave back: its text for the model, and the value the
    /// record and the graph keep (its structured content, else its text).
    Done {
        text: String,
        value: serde_json::Value,
    },
    /// The tool said it failed (`isError`), in its words.
    ToolError(String),
    /// No answer within the server's `timeout_seconds`.
    TimedOut { seconds: u64 },
    /// The server could not be reached, or stopped.
    ServerGone(String),
    /// In flight when the server running the run stopped, and not a tool
    /// that may be called twice.
    Interrupted,
    /// Not made: past the module's `max_tool_calls`, or not a tool this
    /// turn offers.
    NotRun(String),
    /// It waited for a person, who declined it (or nobody decided in
    /// time): the words the model is told.
    Declined(String),
}

impl CallEnd {
    /// As the model may be told it: `hidden` taken out of what the tool
    /// said (the value the record and the graph keep is the tool's).
    pub fn hiding(self, hidden: &super::Redaction) -> CallEnd {
        match self {
            CallEnd::Done { text, value } => CallEnd::Done {
                text: hidden.text(&text),
                value,
            },
            CallEnd::ToolError(message) => CallEnd::ToolError(hidden.text(&message)),
            other => other,
        }
    }

    /// Whether the call gave what it was asked for.
    pub fn ok(&self) -> bool {
        matches!(self, CallEnd::Done { .. })
    }

    /// What the model is told.
    pub fn told(&self) -> String {
        match self {
            CallEnd::Done { text, .. } => text.clone(),
            CallEnd::ToolError(message) => format!("The tool failed: {message}"),
            CallEnd::TimedOut { seconds } => {
                format!("The tool did not answer within {seconds} s, so the call was cancelled.")
            }
            CallEnd::ServerGone(message) => {
                format!("The tool could not be called: its server is not available ({message}).")
            }
            CallEnd::Interrupted => "The call was interrupted: the server running this task stopped while it ran, so it may or may not have happened. Check before calling it again.".to_owned(),
            CallEnd::NotRun(why) => format!("The call was not made: {why}."),
            CallEnd::Declined(told) => told.clone(),
        }
    }
}

/// What comes of a call a turn is taken up with.
#[derive(Clone, Debug, PartialEq)]
pub enum Resumption {
    /// In flight when the server stopped, and it may be made twice.
    Again,
    /// In flight when the server stopped, and it may not.
    Interrupted,
    /// A person approved it: made as this (their arguments, if edited).
    Approved(ToolCall),
    /// A person declined it, or nobody decided in time: the model is told
    /// these words.
    Declined(String),
}

/// What the shell does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// The model answered: the turn is done.
    Answered,
    /// Make these calls (side by side), then ask the model again.
    Call(Vec<ToolCall>),
    /// The model asked for more calls than the activation may make: none
    /// of them is made, and the activation fails.
    LimitReached { limit: u32, asked: u32 },
}

/// A turn with tools.
#[derive(Clone, Debug)]
pub struct ToolTurn {
    /// Calls the activation has made before and in this turn.
    made: u32,
    limit: u32,
    /// The names of the tools this turn offers.
    offered: Vec<String>,
    /// The calls of the last reply, each with how it ended once it has.
    waiting: Vec<(ToolCall, Option<CallEnd>)>,
}

impl ToolTurn {
    /// A turn of an activation that has made `made` calls of its `limit`,
    /// offering the tools `offered`.
    pub fn new(made: u32, limit: u32, offered: Vec<String>) -> ToolTurn {
        ToolTurn {
            made,
            limit,
            offered,
            waiting: Vec::new(),
        }
    }

    /// The calls made so far, this turn's included.
    pub fn made(&self) -> u32 {
        self.made
    }

    /// The model replied, asking for `calls` (none: it answered). A call
    /// of a tool the turn does not offer ends at once, told so; it counts
    /// against the limit like any, so a model that keeps asking for one
    /// stops too.
    pub fn on_reply(&mut self, calls: &[ToolCall]) -> Next {
        self.waiting.clear();
        if calls.is_empty() {
            return Next::Answered;
        }
        let asked = u32::try_from(calls.len()).unwrap_or(u32::MAX);
        if self.made.saturating_add(asked) > self.limit {
            let why = format!(
                "this task may make at most {} tool calls, and {} were made before these",
                self.limit, self.made
            );
            self.waiting = calls
                .iter()
                .map(|call| (call.clone(), Some(CallEnd::NotRun(why.clone()))))
                .collect();
            return Next::LimitReached {
                limit: self.limit,
                asked: self.made.saturating_add(asked),
            };
        }
        self.made += asked;
        let mut to_make = Vec::new();
        for call in calls {
            let end = (!self.offered.contains(&call.name)).then(|| {
                CallEnd::NotRun(format!(
                    "no tool called \"{}\" is offered here (the tools are: {})",
                    call.name,
                    if self.offered.is_empty() {
                        "none".to_owned()
                    } else {
                        self.offered.join(", ")
                    }
                ))
            });
            if end.is_none() {
                to_make.push(call.clone());
            }
            self.waiting.push((call.clone(), end));
        }
        Next::Call(to_make)
    }

    /// The activation was taken up in the middle of this turn, with
    /// `pending` its calls that had not ended, each with what comes of it:
    /// one in flight when its server stopped is made again when it may be
    /// (a read-only tool of a trusted server) and is otherwise told it was
    /// interrupted, never silently repeated; one that waited for a person
    /// is made as they approved it, or told they declined. They were
    /// counted when first asked for.
    pub fn resume(&mut self, pending: Vec<(ToolCall, Resumption)>) -> Next {
        let mut to_make = Vec::new();
        self.waiting = pending
            .into_iter()
            .map(|(call, resumption)| match resumption {
                Resumption::Again => {
                    to_make.push(call.clone());
                    (call, None)
                }
                Resumption::Approved(made) => {
                    to_make.push(made);
                    (call, None)
                }
                Resumption::Interrupted => (call, Some(CallEnd::Interrupted)),
                Resumption::Declined(told) => (call, Some(CallEnd::Declined(told))),
            })
            .collect();
        Next::Call(to_make)
    }

    /// Call `call_id` ended.
    pub fn on_result(&mut self, call_id: &str, end: CallEnd) {
        if let Some((_, slot)) = self
            .waiting
            .iter_mut()
            .find(|(call, slot)| call.id == call_id && slot.is_none())
        {
            *slot = Some(end);
        }
    }

    /// Every call of the last reply with how it ended: one that has not
    /// said (its task lost) is told it was interrupted.
    pub fn ends(&self) -> Vec<(ToolCall, CallEnd)> {
        self.waiting
            .iter()
            .map(|(call, end)| (call.clone(), end.clone().unwrap_or(CallEnd::Interrupted)))
            .collect()
    }

    /// The session's message with the results of the last reply's calls,
    /// each paired with its call, in the order the model asked.
    pub fn results_message(&self) -> ChatMessage {
        ChatMessage::tool_results(
            self.ends()
                .into_iter()
                .map(|(call, end)| ContentPart::ToolResult {
                    call_id: call.id,
                    text: end.told(),
                    is_error: !end.ok(),
                })
                .collect(),
        )
    }
}

/// What the model was told of a call the record has settled, and whether
/// that was an error: a result's text (its structured content as JSON),
/// or the words an error was told in.
pub fn told_from_record(call: &wire::activation::ToolCallRecord) -> (String, bool) {
    let text = match &call.result {
        serde_json::Value::String(text) => text.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    (text, call.outcome != wire::activation::ToolOutcome::Ok)
}

/// A recorded call as the model asked for it: its arguments without the
/// locked ones, which it never saw (the record shows them as locked).
pub fn as_asked(call: &wire::activation::ToolCallRecord) -> ToolCall {
    let mut arguments = call.arguments.clone();
    if let serde_json::Value::Object(object) = &mut arguments {
        object.retain(|_, value| value.as_str() != Some(graph::tools::LOCKED));
    }
    ToolCall {
        id: call.call_id.clone(),
        name: call.tool.clone(),
        arguments,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::provider::Role;

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: json!({}),
        }
    }

    fn done(text: &str) -> CallEnd {
        CallEnd::Done {
            text: text.to_owned(),
            value: json!(text),
        }
    }

    #[test]
    fn calls_are_made_and_each_result_goes_back_paired_with_its_call_in_order() {
        let mut turn = ToolTurn::new(0, 10, vec!["lookup".to_owned(), "clock".to_owned()]);
        let asked = [call("a", "lookup"), call("b", "clock")];
        assert_eq!(turn.on_reply(&asked), Next::Call(asked.to_vec()));
        // They end in another order than asked.
        turn.on_result("b", CallEnd::TimedOut { seconds: 60 });
        turn.on_result("a", done("twice a day"));
        let message = turn.results_message();
        assert_eq!(message.role, Role::Tool);
        assert_eq!(
            message.content,
            [
                ContentPart::ToolResult {
                    call_id: "a".to_owned(),
                    text: "twice a day".to_owned(),
                    is_error: false
                },
                ContentPart::ToolResult {
                    call_id: "b".to_owned(),
                    text: "The tool did not answer within 60 s, so the call was cancelled."
                        .to_owned(),
                    is_error: true
                },
            ]
        );
        assert_eq!(turn.made(), 2);
        // Then the model answers.
        assert_eq!(turn.on_reply(&[]), Next::Answered);
    }

    #[test]
    fn a_tool_the_turn_does_not_offer_is_not_called_and_the_model_is_told() {
        let mut turn = ToolTurn::new(0, 10, vec!["lookup".to_owned()]);
        let asked = [call("a", "write_file"), call("b", "lookup")];
        assert_eq!(turn.on_reply(&asked), Next::Call(vec![call("b", "lookup")]));
        turn.on_result("b", done("found"));
        let ends = turn.ends();
        assert!(
            matches!(&ends[0].1, CallEnd::NotRun(why) if why.contains("no tool called \"write_file\" is offered here (the tools are: lookup)")),
            "{ends:?}"
        );
        // It counts: a model that keeps asking stops at the limit.
        assert_eq!(turn.made(), 2);
    }

    #[test]
    fn past_the_limit_nothing_is_called_every_call_still_gets_a_result_and_the_turn_fails() {
        let mut turn = ToolTurn::new(9, 10, vec!["lookup".to_owned()]);
        let asked = [call("a", "lookup"), call("b", "lookup")];
        assert_eq!(
            turn.on_reply(&asked),
            Next::LimitReached {
                limit: 10,
                asked: 11
            }
        );
        let message = turn.results_message();
        assert_eq!(message.content.len(), 2);
        assert!(message.content.iter().all(|part| matches!(
            part,
            ContentPart::ToolResult { is_error: true, text, .. } if text.contains("at most 10 tool calls, and 9 were made")
        )));
        assert_eq!(turn.made(), 9);
    }

    #[test]
    fn a_call_whose_end_never_came_is_told_it_was_interrupted() {
        let mut turn = ToolTurn::new(0, 10, vec!["write_file".to_owned()]);
        turn.on_reply(&[call("a", "write_file")]);
        assert_eq!(turn.ends()[0].1, CallEnd::Interrupted);
        // A second end of one call changes nothing.
        turn.on_result("a", done("written"));
        turn.on_result("a", CallEnd::ToolError("late".to_owned()));
        assert_eq!(turn.ends()[0].1, done("written"));
    }

    #[test]
    fn a_turn_s_error_is_told_apart_by_its_kind_and_reads_with_its_code() {
        let error: crate::activation::ActivationError = TurnError::LimitReached {
            module: "ask".to_owned(),
            asked: 11,
            limit: 10,
        }
        .into();
        assert!(matches!(
            &error,
            crate::activation::ActivationError::Turn(TurnError::LimitReached { limit: 10, .. })
        ));
        assert_eq!(
            error.to_string(),
            "tools.limit_reached: \"ask\" asked for 11 tool calls, more than it may make (10, max_tool_calls)"
        );
    }

    #[test]
    fn a_locked_value_a_tool_repeats_is_hidden_from_the_model_and_kept_in_the_value() {
        let hidden = crate::tools::Redaction::locked(["acct-7781".to_owned(), "x".to_owned()]);
        let end = CallEnd::Done {
            text: "{\"account\": \"acct-7781\", \"x\": 1}".to_owned(),
            value: json!({"account": "acct-7781"}),
        }
        .hiding(&hidden);
        assert_eq!(
            end,
            CallEnd::Done {
                text: "{\"account\": \"🔒 locked\", \"x\": 1}".to_owned(),
                value: json!({"account": "acct-7781"}),
            }
        );
        let error = CallEnd::ToolError("no account acct-7781".to_owned()).hiding(&hidden);
        assert_eq!(error.told(), "The tool failed: no account 🔒 locked");
    }

    #[test]
    fn resumed_mid_turn_a_read_only_call_is_made_again_and_any_other_is_told_it_was_interrupted() {
        let mut turn = ToolTurn::new(3, 10, vec!["lookup".to_owned(), "refund".to_owned()]);
        let next = turn.resume(vec![
            (call("a", "lookup"), Resumption::Again),
            (call("b", "refund"), Resumption::Interrupted),
        ]);
        assert_eq!(next, Next::Call(vec![call("a", "lookup")]));
        turn.on_result("a", done("twice a day"));
        let ends = turn.ends();
        assert_eq!(ends[0].1, done("twice a day"));
        assert_eq!(ends[1].1, CallEnd::Interrupted);
        assert!(ends[1].1.told().contains("may or may not have happened"));
        // Counted when first asked for, not again.
        assert_eq!(turn.made(), 3);
        // Both go back to the model, paired with their calls.
        let message = turn.results_message();
        assert_eq!(message.content.len(), 2);
    }

    #[test]
    fn taken_up_after_a_decision_an_approved_call_is_made_as_edited_and_a_declined_one_is_told_why()
    {
        let mut turn = ToolTurn::new(2, 10, vec!["write_file".to_owned()]);
        let mut edited = call("a", "write_file");
        edited.arguments = json!({"path": "notes.md"});
        let declined = "A person declined this call. Their reason: not there".to_owned();
        let next = turn.resume(vec![
            (
                call("a", "write_file"),
                Resumption::Approved(edited.clone()),
            ),
            (
                call("b", "write_file"),
                Resumption::Declined(declined.clone()),
            ),
        ]);
        assert_eq!(next, Next::Call(vec![edited]));
        turn.on_result("a", done("written"));
        let ends = turn.ends();
        assert_eq!(ends[0].1, done("written"));
        assert_eq!(ends[1].1, CallEnd::Declined(declined.clone()));
        assert!(!ends[1].1.ok());
        // Every call is paired with its result, as the model asked them.
        let message = turn.results_message();
        assert_eq!(
            message.content[1],
            ContentPart::ToolResult {
                call_id: "b".to_owned(),
                text: declined,
                is_error: true
            }
        );
        assert_eq!(turn.made(), 2);
    }
}
