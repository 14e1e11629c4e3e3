//! Run events: a typed enum, numbered per run. The event log is the source
//! of truth for a run's progress; SSE replays it (PRODUCT §3.6). The SSE
//! `event:` name is the serde variant name, and strum lists every name (the
//! browser listens for each by name).

mod read;

use graph::intent::Intent;
use serde::Serialize;
use serde_json::{Map, Value};

pub use crate::status::{PollOutcome, RunStatus, VariantStatus};

/// Everything that happens in a run, in the order it happened.
// Serialized externally tagged (`{"run.started": {…}}`) only to take the
// payload apart: the log and the stream keep the name and the payload
// apart, and `read.rs` puts them back together.
#[derive(Clone, Debug, PartialEq, Serialize, strum::IntoStaticStr, strum::VariantNames)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum RunEvent {
    #[serde(rename = "run.started")]
    #[strum(serialize = "run.started")]
    RunStarted { status: RunStatus },
    #[serde(rename = "run.completed")]
    #[strum(serialize = "run.completed")]
    RunCompleted { status: RunStatus },
    #[serde(rename = "run.failed")]
    #[strum(serialize = "run.failed")]
    RunFailed { status: RunStatus, error: String },
    #[serde(rename = "run.cancelled")]
    #[strum(serialize = "run.cancelled")]
    RunCancelled { status: RunStatus },
    /// The server stopped under the run and it will not go on (PRODUCT
    /// §3.1): the last event of its log.
    #[serde(rename = "run.interrupted")]
    #[strum(serialize = "run.interrupted")]
    RunInterrupted { status: RunStatus, error: String },
    /// A server process took the run up again after the one running it
    /// stopped (PRODUCT §8): `replayed` activations that had ended were
    /// taken from the record; what was in flight starts again.
    #[serde(rename = "run.resumed")]
    #[strum(serialize = "run.resumed")]
    RunResumed { status: RunStatus, replayed: u32 },
    /// Activation `activation` of the module is ready and waits for a
    /// concurrency slot (PRODUCT §3.1); `module.activated` follows when it
    /// starts. Sent only when it waits.
    #[serde(rename = "module.queued")]
    #[strum(serialize = "module.queued")]
    ModuleQueued { module_id: String, activation: u32 },
    #[serde(rename = "module.activated")]
    #[strum(serialize = "module.activated")]
    ModuleActivated { module_id: String, activation: u32 },
    #[serde(rename = "module.completed")]
    #[strum(serialize = "module.completed")]
    ModuleCompleted { module_id: String, activation: u32 },
    /// Activation `activation` of the module is not run: a run from a
    /// module takes it from the recorded run `from_run`, its activation
    /// `from_activation` (PRODUCT §3.15). Its outputs go on as recorded.
    #[serde(rename = "module.reused")]
    #[strum(serialize = "module.reused")]
    ModuleReused {
        module_id: String,
        activation: u32,
        from_run: String,
        from_activation: u32,
    },
    #[serde(rename = "module.failed")]
    #[strum(serialize = "module.failed")]
    ModuleFailed {
        module_id: String,
        activation: u32,
        error: String,
    },
    /// Streamed text of one response (0 = the primary response, i = re-prompt i).
    #[serde(rename = "module.output_delta")]
    #[strum(serialize = "module.output_delta")]
    ModuleOutputDelta {
        module_id: String,
        response_index: u32,
        text: String,
    },
    /// A provider call of the activation was answered: the tokens its
    /// provider reported and what they cost (`None`: the model has no
    /// price configured). Coding agents report theirs after each turn.
    #[serde(rename = "module.usage")]
    #[strum(serialize = "module.usage")]
    ModuleUsage {
        module_id: String,
        activation: u32,
        tokens_in: u64,
        tokens_out: u64,
        cost: Option<f64>,
        /// The part of `tokens_in` the provider served from its cache,
        /// where it says.
        #[serde(default, skip_serializing_if = "is_zero")]
        tokens_cached: u64,
        /// Why the model stopped (`stop`, `length`, `tool_calls`, …), where
        /// the provider says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
    },
    #[serde(rename = "task.agent_task.reprompt_dispatched")]
    #[strum(serialize = "task.agent_task.reprompt_dispatched")]
    RepromptDispatched {
        module_id: String,
        reprompt_index: u32,
        reprompt_count: u32,
        /// The variant whose chain it is, in a module with variants.
        #[serde(skip_serializing_if = "Option::is_none")]
        variant: Option<String>,
    },
    #[serde(rename = "task.agent_task.reprompt_response")]
    #[strum(serialize = "task.agent_task.reprompt_response")]
    RepromptResponse {
        module_id: String,
        reprompt_index: u32,
        token_count: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        variant: Option<String>,
    },
    /// A variant of a module with variants starts its whole activation
    /// (DOC23 §7.2): variant `index` (from 1) of `count`.
    #[serde(rename = "module.variant_started")]
    #[strum(serialize = "module.variant_started")]
    VariantStarted {
        module_id: String,
        activation: u32,
        variant: String,
        index: u32,
        count: u32,
    },
    /// A variant ended: `completed` or `failed` (with why), what it cost
    /// (`None`: no price) and how long it took.
    #[serde(rename = "module.variant_finished")]
    #[strum(serialize = "module.variant_finished")]
    VariantFinished {
        module_id: String,
        activation: u32,
        variant: String,
        status: VariantStatus,
        error: Option<String>,
        cost: Option<f64>,
        duration_ms: u64,
    },
    #[serde(rename = "task.coding.agent_reprompt_dispatched")]
    #[strum(serialize = "task.coding.agent_reprompt_dispatched")]
    CodingRepromptDispatched {
        module_id: String,
        agent_role: String,
        reprompt_index: u32,
    },
    #[serde(rename = "task.coding.agent_reprompt_response")]
    #[strum(serialize = "task.coding.agent_reprompt_response")]
    CodingRepromptResponse {
        module_id: String,
        agent_role: String,
        reprompt_index: u32,
    },
    /// A coding agent begins its phase (its prompt, then its re-prompts);
    /// `round` counts review-chain rounds from 1.
    #[serde(rename = "task.coding.agent_started")]
    #[strum(serialize = "task.coding.agent_started")]
    CodingAgentStarted {
        module_id: String,
        agent_role: String,
        agent_name: String,
        round: u32,
    },
    #[serde(rename = "task.coding.agent_finished")]
    #[strum(serialize = "task.coding.agent_finished")]
    CodingAgentFinished {
        module_id: String,
        agent_role: String,
        round: u32,
        files_changed: u32,
    },
    /// The cable a port's value took, of cables with conditions: the first
    /// whose condition held, or the one without a condition.
    #[serde(rename = "cable.taken")]
    #[strum(serialize = "cable.taken")]
    CableTaken {
        module_id: String,
        activation: u32,
        port: String,
        cable_id: String,
    },
    /// No condition on a port's cables held and none has no condition, so
    /// the value left by no cable and that branch ended.
    #[serde(rename = "cable.none_taken")]
    #[strum(serialize = "cable.none_taken")]
    CableNoneTaken {
        module_id: String,
        activation: u32,
        port: String,
        reason: String,
    },
    /// A value came on a cable into a module that joins any, for an
    /// activation it had already started on another cable's value: it is
    /// ignored (PRODUCT §3.1).
    #[serde(rename = "cable.ignored")]
    #[strum(serialize = "cable.ignored")]
    CableIgnored {
        module_id: String,
        activation: u32,
        cable_id: String,
    },
    /// A module's structured gate read the intent of its last reply
    /// (`said` is the value as the reply had it; `fallback` when that
    /// could not be read and the gate's fallback intent was taken).
    #[serde(rename = "module.intent")]
    #[strum(serialize = "module.intent")]
    ModuleIntent {
        module_id: String,
        activation: u32,
        intent: Intent,
        said: String,
        reason: String,
        fallback: bool,
    },
    /// An attempt failed (or chose `repeat`) and the module runs again:
    /// attempt `attempt` of `max_attempts`, after `delay_seconds`
    /// (PRODUCT §3.9).
    #[serde(rename = "module.retrying")]
    #[strum(serialize = "module.retrying")]
    ModuleRetrying {
        module_id: String,
        activation: u32,
        attempt: u32,
        max_attempts: u32,
        delay_seconds: u32,
        reason: String,
    },
    /// A poll module's script ran (PRODUCT §3.10): `outcome` is `pending`
    /// (the next poll in `next_in_seconds`), `skipped` (the next poll came
    /// due while this one ran), `decided` (`result` says what) or `failed`.
    #[serde(rename = "module.polled")]
    #[strum(serialize = "module.polled")]
    ModulePolled {
        module_id: String,
        activation: u32,
        poll: u32,
        outcome: PollOutcome,
        result: String,
        next_in_seconds: u32,
    },
    /// A validator of a module that has done its work starts (PRODUCT
    /// §3.11).
    #[serde(rename = "module.validating")]
    #[strum(serialize = "module.validating")]
    ModuleValidating {
        module_id: String,
        activation: u32,
        validator: String,
    },
    /// What a validator found: passed, or not with the start of its output.
    #[serde(rename = "module.validated")]
    #[strum(serialize = "module.validated")]
    ModuleValidated {
        module_id: String,
        activation: u32,
        validator: String,
        passed: bool,
        detail: String,
    },
    /// A failed validator's failure pattern sent its prompt as fix turn
    /// `fix` of at most `of`.
    #[serde(rename = "module.fix_dispatched")]
    #[strum(serialize = "module.fix_dispatched")]
    ModuleFixDispatched {
        module_id: String,
        activation: u32,
        fix: u32,
        of: u32,
        validator: String,
    },
    /// The module used its attempts and gave up, on `give_up_out` when a
    /// cable takes it, else failing the run.
    #[serde(rename = "module.gave_up")]
    #[strum(serialize = "module.gave_up")]
    ModuleGaveUp {
        module_id: String,
        activation: u32,
        attempts: u32,
        reason: String,
    },
    /// An approval waits for a person (PRODUCT §3.14): what it asks, the
    /// modules whose values it shows, and when its timeout fires (Unix
    /// ms), if it has one.
    #[serde(rename = "module.waiting")]
    #[strum(serialize = "module.waiting")]
    ModuleWaiting {
        module_id: String,
        activation: u32,
        asked: String,
        shown: Vec<String>,
        deadline_at: Option<i64>,
        /// An agent task's tool calls that wait (PRODUCT §3.17), by the
        /// name the model called.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tools: Vec<String>,
    },
    /// A person decided on a waiting approval; the event's time is when.
    #[serde(rename = "module.decided")]
    #[strum(serialize = "module.decided")]
    ModuleDecided {
        module_id: String,
        activation: u32,
        decision: crate::approval::Decision,
        by: crate::approval::Decider,
        feedback: String,
        /// The tool call decided on, when it was one (PRODUCT §3.17).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// The model called a tool (PRODUCT §3.17): `tool` is the name it
    /// called (the module's `as`, else the tool's), `arguments` as the
    /// call is made, locked ones reading `🔒 locked`.
    #[serde(rename = "module.tool_call")]
    #[strum(serialize = "module.tool_call")]
    ModuleToolCall {
        module_id: String,
        activation: u32,
        call_id: String,
        server: String,
        tool: String,
        arguments: Value,
    },
    /// A tool call ended: `ok`, or not (the tool's error, a timeout, the
    /// server gone, declined), with a short summary of what came back.
    #[serde(rename = "module.tool_result")]
    #[strum(serialize = "module.tool_result")]
    ModuleToolResult {
        module_id: String,
        activation: u32,
        call_id: String,
        tool: String,
        ok: bool,
        summary: String,
        duration_ms: u64,
    },
}

