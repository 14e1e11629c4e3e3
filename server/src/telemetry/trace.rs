//! A run's trace, built from its events as they are stored: a plain value
//! fed one event at a time, which answers the spans that event finished
//! (the run, an activation, a model call (`chat`: from when the module
//! began to wait on the model — activated, a re-prompt sent, a tool's
//! result back — to the call's usage), a tool call
//! (`execute_tool`), a coding agent's turn (`invoke_agent`)), with the
//! GenAI semantic conventions' attributes. Approvals and waits are events
//! on the run's span. Ids come from the run's id, so a run resumed by
//! another process goes on in the same trace under the same spans.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use graph::Graph;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use sha2::{Digest, Sha256};
use wire::{EventRecord, RunEvent};

/// What one call of a module's model used, as its `module.usage` says.
struct Usage<'a> {
    tokens_in: u64,
    tokens_out: u64,
    tokens_cached: u64,
    finish_reason: Option<&'a str>,
}

/// An open span: when it began, and what it has said so far.
#[derive(Clone, Debug)]
struct Open {
    id: SpanId,
    parent: SpanId,
    name: String,
    start: SystemTime,
    attributes: Vec<KeyValue>,
}

#[derive(Debug)]
pub struct RunTrace {
    run_id: String,
    trace_id: TraceId,
    run: Option<Open>,
    run_events: Vec<opentelemetry::trace::Event>,
    activations: HashMap<(String, u32), Open>,
    /// Each module's activation in progress, which its turns belong to.
    current: HashMap<String, u32>,
    /// Since when each module waits on its model.
    model_since: HashMap<String, SystemTime>,
    /// What each module's model said in its call (`capture_content`).
    said: HashMap<String, String>,
    tools: HashMap<String, Open>,
    agent_turns: HashMap<(String, String, u32), Open>,
    capture_content: bool,
}

fn time(ts: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ts).unwrap_or(0))
}

fn digest(parts: &[&str]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher.finalize().into()
}

fn span_id(parts: &[&str]) -> SpanId {
    let digest = digest(parts);
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    SpanId::from_bytes(bytes)
}

/// The trace of run `run_id`: the same in every process.
pub fn trace_id(run_id: &str) -> TraceId {
    let digest = digest(&["trace", run_id]);
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    TraceId::from_bytes(bytes)
}

impl RunTrace {
    pub fn new(run_id: &str, capture_content: bool) -> RunTrace {
        RunTrace {
            run_id: run_id.to_owned(),
            trace_id: trace_id(run_id),
            run: None,
            run_events: Vec::new(),
            activations: HashMap::new(),
            current: HashMap::new(),
            model_since: HashMap::new(),
            said: HashMap::new(),
            tools: HashMap::new(),
            agent_turns: HashMap::new(),
            capture_content,
        }
    }

    fn run_span(&self) -> SpanId {
        span_id(&["run", &self.run_id])
    }

    fn activation_span(&self, module: &str) -> SpanId {
        let activation = self.current.get(module).copied().unwrap_or(1).to_string();
        span_id(&["activation", &self.run_id, module, &activation])
    }

