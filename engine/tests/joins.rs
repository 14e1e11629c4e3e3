//! How a module's inputs join (PRODUCT §3.1): `all` waits for a value on
//! every cable in; `any` runs on the first to arrive and records and
//! ignores the values that come for the same activation on its other
//! cables.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use serde_json::json;
use support::{cable, graph, module, run, sim_engine};
use wire::event::{RunEvent, RunStatus};

/// input → "fast" and "slow" (agent tasks; slow takes a second) → "both"
/// (an output module that joins `join`).
fn race(join: &str) -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "fast",
                "step.agent_task",
                json!({"instruction": "Answer quickly", "agent_config": {"provider": "sim"}}),
            ),
            module(
                "slow",
                "step.agent_task",
                json!({"instruction": "Answer slowly [sim:sleep 1]", "agent_config": {"provider": "sim"}}),
            ),
            module("both", "step.output", json!({"join": join})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("fast", "data_in")),
            cable("c2", ("in", "data_out"), ("slow", "data_in")),
            cable("c3", ("fast", "data_out"), ("both", "data_in")),
            cable("c4", ("slow", "data_out"), ("both", "data_in")),
        ],
    )
}

#[tokio::test]
async fn joining_all_waits_for_every_input() {
    let (outcome, recorder) = run(&sim_engine(), race("all")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let both = recorder.activation("both", 1).unwrap();
    let received = serde_json::to_string(&both.outputs).unwrap();
    assert!(
        received.contains("\"source_module\":\"fast\"")
            && received.contains("\"source_module\":\"slow\""),
        "{received}"
    );
    assert!(both.ignored_inputs.is_empty());
}

#[tokio::test]
async fn joining_any_runs_on_the_first_and_ignores_the_rest_of_that_round() {
    let (outcome, recorder) = run(&sim_engine(), race("any")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let runs: Vec<_> = recorder
        .activations()
        .into_iter()
        .filter(|record| record.module_id == "both")
        .collect();
    assert_eq!(runs.len(), 1, "it ran once");
    let received = serde_json::to_string(&runs[0].outputs).unwrap();
    assert!(
        received.contains("\"source_module\":\"fast\"")
            && !received.contains("\"source_module\":\"slow\""),
        "{received}"
    );
    // The slow value came for the same activation: recorded and ignored.
    assert_eq!(
        recorder.activation("both", 1).unwrap().ignored_inputs,
        ["c4"]
    );
    let ignored: Vec<(String, u32, String)> = recorder
        .events()
        .into_iter()
        .filter_map(|record| match record.event {
            RunEvent::CableIgnored {
                module_id,
                activation,
                cable_id,
            } => Some((module_id, activation, cable_id)),
            _ => None,
        })
        .collect();
    assert_eq!(ignored, [("both".to_owned(), 1, "c4".to_owned())]);
}
