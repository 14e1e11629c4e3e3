//! Runs with the simulated provider (and small probe providers): the DOC23
//! re-prompt chain, outputs, events, sessions, loops, joins, cancel.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use engine::bundle::PortValue;
use engine::provider::sim::SimProvider;
use engine::provider::{
    ChatRequest, ChatResponse, DeltaSink, Provider, ProviderFuture, ProviderInfo, Role, Usage,
};
use engine::recorder::MemoryRecorder;
use engine::{EngineSettings, RunInput, RunSpec, execute};
use graph::Graph;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use support::{cable, engine_with, graph, module, registry_with, run, sim_engine};
use wire::activation::{ActivationStatus, TranscriptRole};
use wire::event::{RunEvent, RunStatus};

fn task(re_prompts: Value) -> Value {
    json!({"instruction": "Write about tides", "agent_config": {"provider": "sim", "model": "sim-1"}, "re_prompts": re_prompts})
}

/// input → task (config) → output
fn chain_graph(config: Value) -> Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            module("task", "step.agent_task", config),
            module("out", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("task", "data_in")),
            cable("c2", ("task", "data_out"), ("out", "data_in")),
        ],
    )
}

fn merged(recorder: &MemoryRecorder, module: &str) -> Value {
    match recorder
        .activation(module, 1)
        .unwrap()
        .outputs
        .get("data_out")
        .unwrap()
    {
        PortValue::Bundle(bundle) => bundle.content.clone(),
        other => panic!("not a bundle: {other:?}"),
    }
}

fn responses(recorder: &MemoryRecorder, module: &str) -> Vec<String> {
    recorder
        .activation(module, 1)
        .unwrap()
        .responses
        .iter()
        .map(|response| response.text.clone())
        .collect()
}

#[tokio::test]
async fn merged_output_with_no_re_prompts_is_the_single_response() {
    let (outcome, recorder) = run(&sim_engine(), chain_graph(task(json!([])))).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let texts = responses(&recorder, "task");
    assert_eq!(texts.len(), 1);
    assert_eq!(
        merged(&recorder, "task"),
        json!({"merged_content": texts[0], "response_count": 1, "has_re_prompts": false})
    );
}

#[tokio::test]
async fn merged_output_with_one_re_prompt_has_one_separator() {
    let (_, recorder) = run(
        &sim_engine(),
        chain_graph(task(json!(["Review your work"]))),
    )
    .await;
    let texts = responses(&recorder, "task");
    assert_eq!(texts.len(), 2);
    let expected = format!("{}\n───── Re-prompt 1 ─────\n{}", texts[0], texts[1]);
    assert_eq!(
        merged(&recorder, "task"),
        json!({"merged_content": expected, "response_count": 2, "has_re_prompts": true})
    );
}

#[tokio::test]
async fn merged_output_with_three_re_prompts_is_byte_for_byte_doc23() {
    let (_, recorder) = run(
        &sim_engine(),
        chain_graph(task(json!(["One", "Two", "Three"]))),
    )
    .await;
    let texts = responses(&recorder, "task");
    assert_eq!(texts.len(), 4);
    let expected = format!(
        "{}\n───── Re-prompt 1 ─────\n{}\n───── Re-prompt 2 ─────\n{}\n───── Re-prompt 3 ─────\n{}",
        texts[0], texts[1], texts[2], texts[3]
    );
    let content = merged(&recorder, "task");
    assert_eq!(content["merged_content"], expected);
    assert_eq!(content["response_count"], 4);
    assert_eq!(content["has_re_prompts"], true);
    // Responses are distinct turns of one growing session.
    assert!(texts[0].starts_with("Simulated reply 1 (sim-1, 1 message in session)"));
    assert!(texts[3].starts_with("Simulated reply 4 (sim-1, 7 messages in session)"));
    // The output module received the merged bundle as one chain-history entry.
    let out = recorder.activation("out", 1).unwrap();
    match out.outputs.get("result_1").unwrap() {
        PortValue::Bundle(bundle) => assert_eq!(bundle.as_text(), expected),
        other => panic!("{other:?}"),
    }
    assert!(!out.outputs.contains_key("result_2"));
}

