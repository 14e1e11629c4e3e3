//! What `GET /metrics` tells Prometheus (PRODUCT §6), through the
//! Prometheus project's own client crate: counted from the events of each
//! run this process runs as they are stored (the log is the source of
//! truth), plus what is read at the scrape (runs waiting for a person, the
//! write queue, room connections). Runs this process took over from
//! another are counted where they are claimed.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use engine::EventRecord;
use graph::Graph;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use wire::RunEvent;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Status {
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Kind {
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindStatus {
    kind: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Model {
    provider: String,
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Tokens {
    provider: String,
    model: String,
    direction: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Tool {
    server: String,
    tool: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolOutcome {
    server: String,
    tool: String,
    outcome: String,
}

type Durations<L> = Family<L, Histogram, fn() -> Histogram>;

/// Seconds, from 50 ms to about 7 hours.
fn durations() -> Histogram {
    Histogram::new(exponential_buckets(0.05, 2.0, 20))
}

pub struct Metrics {
    registry: Registry,
    runs_started: Counter,
    runs_ended: Family<Status, Counter>,
    run_seconds: Durations<Status>,
    activations_ended: Family<KindStatus, Counter>,
    activation_seconds: Durations<Kind>,
    tokens: Family<Tokens, Counter>,
    cost: Family<Model, Counter<f64, AtomicU64>>,
    tool_calls: Family<ToolOutcome, Counter>,
    tool_call_seconds: Durations<Tool>,
    runs_taken_over: Counter,
    spans_dropped: Counter,
    runs_waiting: Gauge,
    write_queue: Gauge,
    room_connections: Gauge,
    /// The models the operator configured, by provider: a label names
    /// only these (another is `other`), so that what a graph writes cannot
    /// grow the series without end.
    models: HashSet<(String, String)>,
    /// When each run and activation in flight here began (Unix ms).
    began: Mutex<HashMap<(String, String, u32), i64>>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new(HashSet::new())
    }
}

impl Metrics {
    /// `models`: the operator's models, as `(provider, model)`.
    pub fn new(models: HashSet<(String, String)>) -> Metrics {
        let metrics = Metrics {
            registry: Registry::with_prefix("patchbay"),
            runs_started: Counter::default(),
            runs_ended: Family::default(),
            run_seconds: Family::new_with_constructor(durations),
            activations_ended: Family::default(),
            activation_seconds: Family::new_with_constructor(durations),
            tokens: Family::default(),
            cost: Family::default(),
            tool_calls: Family::default(),
            tool_call_seconds: Family::new_with_constructor(durations),
            runs_taken_over: Counter::default(),
            spans_dropped: Counter::default(),
            runs_waiting: Gauge::default(),
            write_queue: Gauge::default(),
            room_connections: Gauge::default(),
            models,
            began: Mutex::new(HashMap::new()),
        };
        metrics.registered()
    }

    fn registered(mut self) -> Metrics {
        let registry = &mut self.registry;
        registry.register(
            "runs_started",
            "Runs started here (a resumed run is not started again)",
            self.runs_started.clone(),
        );
        registry.register(
            "runs_ended",
            "Runs ended here, by status",
            self.runs_ended.clone(),
        );
        registry.register(
            "run_duration_seconds",
            "How long runs that started and ended here took, by status",
            self.run_seconds.clone(),
        );
        registry.register(
            "activations_ended",
            "Activations ended, by module kind and status",
            self.activations_ended.clone(),
        );
        registry.register(
            "activation_duration_seconds",
            "How long activations took, by module kind",
            self.activation_seconds.clone(),
        );
        registry.register(
            "tokens",
            "Model tokens, by the module's provider and model, in and out",
            self.tokens.clone(),
        );
        registry.register(
            "cost_usd",
            "What model calls cost (models with a price), by the module's provider and model",
            self.cost.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls ended, by the name the model called and how they ended",
            self.tool_calls.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "How long tool calls took, by the name the model called",
            self.tool_call_seconds.clone(),
        );
        registry.register(
            "runs_taken_over",
            "Runs this process took over from another whose lease ran out",
            self.runs_taken_over.clone(),
        );
        registry.register(
            "spans_dropped",
            "Spans of traces dropped because the collector was down or slow ([telemetry])",
            self.spans_dropped.clone(),
        );
        registry.register("runs_waiting", "Runs waiting for a person with nothing running, in the whole database (every process says the same)", self.runs_waiting.clone());
        registry.register(
            "write_queue_peak",
            "The most of the run record's writes that waited at once since the last scrape",
            self.write_queue.clone(),
        );
        registry.register(
            "room_connections",
            "People following a graph's room on this process",
            self.room_connections.clone(),
        );
        self
    }

    /// Where spans the collector did not take are counted.
    pub fn spans_dropped(&self) -> Counter {
        self.spans_dropped.clone()
    }

    /// A run this process took over from another.
    pub fn taken_over(&self) {
        self.runs_taken_over.inc();
    }

    /// Counts `events` of a run of `graph`, as they are stored.
    pub fn observe(&self, graph: &Graph, events: &[EventRecord]) {
        for record in events {
            self.observe_one(graph, record);
        }
    }

    fn observe_one(&self, graph: &Graph, record: &EventRecord) {
        let run = record.run_id.as_str();
        match &record.event {
            RunEvent::RunStarted { .. } => {
                self.runs_started.inc();
                self.begin((run, "", 0), record.ts);
            }
            RunEvent::RunCompleted { .. }
            | RunEvent::RunFailed { .. }
            | RunEvent::RunCancelled { .. }
            | RunEvent::RunInterrupted { .. } => {
                let status = Status {
                    status: run_status(&record.event).to_owned(),
                };
                if let Some(seconds) = self.end((run, "", 0), record.ts) {
                    self.run_seconds.get_or_create(&status).observe(seconds);
                }
                self.runs_ended.get_or_create(&status).inc();
            }
            RunEvent::ModuleActivated {
                module_id,
                activation,
            } => self.begin((run, module_id, *activation), record.ts),
            RunEvent::ModuleCompleted {
                module_id,
                activation,
                ..
            }
            | RunEvent::ModuleFailed {
                module_id,
                activation,
                ..
            } => {
                let kind = kind_of(graph, module_id);
                let status = if matches!(record.event, RunEvent::ModuleFailed { .. }) {
                    "failed"
                } else {
                    "completed"
                };
                if let Some(seconds) = self.end((run, module_id, *activation), record.ts) {
                    self.activation_seconds
                        .get_or_create(&Kind { kind: kind.clone() })
                        .observe(seconds);
                }
                self.activations_ended
                    .get_or_create(&KindStatus {
                        kind,
                        status: status.to_owned(),
                    })
                    .inc();
            }
            RunEvent::ModuleUsage {
                module_id,
                tokens_in,
                tokens_out,
                cost,
                ..
            } => self.used(graph, module_id, *tokens_in, *tokens_out, *cost),
            RunEvent::ModuleToolResult {
                module_id,
                tool,
                ok,
                duration_ms,
                ..
            } => {
                let (server, tool) = tool_of(graph, module_id, tool);
                self.tool_calls
                    .get_or_create(&ToolOutcome {
                        server: server.clone(),
                        tool: tool.clone(),
                        outcome: if *ok { "ok" } else { "error" }.to_owned(),
                    })
                    .inc();
                self.tool_call_seconds
                    .get_or_create(&Tool { server, tool })
                    .observe(*duration_ms as f64 / 1000.0);
            }
            _ => {}
        }
    }

    fn used(
        &self,
        graph: &Graph,
        module_id: &str,
        tokens_in: u64,
        tokens_out: u64,
        cost: Option<f64>,
    ) {
        let (provider, model) = self.model_of(graph, module_id);
        for (direction, tokens) in [("in", tokens_in), ("out", tokens_out)] {
            self.tokens
                .get_or_create(&Tokens {
                    provider: provider.clone(),
                    model: model.clone(),
                    direction: direction.to_owned(),
                })
                .inc_by(tokens);
        }
        if let Some(cost) = cost {
            self.cost
                .get_or_create(&Model { provider, model })
                .inc_by(cost);
        }
    }

    fn begin(&self, key: (&str, &str, u32), at: i64) {
        if let Ok(mut began) = self.began.lock() {
            began.insert((key.0.to_owned(), key.1.to_owned(), key.2), at);
        }
    }

    /// Seconds since `key` began, if it began here.
    fn end(&self, key: (&str, &str, u32), at: i64) -> Option<f64> {
        let mut began = self.began.lock().ok()?;
        let then = began.remove(&(key.0.to_owned(), key.1.to_owned(), key.2))?;
        if key.1.is_empty() {
            // The run is over: what it left behind goes with it.
            began.retain(|(run, _, _), _| run != key.0);
        }
        Some(at.saturating_sub(then).max(0) as f64 / 1000.0)
    }

    /// The text Prometheus scrapes, with what is read at the scrape.
    pub fn encode(
        &self,
        runs_waiting: i64,
        write_queue: i64,
        room_connections: i64,
    ) -> Result<String, std::fmt::Error> {
        self.runs_waiting.set(runs_waiting);
        self.write_queue.set(write_queue);
        self.room_connections.set(room_connections);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

fn run_status(event: &RunEvent) -> &'static str {
    match event {
        RunEvent::RunCompleted { .. } => "completed",
        RunEvent::RunFailed { .. } => "failed",
        RunEvent::RunCancelled { .. } => "cancelled",
        _ => "interrupted",
    }
}

/// A module's kind; one this server does not know is `unknown`.
fn kind_of(graph: &Graph, module_id: &str) -> String {
    match graph.module(module_id).map(|module| &module.config) {
        Some(graph::ModuleConfig::Unknown { .. }) | None => "unknown".to_owned(),
        Some(config) => config.kind_name().to_owned(),
    }
}

/// The server and tool of the module's tool the model called by `name`
/// (its own, or a variant's); a name the module does not offer (a call
/// that was not made) is `unknown`.
fn tool_of(graph: &Graph, module_id: &str, name: &str) -> (String, String) {
    let found = graph.module(module_id).and_then(|module| {
        let own = match &module.config {
            graph::ModuleConfig::AgentTask(task) => task.tools.as_slice(),
            _ => &[],
        };
        let variants = graph::experiment::variants_of(&module.config)
            .iter()
            .filter_map(|variant| variant.config_overrides.tools.as_deref());
        std::iter::once(own)
            .chain(variants)
            .flatten()
            .find(|choice| choice.name() == name)
    });
    match found {
        Some(choice) => (choice.server.clone(), choice.tool.clone()),
        None => ("unknown".to_owned(), "unknown".to_owned()),
    }
}

impl Metrics {
    /// The provider and model a module's configuration names, when the
    /// operator configured them (an empty provider is the server's
    /// default); else `other`.
    fn model_of(&self, graph: &Graph, module_id: &str) -> (String, String) {
        let Some(config) = graph
            .module(module_id)
            .and_then(|module| module.config.agent_config())
        else {
            return ("unknown".to_owned(), "unknown".to_owned());
        };
        let known = self.models.iter().any(|(provider, model)| {
            (config.provider.is_empty() || *provider == config.provider) && *model == config.model
        });
        let provider = if config.provider.is_empty() {
            "default".to_owned()
        } else if self
            .models
            .iter()
            .any(|(provider, _)| *provider == config.provider)
        {
            config.provider.clone()
        } else {
            "other".to_owned()
        };
        let model = if known {
            config.model.clone()
        } else {
            "other".to_owned()
        };
        (provider, model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::{Extra, Module, Position};

    fn record(seq: u64, ts: i64, event: RunEvent) -> EventRecord {
        EventRecord {
            run_id: "r_1".to_owned(),
            seq,
            ts,
            event,
        }
    }

    fn graph() -> Graph {
        let config = graph::ModuleConfig::AgentTask(graph::config::AgentTaskConfig {
            instruction: "Look it up.".to_owned(),
            agent_config: graph::config::AgentConfig {
                provider: "openai".to_owned(),
                model: "gpt-x".to_owned(),
                ..graph::config::AgentConfig::simulated()
            },
            tools: vec![graph::tools::ToolChoice {
                server: "patchbay".to_owned(),
                tool: "lookup".to_owned(),
                ..graph::tools::ToolChoice::default()
            }],
            ..graph::config::AgentTaskConfig::default()
        });
        Graph {
            modules: vec![Module {
                id: "ask".to_owned(),
                label: "Ask".to_owned(),
                position: Position::default(),
                config,
                extra: Extra::new(),
            }],
            ..Graph::default()
        }
    }

    #[test]
    fn tool_calls_cost_and_a_failed_run_are_counted_with_their_labels() {
        let metrics = Metrics::new(HashSet::from([("openai".to_owned(), "gpt-x".to_owned())]));
        let status = wire::event::RunStatus::Failed;
        metrics.observe(
            &graph(),
            &[
                record(
                    1,
                    1_000,
                    RunEvent::RunStarted {
                        status: wire::event::RunStatus::Running,
                    },
                ),
                record(
                    2,
                    1_000,
                    RunEvent::ModuleActivated {
                        module_id: "ask".to_owned(),
                        activation: 1,
                    },
                ),
                record(
                    3,
                    1_200,
                    RunEvent::ModuleToolResult {
                        module_id: "ask".to_owned(),
                        activation: 1,
                        call_id: "c1".to_owned(),
                        tool: "lookup".to_owned(),
                        ok: false,
                        summary: String::new(),
                        duration_ms: 150,
                    },
                ),
                // A name the model made up: no call was made, and its
                // name is not a label.
                record(
                    3,
                    1_250,
                    RunEvent::ModuleToolResult {
                        module_id: "ask".to_owned(),
                        activation: 1,
                        call_id: "c2".to_owned(),
                        tool: "made_up_by_the_model".to_owned(),
                        ok: false,
                        summary: String::new(),
                        duration_ms: 0,
                    },
                ),
                record(
                    4,
                    1_300,
                    RunEvent::ModuleUsage {
                        module_id: "ask".to_owned(),
                        activation: 1,
                        tokens_in: 120,
                        tokens_out: 30,
                        cost: Some(0.25),
                        tokens_cached: 0,
                        finish_reason: None,
                    },
                ),
                record(
                    5,
                    1_500,
                    RunEvent::ModuleFailed {
                        module_id: "ask".to_owned(),
                        activation: 1,
                        error: "no".to_owned(),
                    },
                ),
                record(
                    6,
                    3_000,
                    RunEvent::RunFailed {
                        status,
                        error: "no".to_owned(),
                    },
                ),
            ],
        );
        let text = metrics.encode(2, 0, 1).unwrap_or_default();
        for line in [
            "patchbay_tool_calls_total{server=\"patchbay\",tool=\"lookup\",outcome=\"error\"} 1",
            "patchbay_tool_calls_total{server=\"unknown\",tool=\"unknown\",outcome=\"error\"} 1",
            "patchbay_tool_call_duration_seconds_sum{server=\"patchbay\",tool=\"lookup\"} 0.15",
            "patchbay_tokens_total{provider=\"openai\",model=\"gpt-x\",direction=\"in\"} 120",
            "patchbay_cost_usd_total{provider=\"openai\",model=\"gpt-x\"} 0.25",
            "patchbay_activations_ended_total{kind=\"step.agent_task\",status=\"failed\"} 1",
            "patchbay_activation_duration_seconds_sum{kind=\"step.agent_task\"} 0.5",
            "patchbay_runs_ended_total{status=\"failed\"} 1",
            "patchbay_run_duration_seconds_sum{status=\"failed\"} 2.0",
            "patchbay_runs_waiting 2",
            "patchbay_room_connections 1",
        ] {
            assert!(text.contains(line), "no {line:?} in\n{text}");
        }
        assert!(!text.contains("made_up_by_the_model"), "{text}");
    }

    #[test]
    fn a_model_the_operator_did_not_configure_is_counted_as_other() {
        let metrics = Metrics::new(HashSet::from([("sim".to_owned(), "sim-1".to_owned())]));
        metrics.observe(
            &graph(),
            &[record(
                1,
                1_000,
                RunEvent::ModuleUsage {
                    module_id: "ask".to_owned(),
                    activation: 1,
                    tokens_in: 7,
                    tokens_out: 3,
                    cost: None,
                    tokens_cached: 0,
                    finish_reason: None,
                },
            )],
        );
        let text = metrics.encode(0, 0, 0).unwrap_or_default();
        assert!(
            text.contains(
                "patchbay_tokens_total{provider=\"other\",model=\"other\",direction=\"in\"} 7"
            ),
            "{text}"
        );
        assert!(!text.contains("gpt-x"), "{text}");
    }
}
