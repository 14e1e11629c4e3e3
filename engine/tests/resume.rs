//! Resuming a stopped run (PRODUCT §8): activations that had ended are
//! replayed from the record, not run again; a chain stopped after
//! re-prompt 2 of 3 continues with re-prompt 3 in the same session,
//! without asking the provider again for the turns it has; the log goes on
//! with `run.resumed` and numbers that follow on; the result is the one an
//! uninterrupted run gives.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use engine::provider::sim::SimProvider;
use engine::recorder::MemoryRecorder;
use engine::{EngineSettings, RunControl, RunInput, RunSpec, execute_controlled};
use serde_json::json;
use support::{Counting, cable, engine_with, graph, module, registry_with};
use tokio_util::sync::CancellationToken;
use wire::PortValue;
use wire::activation::ActivationStatus;
use wire::event::{RunEvent, RunStatus};

/// input → first (one turn) → chain (original + 3 re-prompts) → output
fn the_graph() -> graph::Graph {
    let task = |re_prompts: serde_json::Value| json!({"instruction": "Write about tides", "agent_config": {"provider": "sim", "model": "sim-1"}, "re_prompts": re_prompts});
    graph(
        vec![
            module("in", "step.input", json!({})),
            module("first", "step.agent_task", task(json!([]))),
            module(
                "chain",
                "step.agent_task",
                task(json!([
                    {"id": "r1", "text": "Shorter"},
                    {"id": "r2", "text": "Add a title"},
                    {"id": "r3", "text": "In French"}
                ])),
            ),
            module("out", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("first", "data_in")),
            cable("c2", ("first", "data_out"), ("chain", "data_in")),
            cable("c3", ("chain", "data_out"), ("out", "data_in")),
        ],
    )
}

fn spec() -> RunSpec {
    spec_of(the_graph())
}

fn spec_of(graph: graph::Graph) -> RunSpec {
    RunSpec {
        run_id: "r_resume".to_owned(),
        graph,
        input: RunInput {
            text: "the moon".to_owned(),
            files: Vec::new(),
        },
        budget_usd: None,
    }
}

fn settings() -> EngineSettings {
    EngineSettings {
        stop_grace: Duration::ZERO,
        ..EngineSettings::default()
    }
}

/// Starts the run in a task that `stop` stops.
fn start_stoppable(
    engine: engine::Engine,
    recorder: &Arc<MemoryRecorder>,
    stop: &CancellationToken,
) -> tokio::task::JoinHandle<engine::RunOutcome> {
    start_stoppable_with(engine, spec(), recorder, stop)
}

fn start_stoppable_with(
    engine: engine::Engine,
    spec: RunSpec,
    recorder: &Arc<MemoryRecorder>,
    stop: &CancellationToken,
) -> tokio::task::JoinHandle<engine::RunOutcome> {
    let recorder = Arc::clone(recorder);
    let control = RunControl {
        stop: stop.clone(),
        ..RunControl::default()
    };
    tokio::spawn(async move { execute_controlled(&engine, spec, recorder, control).await })
}