#[tokio::test]
async fn each_re_prompt_turn_holds_only_its_text() {
    let (_, recorder) = run(
        &sim_engine(),
        chain_graph(task(json!(["Review your work above.", "Finalize."]))),
    )
    .await;
    let transcript = recorder.activation("task", 1).unwrap().transcript;
    let user_turns: Vec<&str> = transcript
        .iter()
        .filter(|entry| entry.role == TranscriptRole::User)
        .map(|entry| entry.text.as_str())
        .collect();
    assert_eq!(user_turns.len(), 3);
    // The primary turn carries the chain history and the instruction…
    assert_eq!(
        user_turns[0],
        "## Input from \"in\"\n\nthe moon\n\n## Instruction\n\nWrite about tides"
    );
    // …each re-prompt only its own text: no inputs re-injected.
    assert_eq!(user_turns[1], "Review your work above.");
    assert_eq!(user_turns[2], "Finalize.");
    let roles: Vec<TranscriptRole> = transcript.iter().map(|entry| entry.role).collect();
    assert_eq!(
        roles,
        [
            TranscriptRole::User,
            TranscriptRole::Assistant,
            TranscriptRole::User,
            TranscriptRole::Assistant,
            TranscriptRole::User,
            TranscriptRole::Assistant
        ]
    );
}

#[tokio::test]
async fn separate_outputs_emit_one_port_per_response() {
    let mut config = task(json!(["Review", "Finalize"]));
    config["separate_outputs"] = json!(true);
    let (_, recorder) = run(&sim_engine(), chain_graph(config)).await;
    let record = recorder.activation("task", 1).unwrap();
    let texts = responses(&recorder, "task");
    for (port, expected) in [
        ("original_out", &texts[0]),
        ("reprompt_1_out", &texts[1]),
        ("reprompt_2_out", &texts[2]),
    ] {
        match record.outputs.get(port) {
            Some(PortValue::Bundle(bundle)) => assert_eq!(&bundle.as_text(), expected, "{port}"),
            other => panic!("{port}: {other:?}"),
        }
    }
    assert!(record.outputs.contains_key("data_out"));

    // Off: no per-response ports at all.
    let (_, recorder) = run(
        &sim_engine(),
        chain_graph(task(json!(["Review", "Finalize"]))),
    )
    .await;
    let record = recorder.activation("task", 1).unwrap();
    assert!(
        !record
            .outputs
            .keys()
            .any(|port| port == "original_out" || port.starts_with("reprompt_"))
    );
}

#[tokio::test]
async fn named_outputs_come_from_the_last_response_with_the_instruction_on_the_last_turn() {
    let mut config = task(json!(["Review", "Finalize"]));
    config["named_outputs"] = json!(["Analysis", "Summary"]);
    let (_, recorder) = run(&sim_engine(), chain_graph(config)).await;
    let record = recorder.activation("task", 1).unwrap();
    let user_turns: Vec<&str> = record
        .transcript
        .iter()
        .filter(|entry| entry.role == TranscriptRole::User)
        .map(|entry| entry.text.as_str())
        .collect();
    assert!(!user_turns[0].contains("label the following sections"));
    assert!(!user_turns[1].contains("label the following sections"));
    assert_eq!(
        user_turns[2],
        "Finalize\nWhen producing your final output, label the following sections clearly:\n- 📄 Analysis\n- 📄 Summary"
    );
    // The sim labels sections of the turn it was asked in: reply 3, the last.
    assert_eq!(
        record.named_outputs["Analysis"],
        "Simulated Analysis section of reply 3."
    );
    match record.outputs.get("named:Summary") {
        Some(PortValue::Bundle(bundle)) => {
            assert_eq!(bundle.as_text(), "Simulated Summary section of reply 3.")
        }
        other => panic!("{other:?}"),
    }

    // With no re-prompts the instruction goes in the primary dispatch.
    let mut config = task(json!([]));
    config["named_outputs"] = json!(["Summary"]);
    let (_, recorder) = run(&sim_engine(), chain_graph(config)).await;
    let record = recorder.activation("task", 1).unwrap();
    assert!(record.transcript[0].text.ends_with("- 📄 Summary"));
    assert_eq!(
        record.named_outputs["Summary"],
        "Simulated Summary section of reply 1."
    );
}

fn names(recorder: &MemoryRecorder) -> Vec<String> {
    recorder
        .events()
        .iter()
        .map(|record| record.event.name().to_owned())
        .collect()
}

