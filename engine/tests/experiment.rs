//! Experiments (DOC23 §7.2–7.3): an agent task's variants each run the
//! whole activation — its re-prompt chain, in a session of its own — on the
//! same inputs; `comparison_out` carries every variant to a judge, which
//! scores each one and names the winner.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use support::{cable, graph, module, run, sim_engine};
use wire::activation::{ActivationRecord, ActivationStatus};
use wire::event::{RunEvent, RunStatus};

fn experiment(variants: Value) -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "task",
                "step.agent_task",
                json!({"instruction": "Write about {{ input }}.", "re_prompts": ["Review it.", "Finalize it."],
                       "agent_config": {"provider": "sim", "model": "sim-1"}, "variants": variants}),
            ),
            module(
                "judge",
                "step.judge",
                json!({"agent_config": {"provider": "sim", "model": "sim-1"},
                       "rubric": [{"name": "Clarity", "weight": 2.0}, {"name": "Depth"}]}),
            ),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("task", "data_in")),
            cable("c2", ("task", "comparison_out"), ("judge", "comparison_in")),
        ],
    )
}

/// The user turns of one variant, from the transcript.
fn user_turns(record: &ActivationRecord, variant: &str) -> Vec<String> {
    record
        .transcript
        .iter()
        .filter(|entry| entry.role == wire::TranscriptRole::User)
        .filter_map(|entry| entry.text.strip_prefix(&format!("[{variant}] ")))
        .map(str::to_owned)
        .collect()
}