#[tokio::test]
async fn a_chain_stopped_after_re_prompt_2_resumes_with_re_prompt_3_and_the_same_result() {
    // The same run without a stop, for comparison.
    let whole = Arc::new(MemoryRecorder::default());
    let engine = engine_with(registry_with("sim", Counting::new(None)), settings());
    let outcome =
        execute_controlled(&engine, spec(), Arc::clone(&whole), RunControl::default()).await;
    assert_eq!(outcome.status, RunStatus::Completed);

    // Call 5 is re-prompt 3 (first: 1; chain: 2, 3, 4 answered).
    let hanging = Counting::new(Some(5));
    let engine = engine_with(registry_with("sim", hanging.clone()), settings());
    let recorder = Arc::new(MemoryRecorder::default());
    let stop = CancellationToken::new();
    let running = start_stoppable(engine, &recorder, &stop);
    while hanging.calls.load(Ordering::SeqCst) < 5 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.cancel();
    let stopped = running.await.unwrap();
    assert_eq!(stopped.status, RunStatus::Interrupted);
    // Nothing says the run ended, and it was not cancelled.
    let before = recorder.events();
    assert!(before.iter().all(|record| !record.event.is_terminal()));
    assert!(
        recorder.status.lock().unwrap().is_none()
            || matches!(
                *recorder.status.lock().unwrap(),
                Some((RunStatus::Running, _))
            )
    );
    // The chain is kept as of its last answered turn.
    let kept = recorder.activation("chain", 1).unwrap();
    assert_eq!(kept.status, ActivationStatus::Running);
    let answered: Vec<bool> = kept
        .responses
        .iter()
        .map(|response| response.complete)
        .collect();
    assert_eq!(answered[..3], [true, true, true], "{answered:?}");

    // Resumed by a server whose provider answers.
    let fresh = Counting::new(None);
    let engine = engine_with(registry_with("sim", fresh.clone()), settings());
    let resume = recorder.resume();
    assert_eq!(resume.last_seq, before.len() as u64);
    let outcome = execute_controlled(
        &engine,
        spec(),
        Arc::clone(&recorder),
        RunControl {
            resume: Some(resume),
            ..RunControl::default()
        },
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    // Only re-prompt 3 was asked, with the whole conversation before it:
    // system-less, 4 user turns and 3 replies.
    assert_eq!(fresh.calls.load(Ordering::SeqCst), 1);
    assert_eq!(*fresh.requests.lock().unwrap(), [7]);

    // One log, numbered without a gap, resumed once, ended once.
    let events = recorder.events();
    let numbers: Vec<u64> = events.iter().map(|record| record.seq).collect();
    assert_eq!(numbers, (1..=events.len() as u64).collect::<Vec<_>>());
    let resumed: Vec<&RunEvent> = events
        .iter()
        .map(|record| &record.event)
        .filter(|event| matches!(event, RunEvent::RunResumed { .. }))
        .collect();
    assert_eq!(
        resumed,
        [&RunEvent::RunResumed {
            status: RunStatus::Running,
            replayed: 2
        }]
    );
    assert_eq!(
        events
            .iter()
            .filter(|record| record.event.is_terminal())
            .count(),
        1
    );
    assert!(matches!(
        events.last().unwrap().event,
        RunEvent::RunCompleted { .. }
    ));

    // The same result as the run that was never stopped.
    for (module, activation) in [("first", 1), ("chain", 1), ("out", 1)] {
        let resumed = recorder.activation(module, activation).unwrap();
        let reference = whole.activation(module, activation).unwrap();
        assert_eq!(resumed.status, ActivationStatus::Completed, "{module}");
        // The same values, but for how long things took.
        let timeless = |outputs: &std::collections::BTreeMap<String, PortValue>| {
            let mut outputs = outputs.clone();
            for value in outputs.values_mut() {
                if let PortValue::Receipt(receipt) = value {
                    receipt.duration_ms = 0;
                }
            }
            outputs
        };
        assert_eq!(
            timeless(&resumed.outputs),
            timeless(&reference.outputs),
            "{module}"
        );
        let texts = |record: &wire::activation::ActivationRecord| -> Vec<String> {
            record
                .responses
                .iter()
                .map(|response| response.text.clone())
                .collect()
        };
        assert_eq!(texts(&resumed), texts(&reference), "{module}");
        assert_eq!(resumed.transcript, reference.transcript, "{module}");
    }
    assert_eq!(recorder.activations().len(), 4);
    // The run state too, but for how long things took.
    let timeless = |state: std::collections::BTreeMap<String, String>| {
        state
            .into_iter()
            .filter(|(key, _)| !key.ends_with(".duration_ms"))
            .collect::<Vec<_>>()
    };
    assert_eq!(timeless(recorder.state()), timeless(whole.state()));
}

#[tokio::test]
async fn a_stop_lets_what_is_in_flight_finish_within_the_grace() {
    // A provider that answers in 30 ms a turn; a grace of a minute.
    let engine = engine_with(
        registry_with(
            "sim",
            Arc::new(SimProvider {
                latency_per_token: Duration::from_millis(1),
                ..SimProvider::default()
            }),
        ),
        EngineSettings {
            stop_grace: Duration::from_secs(60),
            ..EngineSettings::default()
        },
    );
    let recorder = Arc::new(MemoryRecorder::default());
    let stop = CancellationToken::new();
    let running = start_stoppable(engine, &recorder, &stop);
    // Stopped while "first" runs: it finishes, "chain" never starts.
    while recorder.events().is_empty() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    stop.cancel();
    let outcome = running.await.unwrap();
    assert_eq!(outcome.status, RunStatus::Interrupted);
    let first = recorder.activation("first", 1).unwrap();
    assert_eq!(first.status, ActivationStatus::Completed);
    assert!(recorder.activation("chain", 1).is_none());
    assert!(
        recorder
            .events()
            .iter()
            .all(|record| !record.event.is_terminal())
    );
}

/// input → "Draft" with variants A and B, one at a time (A, then B) → out
fn experiment_graph() -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "draft",
                "step.agent_task",
                json!({"instruction": "Write about tides", "agent_config": {"provider": "sim", "model": "sim-1"},
                       "re_prompts": [{"id": "r1", "text": "Shorter"}],
                       "variants": [{"name": "A"}, {"name": "B", "instruction_override": "Write a haiku about tides"}]}),
            ),
            module("out", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("draft", "data_in")),
            cable("c2", ("draft", "data_out"), ("out", "data_in")),
        ],
    )
}

