//! Reading an event back from its name and payload, as the log stores them
//! and the stream carries them. Written out rather than derived: serde's
//! decoder for the fourteen-variant enum was 14 kB of the browser bundle,
//! this is a fifth of that. The test in `event.rs` reads back one event of
//! every name (and checks that none is missing), so an event or field added
//! to [`RunEvent`] and not here fails it.

use serde::de::Error as _;
use serde_json::{Error, Value};

use graph::intent::Intent;

use super::RunEvent;
use crate::approval::{Decider, Decision};
use crate::fields::Fields;
use crate::status::{PollOutcome, RunStatus, VariantStatus};

/// The run status every run event has.
fn status(payload: &mut Fields<'_>) -> Result<RunStatus, Error> {
    payload.word("status", RunStatus::parse, "a run status")
}

/// The event called `name` with these fields; fields it does not have are
/// left alone (the stream adds `run_id` and `ts`).
pub fn event(name: &str, payload: Value) -> Result<RunEvent, Error> {
    if !payload.is_object() {
        return Err(Error::custom(format!(
            "{name}: the payload is not an object"
        )));
    }
    let mut payload = Fields::of(name, payload)?;
    let payload = &mut payload;
    Ok(match name {
        "run.started" => RunEvent::RunStarted {
            status: status(payload)?,
        },
        "run.completed" => RunEvent::RunCompleted {
            status: status(payload)?,
        },
        "run.failed" => RunEvent::RunFailed {
            status: status(payload)?,
            error: payload.text("error")?,
        },
        "run.cancelled" => RunEvent::RunCancelled {
            status: status(payload)?,
        },
        "run.interrupted" => RunEvent::RunInterrupted {
            status: status(payload)?,
            error: payload.text("error")?,
        },
        "run.resumed" => RunEvent::RunResumed {
            status: status(payload)?,
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
        "module.reused" => RunEvent::ModuleReused {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            from_run: payload.text("from_run")?,
            from_activation: payload.number("from_activation")?,
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
            cost: payload.nullable_float("cost")?,
            // Traces read these (the server's serde); no page shows them.
            tokens_cached: 0,
            finish_reason: None,
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
        other => return step_event(other, payload),
    })
}

/// The events of a module's steps inside its activation and of the run's
/// control flow: variants, coding agents' turns, cables, intents, retries,
/// checks, polls and people.
fn step_event(name: &str, payload: &mut Fields<'_>) -> Result<RunEvent, Error> {
    Ok(match name {
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
            status: payload.word("status", VariantStatus::parse, "a variant status")?,
            error: payload.optional_text("error")?,
            cost: payload.nullable_float("cost")?,
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
            intent: payload.word("intent", Intent::from_name, "an intent")?,
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
            outcome: payload.word("outcome", PollOutcome::parse, "a poll outcome")?,
            result: payload.text("result")?,
            next_in_seconds: payload.number("next_in_seconds")?,
        },
        "module.gave_up" => RunEvent::ModuleGaveUp {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            attempts: payload.number("attempts")?,
            reason: payload.text("reason")?,
        },
        other => return person_or_tool_event(other, payload),
    })
}

/// The events of people deciding and of tool calls (PRODUCT §3.14, §3.17).
fn person_or_tool_event(event: &str, payload: &mut Fields<'_>) -> Result<RunEvent, Error> {
    Ok(match event {
        "module.waiting" => RunEvent::ModuleWaiting {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            asked: payload.text("asked")?,
            shown: payload.list("shown", |item| name(item, "shown"))?,
            deadline_at: payload.nullable_integer("deadline_at")?,
            tools: payload.optional_list("tools", |item| name(item, "tools"))?,
        },
        "module.decided" => RunEvent::ModuleDecided {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            decision: payload.word("decision", Decision::parse, "a decision")?,
            by: payload.word("by", Decider::parse, "who decided")?,
            feedback: payload.text("feedback")?,
            call_id: payload.optional_text("call_id")?,
        },
        "module.tool_call" => RunEvent::ModuleToolCall {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            call_id: payload.text("call_id")?,
            server: payload.text("server")?,
            tool: payload.text("tool")?,
            arguments: payload.value("arguments"),
        },
        "module.tool_result" => RunEvent::ModuleToolResult {
            module_id: payload.text("module_id")?,
            activation: payload.number("activation")?,
            call_id: payload.text("call_id")?,
            tool: payload.text("tool")?,
            ok: payload.flag("ok")?,
            summary: payload.text("summary")?,
            duration_ms: payload.number("duration_ms")?,
        },
        unknown => return Err(Error::custom(format!("unknown event `{unknown}`"))),
    })
}

/// An item of `module.waiting`'s list `field`: a name.
fn name(item: Value, field: &str) -> Result<String, Error> {
    match item {
        Value::String(text) => Ok(text),
        _ => Err(Error::custom(format!(
            "module.waiting: `{field}` is not a list of names"
        ))),
    }
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
        let intent = event(
            "module.intent",
            json!({"module_id": "m1", "activation": 1, "intent": "wander", "said": "wander", "reason": "", "fallback": false}),
        )
        .unwrap_err();
        assert!(intent.to_string().contains("an intent"), "{intent}");
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