impl RunEvent {
    /// The SSE `event:` name.
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// Every event name, for listeners that subscribe by name.
    pub fn names() -> &'static [&'static str] {
        <RunEvent as strum::VariantNames>::VARIANTS
    }

    /// The event's own fields, as a JSON object.
    pub fn payload(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(tagged)) => match tagged.into_iter().next() {
                Some((_, Value::Object(payload))) => payload,
                _ => Map::new(),
            },
            _ => Map::new(),
        }
    }

    /// The payload as JSON text, as `Value::Object(self.payload())` prints
    /// it, written straight from the event: the log stores every event's,
    /// and building a `Value` first doubled the cost.
    pub fn payload_text(&self) -> String {
        let tagged = serde_json::to_string(self).unwrap_or_default();
        // `{"<name>":{…}}`, and a name needs no escaping.
        let start = self.name().len() + 4;
        tagged
            .get(start..tagged.len().saturating_sub(1))
            .filter(|payload| payload.starts_with('{'))
            .map_or_else(|| "{}".to_owned(), str::to_owned)
    }

    /// Rebuilds an event from its stored name and payload.
    pub fn from_parts(name: &str, payload: Value) -> Result<RunEvent, serde_json::Error> {
        read::event(name, payload)
    }

    /// The module the event is about; `None` for the run's own events.
    pub fn module_id(&self) -> Option<&str> {
        match self {
            RunEvent::RunStarted { .. }
            | RunEvent::RunCompleted { .. }
            | RunEvent::RunFailed { .. }
            | RunEvent::RunCancelled { .. }
            | RunEvent::RunInterrupted { .. }
            | RunEvent::RunResumed { .. } => None,
            RunEvent::ModuleQueued { module_id, .. }
            | RunEvent::ModuleActivated { module_id, .. }
            | RunEvent::ModuleCompleted { module_id, .. }
            | RunEvent::ModuleReused { module_id, .. }
            | RunEvent::ModuleFailed { module_id, .. }
            | RunEvent::ModuleOutputDelta { module_id, .. }
            | RunEvent::ModuleUsage { module_id, .. }
            | RunEvent::RepromptDispatched { module_id, .. }
            | RunEvent::RepromptResponse { module_id, .. }
            | RunEvent::VariantStarted { module_id, .. }
            | RunEvent::VariantFinished { module_id, .. }
            | RunEvent::CodingRepromptDispatched { module_id, .. }
            | RunEvent::CodingRepromptResponse { module_id, .. }
            | RunEvent::CodingAgentStarted { module_id, .. }
            | RunEvent::CodingAgentFinished { module_id, .. }
            | RunEvent::CableTaken { module_id, .. }
            | RunEvent::CableNoneTaken { module_id, .. }
            | RunEvent::CableIgnored { module_id, .. }
            | RunEvent::ModuleIntent { module_id, .. }
            | RunEvent::ModuleRetrying { module_id, .. }
            | RunEvent::ModuleGaveUp { module_id, .. }
            | RunEvent::ModulePolled { module_id, .. }
            | RunEvent::ModuleValidating { module_id, .. }
            | RunEvent::ModuleValidated { module_id, .. }
            | RunEvent::ModuleFixDispatched { module_id, .. }
            | RunEvent::ModuleWaiting { module_id, .. }
            | RunEvent::ModuleDecided { module_id, .. }
            | RunEvent::ModuleToolCall { module_id, .. }
            | RunEvent::ModuleToolResult { module_id, .. } => Some(module_id),
        }
    }

    /// Whether this event ends the run.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            RunEvent::RunCompleted { .. }
                | RunEvent::RunFailed { .. }
                | RunEvent::RunCancelled { .. }
                | RunEvent::RunInterrupted { .. }
        )
    }
}