#[tokio::test]
async fn a_resumed_experiment_takes_up_the_variants_that_had_finished() {
    let one_at_a_time = || EngineSettings {
        max_concurrency: 1,
        ..settings()
    };
    let whole = Arc::new(MemoryRecorder::default());
    let engine = engine_with(registry_with("sim", Counting::new(None)), one_at_a_time());
    let outcome = execute_controlled(
        &engine,
        spec_of(experiment_graph()),
        Arc::clone(&whole),
        RunControl::default(),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let reference = whole.activation("draft", 1).unwrap();

    // Calls 1 and 2 are A's; B's second turn (call 4) never comes.
    let hanging = Counting::new(Some(4));
    let engine = engine_with(registry_with("sim", hanging.clone()), one_at_a_time());
    let recorder = Arc::new(MemoryRecorder::default());
    let stop = CancellationToken::new();
    let running = start_stoppable_with(engine, spec_of(experiment_graph()), &recorder, &stop);
    while hanging.calls.load(Ordering::SeqCst) < 4 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    stop.cancel();
    assert_eq!(running.await.unwrap().status, RunStatus::Interrupted);
    let kept = recorder.activation("draft", 1).unwrap();
    let finished: Vec<&str> = kept
        .finished_variants
        .iter()
        .map(|variant| variant.name.as_str())
        .collect();
    assert_eq!(finished, ["A"]);

    let fresh = Counting::new(None);
    let engine = engine_with(registry_with("sim", fresh.clone()), one_at_a_time());
    let outcome = execute_controlled(
        &engine,
        spec_of(experiment_graph()),
        Arc::clone(&recorder),
        RunControl {
            resume: Some(recorder.resume()),
            ..RunControl::default()
        },
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    // B ran again (its 2 turns); A was not asked again.
    assert_eq!(fresh.calls.load(Ordering::SeqCst), 2);
    let resumed = recorder.activation("draft", 1).unwrap();
    let texts = |record: &wire::ActivationRecord| -> Vec<(String, String)> {
        record
            .responses
            .iter()
            .map(|response| (response.label.clone(), response.text.clone()))
            .collect()
    };
    assert_eq!(texts(&resumed), texts(&reference));
    let comparison = |record: &wire::ActivationRecord| {
        record.outputs["comparison_out"]
            .as_bundle()
            .unwrap()
            .content_as::<wire::content::Comparison>()
            .unwrap()
    };
    let (after, before) = (comparison(&resumed), comparison(&reference));
    assert_eq!(after.variants.len(), 2);
    for (after, before) in after.variants.iter().zip(&before.variants) {
        assert_eq!(
            (after.name.as_str(), after.text()),
            (before.name.as_str(), before.text())
        );
    }
    assert!(
        resumed
            .transcript
            .iter()
            .any(|entry| entry.text
                == "[A] finished before the run stopped: taken up, not run again"),
        "{:?}",
        resumed.transcript
    );
    assert!(resumed.finished_variants.is_empty());
}
