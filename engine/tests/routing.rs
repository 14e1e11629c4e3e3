//! Runs that decide where to go: conditions on cables (first match in
//! order, the catch-all, no match, a missing path, the run state), the
//! events and records that say which way a run went, and failures that
//! nothing handles.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use support::{cable, graph, module, run, sim_engine};
use wire::event::{RunEvent, RunStatus};

/// input → classifier (replying `reply`) → sales / support / other, the
/// three cables from the classifier's `data_out` carrying `conditions` in
/// this order (`None` = the catch-all).
fn triage(reply: &str, conditions: [Option<&str>; 3]) -> graph::Graph {
    let mut cables = vec![cable("c0", ("in", "data_out"), ("classify", "data_in"))];
    for (position, (target, condition)) in ["sales", "support", "other"]
        .iter()
        .zip(conditions)
        .enumerate()
    {
        let mut branch = cable(
            &format!("c{}", position + 1),
            ("classify", "data_out"),
            (target, "data_in"),
        );
        if let Some(condition) = condition {
            branch["condition"] = json!(condition);
        }
        cables.push(branch);
    }
    let task = |instruction: &str| json!({"instruction": instruction, "agent_config": {"provider": "sim", "model": "sim-1"}});
    graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "classify",
                "step.agent_task",
                task(&format!("Classify the request. [sim:reply {reply}]")),
            ),
            module("sales", "step.agent_task", task("Answer as sales")),
            module("support", "step.agent_task", task("Answer as support")),
            module("other", "step.agent_task", task("Answer anything else")),
        ],
        cables,
    )
}

const SALES: Option<&str> = Some("get('$.output.intent') == 'sales'");
const SUPPORT: Option<&str> = Some("get('$.output.intent') == 'support'");

fn taken(events: &[wire::EventRecord]) -> Vec<String> {
    events
        .iter()
        .filter_map(|record| match &record.event {
            RunEvent::CableTaken { cable_id, .. } => Some(cable_id.clone()),
            _ => None,
        })
        .collect()
}

fn ran(recorder: &engine::recorder::MemoryRecorder) -> Vec<String> {
    let mut modules: Vec<String> = recorder
        .activations()
        .into_iter()
        .map(|record| record.module_id)
        .filter(|id| ["sales", "support", "other"].contains(&id.as_str()))
        .collect();
    modules.sort();
    modules
}

#[tokio::test]
async fn the_first_condition_that_holds_takes_the_value_and_only_that_branch_runs() {
    let (outcome, recorder) = run(
        &sim_engine(),
        triage(r#"{"intent": "support"}"#, [SALES, SUPPORT, None]),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(ran(&recorder), ["support"]);
    assert_eq!(taken(&recorder.events()), ["c2"]);
    let routes = recorder.activation("classify", 1).unwrap().routes;
    assert_eq!(routes.len(), 1);
    assert_eq!(routes[0].port, "data_out");
    assert_eq!(routes[0].cable_id.as_deref(), Some("c2"));
    assert!(
        routes[0].reason.contains("condition 2 held"),
        "{}",
        routes[0].reason
    );
}

#[tokio::test]
async fn order_decides_when_two_conditions_hold() {
    let broad = Some("get('$.output.intent') != null");
    let (_, recorder) = run(
        &sim_engine(),
        triage(r#"{"intent": "sales"}"#, [broad, SALES, None]),
    )
    .await;
    assert_eq!(ran(&recorder), ["sales"]);
    assert_eq!(taken(&recorder.events()), ["c1"]);
    let (_, recorder) = run(
        &sim_engine(),
        triage(r#"{"intent": "sales"}"#, [SALES, broad, None]),
    )
    .await;
    assert_eq!(taken(&recorder.events()), ["c1"]);
    assert_eq!(ran(&recorder), ["sales"]);
}

#[tokio::test]
async fn the_cable_without_a_condition_catches_the_rest() {
    let (outcome, recorder) = run(
        &sim_engine(),
        triage(r#"{"intent": "billing"}"#, [SALES, SUPPORT, None]),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(ran(&recorder), ["other"]);
    assert_eq!(taken(&recorder.events()), ["c3"]);
}

#[tokio::test]
async fn a_missing_path_is_null_and_falls_through_to_the_catch_all() {
    // A reply that is not JSON at all: `$.output.intent` is missing.
    let (outcome, recorder) = run(
        &sim_engine(),
        triage("I could not decide", [SALES, SUPPORT, None]),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(ran(&recorder), ["other"]);
    // Null can be tested for.
    let missing = Some("get('$.output.intent') == null");
    let (_, recorder) = run(
        &sim_engine(),
        triage("I could not decide", [SALES, missing, None]),
    )
    .await;
    assert_eq!(ran(&recorder), ["support"]);
}

#[tokio::test]
async fn when_no_condition_holds_and_there_is_no_catch_all_the_branch_ends_and_the_run_says_so() {
    let billing = Some("get('$.output.intent') == 'billing'");
    let (outcome, recorder) = run(
        &sim_engine(),
        triage(r#"{"intent": "legal"}"#, [SALES, SUPPORT, billing]),
    )
    .await;
    // An ended branch is not a failure: the run completes.
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert!(ran(&recorder).is_empty());
    let ended: Vec<(String, String)> = recorder
        .events()
        .into_iter()
        .filter_map(|record| match record.event {
            RunEvent::CableNoneTaken { port, reason, .. } => Some((port, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].0, "data_out");
    assert!(ended[0].1.contains("no condition held"), "{}", ended[0].1);
    let routes = recorder.activation("classify", 1).unwrap().routes;
    assert_eq!(routes[0].cable_id, None);
}

#[tokio::test]
async fn a_condition_reads_the_run_state_and_the_run_input() {
    let on_state =
        Some("get('$.state[\"classify.status\"]') == 'completed' and get('$.input') == 'the moon'");
    let (_, recorder) = run(
        &sim_engine(),
        triage(r#"{"intent": "x"}"#, [on_state, SALES, None]),
    )
    .await;
    assert_eq!(ran(&recorder), ["sales"]);
    let other_input = Some("get('$.input') == 'the sun'");
    let (_, recorder) = run(
        &sim_engine(),
        triage(r#"{"intent": "x"}"#, [other_input, SALES, None]),
    )
    .await;
    assert_eq!(ran(&recorder), ["other"]);
}

#[tokio::test]
async fn an_error_whose_conditioned_cables_all_refuse_it_fails_the_run() {
    let graph = graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "task",
                "step.agent_task",
                json!({"instruction": "Go [sim:fail]", "agent_config": {"provider": "sim"}}),
            ),
            module("out", "step.output", json!({})),
        ],
        vec![cable("c1", ("in", "data_out"), ("task", "data_in")), {
            let mut only_timeouts = cable("c2", ("task", "error_out"), ("out", "data_in"));
            only_timeouts["condition"] = Value::from("get('$.output') == 'timed out'");
            only_timeouts
        }],
    );
    let (outcome, recorder) = run(&sim_engine(), graph).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(
        outcome.error.unwrap().contains("told to fail"),
        "the run fails with the module's error"
    );
    assert!(recorder.activation("out", 1).is_none());
}
