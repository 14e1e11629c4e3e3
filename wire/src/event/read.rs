//! Reading an event back from its name and payload, as the log stores them
//! and the stream carries them. Written out rather than derived: serde's
//! decoder for the fourteen-variant enum was 14 kB of the browser bundle,
//! this is a fifth of that. The test in `event.rs` reads back one event of
//! every name (and checks that none is missing), so an event or field added
//! to [`RunEvent`] and not here fails it.

use serde::de::Error as _;
use serde_json::{Error, Map, Value};

use super::RunEvent;
use crate::approval::{Decider, Decision};
use crate::status::RunStatus;

/// An event's payload, its fields taken one by one.
struct Payload<'a> {
    name: &'a str,
    fields: Map<String, Value>,
}

impl Payload<'_> {
    fn take(&mut self, field: &'static str) -> Result<Value, Error> {
        self.fields
            .remove(field)
            .ok_or_else(|| Error::custom(format!("{}: missing field `{field}`", self.name)))
    }

    fn wrong(&self, field: &str, expected: &str) -> Error {
        Error::custom(format!("{}: `{field}` is not {expected}", self.name))
    }

    fn text(&mut self, field: &'static str) -> Result<String, Error> {
        match self.take(field)? {
            Value::String(text) => Ok(text),
            _ => Err(self.wrong(field, "a string")),
        }
    }

    fn number<T: TryFrom<u64>>(&mut self, field: &'static str) -> Result<T, Error> {
        self.take(field)?
            .as_u64()
            .and_then(|number| T::try_from(number).ok())
            .ok_or_else(|| self.wrong(field, "a count"))
    }

    /// A cost in dollars, or `null` for none.
    fn cost(&mut self, field: &'static str) -> Result<Option<f64>, Error> {
        match self.take(field)? {
            Value::Null => Ok(None),
            value => value
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.wrong(field, "a number or null")),
        }
    }

    /// Text that may be absent or `null`.
    fn optional_text(&mut self, field: &'static str) -> Result<Option<String>, Error> {
        match self.fields.remove(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(self.wrong(field, "a string")),
        }
    }

    fn flag(&mut self, field: &'static str) -> Result<bool, Error> {
        match self.take(field)? {
            Value::Bool(flag) => Ok(flag),
            _ => Err(self.wrong(field, "true or false")),
        }
    }

    /// A number that may be absent or `null`.
    fn optional_number(&mut self, field: &'static str) -> Result<Option<i64>, Error> {
        match self.fields.remove(field) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_i64()
                .map(Some)
                .ok_or_else(|| self.wrong(field, "a number")),
        }
    }

    fn texts(&mut self, field: &'static str) -> Result<Vec<String>, Error> {
        match self.take(field)? {
            Value::Array(items) => items
                .into_iter()
                .map(|item| match item {
                    Value::String(text) => Ok(text),
                    _ => Err(self.wrong(field, "a list of strings")),
                })
                .collect(),
            _ => Err(self.wrong(field, "a list of strings")),
        }
    }

    /// A name one of `parse` knows.
    fn named<T>(
        &mut self,
        field: &'static str,
        parse: fn(&str) -> Option<T>,
        what: &str,
    ) -> Result<T, Error> {
        let text = self.text(field)?;
        parse(&text).ok_or_else(|| self.wrong(field, what))
    }

    fn status(&mut self) -> Result<RunStatus, Error> {
        let text = self.text("status")?;
        RunStatus::parse(&text).ok_or_else(|| self.wrong("status", "a run status"))
    }
}

