//! Run events: a typed enum, numbered per run. The event log is the source
//! of truth for a run's progress; SSE replays it (PRODUCT §3.6).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Status strings of runs and activations, as the API and events spell them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
    /// The server stopped under the run.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(text: &str) -> Option<RunStatus> {
        [
            RunStatus::Queued,
            RunStatus::Running,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::Cancelled,
            RunStatus::Interrupted,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }

    pub fn is_finished(self) -> bool {
        matches!(
            self,
            RunStatus::Completed
                | RunStatus::Failed
                | RunStatus::Cancelled
                | RunStatus::Interrupted
        )
    }
}

/// Everything that happens in a run, in the order it happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", content = "payload")]
pub enum RunEvent {
    #[serde(rename = "run.started")]
    RunStarted { status: RunStatus },
    #[serde(rename = "run.completed")]
    RunCompleted { status: RunStatus },
    #[serde(rename = "run.failed")]
    RunFailed { status: RunStatus, error: String },
    #[serde(rename = "run.cancelled")]
    RunCancelled { status: RunStatus },
    #[serde(rename = "module.activated")]
    ModuleActivated { module_id: String, activation: u32 },
    #[serde(rename = "module.completed")]
    ModuleCompleted { module_id: String, activation: u32 },
    #[serde(rename = "module.failed")]
    ModuleFailed {
        module_id: String,
        activation: u32,
        error: String,
    },
    /// Streamed text of one response (0 = the primary response, i = re-prompt i).
    #[serde(rename = "module.output_delta")]
    ModuleOutputDelta {
        module_id: String,
        response_index: u32,
        text: String,
    },
    #[serde(rename = "task.agent_task.reprompt_dispatched")]
    RepromptDispatched {
        module_id: String,
        reprompt_index: u32,
        reprompt_count: u32,
    },
    #[serde(rename = "task.agent_task.reprompt_response")]
    RepromptResponse {
        module_id: String,
        reprompt_index: u32,
        token_count: u64,
    },
    #[serde(rename = "task.coding.agent_reprompt_dispatched")]
    CodingRepromptDispatched {
        module_id: String,
        agent_role: String,
        reprompt_index: u32,
    },
    #[serde(rename = "task.coding.agent_reprompt_response")]
    CodingRepromptResponse {
        module_id: String,
        agent_role: String,
        reprompt_index: u32,
    },
    /// A coding agent begins its phase (its prompt, then its re-prompts);
    /// `round` counts review-chain rounds from 1.
    #[serde(rename = "task.coding.agent_started")]
    CodingAgentStarted {
        module_id: String,
        agent_role: String,
        agent_name: String,
        round: u32,
    },
    #[serde(rename = "task.coding.agent_finished")]
    CodingAgentFinished {
        module_id: String,
        agent_role: String,
        round: u32,
        files_changed: u32,
    },
}

impl RunEvent {
    /// The SSE `event:` name.
    pub fn name(&self) -> &'static str {
        match self {
            RunEvent::RunStarted { .. } => "run.started",
            RunEvent::RunCompleted { .. } => "run.completed",
            RunEvent::RunFailed { .. } => "run.failed",
            RunEvent::RunCancelled { .. } => "run.cancelled",
            RunEvent::ModuleActivated { .. } => "module.activated",
            RunEvent::ModuleCompleted { .. } => "module.completed",
            RunEvent::ModuleFailed { .. } => "module.failed",
            RunEvent::ModuleOutputDelta { .. } => "module.output_delta",
            RunEvent::RepromptDispatched { .. } => "task.agent_task.reprompt_dispatched",
            RunEvent::RepromptResponse { .. } => "task.agent_task.reprompt_response",
            RunEvent::CodingRepromptDispatched { .. } => "task.coding.agent_reprompt_dispatched",
            RunEvent::CodingRepromptResponse { .. } => "task.coding.agent_reprompt_response",
            RunEvent::CodingAgentStarted { .. } => "task.coding.agent_started",
            RunEvent::CodingAgentFinished { .. } => "task.coding.agent_finished",
        }
    }

    /// The event's own fields, as a JSON object.
    pub fn payload(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(mut tagged)) => match tagged.remove("payload") {
                Some(Value::Object(payload)) => payload,
                _ => Map::new(),
            },
            _ => Map::new(),
        }
    }

    /// Rebuilds an event from its stored name and payload.
    pub fn from_parts(name: &str, payload: Value) -> Result<RunEvent, serde_json::Error> {
        serde_json::from_value(serde_json::json!({ "name": name, "payload": payload }))
    }

    /// Whether this event ends the run.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            RunEvent::RunCompleted { .. }
                | RunEvent::RunFailed { .. }
                | RunEvent::RunCancelled { .. }
        )
    }
}

/// An event as logged: its place in the run's sequence and when it happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    pub run_id: String,
    /// 1, 2, 3, … per run; the SSE `id:`.
    pub seq: u64,
    /// Unix milliseconds.
    pub ts: i64,
    pub event: RunEvent,
}

impl EventRecord {
    /// The SSE `data:` object: `run_id`, `ts` and the payload's fields.
    pub fn data(&self) -> Value {
        let mut data = Map::new();
        data.insert("run_id".to_owned(), Value::String(self.run_id.clone()));
        data.insert("ts".to_owned(), Value::from(self.ts));
        data.extend(self.event.payload());
        Value::Object(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_carry_the_product_names_and_payloads() {
        let event = RunEvent::RepromptDispatched {
            module_id: "m2".to_owned(),
            reprompt_index: 2,
            reprompt_count: 3,
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
    fn every_event_name_round_trips() {
        let events = [
            RunEvent::RunStarted {
                status: RunStatus::Running,
            },
            RunEvent::RunCompleted {
                status: RunStatus::Completed,
            },
            RunEvent::RunFailed {
                status: RunStatus::Failed,
                error: "x".to_owned(),
            },
            RunEvent::RunCancelled {
                status: RunStatus::Cancelled,
            },
            RunEvent::ModuleActivated {
                module_id: "m".to_owned(),
                activation: 1,
            },
            RunEvent::ModuleCompleted {
                module_id: "m".to_owned(),
                activation: 1,
            },
            RunEvent::ModuleFailed {
                module_id: "m".to_owned(),
                activation: 1,
                error: "e".to_owned(),
            },
            RunEvent::ModuleOutputDelta {
                module_id: "m".to_owned(),
                response_index: 0,
                text: "t".to_owned(),
            },
            RunEvent::RepromptDispatched {
                module_id: "m".to_owned(),
                reprompt_index: 1,
                reprompt_count: 2,
            },
            RunEvent::RepromptResponse {
                module_id: "m".to_owned(),
                reprompt_index: 1,
                token_count: 5,
            },
            RunEvent::CodingRepromptDispatched {
                module_id: "m".to_owned(),
                agent_role: "builder".to_owned(),
                reprompt_index: 1,
            },
            RunEvent::CodingRepromptResponse {
                module_id: "m".to_owned(),
                agent_role: "builder".to_owned(),
                reprompt_index: 1,
            },
        ];
        for event in events {
            let name = event.name();
            assert_eq!(serde_json::to_value(&event).unwrap()["name"], name);
            assert_eq!(
                RunEvent::from_parts(name, Value::Object(event.payload())).unwrap(),
                event
            );
        }
    }
}
