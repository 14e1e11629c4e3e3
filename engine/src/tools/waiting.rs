//! Tool calls that wait for a person (PRODUCT §3.17), as their activation's
//! record keeps them: each waiting call (`ToolOutcome::Waiting`) with why
//! and until when, and the decision on it once someone (or its timeout)
//! took one. The run decides on these records; the activation, taken up
//! when every call is decided, reads here what to do with each.

use wire::activation::{ActivationRecord, ToolCallRecord, ToolOutcome};
use wire::approval::{CallDecision, Decision};

/// Whether the activation waits on tool calls.
pub fn waits_on_calls(record: &ActivationRecord) -> bool {
    record
        .tool_calls
        .iter()
        .any(|call| call.outcome == ToolOutcome::Waiting)
}

/// The calls that wait and nobody has decided on yet.
pub fn undecided(record: &ActivationRecord) -> impl Iterator<Item = &ToolCallRecord> {
    record
        .tool_calls
        .iter()
        .filter(|call| call.outcome == ToolOutcome::Waiting && call.decision.is_none())
}

/// The names of the tools whose calls wait undecided, in the order asked.
pub fn waiting_tools(record: &ActivationRecord) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for call in undecided(record) {
        if !names.contains(&call.tool) {
            names.push(call.tool.clone());
        }
    }
    names
}

/// When the first undecided call's wait is over, if any has a deadline.
pub fn next_deadline(record: &ActivationRecord) -> Option<i64> {
    undecided(record)
        .filter_map(|call| call.waits.as_ref()?.deadline_at)
        .min()
}

/// The undecided calls whose wait is over at `now`.
pub fn overdue(record: &ActivationRecord, now: i64) -> Vec<String> {
    undecided(record)
        .filter(|call| {
            call.waits
                .as_ref()
                .and_then(|waits| waits.deadline_at)
                .is_some_and(|deadline| deadline <= now)
        })
        .map(|call| call.call_id.clone())
        .collect()
}

/// What came of a decision on one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decided {
    /// Taken; other calls still wait.
    OthersWait,
    /// Taken, and it was the last: the turn goes on.
    AllDecided,
    /// No call by that id waits undecided: it was decided before, or
    /// never waited.
    NotWaiting,
}

/// Takes `decision` on call `call_id` of `record`.
pub fn decide(record: &mut ActivationRecord, call_id: &str, decision: CallDecision) -> Decided {
    let Some(call) = record.tool_calls.iter_mut().find(|call| {
        call.call_id == call_id && call.outcome == ToolOutcome::Waiting && call.decision.is_none()
    }) else {
        return Decided::NotWaiting;
    };
    call.decision = Some(decision);
    if undecided(record).next().is_some() {
        Decided::OthersWait
    } else {
        Decided::AllDecided
    }
}

/// The decision a call's timeout stands for: refused, by nobody.
pub fn timed_out(now: i64) -> CallDecision {
    CallDecision {
        decision: Decision::Reject,
        arguments: None,
        feedback: "nobody approved it in time".to_owned(),
        by: None,
        at: now,
    }
}

/// What a call that waited comes to once decided: made (with the
/// person's arguments, if they edited them), or declined with the words
/// the model is told.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Approved {
        arguments: Option<serde_json::Value>,
    },
    Declined(String),
}

/// The outcome of a waiting call's decision; a call nobody decided on
/// (which only a record written by hand can hold) is declined.
pub fn outcome(call: &ToolCallRecord) -> Outcome {
    let Some(decision) = &call.decision else {
        return Outcome::Declined("The call was not made: nobody decided on it.".to_owned());
    };
    let reason = decision.feedback.trim();
    match (decision.decision, decision.by) {
        (Decision::Approve, _) => Outcome::Approved {
            arguments: decision.arguments.clone(),
        },
        (_, None) => Outcome::Declined(format!("The call was not made: {reason}.")),
        (_, Some(_)) if reason.is_empty() => {
            Outcome::Declined("A person declined this call.".to_owned())
        }
        (_, Some(_)) => Outcome::Declined(format!(
            "A person declined this call. Their reason: {reason}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::approval::{CallWait, Decider};

    fn waiting(id: &str, deadline_at: Option<i64>) -> ToolCallRecord {
        ToolCallRecord {
            call_id: id.to_owned(),
            tool: format!("tool_{id}"),
            outcome: ToolOutcome::Waiting,
            waits: Some(CallWait {
                reason: "Calls wait for you: this module asks".to_owned(),
                deadline_at,
            }),
            ..ToolCallRecord::default()
        }
    }

    fn by_a_person(decision: Decision, feedback: &str) -> CallDecision {
        CallDecision {
            decision,
            arguments: None,
            feedback: feedback.to_owned(),
            by: Some(Decider::Editor),
            at: 10,
        }
    }

    fn record(calls: Vec<ToolCallRecord>) -> ActivationRecord {
        let mut record = ActivationRecord::new("agent", 1, 0);
        record.tool_calls = calls;
        record
    }

    #[test]
    fn the_turn_goes_on_when_the_last_waiting_call_is_decided_and_each_is_decided_once() {
        let mut done = waiting("done", None);
        done.outcome = ToolOutcome::Ok;
        let mut record = record(vec![done, waiting("a", Some(50)), waiting("b", Some(20))]);
        assert!(waits_on_calls(&record));
        assert_eq!(waiting_tools(&record), ["tool_a", "tool_b"]);
        assert_eq!(next_deadline(&record), Some(20));
        assert_eq!(
            decide(&mut record, "done", by_a_person(Decision::Approve, "")),
            Decided::NotWaiting
        );
        assert_eq!(
            decide(&mut record, "b", by_a_person(Decision::Reject, "no")),
            Decided::OthersWait
        );
        assert_eq!(next_deadline(&record), Some(50));
        // The first decision on a call wins.
        assert_eq!(
            decide(&mut record, "b", by_a_person(Decision::Approve, "")),
            Decided::NotWaiting
        );
        assert_eq!(
            decide(&mut record, "a", by_a_person(Decision::Approve, "")),
            Decided::AllDecided
        );
        assert_eq!(next_deadline(&record), None);
        assert!(waiting_tools(&record).is_empty());
    }

    #[test]
    fn only_the_calls_whose_wait_is_over_time_out() {
        let record = record(vec![
            waiting("soon", Some(100)),
            waiting("later", Some(500)),
            waiting("never", None),
        ]);
        assert_eq!(overdue(&record, 99), Vec::<String>::new());
        assert_eq!(overdue(&record, 100), ["soon"]);
        assert_eq!(overdue(&record, 1_000), ["soon", "later"]);
    }

    #[test]
    fn the_model_is_told_who_declined_and_why() {
        let mut call = waiting("a", None);
        call.decision = Some(by_a_person(Decision::Reject, " Not on main. "));
        assert_eq!(
            outcome(&call),
            Outcome::Declined("A person declined this call. Their reason: Not on main.".to_owned())
        );
        call.decision = Some(by_a_person(Decision::Reject, ""));
        assert_eq!(
            outcome(&call),
            Outcome::Declined("A person declined this call.".to_owned())
        );
        call.decision = Some(timed_out(5));
        assert_eq!(
            outcome(&call),
            Outcome::Declined("The call was not made: nobody approved it in time.".to_owned())
        );
        let edited = serde_json::json!({"path": "notes.md"});
        call.decision = Some(CallDecision {
            arguments: Some(edited.clone()),
            ..by_a_person(Decision::Approve, "")
        });
        assert_eq!(
            outcome(&call),
            Outcome::Approved {
                arguments: Some(edited)
            }
        );
    }
}