impl RunEvent {
    /// One event of each kind, with every field set: what tests on both
    /// sides of the wire check their handling against (a test here checks
    /// that no kind is missing).
    pub fn one_of_each() -> Vec<RunEvent> {
        let module_id = || "m2".to_owned();
        let agent_role = || "builder".to_owned();
        vec![
            RunEvent::RunStarted {
                status: RunStatus::Running,
            },
            RunEvent::RunCompleted {
                status: RunStatus::Completed,
            },
            RunEvent::RunFailed {
                status: RunStatus::Failed,
                error: "\"Draft\": the provider failed".to_owned(),
            },
            RunEvent::RunCancelled {
                status: RunStatus::Cancelled,
            },
            RunEvent::RunInterrupted {
                status: RunStatus::Interrupted,
                error: "the server stopped while the run was in progress".to_owned(),
            },
            RunEvent::RunResumed {
                status: RunStatus::Running,
                replayed: 4,
            },
            RunEvent::ModuleQueued {
                module_id: module_id(),
                activation: 2,
            },
            RunEvent::ModuleActivated {
                module_id: module_id(),
                activation: 2,
            },
            RunEvent::ModuleReused {
                module_id: module_id(),
                activation: 1,
                from_run: "r_0123456789abcdef".to_owned(),
                from_activation: 1,
            },
            RunEvent::ModuleCompleted {
                module_id: module_id(),
                activation: 2,
            },
            RunEvent::ModuleFailed {
                module_id: module_id(),
                activation: 2,
                error: "the provider failed".to_owned(),
            },
            RunEvent::ModuleOutputDelta {
                module_id: module_id(),
                response_index: 1,
                text: "Tides rise".to_owned(),
            },
            RunEvent::ModuleUsage {
                module_id: module_id(),
                activation: 2,
                tokens_in: 120,
                tokens_out: 41,
                cost: Some(0.000_71),
                tokens_cached: 0,
                finish_reason: None,
            },
            RunEvent::RepromptDispatched {
                module_id: module_id(),
                reprompt_index: 1,
                reprompt_count: 2,
                variant: Some("terse".to_owned()),
            },
            RunEvent::RepromptResponse {
                module_id: module_id(),
                reprompt_index: 2,
                token_count: 41,
                variant: Some("terse".to_owned()),
            },
            RunEvent::VariantStarted {
                module_id: module_id(),
                activation: 1,
                variant: "terse".to_owned(),
                index: 2,
                count: 3,
            },
            RunEvent::VariantFinished {
                module_id: module_id(),
                activation: 1,
                variant: "terse".to_owned(),
                status: VariantStatus::Failed,
                error: Some("the provider failed".to_owned()),
                cost: None,
                duration_ms: 1200,
            },
            RunEvent::CodingRepromptDispatched {
                module_id: module_id(),
                agent_role: agent_role(),
                reprompt_index: 1,
            },
            RunEvent::CodingRepromptResponse {
                module_id: module_id(),
                agent_role: agent_role(),
                reprompt_index: 1,
            },
            RunEvent::CodingAgentStarted {
                module_id: module_id(),
                agent_role: agent_role(),
                agent_name: "Simulated agent".to_owned(),
                round: 2,
            },
            RunEvent::CodingAgentFinished {
                module_id: module_id(),
                agent_role: agent_role(),
                round: 2,
                files_changed: 3,
            },
        ]
        .into_iter()
        .chain(RunEvent::one_of_each_step())
        .collect()
    }