    /// The spans `record` finished.
    pub fn on_event(&mut self, graph: &Graph, record: &EventRecord) -> Vec<SpanData> {
        let at = time(record.ts);
        match &record.event {
            RunEvent::RunStarted { .. } | RunEvent::RunResumed { .. } => {
                self.on_run_started(graph, record, at);
                Vec::new()
            }
            RunEvent::RunCompleted { .. } => self.on_run_ended(at, Status::Ok),
            RunEvent::RunFailed { error, .. } | RunEvent::RunInterrupted { error, .. } => {
                self.on_run_ended(at, Status::error(error.clone()))
            }
            RunEvent::RunCancelled { .. } => self.on_run_ended(at, Status::error("cancelled")),
            RunEvent::ModuleActivated {
                module_id,
                activation,
            } => {
                self.on_activated(graph, module_id, *activation, at);
                Vec::new()
            }
            RunEvent::ModuleCompleted {
                module_id,
                activation,
            } => self.on_module_ended(module_id, *activation, at, Status::Ok),
            RunEvent::ModuleFailed {
                module_id,
                activation,
                error,
            } => self.on_module_ended(module_id, *activation, at, Status::error(error.clone())),
            RunEvent::RepromptDispatched { module_id, .. } => {
                self.model_since.insert(module_id.clone(), at);
                Vec::new()
            }
            RunEvent::ModuleOutputDelta {
                module_id, text, ..
            } if self.capture_content => {
                self.said
                    .entry(module_id.clone())
                    .or_default()
                    .push_str(text);
                Vec::new()
            }
            RunEvent::ModuleUsage {
                module_id,
                tokens_in,
                tokens_out,
                tokens_cached,
                finish_reason,
                ..
            } => self.on_model_called(
                graph,
                module_id,
                Usage {
                    tokens_in: *tokens_in,
                    tokens_out: *tokens_out,
                    tokens_cached: *tokens_cached,
                    finish_reason: finish_reason.as_deref(),
                },
                at,
            ),
            RunEvent::ModuleToolCall {
                module_id,
                call_id,
                server,
                tool,
                arguments,
                ..
            } => {
                self.on_tool_called(module_id, call_id, server, tool, arguments, at);
                Vec::new()
            }
            RunEvent::ModuleToolResult {
                module_id,
                call_id,
                ok,
                summary,
                ..
            } => {
                self.model_since.insert(module_id.clone(), at);
                self.on_tool_ended(call_id, *ok, summary, at)
            }
            RunEvent::CodingAgentStarted { .. }
            | RunEvent::CodingRepromptDispatched { .. }
            | RunEvent::CodingRepromptResponse { .. } => self.on_agent_event(&record.event, at),
            RunEvent::ModuleWaiting { module_id, .. }
            | RunEvent::ModuleDecided { module_id, .. } => {
                self.run_events.push(opentelemetry::trace::Event::new(
                    record.event.name(),
                    at,
                    vec![KeyValue::new("patchbay.module.id", module_id.clone())],
                    0,
                ));
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn on_run_started(&mut self, graph: &Graph, record: &EventRecord, at: SystemTime) {
        if self.run.is_some() {
            return;
        }
        let mut attributes = vec![
            KeyValue::new("patchbay.run.id", self.run_id.clone()),
            KeyValue::new("patchbay.graph.name", graph.name.clone()),
        ];
        if matches!(record.event, RunEvent::RunResumed { .. }) {
            attributes.push(KeyValue::new("patchbay.run.resumed", true));
        }
        self.run = Some(Open {
            id: self.run_span(),
            parent: SpanId::INVALID,
            name: format!("run {}", graph.name),
            start: at,
            attributes,
        });
    }

    fn on_run_ended(&mut self, at: SystemTime, status: Status) -> Vec<SpanData> {
        let mut finished: Vec<SpanData> = Vec::new();
        if let Some(run) = self.run.take() {
            let events = std::mem::take(&mut self.run_events);
            finished.push(self.finish(run, at, status, events));
        }
        finished
    }

    fn on_activated(&mut self, graph: &Graph, module_id: &str, activation: u32, at: SystemTime) {
        self.current.insert(module_id.to_owned(), activation);
        self.model_since.insert(module_id.to_owned(), at);
        let module = graph.module(module_id);
        let label = module.map_or(module_id, |module| module.display_label());
        let kind = module
            .and_then(|module| module.kind())
            .map_or_else(|| "unknown".to_owned(), |kind| kind.as_str().to_owned());
        self.activations.insert(
            (module_id.to_owned(), activation),
            Open {
                id: self.activation_span(module_id),
                parent: self.run_span(),
                name: format!("activation {label}"),
                start: at,
                attributes: vec![
                    KeyValue::new("patchbay.module.id", module_id.to_owned()),
                    KeyValue::new("patchbay.module.kind", kind),
                    KeyValue::new("patchbay.activation", i64::from(activation)),
                ],
            },
        );
    }

    fn on_module_ended(
        &mut self,
        module_id: &str,
        activation: u32,
        at: SystemTime,
        status: Status,
    ) -> Vec<SpanData> {
        let mut finished = Vec::new();
        if let Some(open) = self.activations.remove(&(module_id.to_owned(), activation)) {
            finished.push(self.finish(open, at, status, Vec::new()));
        }
        finished
    }

    /// A call to the module's model ended with its usage: the `chat`
    /// span from when the module began to wait on it.
    fn on_model_called(
        &mut self,
        graph: &Graph,
        module_id: &str,
        usage: Usage<'_>,
        at: SystemTime,
    ) -> Vec<SpanData> {
        let start = self
            .model_since
            .insert(module_id.to_owned(), at)
            .unwrap_or(at);
        let config = graph
            .module(module_id)
            .and_then(|module| module.config.agent_config());
        let (provider, model) = config.map_or_else(
            || (String::new(), String::new()),
            |config| (config.provider.clone(), config.model.clone()),
        );
        let count = |tokens: u64| i64::try_from(tokens).unwrap_or(i64::MAX);
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new(
                "gen_ai.provider.name",
                if provider.is_empty() {
                    "default".to_owned()
                } else {
                    provider
                },
            ),
            KeyValue::new("gen_ai.request.model", model.clone()),
            KeyValue::new("gen_ai.usage.input_tokens", count(usage.tokens_in)),
            KeyValue::new("gen_ai.usage.output_tokens", count(usage.tokens_out)),
        ];
        if usage.tokens_cached > 0 {
            attributes.push(KeyValue::new(
                "gen_ai.usage.cache_read.input_tokens",
                count(usage.tokens_cached),
            ));
        }
        if let Some(reason) = usage.finish_reason {
            attributes.push(KeyValue::new(
                "gen_ai.response.finish_reasons",
                opentelemetry::Value::Array(
                    vec![opentelemetry::StringValue::from(reason.to_owned())].into(),
                ),
            ));
        }
        if let Some(said) = self.said.remove(module_id) {
            let message = serde_json::json!([{"role": "assistant", "parts": [{"type": "text", "content": said}]}]);
            attributes.push(KeyValue::new("gen_ai.output.messages", message.to_string()));
        }
        // One call of a module ends at a time: its end names it.
        let ended = format!("{at:?}");
        let open = Open {
            id: span_id(&["chat", &self.run_id, module_id, &ended]),
            parent: self.activation_span(module_id),
            name: format!("chat {model}"),
            start,
            attributes,
        };
        vec![self.finish(open, at, Status::Unset, Vec::new())]
    }

    fn on_tool_called(
        &mut self,
        module_id: &str,
        call_id: &str,
        server: &str,
        tool: &str,
        arguments: &serde_json::Value,
        at: SystemTime,
    ) {
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", tool.to_owned()),
            KeyValue::new("gen_ai.tool.call.id", call_id.to_owned()),
            KeyValue::new("patchbay.tool.server", server.to_owned()),
        ];
        if self.capture_content {
            attributes.push(KeyValue::new(
                "gen_ai.tool.call.arguments",
                arguments.to_string(),
            ));
        }
        self.tools.insert(
            call_id.to_owned(),
            Open {
                id: span_id(&["tool", &self.run_id, module_id, call_id]),
                parent: self.activation_span(module_id),
                name: format!("execute_tool {tool}"),
                start: at,
                attributes,
            },
        );
    }

    fn on_tool_ended(
        &mut self,
        call_id: &str,
        ok: bool,
        summary: &str,
        at: SystemTime,
    ) -> Vec<SpanData> {
        let Some(mut open) = self.tools.remove(call_id) else {
            return Vec::new();
        };
        if self.capture_content {
            open.attributes
                .push(KeyValue::new("gen_ai.tool.call.result", summary.to_owned()));
        }
        let status = if ok {
            Status::Ok
        } else {
            Status::error(summary.to_owned())
        };
        vec![self.finish(open, at, status, Vec::new())]
    }

    fn on_agent_event(&mut self, event: &RunEvent, at: SystemTime) -> Vec<SpanData> {
        match event {
            RunEvent::CodingRepromptDispatched {
                module_id,
                agent_role,
                reprompt_index,
            } => {
                let index = reprompt_index.to_string();
                let open = Open {
                    id: span_id(&["agent", &self.run_id, module_id, agent_role, &index]),
                    parent: self.activation_span(module_id),
                    name: format!("invoke_agent {agent_role}"),
                    start: at,
                    attributes: vec![
                        KeyValue::new("gen_ai.operation.name", "invoke_agent"),
                        KeyValue::new("gen_ai.agent.name", agent_role.clone()),
                    ],
                };
                self.agent_turns.insert(
                    (module_id.clone(), agent_role.clone(), *reprompt_index),
                    open,
                );
                Vec::new()
            }
            RunEvent::CodingRepromptResponse {
                module_id,
                agent_role,
                reprompt_index,
            } => self
                .agent_turns
                .remove(&(module_id.clone(), agent_role.clone(), *reprompt_index))
                .map(|open| vec![self.finish(open, at, Status::Ok, Vec::new())])
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    fn finish(
        &self,
        open: Open,
        end: SystemTime,
        status: Status,
        events: Vec<opentelemetry::trace::Event>,
    ) -> SpanData {
        let mut said = SpanEvents::default();
        said.events = events;
        SpanData {
            span_context: SpanContext::new(
                self.trace_id,
                open.id,
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: open.parent,
            parent_span_is_remote: false,
            span_kind: if open.parent == SpanId::INVALID {
                SpanKind::Server
            } else {
                SpanKind::Internal
            },
            name: open.name.into(),
            start_time: open.start,
            end_time: end.max(open.start),
            attributes: open.attributes,
            dropped_attributes_count: 0,
            events: said,
            links: SpanLinks::default(),
            status,
            instrumentation_scope: InstrumentationScope::builder("patchbay").build(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::starter::starter_graph;
    use wire::RunStatus;

    fn record(seq: u64, ts: i64, event: RunEvent) -> EventRecord {
        EventRecord {
            run_id: "r_trace".to_owned(),
            seq,
            ts,
            event,
        }
    }

    fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a opentelemetry::Value> {
        span.attributes
            .iter()
            .find(|pair| pair.key.as_str() == key)
            .map(|pair| &pair.value)
    }

    /// A run of the starter graph's agent task ("m2") with one model turn
    /// and one tool call, as its events come.
    fn events() -> Vec<EventRecord> {
        let module = || "m2".to_owned();
        vec![
            record(
                1,
                1000,
                RunEvent::RunStarted {
                    status: RunStatus::Running,
                },
            ),
            record(
                2,
                1010,
                RunEvent::ModuleActivated {
                    module_id: module(),
                    activation: 1,
                },
            ),
            record(
                3,
                1020,
                RunEvent::RepromptDispatched {
                    module_id: module(),
                    reprompt_index: 1,
                    reprompt_count: 1,
                    variant: None,
                },
            ),
            record(
                4,
                1030,
                RunEvent::ModuleOutputDelta {
                    module_id: module(),
                    response_index: 0,
                    text: "Tides rise".to_owned(),
                },
            ),
            record(
                5,
                1040,
                RunEvent::RepromptResponse {
                    module_id: module(),
                    reprompt_index: 1,
                    token_count: 2,
                    variant: None,
                },
            ),
            record(
                6,
                1041,
                RunEvent::ModuleUsage {
                    module_id: module(),
                    activation: 1,
                    tokens_in: 12,
                    tokens_out: 2,
                    cost: None,
                    tokens_cached: 8,
                    finish_reason: Some("stop".to_owned()),
                },
            ),
            record(
                7,
                1050,
                RunEvent::ModuleToolCall {
                    module_id: module(),
                    activation: 1,
                    call_id: "c1".to_owned(),
                    server: "patchbay".to_owned(),
                    tool: "calculate".to_owned(),
                    arguments: serde_json::json!({"expression": "6 * 7"}),
                },
            ),
            record(
                8,
                1060,
                RunEvent::ModuleToolResult {
                    module_id: module(),
                    activation: 1,
                    call_id: "c1".to_owned(),
                    tool: "calculate".to_owned(),
                    ok: true,
                    summary: "42".to_owned(),
                    duration_ms: 10,
                },
            ),
            record(
                9,
                1070,
                RunEvent::ModuleCompleted {
                    module_id: module(),
                    activation: 1,
                },
            ),
            record(
                10,
                1080,
                RunEvent::RunCompleted {
                    status: RunStatus::Completed,
                },
            ),
        ]
    }

    fn spans(capture_content: bool) -> Vec<SpanData> {
        let graph = starter_graph();
        let mut trace = RunTrace::new("r_trace", capture_content);
        events()
            .iter()
            .flat_map(|record| trace.on_event(&graph, record))
            .collect()
    }

    #[test]
    fn each_span_ends_with_its_event_under_its_parent() {
        let spans = spans(false);
        let names: Vec<&str> = spans.iter().map(|span| span.name.as_ref()).collect();
        // Each as it ends: the model's call, the tool call, the
        // activation, the run.
        let kinds: Vec<&str> = names
            .iter()
            .map(|name| name.split(' ').next().unwrap_or_default())
            .collect();
        assert_eq!(
            kinds,
            ["chat", "execute_tool", "activation", "run"],
            "{names:?}"
        );
        let by_name = |prefix: &str| {
            spans
                .iter()
                .find(|span| span.name.starts_with(prefix))
                .unwrap_or_else(|| panic!("no {prefix} span in {names:?}"))
        };
        let (run, activation, chat, tool) = (
            by_name("run"),
            by_name("activation"),
            by_name("chat"),
            by_name("execute_tool"),
        );
        assert!(
            spans
                .iter()
                .all(|span| span.span_context.trace_id() == trace_id("r_trace"))
        );
        assert_eq!(run.parent_span_id, SpanId::INVALID);
        assert_eq!(activation.parent_span_id, run.span_context.span_id());
        assert_eq!(chat.parent_span_id, activation.span_context.span_id());
        assert_eq!(tool.parent_span_id, activation.span_context.span_id());
        assert_eq!(chat.start_time, time(1020));
        assert_eq!(chat.end_time, time(1041));
        assert_eq!(tool.end_time, time(1060));
        assert_eq!(run.end_time, time(1080));
        assert_eq!(
            attribute(chat, "gen_ai.operation.name")
                .map(ToString::to_string)
                .as_deref(),
            Some("chat")
        );
        assert_eq!(
            attribute(chat, "gen_ai.usage.input_tokens"),
            Some(&opentelemetry::Value::I64(12))
        );
        assert_eq!(
            attribute(chat, "gen_ai.usage.output_tokens"),
            Some(&opentelemetry::Value::I64(2))
        );
        assert_eq!(
            attribute(chat, "gen_ai.usage.cache_read.input_tokens"),
            Some(&opentelemetry::Value::I64(8))
        );
        assert_eq!(
            attribute(chat, "gen_ai.response.finish_reasons")
                .map(ToString::to_string)
                .as_deref(),
            Some("[\"stop\"]")
        );
        assert_eq!(
            attribute(tool, "gen_ai.tool.name")
                .map(ToString::to_string)
                .as_deref(),
            Some("calculate")
        );
        assert_eq!(tool.status, Status::Ok);
    }

    #[test]
    fn text_is_in_the_spans_only_when_the_operator_says() {
        let words = |spans: &[SpanData]| {
            spans
                .iter()
                .flat_map(|span| span.attributes.iter())
                .map(|pair| pair.value.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let without = words(&spans(false));
        assert!(
            !without.contains("Tides rise") && !without.contains("6 * 7"),
            "{without}"
        );
        let with = words(&spans(true));
        assert!(
            with.contains("Tides rise") && with.contains("6 * 7") && with.contains("42"),
            "{with}"
        );
    }

    #[test]
    fn a_run_resumed_elsewhere_goes_on_in_the_same_trace_under_the_same_spans() {
        let graph = starter_graph();
        let all = events();
        let mut first = RunTrace::new("r_trace", false);
        let before: Vec<SpanData> = all[..6]
            .iter()
            .flat_map(|record| first.on_event(&graph, record))
            .collect();
        assert!(
            before.iter().all(|span| span.name.starts_with("chat")),
            "only the model's call has ended: {before:?}"
        );
        // Another process takes the run over: it hears of it from the
        // resume, and the activation from its restart.
        let mut second = RunTrace::new("r_trace", false);
        let resumed = [
            record(
                11,
                2000,
                RunEvent::RunResumed {
                    status: RunStatus::Running,
                    replayed: 1,
                },
            ),
            record(
                12,
                2010,
                RunEvent::ModuleActivated {
                    module_id: "m2".to_owned(),
                    activation: 1,
                },
            ),
            record(
                13,
                2020,
                RunEvent::ModuleCompleted {
                    module_id: "m2".to_owned(),
                    activation: 1,
                },
            ),
            record(
                14,
                2030,
                RunEvent::RunCompleted {
                    status: RunStatus::Completed,
                },
            ),
        ];
        let after: Vec<SpanData> = resumed
            .iter()
            .flat_map(|record| second.on_event(&graph, record))
            .collect();
        let run = after
            .iter()
            .find(|span| span.name.starts_with("run"))
            .expect("run span");
        let activation = after
            .iter()
            .find(|span| span.name.starts_with("activation"))
            .expect("activation");
        assert_eq!(run.span_context.trace_id(), trace_id("r_trace"));
        assert_eq!(run.span_context.span_id(), span_id(&["run", "r_trace"]));
        assert_eq!(activation.parent_span_id, run.span_context.span_id());
        assert_eq!(
            attribute(run, "patchbay.run.resumed"),
            Some(&opentelemetry::Value::Bool(true))
        );
    }

    #[test]
    fn a_wait_and_its_decision_are_events_on_the_run_span_when_it_ends() {
        let graph = starter_graph();
        let mut trace = RunTrace::new("r_trace", false);
        let all = events();
        let (before_end, end) = all.split_at(all.len() - 1);
        let waited = [
            RunEvent::ModuleWaiting {
                module_id: "m2".to_owned(),
                activation: 1,
                asked: "Send the refund?".to_owned(),
                shown: Vec::new(),
                deadline_at: None,
                tools: vec!["issue_refund".to_owned()],
            },
            RunEvent::ModuleDecided {
                module_id: "m2".to_owned(),
                activation: 1,
                decision: wire::approval::Decision::Approve,
                by: wire::approval::Decider::ApproverLink,
                feedback: String::new(),
                call_id: Some("call_1".to_owned()),
            },
        ];
        let mut spans: Vec<SpanData> = before_end
            .iter()
            .flat_map(|record| trace.on_event(&graph, record))
            .collect();
        for (at, event) in waited.into_iter().enumerate() {
            let at = i64::try_from(at).unwrap();
            spans.extend(trace.on_event(&graph, &record(20 + at.unsigned_abs(), 1072 + at, event)));
        }
        spans.extend(end.iter().flat_map(|record| trace.on_event(&graph, record)));
        let run = spans
            .iter()
            .find(|span| span.name.starts_with("run "))
            .unwrap();
        let said: Vec<(&str, SystemTime)> = run
            .events
            .iter()
            .map(|event| (event.name.as_ref(), event.timestamp))
            .collect();
        assert_eq!(
            said,
            [
                ("module.waiting", time(1072)),
                ("module.decided", time(1073))
            ]
        );
        assert!(
            run.events.iter().all(|event| event
                .attributes
                .iter()
                .any(|pair| pair.key.as_str() == "patchbay.module.id")),
            "{:?}",
            run.events
        );
        // Nothing a person wrote (the question) is on the span.
        assert!(!format!("{:?}", run.events).contains("refund?"));
    }

    #[test]
    fn a_failure_is_an_error_on_its_activation_and_its_run() {
        let graph = starter_graph();
        let mut trace = RunTrace::new("r_trace", false);
        let spans: Vec<SpanData> = [
            record(
                1,
                1000,
                RunEvent::RunStarted {
                    status: RunStatus::Running,
                },
            ),
            record(
                2,
                1010,
                RunEvent::ModuleActivated {
                    module_id: "m2".to_owned(),
                    activation: 1,
                },
            ),
            record(
                3,
                1020,
                RunEvent::ModuleFailed {
                    module_id: "m2".to_owned(),
                    activation: 1,
                    error: "the provider refused".to_owned(),
                },
            ),
            record(
                4,
                1030,
                RunEvent::RunFailed {
                    status: RunStatus::Failed,
                    error: "Draft failed".to_owned(),
                },
            ),
        ]
        .iter()
        .flat_map(|record| trace.on_event(&graph, record))
        .collect();
        assert!(
            spans
                .iter()
                .all(|span| matches!(span.status, Status::Error { .. })),
            "{spans:?}"
        );
    }
}