fn responses_of(record: &ActivationRecord, variant: &str) -> Vec<(u32, String, String)> {
    record
        .responses
        .iter()
        .filter(|response| response.label.starts_with(&format!("{variant} · ")))
        .map(|response| {
            (
                response.index,
                response.label.clone(),
                response.text.clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn each_variant_runs_its_whole_chain_in_its_own_session_with_its_overrides() {
    let (outcome, recorder) = run(
        &sim_engine(),
        experiment(json!([
            {"name": "A"},
            {"name": "B", "instruction_override": "Write a haiku about {{ input }}."},
            {"name": "C", "config_overrides": {"re_prompts": ["Make it shorter."]}}
        ])),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let record = recorder.activation("task", 1).unwrap();
    assert_eq!(record.status, ActivationStatus::Completed);

    // The override replaces the primary instruction only.
    let a = user_turns(&record, "A");
    let b = user_turns(&record, "B");
    assert!(a[0].contains("Write about the moon."), "{a:?}");
    assert!(b[0].contains("Write a haiku about the moon."), "{b:?}");
    assert!(!b[0].contains("Write about the moon."));
    assert_eq!(a[1..], ["Review it.", "Finalize it."]);
    assert_eq!(b[1..], ["Review it.", "Finalize it."]);
    // config_overrides.re_prompts replaces them.
    assert_eq!(user_turns(&record, "C")[1..], ["Make it shorter."]);

    // Every variant's chain is whole, numbered and labelled apart, and in a
    // session of its own: its last reply saw its own 5 messages, not 13.
    let b_responses = responses_of(&record, "B");
    let labels: Vec<(u32, &str)> = b_responses
        .iter()
        .map(|(index, label, _)| (*index, label.as_str()))
        .collect();
    assert_eq!(
        labels,
        [
            (200, "B · Original"),
            (201, "B · Re-prompt 1"),
            (202, "B · Re-prompt 2")
        ]
    );
    assert!(
        b_responses[2].2.contains("5 messages in session"),
        "{}",
        b_responses[2].2
    );
    assert_eq!(responses_of(&record, "C").len(), 2);

    // The ComparisonBundle: every variant's merged data_out, receipt, cost
    // and duration, in the module's order.
    let comparison = record.outputs["comparison_out"].as_bundle().unwrap();
    assert_eq!(
        comparison.content_type,
        graph::experiment::COMPARISON_CONTENT_TYPE
    );
    let variants = comparison.content["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|variant| variant["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["A", "B", "C"]);
    for variant in variants {
        assert_eq!(variant["status"], "completed");
        assert!(variant["duration_ms"].is_u64());
        assert_eq!(variant["cost"], 0.0, "the simulated provider is free");
        assert_eq!(variant["receipt"]["simulated"], true);
    }
    let b_merged = variants[1]["data_out"]["merged_content"].as_str().unwrap();
    assert!(b_merged.contains("───── Re-prompt 2 ─────"));
    assert_eq!(variants[1]["data_out"]["response_count"], 3);
    assert_eq!(variants[2]["data_out"]["response_count"], 2);
    assert_eq!(variants[2]["summary"], "1 re-prompt");
    // The module's own output is the first variant's; its receipt counts
    // every variant's tokens.
    let data_out = record.outputs["data_out"].as_bundle().unwrap();
    assert_eq!(data_out.content, variants[0]["data_out"]);
    let receipt = record.receipt.as_ref().unwrap();
    let each: u64 = variants
        .iter()
        .map(|variant| variant["receipt"]["tokens_out"].as_u64().unwrap())
        .sum();
    assert_eq!(receipt.tokens_out, each);

    // The events name each variant, its start and end, and whose re-prompt
    // is dispatched.
    let events: Vec<RunEvent> = recorder
        .events()
        .into_iter()
        .map(|record| record.event)
        .collect();
    let started = events
        .iter()
        .filter(|event| matches!(event, RunEvent::VariantStarted { .. }))
        .count();
    let finished: Vec<&RunEvent> = events
        .iter()
        .filter(|event| matches!(event, RunEvent::VariantFinished { .. }))
        .collect();
    assert_eq!((started, finished.len()), (3, 3));
    assert!(events.iter().any(|event| matches!(
        event,
        RunEvent::RepromptDispatched { variant: Some(name), reprompt_index: 2, reprompt_count: 2, .. } if name == "B"
    )));
}

#[tokio::test]
async fn the_judge_scores_each_variant_and_names_the_best() {
    let (outcome, recorder) = run(
        &sim_engine(),
        experiment(json!([
            {"name": "A"},
            {"name": "B", "instruction_override": "Write a limerick about {{ input }}."},
            {"name": "broken", "instruction_override": "Fail. [sim:fail]"}
        ])),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    // A variant that failed is in the comparison, and says why.
    let task = recorder.activation("task", 1).unwrap();
    let comparison = task.outputs["comparison_out"].as_bundle().unwrap();
    let broken = &comparison.content["variants"][2];
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["error"].as_str().unwrap().starts_with("\"task\": "),
        "{broken}"
    );
    assert_eq!(broken.get("data_out"), None);

    let judge = recorder.activation("judge", 1).unwrap();
    let scores = judge.outputs["scores_out"].as_bundle().unwrap().content;
    let scored = scores["variants"].as_array().unwrap();
    let names: Vec<&str> = scored
        .iter()
        .map(|entry| entry["variant"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["A", "B"], "the failed variant is not scored");
    // Each variant scored on every criterion, weighted 2:1.
    for entry in scored {
        let by_criterion = |name: &str| {
            entry["scores"]
                .as_array()
                .unwrap()
                .iter()
                .find(|score| score["criterion"] == name)
                .unwrap()["score"]
                .as_f64()
                .unwrap()
        };
        let expected = (2.0 * by_criterion("Clarity") + by_criterion("Depth")) / 3.0;
        assert!((entry["weighted_score"].as_f64().unwrap() - expected).abs() < 1e-9);
    }
    let best = scored.iter().fold(&scored[0], |best, entry| {
        if entry["weighted_score"].as_f64() > best["weighted_score"].as_f64() {
            entry
        } else {
            best
        }
    });
    assert_eq!(scores["winner"], best["variant"]);
    let verdict = judge.outputs["data_out"].as_bundle().unwrap().as_text();
    assert!(verdict.contains(&format!("Winner: {}", best["variant"].as_str().unwrap())));
}

#[tokio::test]
async fn when_every_variant_fails_the_module_fails_and_says_why() {
    let (outcome, recorder) = run(
        &sim_engine(),
        experiment(json!([
            {"name": "A", "instruction_override": "[sim:fail]"},
            {"name": "B", "instruction_override": "[sim:fail]"}
        ])),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let record = recorder.activation("task", 1).unwrap();
    let error = record.error.unwrap();
    assert!(
        error.contains("every variant failed") && error.contains("A:") && error.contains("B:"),
        "{error}"
    );
}

/// The comparison of `record`'s module, as a judge reads it.
fn comparison_of(record: &ActivationRecord) -> wire::content::Comparison {
    record.outputs["comparison_out"]
        .as_bundle()
        .unwrap()
        .content_as::<wire::content::Comparison>()
        .unwrap()
}

#[tokio::test]
async fn each_variant_keeps_its_own_named_outputs_and_the_module_the_baseline_s() {
    let graph = graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "task",
                "step.agent_task",
                json!({"instruction": "Write about {{ input }}.", "named_outputs": ["Summary"],
                "agent_config": {"provider": "sim", "model": "sim-1"},
                // B answers one turn more, so it ends last.
                "variants": [
                    {"name": "A"},
                    {"name": "B", "config_overrides": {"re_prompts": ["Finalize it."]}}
                ]}),
            ),
        ],
        vec![cable("c1", ("in", "data_out"), ("task", "data_in"))],
    );
    let (outcome, recorder) = run(&sim_engine(), graph).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let record = recorder.activation("task", 1).unwrap();
    let comparison = comparison_of(&record);
    let summary =
        |index: usize| comparison.variants[index].named_outputs().unwrap()["Summary"].clone();
    assert_eq!(summary(0), "Simulated Summary section of reply 1.");
    assert_eq!(summary(1), "Simulated Summary section of reply 2.");
    // The module's named outputs are the baseline's, as its ports are.
    assert_eq!(
        record.named_outputs["Summary"],
        "Simulated Summary section of reply 1."
    );
    let port = record.outputs["named:Summary"].as_bundle().unwrap();
    assert_eq!(port.as_text(), "Simulated Summary section of reply 1.");
    // What a resume would need is gone once the activation ended.
    assert!(record.finished_variants.is_empty());
}