    /// The control flow's events, for `one_of_each`.
    fn one_of_each_step() -> Vec<RunEvent> {
        let module_id = || "m2".to_owned();
        vec![
            RunEvent::CableTaken {
                module_id: module_id(),
                activation: 1,
                port: graph::ports::DATA_OUT.to_owned(),
                cable_id: "c4".to_owned(),
            },
            RunEvent::CableNoneTaken {
                module_id: module_id(),
                activation: 1,
                port: graph::ports::DATA_OUT.to_owned(),
                reason: "no condition held".to_owned(),
            },
            RunEvent::CableIgnored {
                module_id: module_id(),
                activation: 1,
                cable_id: "c5".to_owned(),
            },
            RunEvent::ModuleIntent {
                module_id: module_id(),
                activation: 2,
                intent: Intent::Closing,
                said: "done".to_owned(),
                reason: "the answer is complete".to_owned(),
                fallback: false,
            },
            RunEvent::ModuleRetrying {
                module_id: module_id(),
                activation: 1,
                attempt: 2,
                max_attempts: 3,
                delay_seconds: 4,
                reason: "the check failed".to_owned(),
            },
            RunEvent::ModuleGaveUp {
                module_id: module_id(),
                activation: 3,
                attempts: 3,
                reason: "the check failed".to_owned(),
            },
            RunEvent::ModuleValidating {
                module_id: module_id(),
                activation: 1,
                validator: "tests".to_owned(),
            },
            RunEvent::ModuleValidated {
                module_id: module_id(),
                activation: 1,
                validator: "tests".to_owned(),
                passed: false,
                detail: "2 tests failed".to_owned(),
            },
            RunEvent::ModuleFixDispatched {
                module_id: module_id(),
                activation: 1,
                fix: 1,
                of: 3,
                validator: "tests".to_owned(),
            },
            RunEvent::ModulePolled {
                module_id: module_id(),
                activation: 1,
                poll: 4,
                outcome: PollOutcome::Pending,
                result: String::new(),
                next_in_seconds: 300,
            },
            RunEvent::ModuleWaiting {
                module_id: module_id(),
                activation: 2,
                asked: "Merge the change to “tides.md”?".to_owned(),
                shown: vec!["m1".to_owned()],
                deadline_at: Some(1_700_000_000_000),
                tools: vec!["write_file".to_owned()],
            },
            RunEvent::ModuleDecided {
                module_id: module_id(),
                activation: 2,
                decision: crate::approval::Decision::Revise,
                by: crate::approval::Decider::ApproverLink,
                feedback: "Keep the title".to_owned(),
                call_id: Some("call_7".to_owned()),
            },
            RunEvent::ModuleToolCall {
                module_id: module_id(),
                activation: 1,
                call_id: "call_1".to_owned(),
                server: "patchbay".to_owned(),
                tool: "lookup".to_owned(),
                arguments: serde_json::json!({"key": "tides", "table": "🔒 locked"}),
            },
            RunEvent::ModuleToolResult {
                module_id: module_id(),
                activation: 1,
                call_id: "call_1".to_owned(),
                tool: "lookup".to_owned(),
                ok: true,
                summary: "{\"answer\": \"twice a day\"}".to_owned(),
                duration_ms: 3,
            },
        ]
    }
}

