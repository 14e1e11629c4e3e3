//! What the engine's run tests share: engines with the simulated provider
//! (or a probe), graphs from JSON, and a run to its end.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

pub mod loopback;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use engine::provider::sim::SimProvider;
use engine::provider::{
    ChatRequest, DeltaSink, Provider, ProviderFuture, ProviderInfo, ProviderRegistry,
};
use engine::recorder::MemoryRecorder;
use engine::{Engine, EngineSettings, RunInput, RunOutcome, RunSpec, execute};
use graph::Graph;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub fn registry_with(id: &str, provider: Arc<dyn Provider>) -> ProviderRegistry {
    let mut registry = ProviderRegistry::new();
    registry.add(
        ProviderInfo {
            id: id.to_owned(),
            label: id.to_owned(),
            models: vec!["sim-1".to_owned()],
            simulated: true,
            prices: Default::default(),
            tool_calling: true,
        },
        provider,
    );
    registry
}

pub fn engine_with(registry: ProviderRegistry, settings: EngineSettings) -> Engine {
    Engine {
        providers: Arc::new(registry),
        settings: Arc::new(settings),
    }
}

pub fn sim_engine() -> Engine {
    engine_with(
        registry_with("sim", Arc::new(SimProvider::default())),
        EngineSettings::default(),
    )
}

pub fn module(id: &str, kind: &str, config: Value) -> Value {
    json!({"id": id, "kind": kind, "label": id, "position": {"x": 0, "y": 0}, "config": config})
}

pub fn cable(id: &str, from: (&str, &str), to: (&str, &str)) -> Value {
    json!({"id": id, "from": {"module": from.0, "port": from.1}, "to": {"module": to.0, "port": to.1}})
}

pub fn graph(modules: Vec<Value>, cables: Vec<Value>) -> Graph {
    Graph::from_value(json!({"modules": modules, "cables": cables})).unwrap()
}

pub async fn run(engine: &Engine, graph: Graph) -> (RunOutcome, Arc<MemoryRecorder>) {
    run_with_input(engine, graph, "the moon").await
}

pub async fn run_with_input(
    engine: &Engine,
    graph: Graph,
    text: &str,
) -> (RunOutcome, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::default());
    let outcome = execute(
        engine,
        RunSpec {
            run_id: "r_test".to_owned(),
            graph,
            input: RunInput {
                text: text.to_owned(),
                files: Vec::new(),
            },
            budget_usd: None,
        },
        Arc::clone(&recorder),
        CancellationToken::new(),
    )
    .await;
    (outcome, recorder)
}

/// The simulated provider, counting calls; from call `hang_at` on (if set)
/// it never answers, as a provider would not while a server is killed.
pub struct Counting {
    pub sim: SimProvider,
    pub calls: AtomicUsize,
    pub hang_at: Option<usize>,
    /// How many messages each request had.
    pub requests: Mutex<Vec<usize>>,
}

impl Counting {
    pub fn new(hang_at: Option<usize>) -> Arc<Counting> {
        Arc::new(Counting {
            sim: SimProvider::default(),
            calls: AtomicUsize::new(0),
            hang_at,
            requests: Mutex::new(Vec::new()),
        })
    }
}

impl Provider for Counting {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        self.requests.lock().unwrap().push(request.messages.len());
        Box::pin(async move {
            if self.hang_at.is_some_and(|at| call >= at) {
                std::future::pending::<()>().await;
            }
            self.sim.complete(request, on_delta).await
        })
    }
}

/// Each tool call of an activation: the name the model called and how it
/// ended.
pub fn tool_outcomes(
    record: &wire::ActivationRecord,
) -> Vec<(&str, wire::activation::ToolOutcome)> {
    record
        .tool_calls
        .iter()
        .map(|call| (call.tool.as_str(), call.outcome))
        .collect()
}
