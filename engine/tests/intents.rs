//! Runs steered by structured intents (PRODUCT §3.8): each intent's port,
//! the seed's aliases, `repeat` re-running the module (in its session when
//! it persists) while it has attempts, then giving up, `abort` failing the run, and a
//! reply the gate cannot read, failing fast or falling back.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::{Arc, Mutex};

use engine::EngineSettings;
use engine::provider::sim::SimProvider;
use engine::provider::{ChatRequest, DeltaSink, Provider, ProviderFuture};
use serde_json::{Value, json};
use support::{cable, engine_with, graph, module, registry_with, run, run_with_input, sim_engine};
use wire::PortValue;
use wire::event::{RunEvent, RunStatus};

const EXITS: [(&str, &str); 5] = [
    ("next_out", "after_next"),
    ("jump_out", "after_jump"),
    ("handoff_out", "after_handoff"),
    ("escalate_out", "after_escalate"),
    ("closing_out", "after_closing"),
];

/// input → "decide" (an agent task with `gate`, told `instruction`) → an
/// output module on each intent port, and one on `error_out`.
fn decider(instruction: &str, gate: Value, extra: Value) -> graph::Graph {
    let mut config = json!({
        "instruction": instruction,
        "agent_config": {"provider": "sim", "model": "sim-1"},
        "intent_gate": gate,
    });
    if let (Value::Object(config), Value::Object(extra)) = (&mut config, extra) {
        config.extend(extra);
    }
    let mut modules = vec![
        module("in", "step.input", json!({})),
        module("decide", "step.agent_task", config),
        module("after_error", "step.output", json!({})),
    ];
    let mut cables = vec![
        cable("c0", ("in", "data_out"), ("decide", "data_in")),
        cable("ce", ("decide", "error_out"), ("after_error", "data_in")),
    ];
    for (port, target) in EXITS {
        modules.push(module(target, "step.output", json!({})));
        cables.push(cable(
            &format!("c_{target}"),
            ("decide", port),
            (target, "data_in"),
        ));
    }
    graph(modules, cables)
}

fn every_intent() -> Value {
    json!({
        "allowed_intents": ["next", "repeat", "jump", "closing", "abort", "escalate", "handoff"],
        "intent_field": "next_action.action",
        "handoff_fields": ["summary", "category: billing | technical | sales"],
    })
}

fn ran(recorder: &engine::recorder::MemoryRecorder) -> Vec<String> {
    let mut modules: Vec<String> = recorder
        .activations()
        .into_iter()
        .map(|record| record.module_id)
        .filter(|id| id.starts_with("after_"))
        .collect();
    modules.sort();
    modules
}