/// An event as logged: its place in the run's sequence and when it happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EventRecord {
    pub run_id: String,
    /// 1, 2, 3, … per run; the SSE `id:`.
    pub seq: u64,
    /// Unix milliseconds.
    pub ts: i64,
    pub event: RunEvent,
}

impl EventRecord {
    /// Reads an event back from what the SSE stream carries: its `id:`,
    /// `event:` name and `data:` object (as [`EventRecord::data`] wrote it).
    pub fn from_sse(seq: u64, name: &str, data: &str) -> Result<EventRecord, serde_json::Error> {
        let data: Value = serde_json::from_str(data)?;
        let run_id = data
            .get("run_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let ts = data.get("ts").and_then(Value::as_i64).unwrap_or_default();
        Ok(EventRecord {
            run_id,
            seq,
            ts,
            event: RunEvent::from_parts(name, data)?,
        })
    }

    /// The SSE `data:` object: `run_id`, `ts` and the payload's fields.
    pub fn data(&self) -> Value {
        let mut data = Map::new();
        data.insert("run_id".to_owned(), Value::String(self.run_id.clone()));
        data.insert("ts".to_owned(), Value::from(self.ts));
        data.extend(self.event.payload());
        Value::Object(data)
    }
}

/// Whether a count is nothing, so that an event leaves it out.
fn is_zero(count: &u64) -> bool {
    *count == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_carry_the_product_names_and_payloads() {
        // DOC23's payload exactly: a module without variants says none.
        let event = RunEvent::RepromptDispatched {
            module_id: "m2".to_owned(),
            reprompt_index: 2,
            reprompt_count: 3,
            variant: None,
        };
        assert_eq!(event.name(), "task.agent_task.reprompt_dispatched");
        let record = EventRecord {
            run_id: "r_1".to_owned(),
            seq: 7,
            ts: 1_700_000_000_000,
            event: event.clone(),
        };
        assert_eq!(
            record.data(),
            json!({"run_id": "r_1", "ts": 1_700_000_000_000_i64, "module_id": "m2", "reprompt_index": 2, "reprompt_count": 3})
        );
        let back = RunEvent::from_parts(event.name(), Value::Object(event.payload())).unwrap();
        assert_eq!(back, event);
    }

    #[test]
    fn one_of_each_covers_every_event_name_and_each_round_trips() {
        let events = RunEvent::one_of_each();
        let mut names: Vec<&str> = events.iter().map(RunEvent::name).collect();
        names.sort_unstable();
        let mut every: Vec<&str> = RunEvent::names().to_vec();
        every.sort_unstable();
        assert_eq!(names, every);
        for event in events {
            let name = event.name();
            assert!(serde_json::to_value(&event).unwrap().get(name).is_some());
            assert_eq!(
                event.payload_text(),
                Value::Object(event.payload()).to_string()
            );
            assert_eq!(
                RunEvent::from_parts(name, Value::Object(event.payload())).unwrap(),
                event
            );
        }
    }
}