/// The event called `name` with these fields; fields it does not have are
/// left alone (the stream adds `run_id` and `ts`).
pub fn event(name: &str, payload: Value) -> Result<RunEvent, Error> {
    let Value::Object(fields) = payload else {
        return Err(Error::custom(format!(
            "{name}: the payload is not an object"
        )));
    };
    let mut payload = Payload { name, fields };
    let payload = &mut payload;
    Ok(match name {
        "run.started" => RunEvent::RunStarted {
            status: payload.status()?,
        },
        "run.completed" => RunEvent::RunCompleted {
            status: payload.status()?,
        },
        "run.failed" => RunEvent::RunFailed {
            status: payload.status()?,
            error: payload.text("error")?,
        },
        "run.cancelled" => RunEvent::RunCancelled {
            status: payload.status()?,
        },
        "run.interrupted" => RunEvent::RunInterrupted {
            status: payload.status()?,
            error: payload.text("error")?,
        },
        "run.resumed" => RunEvent::RunResumed {
            status: payload.status()?,
            replayed: payload.number("replayed")?,
        },
        "module.queued" => RunEvent::ModuleQueued {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
        },
        "module.activated" => RunEvent::ModuleActivated {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
        },
        "module.completed" => RunEvent::ModuleCompleted {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
        },
        "module.failed" => RunEvent::ModuleFailed {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            error: payload.text("error")?,
        },
        "module.output_delta" => RunEvent::ModuleOutputDelta {
            module_id: payload.text("module_id")?,
            response_index: payload.number("response_index")?,
            text: payload.text("text")?,
        },
        "module.usage" => RunEvent::ModuleUsage {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            tokens_in: payload.number("tokens_in")?,
            tokens_out: payload.number("tokens_out")?,
            cost: payload.cost("cost")?,
        },
        "task.agent_task.reprompt_dispatched" => RunEvent::RepromptDispatched {
            module_id: payload.text("module_id")?,
            reprompt_index: payload.number("reprompt_index")?,
            reprompt_count: payload.number("reprompt_count")?,
            variant: payload.optional_text("variant")?,
        },
        "task.agent_task.reprompt_response" => RunEvent::RepromptResponse {
            module_id: payload.text("module_id")?,
            reprompt_index: payload.number("reprompt_index")?,
            token_count: payload.number("token_count")?,
            variant: payload.optional_text("variant")?,
        },
        "module.variant_started" => RunEvent::VariantStarted {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            variant: payload.text("variant")?,
            index: payload.number("index")?,
            count: payload.number("count")?,
        },
        "module.variant_finished" => RunEvent::VariantFinished {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            variant: payload.text("variant")?,
            status: payload.text("status")?,
            error: payload.optional_text("error")?,
            cost: payload.cost("cost")?,
            duration_ms: payload.number("duration_ms")?,
        },
        "task.coding.agent_reprompt_dispatched" => RunEvent::CodingRepromptDispatched {
            module_id: payload.text("module_id")?,
            agent_role: payload.text("agent_role")?,
            reprompt_index: payload.number("reprompt_index")?,
        },
        "task.coding.agent_reprompt_response" => RunEvent::CodingRepromptResponse {
            module_id: payload.text("module_id")?,
            agent_role: payload.text("agent_role")?,
            reprompt_index: payload.number("reprompt_index")?,
        },
        "task.coding.agent_started" => RunEvent::CodingAgentStarted {
            module_id: payload.text("module_id")?,
            agent_role: payload.text("agent_role")?,
            agent_name: payload.text("agent_name")?,
            round: payload.number("round")?,
        },
        "task.coding.agent_finished" => RunEvent::CodingAgentFinished {
            module_id: payload.text("module_id")?,
            agent_role: payload.text("agent_role")?,
            round: payload.number("round")?,
            files_changed: payload.number("files_changed")?,
        },
        "cable.taken" => RunEvent::CableTaken {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            port: payload.text("port")?,
            cable_id: payload.text("cable_id")?,
        },
        "cable.none_taken" => RunEvent::CableNoneTaken {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            port: payload.text("port")?,
            reason: payload.text("reason")?,
        },
        "cable.ignored" => RunEvent::CableIgnored {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            cable_id: payload.text("cable_id")?,
        },
        "module.intent" => RunEvent::ModuleIntent {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            intent: payload.text("intent")?,
            said: payload.text("said")?,
            reason: payload.text("reason")?,
            fallback: payload.flag("fallback")?,
        },
        "module.retrying" => RunEvent::ModuleRetrying {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            attempt: payload.number("attempt")?,
            max_attempts: payload.number("max_attempts")?,
            delay_seconds: payload.number("delay_seconds")?,
            reason: payload.text("reason")?,
        },
        "module.validating" => RunEvent::ModuleValidating {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            validator: payload.text("validator")?,
        },
        "module.validated" => RunEvent::ModuleValidated {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            validator: payload.text("validator")?,
            passed: payload.flag("passed")?,
            detail: payload.text("detail")?,
        },
        "module.fix_dispatched" => RunEvent::ModuleFixDispatched {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            fix: payload.number("fix")?,
            of: payload.number("of")?,
            validator: payload.text("validator")?,
        },
        "module.polled" => RunEvent::ModulePolled {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            poll: payload.number("poll")?,
            outcome: payload.text("outcome")?,
            result: payload.text("result")?,
            next_in_seconds: payload.number("next_in_seconds")?,
        },
        "module.gave_up" => RunEvent::ModuleGaveUp {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            attempts: payload.number("attempts")?,
            reason: payload.text("reason")?,
        },
        "module.waiting" => RunEvent::ModuleWaiting {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            asked: payload.text("asked")?,
            shown: payload.texts("shown")?,
            deadline_at: payload.optional_number("deadline_at")?,
        },
        "module.decided" => RunEvent::ModuleDecided {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            decision: payload.named("decision", Decision::parse, "a decision")?,
            by: payload.named("by", Decider::parse, "who decided")?,
            feedback: payload.text("feedback")?,
        },
        unknown => return Err(Error::custom(format!("unknown event `{unknown}`"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_payload_that_does_not_fit_its_event_says_which_field() {
        let missing = event("module.activated", json!({"module_id": "m1"})).unwrap_err();
        assert!(missing.to_string().contains("`activation`"), "{missing}");
        let wrong =
            event("module.activated", json!({"module_id": 7, "activation": 1})).unwrap_err();
        assert!(wrong.to_string().contains("`module_id`"), "{wrong}");
        let negative = event(
            "module.activated",
            json!({"module_id": "m1", "activation": -1}),
        )
        .unwrap_err();
        assert!(negative.to_string().contains("`activation`"), "{negative}");
        let status = event("run.started", json!({"status": "sleeping"})).unwrap_err();
        assert!(status.to_string().contains("run status"), "{status}");
        let unknown = event("run.teleported", json!({})).unwrap_err();
        assert!(unknown.to_string().contains("run.teleported"), "{unknown}");
        assert!(event("run.started", json!("running")).is_err());
    }

    #[test]
    fn fields_the_stream_adds_are_left_alone() {
        let read = event(
            "run.started",
            json!({"run_id": "r_1", "ts": 1, "status": "running"}),
        )
        .unwrap();
        assert_eq!(
            read,
            RunEvent::RunStarted {
                status: RunStatus::Running
            }
        );
    }
}