fn intents(events: &[wire::EventRecord]) -> Vec<(String, String, bool)> {
    events
        .iter()
        .filter_map(|record| match &record.event {
            RunEvent::ModuleIntent {
                intent,
                said,
                fallback,
                ..
            } => Some((intent.as_str().to_owned(), said.clone(), *fallback)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn each_intent_that_leaves_sends_its_bundle_on_its_own_port() {
    for (intent, (port, target)) in ["next", "jump", "handoff", "escalate", "closing"]
        .into_iter()
        .zip(EXITS)
    {
        let (outcome, recorder) = run(
            &sim_engine(),
            decider(
                &format!("Decide. [sim:intent {intent}]"),
                every_intent(),
                json!({}),
            ),
        )
        .await;
        assert_eq!(
            outcome.status,
            RunStatus::Completed,
            "{intent}: {outcome:?}"
        );
        assert_eq!(ran(&recorder), [target], "{intent}");
        let record = recorder.activation("decide", 1).unwrap();
        assert_eq!(record.intent.as_ref().unwrap().intent.as_str(), intent);
        let Some(PortValue::Bundle(bundle)) = record.outputs.get(port) else {
            panic!("{intent}: nothing on {port}: {:?}", record.outputs.keys());
        };
        assert_eq!(bundle.content["intent"], intent);
        assert_eq!(
            bundle.content["reason"],
            "Simulated reason for this decision."
        );
        assert_eq!(bundle.content["summary"], "Simulated summary.");
        assert!(
            bundle.meta["reply"]
                .as_str()
                .unwrap()
                .contains("next_action")
        );
        // Only the chosen intent's port fires; data_out always does.
        for (other, _) in EXITS.iter().filter(|(other, _)| *other != port) {
            assert!(!record.outputs.contains_key(*other), "{intent}: {other}");
        }
        assert!(record.outputs.contains_key("data_out"));
        assert_eq!(
            intents(&recorder.events()),
            [(intent.to_owned(), intent.to_owned(), false)]
        );
    }
}

#[tokio::test]
async fn the_seeds_aliases_are_their_intents() {
    for (said, target) in [
        ("continue", "after_next"),
        ("pass", "after_next"),
        ("done", "after_closing"),
        ("finished", "after_closing"),
    ] {
        let (outcome, recorder) = run(
            &sim_engine(),
            decider(
                &format!("Decide. [sim:intent {said}]"),
                every_intent(),
                json!({}),
            ),
        )
        .await;
        assert_eq!(outcome.status, RunStatus::Completed, "{said}");
        assert_eq!(ran(&recorder), [target], "{said}");
        let (intent, recorded_said, _) = intents(&recorder.events()).remove(0);
        assert_eq!(recorded_said, said);
        assert_ne!(intent, said);
    }
    // retry, wait and fail are repeat: the module runs again.
    for said in ["retry", "wait", "fail"] {
        let (_, recorder) = run(
            &sim_engine(),
            decider(
                &format!("Decide. [sim:intent {said}, next]"),
                every_intent(),
                json!({"max_attempts": 2}),
            ),
        )
        .await;
        assert_eq!(ran(&recorder), ["after_next"], "{said}");
        assert_eq!(
            intents(&recorder.events())
                .into_iter()
                .map(|(intent, _, _)| intent)
                .collect::<Vec<_>>(),
            ["repeat", "next"],
            "{said}"
        );
    }
}

#[tokio::test]
async fn repeat_runs_the_module_again_in_its_session_and_sends_only_the_last_result() {
    let (outcome, recorder) = run(
        &sim_engine(),
        decider(
            "Decide. [sim:intent repeat, repeat, next]",
            every_intent(),
            json!({"session_persist": true, "max_attempts": 3}),
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(ran(&recorder), ["after_next"]);
    let attempts: Vec<wire::ActivationRecord> = recorder
        .activations()
        .into_iter()
        .filter(|record| record.module_id == "decide")
        .collect();
    assert_eq!(attempts.len(), 3);
    // A repeat sends nothing on: not even data_out.
    assert!(attempts[0].outputs.is_empty(), "{:?}", attempts[0].outputs);
    assert!(attempts[1].outputs.is_empty());
    assert!(attempts[2].outputs.contains_key("next_out"));
    // The third attempt continues the session of the first two, and is
    // told why it runs again.
    let third: Vec<&str> = attempts[2]
        .transcript
        .iter()
        .map(|entry| entry.text.as_str())
        .collect();
    assert!(third.len() >= 6, "{third:#?}");
    assert!(
        third.iter().any(|text| text.starts_with(
            "This step runs again (attempt 3 of 3) because your last reply chose to repeat it: “Simulated reason for this decision.”"
        )),
        "{third:#?}"
    );
    // Without session_persist each attempt is a new session that says why.
    let (_, recorder) = run(
        &sim_engine(),
        decider(
            "Decide. [sim:intent repeat, next]",
            every_intent(),
            json!({"max_attempts": 2}),
        ),
    )
    .await;
    let second = recorder.activation("decide", 2).unwrap();
    assert_eq!(second.transcript.len(), 2, "{:#?}", second.transcript);
    assert!(second.transcript[0].text.contains("(attempt 2 of 2)"));
}

#[tokio::test]
async fn repeat_is_bounded_by_the_attempts_and_the_activation_limit() {
    // Attempts used, it gives up: the run fails naming it, as nothing
    // takes give_up_out…
    let (outcome, recorder) = run(
        &sim_engine(),
        decider(
            "Decide. [sim:intent repeat]",
            every_intent(),
            json!({"max_attempts": 3}),
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(
        outcome.error.as_deref(),
        Some(
            "\"decide\" gave up after 3 attempts: its reply chose to repeat it, and it has no attempts left; the reply's reason: “Simulated reason for this decision.”"
        )
    );
    assert_eq!(recorder.activation("decide", 4), None);
    assert!(recorder.activation("decide", 3).unwrap().gave_up.is_some());
    // …and with one attempt a repeat gives up at once, saying what to do.
    let (outcome, _) = run(
        &sim_engine(),
        decider("Decide. [sim:intent repeat]", every_intent(), json!({})),
    )
    .await;
    let error = outcome.error.unwrap();
    assert!(
        error.starts_with("\"decide\" gave up after 1 attempt:")
            && error.contains("give it 2 or more in Attempts"),
        "{error}"
    );
    // The run's activation limit stops it first when it is lower.
    let engine = engine_with(
        registry_with("sim", Arc::new(SimProvider::default())),
        EngineSettings {
            max_activations: 6,
            ..EngineSettings::default()
        },
    );
    let (outcome, _) = run(
        &engine,
        decider(
            "Decide. [sim:intent repeat]",
            every_intent(),
            json!({"max_attempts": 20}),
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap();
    assert!(
        error.starts_with("step_transition_limit_exceeded")
            && error.contains("\"decide\" (5 times)"),
        "{error}"
    );
}

#[tokio::test]
async fn abort_fails_the_run_with_the_replys_reason_even_with_error_out_wired() {
    let (outcome, recorder) = run(
        &sim_engine(),
        decider("Decide. [sim:intent abort]", every_intent(), json!({})),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(
        outcome.error.as_deref(),
        Some("\"decide\" chose to abort the run: Simulated reason for this decision.")
    );
    assert_eq!(ran(&recorder), Vec::<String>::new());
    let record = recorder.activation("decide", 1).unwrap();
    assert_eq!(record.status, wire::ActivationStatus::Failed);
    assert!(record.receipt.unwrap().tokens_out > 0);
    assert_eq!(record.intent.unwrap().intent.as_str(), "abort");
}

#[tokio::test]
async fn an_intent_that_cannot_be_read_fails_fast_or_falls_back() {
    // Fail fast: the activation fails, and error_out takes it.
    let (outcome, recorder) = run(
        &sim_engine(),
        decider("Decide. [sim:intent proceed]", every_intent(), json!({})),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(ran(&recorder), ["after_error"]);
    let error = recorder.activation("decide", 1).unwrap().error.unwrap();
    assert!(
        error.contains("its intent gate could not act on the reply: “proceed” is not an intent")
            && error.contains("the gate fails fast"),
        "{error}"
    );
    // An intent it does not allow is refused the same way.
    let narrow = json!({"allowed_intents": ["next", "closing"], "intent_field": "intent"});
    let (_, recorder) = run(
        &sim_engine(),
        decider("Decide. [sim:intent escalate]", narrow.clone(), json!({})),
    )
    .await;
    // (The outputs on ports this gate does not have start on their own.)
    let reached = ran(&recorder);
    assert!(reached.contains(&"after_error".to_owned()), "{reached:?}");
    assert!(
        !reached.contains(&"after_next".to_owned())
            && !reached.contains(&"after_closing".to_owned())
    );
    // With a fallback, the fallback's port takes it and the record says so.
    let mut lenient = narrow;
    lenient["fail_fast"] = json!(false);
    lenient["fallback_intent"] = json!("closing");
    let (outcome, recorder) = run(
        &sim_engine(),
        decider("Decide. [sim:intent proceed]", lenient, json!({})),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let reached = ran(&recorder);
    assert!(reached.contains(&"after_closing".to_owned()), "{reached:?}");
    assert!(
        !reached.contains(&"after_error".to_owned()) && !reached.contains(&"after_next".to_owned())
    );
    assert_eq!(
        intents(&recorder.events()),
        [("closing".to_owned(), "proceed".to_owned(), true)]
    );
}

#[tokio::test]
async fn handoff_fields_with_values_feed_conditions_on_the_intents_cables() {
    let gate = json!({"allowed_intents": ["next"], "handoff_fields": ["category: billing | technical | sales"]});
    let classify = || {
        let condition = |category: &str| format!("get('$.output.category') == '{category}'");
        let mut billing = cable("b", ("decide", "next_out"), ("after_billing", "data_in"));
        billing["condition"] = json!(condition("billing"));
        let mut technical = cable("t", ("decide", "next_out"), ("after_technical", "data_in"));
        technical["condition"] = json!(condition("technical"));
        graph(
            vec![
                module("in", "step.input", json!({})),
                module(
                    "decide",
                    "step.agent_task",
                    json!({"instruction": "Which team should answer?", "agent_config": {"provider": "sim"}, "intent_gate": gate}),
                ),
                module("after_billing", "step.output", json!({})),
                module("after_technical", "step.output", json!({})),
                module("after_other", "step.output", json!({})),
            ],
            vec![
                cable("c0", ("in", "data_out"), ("decide", "data_in")),
                billing,
                technical,
                cable("rest", ("decide", "next_out"), ("after_other", "data_in")),
            ],
        )
    };
    // The simulated classifier picks the value the request mentions.
    let (outcome, recorder) = run_with_input(
        &sim_engine(),
        classify(),
        "A technical question about sales",
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let taken: Vec<String> = recorder
        .events()
        .iter()
        .filter_map(|record| match &record.event {
            RunEvent::CableTaken { cable_id, .. } => Some(cable_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(taken, ["t"]);
}

/// The simulated provider, noting each request's schema name.
struct Schemas {
    seen: Mutex<Vec<Option<String>>>,
    inner: SimProvider,
}

impl Provider for Schemas {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(
                request
                    .response_schema
                    .as_ref()
                    .map(|schema| schema.name.clone()),
            );
        }
        self.inner.complete(request, on_delta)
    }
}

#[tokio::test]
async fn only_the_last_turn_asks_for_the_intent_schema() {
    let probe = Arc::new(Schemas {
        seen: Mutex::new(Vec::new()),
        inner: SimProvider::default(),
    });
    let engine = engine_with(
        registry_with("sim", probe.clone()),
        EngineSettings::default(),
    );
    let (outcome, recorder) = run(
        &engine,
        decider(
            "Write, then decide. [sim:intent handoff]",
            every_intent(),
            json!({"re_prompts": ["Check your work.", "Now decide."]}),
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(
        *probe.seen.lock().unwrap(),
        [None, None, Some("intent_gate".to_owned())]
    );
    let record = recorder.activation("decide", 1).unwrap();
    let last_turn = record
        .transcript
        .iter()
        .rev()
        .find(|entry| entry.role == wire::TranscriptRole::User)
        .unwrap();
    assert!(
        last_turn
            .text
            .starts_with("Now decide.\n\n## Your decision")
            && last_turn
                .text
                .contains("- handoff: hand the work over to another step"),
        "{}",
        last_turn.text
    );
    assert_eq!(ran(&recorder), ["after_handoff"]);
}