#[tokio::test]
async fn events_come_in_order_with_exact_payloads() {
    let (outcome, recorder) = run(
        &sim_engine(),
        chain_graph(task(json!(["Review", "Finalize"]))),
    )
    .await;
    let events = recorder.events();
    let sequence: Vec<u64> = events.iter().map(|record| record.seq).collect();
    assert_eq!(
        sequence,
        (1..=events.len() as u64).collect::<Vec<_>>(),
        "numbered 1..n with no gap"
    );
    assert_eq!(outcome.events, events.len() as u64);
    // Without the streamed text, the run reads:
    let outline: Vec<Value> = events
        .iter()
        .filter(|record| record.event.name() != "module.output_delta")
        .map(|record| {
            let mut data = record.data();
            data.as_object_mut().unwrap().remove("ts");
            json!({"event": record.event.name(), "data": data})
        })
        .collect();
    let token_count =
        |index: usize| recorder.activation("task", 1).unwrap().responses[index].tokens_out;
    // Every call says what it used; the simulated provider is free.
    let usage = |index: usize| {
        let response = &recorder.activation("task", 1).unwrap().responses[index];
        json!({"event": "module.usage", "data": {"run_id": "r_test", "module_id": "task", "activation": 1, "tokens_in": response.tokens_in, "tokens_out": response.tokens_out, "cost": 0.0, "finish_reason": "stop"}})
    };
    assert_eq!(
        outline,
        vec![
            json!({"event": "run.started", "data": {"run_id": "r_test", "status": "running"}}),
            json!({"event": "module.activated", "data": {"run_id": "r_test", "module_id": "in", "activation": 1}}),
            json!({"event": "module.completed", "data": {"run_id": "r_test", "module_id": "in", "activation": 1}}),
            json!({"event": "module.activated", "data": {"run_id": "r_test", "module_id": "task", "activation": 1}}),
            usage(0),
            json!({"event": "task.agent_task.reprompt_dispatched", "data": {"run_id": "r_test", "module_id": "task", "reprompt_index": 1, "reprompt_count": 2}}),
            usage(1),
            json!({"event": "task.agent_task.reprompt_response", "data": {"run_id": "r_test", "module_id": "task", "reprompt_index": 1, "token_count": token_count(1)}}),
            json!({"event": "task.agent_task.reprompt_dispatched", "data": {"run_id": "r_test", "module_id": "task", "reprompt_index": 2, "reprompt_count": 2}}),
            usage(2),
            json!({"event": "task.agent_task.reprompt_response", "data": {"run_id": "r_test", "module_id": "task", "reprompt_index": 2, "token_count": token_count(2)}}),
            json!({"event": "module.completed", "data": {"run_id": "r_test", "module_id": "task", "activation": 1}}),
            json!({"event": "module.activated", "data": {"run_id": "r_test", "module_id": "out", "activation": 1}}),
            json!({"event": "module.completed", "data": {"run_id": "r_test", "module_id": "out", "activation": 1}}),
            json!({"event": "run.completed", "data": {"run_id": "r_test", "status": "completed"}}),
        ]
    );
    // The streamed text of each response, put together, is that response.
    let texts = responses(&recorder, "task");
    for (index, text) in texts.iter().enumerate() {
        let streamed: String = events
            .iter()
            .filter_map(|record| match &record.event {
                RunEvent::ModuleOutputDelta {
                    module_id,
                    response_index,
                    text,
                } if module_id == "task" && *response_index as usize == index => {
                    Some(text.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(&streamed, text, "response {index}");
    }
}

#[tokio::test]
async fn signal_out_fires_after_the_last_re_prompt() {
    // A second task waits on the first one's signal only.
    let modules = vec![
        module("in", "step.input", json!({})),
        module(
            "task",
            "step.agent_task",
            task(json!(["Review", "Finalize"])),
        ),
        module(
            "after",
            "step.agent_task",
            json!({"instruction": "Go", "agent_config": {"provider": "sim"}}),
        ),
    ];
    let cables = vec![
        cable("c1", ("in", "data_out"), ("task", "data_in")),
        cable("c2", ("task", "signal_out"), ("after", "signal_in")),
    ];
    let (outcome, recorder) = run(&sim_engine(), graph(modules, cables)).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    let events = names(&recorder);
    let last_response = events
        .iter()
        .rposition(|name| name == "task.agent_task.reprompt_response")
        .unwrap();
    let after = recorder
        .events()
        .iter()
        .position(|record| matches!(&record.event, RunEvent::ModuleActivated { module_id, .. } if module_id == "after"))
        .unwrap();
    assert!(
        after > last_response,
        "signal_out fired before the last re-prompt finished"
    );
    let record = recorder.activation("task", 1).unwrap();
    assert!(matches!(
        record.outputs.get("signal_out"),
        Some(PortValue::Signal { .. })
    ));
    match record.outputs.get("receipt_out") {
        Some(PortValue::Receipt(receipt)) => {
            assert_eq!(receipt.re_prompt_count, 2);
            assert!(receipt.tokens_out > 0 && receipt.tokens_in > 0);
            assert!(receipt.simulated);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn continue_session_sees_the_upstream_conversation() {
    let modules = vec![
        module("in", "step.input", json!({})),
        module("first", "step.agent_task", task(json!(["Review"]))),
        module(
            "second",
            "step.agent_task",
            json!({"instruction": "Now summarise", "agent_config": {"provider": "sim"}, "session_mode": "continue"}),
        ),
    ];
    let cables = vec![
        cable("c1", ("in", "data_out"), ("first", "data_in")),
        cable("c2", ("first", "data_out"), ("second", "data_in")),
    ];
    let (outcome, recorder) = run(&sim_engine(), graph(modules, cables)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let first = recorder.activation("first", 1).unwrap();
    let second = recorder.activation("second", 1).unwrap();
    // The continued session starts with the whole upstream conversation,
    // re-prompt included, then adds one turn (not the upstream output again).
    assert_eq!(
        &second.transcript[..first.transcript.len()],
        &first.transcript[..]
    );
    assert_eq!(second.transcript.len(), first.transcript.len() + 2);
    assert_eq!(
        second.transcript[first.transcript.len()].text,
        "Now summarise"
    );
    assert!(
        second.responses[0]
            .text
            .starts_with("Simulated reply 3 (sim-1, 5 messages in session)")
    );
}

/// task ⇄ review gate, fed by input; the gate revises when told to.
fn revision_loop(gate_instruction: &str, max_rounds: u32, persist: bool) -> Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "task",
                "step.agent_task",
                json!({"instruction": "Draft", "agent_config": {"provider": "sim"}, "re_prompts": ["Polish"], "session_persist": persist}),
            ),
            module(
                "gate",
                "step.agent_review_gate",
                json!({"instruction": gate_instruction, "agent_config": {"provider": "sim"}, "max_rounds": max_rounds}),
            ),
            module("out", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("task", "data_in")),
            cable("c2", ("task", "data_out"), ("gate", "data_in")),
            cable("c3", ("gate", "revise_out"), ("task", "context_in")),
            cable("c4", ("gate", "approved_out"), ("out", "data_in")),
        ],
    )
}

#[tokio::test]
async fn an_approving_gate_passes_the_work_on() {
    let (outcome, recorder) = run(&sim_engine(), revision_loop("Review", 3, false)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let gate = recorder.activation("gate", 1).unwrap();
    assert_eq!(gate.named_outputs["decision"], "approve");
    let task_output = match recorder
        .activation("task", 1)
        .unwrap()
        .outputs
        .get("data_out")
    {
        Some(PortValue::Bundle(bundle)) => bundle.as_text(),
        other => panic!("{other:?}"),
    };
    match recorder
        .activation("out", 1)
        .unwrap()
        .outputs
        .get("result_1")
    {
        Some(PortValue::Bundle(bundle)) => assert_eq!(bundle.as_text(), task_output),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_revision_loop_goes_round_with_feedback_in_the_persisted_session() {
    let (outcome, recorder) =
        run(&sim_engine(), revision_loop("Review [sim:revise]", 3, true)).await;
    // Out of rounds, with nothing wired to take it: the run fails there.
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(
        outcome
            .error
            .as_deref()
            .unwrap()
            .contains("\"gate\" ended with running out of rounds (exhausted_out)"),
        "{:?}",
        outcome.error
    );
    // Three rounds: the task ran three times, the gate three times.
    assert!(recorder.activation("task", 3).is_some());
    assert!(recorder.activation("task", 4).is_none());
    let last = recorder.activation("gate", 3).unwrap();
    assert_eq!(last.status, ActivationStatus::Completed);
    assert!(last.outputs.contains_key("exhausted_out"));
    assert!(!last.outputs.contains_key("revise_out"));
    // The second round continues the task's session: the feedback arrives as
    // the only new input, and the re-prompt runs again.
    let second = recorder.activation("task", 2).unwrap();
    let first = recorder.activation("task", 1).unwrap();
    assert_eq!(
        &second.transcript[..first.transcript.len()],
        &first.transcript[..]
    );
    let new_turn = &second.transcript[first.transcript.len()].text;
    assert!(
        new_turn.starts_with("## Context from \"gate\"\n\nSimulated feedback"),
        "{new_turn}"
    );
    assert!(
        !new_turn.contains("## Input from"),
        "the latched input is already in the session"
    );
    assert_eq!(second.responses.len(), 2);
}

#[tokio::test]
async fn a_revision_loop_hitting_the_activation_limit_fails_the_run() {
    let engine = engine_with(
        registry_with("sim", Arc::new(SimProvider::default())),
        EngineSettings {
            max_activations: 20,
            ..EngineSettings::default()
        },
    );
    let (outcome, recorder) = run(&engine, revision_loop("Review [sim:revise]", 1000, false)).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap();
    assert!(
        error.starts_with("step_transition_limit_exceeded"),
        "{error}"
    );
    // It names the loop: the two modules that went round, not the input.
    assert!(
        error.ends_with("the loop went through \"task\" (10 times), \"gate\" (9 times)"),
        "{error}"
    );
    assert_eq!(outcome.activations, 20);
    let last = recorder.events().last().unwrap().clone();
    assert_eq!(
        last.event,
        RunEvent::RunFailed {
            status: RunStatus::Failed,
            error: error.clone()
        }
    );
}

/// Counts how many calls are in flight at once; each call takes 50 ms.
struct Overlap {
    current: AtomicUsize,
    most: AtomicUsize,
}

impl Provider for Overlap {
    fn complete<'a>(
        &'a self,
        _request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let now = self.current.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(50)).await;
            self.current.fetch_sub(1, Ordering::SeqCst);
            on_delta("done");
            Ok(ChatResponse {
                text: "done".to_owned(),
                usage: Usage::default(),
                finish_reason: Some("stop".to_owned()),
                tool_calls: Vec::new(),
                cost: None,
            })
        })
    }
}

#[tokio::test]
async fn fan_out_runs_branches_concurrently_and_a_join_waits_for_all() {
    let probe = Arc::new(Overlap {
        current: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
    });
    let engine = engine_with(
        registry_with("probe", probe.clone()),
        EngineSettings::default(),
    );
    let branch = |id: &str| {
        module(
            id,
            "step.agent_task",
            json!({"instruction": id, "agent_config": {"provider": "probe"}}),
        )
    };
    let modules = vec![
        module("in", "step.input", json!({})),
        branch("a"),
        branch("b"),
        branch("c"),
        module(
            "join",
            "step.agent_task",
            json!({"instruction": "Combine", "agent_config": {"provider": "probe"}}),
        ),
    ];
    let mut cables = Vec::new();
    for (index, id) in ["a", "b", "c"].iter().enumerate() {
        cables.push(cable(
            &format!("f{index}"),
            ("in", "data_out"),
            (id, "data_in"),
        ));
        cables.push(cable(
            &format!("j{index}"),
            (id, "data_out"),
            ("join", "data_in"),
        ));
    }
    let (outcome, recorder) = run(&engine, graph(modules, cables)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(
        probe.most.load(Ordering::SeqCst),
        3,
        "the three branches ran at once"
    );
    // The join ran once, after all three, with all three inputs.
    assert!(recorder.activation("join", 2).is_none());
    let events = recorder.events();
    let position = |wanted: &str, module: &str| {
        events
            .iter()
            .position(|record| match &record.event {
                RunEvent::ModuleActivated { module_id, .. } if wanted == "activated" => {
                    module_id == module
                }
                RunEvent::ModuleCompleted { module_id, .. } if wanted == "completed" => {
                    module_id == module
                }
                _ => false,
            })
            .unwrap()
    };
    for branch in ["a", "b", "c"] {
        assert!(position("completed", branch) < position("activated", "join"));
    }
    let join_prompt = &recorder.activation("join", 1).unwrap().transcript[0].text;
    for branch in ["a", "b", "c"] {
        assert!(
            join_prompt.contains(&format!("## Input from \"{branch}\"")),
            "{join_prompt}"
        );
    }
}

/// Streams a little, then waits forever (until dropped).
struct Hangs;

impl Provider for Hangs {
    fn complete<'a>(
        &'a self,
        _request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            on_delta("partial answer");
            std::future::pending::<()>().await;
            unreachable!()
        })
    }
}

#[tokio::test]
async fn cancel_stops_in_flight_calls_and_keeps_what_was_produced() {
    let mut registry = registry_with("sim", Arc::new(SimProvider::default()));
    registry.add(
        ProviderInfo {
            id: "hangs".to_owned(),
            label: "hangs".to_owned(),
            models: vec!["x".to_owned()],
            simulated: true,
            prices: Default::default(),
            tool_calling: true,
        },
        Arc::new(Hangs),
    );
    let engine = engine_with(registry, EngineSettings::default());
    let modules = vec![
        module("in", "step.input", json!({})),
        module("first", "step.agent_task", task(json!([]))),
        module(
            "stuck",
            "step.agent_task",
            json!({"instruction": "Wait", "agent_config": {"provider": "hangs"}}),
        ),
    ];
    let cables = vec![
        cable("c1", ("in", "data_out"), ("first", "data_in")),
        cable("c2", ("first", "data_out"), ("stuck", "data_in")),
    ];
    let recorder = Arc::new(MemoryRecorder::default());
    let cancel = CancellationToken::new();
    let running = {
        let engine = engine.clone();
        let recorder = Arc::clone(&recorder);
        let cancel = cancel.clone();
        tokio::spawn(async move {
            execute(
                &engine,
                RunSpec {
                    run_id: "r_cancel".to_owned(),
                    graph: graph(modules, cables),
                    input: RunInput::default(),
                    budget_usd: None,
                },
                recorder,
                cancel,
            )
            .await
        })
    };
    // Wait until the stuck module has streamed its partial answer.
    for _ in 0..200 {
        if recorder
            .events()
            .iter()
            .any(|record| matches!(&record.event, RunEvent::ModuleOutputDelta { module_id, .. } if module_id == "stuck"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cancel.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert_eq!(
        recorder.events().last().unwrap().event,
        RunEvent::RunCancelled {
            status: RunStatus::Cancelled
        }
    );
    // What was produced is kept: the finished module and the partial text.
    assert_eq!(
        recorder.activation("first", 1).unwrap().status,
        ActivationStatus::Completed
    );
    let stuck = recorder.activation("stuck", 1).unwrap();
    assert_eq!(stuck.status, ActivationStatus::Cancelled);
    assert_eq!(stuck.responses[0].text, "partial answer");
    assert!(!stuck.responses[0].complete);
    assert_eq!(
        recorder.status.lock().unwrap().clone().unwrap().0,
        RunStatus::Cancelled
    );
}

#[tokio::test]
async fn a_failing_module_fails_the_run_unless_its_error_out_is_wired() {
    let failing = json!({"instruction": "Do it [sim:fail]", "agent_config": {"provider": "sim"}});
    let (outcome, recorder) = run(&sim_engine(), chain_graph(failing.clone())).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(outcome.error.unwrap().contains("told to fail"));
    assert!(recorder.activation("out", 1).is_none());

    let modules = vec![
        module("in", "step.input", json!({})),
        module("task", "step.agent_task", failing),
        module("handler", "step.output", json!({})),
    ];
    let cables = vec![
        cable("c1", ("in", "data_out"), ("task", "data_in")),
        cable("c2", ("task", "error_out"), ("handler", "data_in")),
    ];
    let (outcome, recorder) = run(&sim_engine(), graph(modules, cables)).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    match recorder
        .activation("handler", 1)
        .unwrap()
        .outputs
        .get("result_1")
    {
        Some(PortValue::Bundle(bundle)) => assert!(bundle.as_text().contains("told to fail")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn templates_are_filled_from_the_run_state() {
    let modules = vec![
        module("in", "step.input", json!({})),
        module("Draft", "step.agent_task", task(json!([]))),
        module(
            "Echo",
            "step.agent_task",
            json!({"instruction": "Topic: {{ input }}. Run {{ run_id }}. Draft had {{ Draft.re_prompt_count }} re-prompts.", "agent_config": {"provider": "sim"}}),
        ),
    ];
    let cables = vec![
        cable("c1", ("in", "data_out"), ("Draft", "data_in")),
        cable("c2", ("Draft", "signal_out"), ("Echo", "signal_in")),
    ];
    let (outcome, recorder) = run(&sim_engine(), graph(modules, cables)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(
        recorder.activation("Echo", 1).unwrap().transcript[0].text,
        "Topic: the moon. Run r_test. Draft had 0 re-prompts."
    );
}

#[tokio::test]
async fn judges_claims_panels_and_transforms_run_on_the_simulator() {
    let modules = vec![
        module("in", "step.input", json!({})),
        module(
            "claims",
            "step.claim_extractor",
            json!({"agent_config": {"provider": "sim"}}),
        ),
        module(
            "judge",
            "step.judge",
            json!({"agent_config": {"provider": "sim"}, "rubric": [{"name": "Accuracy", "weight": 2.0}, {"name": "Clarity", "weight": 1.0}], "scale_max": 5}),
        ),
        module(
            "panel",
            "step.panel",
            json!({"instruction": "Is it true?", "agent_config": {"provider": "sim"}, "rounds": 2, "personas": [{"name": "Pro", "perspective": "For"}, {"name": "Con", "perspective": "Against"}]}),
        ),
        module(
            "shorter",
            "step.transform",
            json!({"instruction": "Shorten", "agent_config": {"provider": "sim"}}),
        ),
    ];
    let cables = vec![
        cable("c1", ("in", "data_out"), ("claims", "data_in")),
        cable("c2", ("in", "data_out"), ("judge", "target_in")),
        cable("c3", ("in", "data_out"), ("panel", "data_in")),
        cable("c4", ("in", "data_out"), ("shorter", "data_in")),
    ];
    let recorder = Arc::new(MemoryRecorder::default());
    let outcome = execute(
        &sim_engine(),
        RunSpec {
            run_id: "r_kinds".to_owned(),
            graph: graph(modules, cables),
            input: RunInput {
                text: "The moon raises tides twice a day. It is made of rock and dust.".to_owned(),
                files: vec![],
            },
            budget_usd: None,
        },
        Arc::clone(&recorder),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    match recorder
        .activation("claims", 1)
        .unwrap()
        .outputs
        .get("data_out")
    {
        Some(PortValue::Bundle(bundle)) => assert!(
            bundle
                .content
                .as_array()
                .is_some_and(|claims| !claims.is_empty()),
            "{:?}",
            bundle.content
        ),
        other => panic!("{other:?}"),
    }
    match recorder
        .activation("judge", 1)
        .unwrap()
        .outputs
        .get("scores_out")
    {
        Some(PortValue::Bundle(bundle)) => {
            let scores = bundle.content["scores"].as_array().unwrap();
            assert_eq!(scores.len(), 2);
            assert!(
                scores
                    .iter()
                    .all(|entry| entry["score"].as_u64().unwrap() <= 5)
            );
            assert!(bundle.content["weighted_score"].is_number());
        }
        other => panic!("{other:?}"),
    }
    let panel = recorder.activation("panel", 1).unwrap();
    assert_eq!(
        panel.responses.len(),
        5,
        "2 personas × 2 rounds + conclusion"
    );
    assert_eq!(panel.responses[4].label, "Conclusion");
    assert!(
        recorder
            .activation("shorter", 1)
            .unwrap()
            .outputs
            .contains_key("data_out")
    );
}

#[tokio::test]
async fn commands_are_refused_unless_enabled_and_route_pass_and_fail() {
    let command_graph = |command: &str| {
        graph(
            vec![
                module("in", "step.input", json!({})),
                module("check", "step.command", json!({"command": command})),
                module("passed", "step.output", json!({})),
                module("failed", "step.output", json!({})),
            ],
            vec![
                cable("c1", ("in", "data_out"), ("check", "data_in")),
                cable("c2", ("check", "pass_out"), ("passed", "data_in")),
                cable("c3", ("check", "fail_out"), ("failed", "data_in")),
            ],
        )
    };
    let (outcome, _) = run(&sim_engine(), command_graph("true")).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(outcome.error.unwrap().contains("disabled"));

    let folder = std::env::temp_dir().join(format!("patchbay-commands-{}", std::process::id()));
    let engine = engine_with(
        registry_with("sim", Arc::new(SimProvider::default())),
        EngineSettings {
            commands_enabled: true,
            workspace_root: folder.clone(),
            sandbox: engine::sandbox::Sandbox::detect("bwrap"),
            ..EngineSettings::default()
        },
    );
    let (outcome, recorder) = run(&engine, command_graph("tr a-z A-Z")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    match recorder
        .activation("passed", 1)
        .unwrap()
        .outputs
        .get("result_1")
    {
        Some(PortValue::Bundle(bundle)) => assert_eq!(bundle.as_text(), "THE MOON"),
        other => panic!("{other:?}"),
    }
    assert!(recorder.activation("failed", 1).is_none());
    let (_, recorder) = run(&engine, command_graph("echo broken >&2; exit 3")).await;
    assert!(recorder.activation("passed", 1).is_none());
    match recorder
        .activation("failed", 1)
        .unwrap()
        .outputs
        .get("result_1")
    {
        Some(PortValue::Bundle(bundle)) => assert!(bundle.as_text().contains("broken")),
        other => panic!("{other:?}"),
    }
    // With nothing wired to fail_out, a failed check fails the run.
    let mut unwired = command_graph("exit 3");
    unwired.cables.retain(|cable| cable.id != "c3");
    let (outcome, _) = run(&engine, unwired).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap();
    assert!(
        error.contains("\"check\" ended with a failed check (fail_out)"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(folder);
}

/// Files by id, for attachment tests.
struct Files;

impl engine::prompt::AttachmentSource for Files {
    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Option<engine::prompt::AttachmentContent>> + Send + 'a,
        >,
    > {
        Box::pin(async move {
            (id == "a_notes").then(|| engine::prompt::AttachmentContent {
                name: "notes.md".to_owned(),
                media_type: "text/markdown".to_owned(),
                bytes: b"Budget is 40k.".to_vec(),
            })
        })
    }
}

#[tokio::test]
async fn a_re_prompts_attachment_goes_into_that_turn_only() {
    let engine = engine_with(
        registry_with("sim", Arc::new(SimProvider::default())),
        EngineSettings {
            attachments: Some(Arc::new(Files)),
            ..EngineSettings::default()
        },
    );
    let config = json!({
        "instruction": "Draft the plan",
        "agent_config": {"provider": "sim"},
        "re_prompts": [
            "Review it",
            {"text": "Check it against the notes", "attachments": [{"id": "a_notes", "name": "notes.md", "media_type": "text/markdown", "size_bytes": 14}]},
            "Finalize"
        ]
    });
    let (outcome, recorder) = run(&engine, chain_graph(config)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let user_turns: Vec<String> = recorder
        .activation("task", 1)
        .unwrap()
        .transcript
        .into_iter()
        .filter(|entry| entry.role == TranscriptRole::User)
        .map(|entry| entry.text)
        .collect();
    assert_eq!(
        user_turns[2],
        "Check it against the notes\nAttached file `notes.md`:\n```\nBudget is 40k.\n```"
    );
    for (index, turn) in user_turns
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != 2)
    {
        assert!(
            !turn.contains("Budget is 40k"),
            "turn {index} carries the attachment"
        );
    }

    // An attachment the server does not have fails the module, clearly.
    let missing = json!({"instruction": "x", "agent_config": {"provider": "sim"},
        "re_prompts": [{"text": "y", "attachments": [{"id": "a_gone", "name": "gone.pdf"}]}]});
    let (outcome, _) = run(&engine, chain_graph(missing)).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(
        outcome
            .error
            .unwrap()
            .contains("attachment \"gone.pdf\" is not on this server")
    );
}

#[test]
fn roles_serialise_in_lowercase() {
    assert_eq!(
        serde_json::to_value(Role::Assistant).unwrap(),
        json!("assistant")
    );
}

#[tokio::test]
async fn a_failure_outcome_with_no_cable_fails_the_run_and_names_the_module_and_the_port() {
    let unwired_revision = graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "gate",
                "step.agent_review_gate",
                json!({"instruction": "Review [sim:revise]", "agent_config": {"provider": "sim"}, "max_rounds": 3}),
            ),
            module("out", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("gate", "data_in")),
            cable("c2", ("gate", "approved_out"), ("out", "data_in")),
        ],
    );
    let (outcome, recorder) = run(&sim_engine(), unwired_revision).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap();
    assert!(error.contains("\"gate\""), "{error}");
    assert!(error.contains("revise_out"), "{error}");
    assert!(error.contains("request for revision"), "{error}");
    assert_eq!(
        recorder.activation("gate", 1).unwrap().status,
        wire::ActivationStatus::Completed
    );
    assert!(recorder.activation("out", 1).is_none());

    // A success outcome with no cable only ends its branch.
    let unwired_approval = graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "gate",
                "step.agent_review_gate",
                json!({"instruction": "Review", "agent_config": {"provider": "sim"}}),
            ),
        ],
        vec![cable("c1", ("in", "data_out"), ("gate", "data_in"))],
    );
    let (outcome, _) = run(&sim_engine(), unwired_approval).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
}
