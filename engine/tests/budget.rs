//! Budgets: a run's and a module's. Cost is known when a call's usage
//! arrives; when the run's spend reaches its budget, what is in flight is
//! stopped, the run fails with `budget_exceeded` naming what spent it, and
//! what was produced is kept. The simulated provider stands in for a paid
//! one here, with a price configured for it.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use engine::provider::sim::SimProvider;
use engine::provider::{ProviderInfo, ProviderRegistry};
use engine::recorder::MemoryRecorder;
use engine::{EngineSettings, RunInput, RunSpec, execute};
use serde_json::json;
use support::{cable, engine_with, graph, module};
use tokio_util::sync::CancellationToken;
use wire::activation::ActivationStatus;
use wire::cost::Price;
use wire::event::RunStatus;

/// A dollar a thousand output tokens, input free: a reply of the simulator
/// costs a few cents.
fn paid_engine(priced: bool) -> engine::Engine {
    let mut registry = ProviderRegistry::new();
    registry.add(
        ProviderInfo {
            id: "paid".to_owned(),
            label: "Paid".to_owned(),
            models: vec!["sim-1".to_owned()],
            simulated: false,
            prices: [(
                "sim-1".to_owned(),
                Price {
                    input_per_million: 0.0,
                    output_per_million: 1000.0,
                    cached_input_per_million: None,
                },
            )]
            .into_iter()
            .filter(|_| priced)
            .collect(),
            tool_calling: true,
        },
        // Slow enough that a call is in flight when the budget is reached.
        Arc::new(SimProvider {
            latency_per_token: Duration::from_millis(3),
            ..SimProvider::default()
        }),
    );
    engine_with(registry, EngineSettings::default())
}

fn chain(agent_config: serde_json::Value) -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "task",
                "step.agent_task",
                json!({"instruction": "Write", "agent_config": agent_config,
                       "re_prompts": ["Review", "Tighten", "Finalize"]}),
            ),
        ],
        vec![cable("c1", ("in", "data_out"), ("task", "data_in"))],
    )
}

async fn run_with_budget(
    graph: graph::Graph,
    budget_usd: Option<f64>,
) -> (engine::RunOutcome, Arc<MemoryRecorder>) {
    run_on(&paid_engine(true), graph, budget_usd).await
}

async fn run_on(
    engine: &engine::Engine,
    graph: graph::Graph,
    budget_usd: Option<f64>,
) -> (engine::RunOutcome, Arc<MemoryRecorder>) {
    let recorder = Arc::new(MemoryRecorder::default());
    let outcome = execute(
        engine,
        RunSpec {
            run_id: "r_budget".to_owned(),
            graph,
            input: RunInput {
                text: "tides".to_owned(),
                files: Vec::new(),
            },
            budget_usd,
        },
        Arc::clone(&recorder),
        CancellationToken::new(),
    )
    .await;
    (outcome, recorder)
}

#[tokio::test]
async fn a_run_budget_stops_the_chain_mid_way_and_keeps_what_it_produced() {
    let (outcome, recorder) = run_with_budget(
        chain(json!({"provider": "paid", "model": "sim-1"})),
        Some(0.06),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap();
    assert!(
        error.starts_with("budget_exceeded: the run's budget of $0.0600 is spent"),
        "{error}"
    );

    let record = recorder.activation("task", 1).unwrap();
    assert_eq!(record.status, ActivationStatus::Cancelled);
    // Two answered turns cost more than the budget (each is about 50
    // tokens out): the chain stopped there, or in the turn after, which
    // was in flight and is kept as far as it had come.
    let answered: Vec<&wire::ResponseRecord> = record
        .responses
        .iter()
        .filter(|response| response.complete)
        .collect();
    assert_eq!(answered.len(), 2, "{:?}", record.responses);
    assert!(record.responses.len() <= 3);
    let spent: f64 = answered.iter().map(|response| response.cost.unwrap()).sum();
    let first = answered[0].tokens_out as f64 / 1000.0;
    assert!(first < 0.06 && spent >= 0.06, "{first} {spent}");
    assert!(
        error.ends_with(&format!(": \"task\" {})", wire::cost::dollars(spent))),
        "names who spent it: {error}"
    );
    assert!(!answered[1].text.is_empty());
    // The log ends with the failure.
    let events = recorder.events();
    assert!(matches!(
        &events.last().unwrap().event,
        wire::RunEvent::RunFailed { error, .. } if error.starts_with("budget_exceeded")
    ));
}

#[tokio::test]
async fn a_module_budget_fails_the_module_without_trying_it_again() {
    let graph = {
        let mut graph = chain(json!({"provider": "paid", "model": "sim-1", "budget_usd": 0.05}));
        // Attempts left would retry an ordinary failure.
        let task = graph.modules.iter_mut().find(|module| module.id == "task");
        if let Some(graph::ModuleConfig::AgentTask(config)) = task.map(|module| &mut module.config)
        {
            config.retry.max_attempts = 3;
        }
        graph
    };
    let (outcome, recorder) = run_with_budget(graph, None).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let record = recorder.activation("task", 1).unwrap();
    assert_eq!(record.status, ActivationStatus::Failed);
    let error = record.error.unwrap();
    assert!(
        error.contains("budget_exceeded: \"task\" spent $0.")
            && error.contains("of its budget of $0.0500"),
        "{error}"
    );
    assert!(recorder.activation("task", 2).is_none(), "not tried again");
    // Two turns were answered: the first cost less than the budget.
    assert_eq!(record.responses.len(), 2);
}

#[tokio::test]
async fn without_a_budget_or_without_a_price_nothing_stops() {
    let paid = || chain(json!({"provider": "paid", "model": "sim-1"}));
    let (outcome, _) = run_with_budget(paid(), None).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    // With no price the spend is not known: a budget bounds what is known.
    let (outcome, recorder) = run_on(&paid_engine(false), paid(), Some(0.000_001)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(recorder.activation("task", 1).unwrap().cost(), None);
}
