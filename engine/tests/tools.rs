//! Agent tasks that call tools (PRODUCT §3.17), on the simulated provider
//! and the built-in MCP server (in the binary, over an in-process pipe, as
//! any server is spoken to): a call and its result in one session, several
//! calls at once, locked arguments, what a tool gave steering a cable, the
//! limit of calls failing the activation onto `error_out`, a re-prompt
//! offering none, events, record and receipt.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use engine::RunStatus;
use engine::recorder::MemoryRecorder;
use serde_json::{Value, json};
use support::{cable, graph, module, run, sim_engine};
use wire::activation::{ToolOutcome, TranscriptRole};
use wire::event::RunEvent;

fn lookup_task(config: Value) -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            module("ask", "step.agent_task", config),
            module("out", "step.output", json!({})),
            module("failed", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("ask", "data_in")),
            cable("c2", ("ask", "data_out"), ("out", "data_in")),
            cable("c3", ("ask", "error_out"), ("failed", "data_in")),
        ],
    )
}

fn record(recorder: &MemoryRecorder, module: &str) -> wire::ActivationRecord {
    recorder.activation(module, 1).unwrap()
}

#[tokio::test]
async fn the_model_calls_a_tool_and_answers_with_its_result_in_the_same_session() {
    let (outcome, recorder) = run(
        &sim_engine(),
        lookup_task(json!({
            "instruction": "How often do tides come?\n[sim:tool lookup {\"key\": \"tides\"}]",
            "agent_config": {"provider": "sim", "model": "sim-1"},
            "tools": [{"server": "patchbay", "tool": "lookup"}]
        })),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let ask = record(&recorder, "ask");
    assert_eq!(ask.tool_calls.len(), 1, "{:?}", ask.tool_calls);
    let call = &ask.tool_calls[0];
    assert_eq!(
        (call.server.as_str(), call.tool.as_str()),
        ("patchbay", "lookup")
    );
    assert_eq!(call.outcome, ToolOutcome::Ok);
    assert_eq!(call.result["found"], true, "{}", call.result);
    assert!(
        call.result["answer"]
            .as_str()
            .unwrap()
            .contains("two high and two low tides")
    );
    // One response, two model calls: the call, then the answer.
    assert_eq!(ask.responses.len(), 1);
    assert_eq!(ask.responses[0].calls, 2);
    assert_eq!(ask.model_calls(), 2);
    assert!(
        ask.responses[0].text.contains("The tools said: lookup →"),
        "{}",
        ask.responses[0].text
    );
    // Every call paired with its result in the transcript.
    let roles: Vec<TranscriptRole> = ask.transcript.iter().map(|entry| entry.role).collect();
    assert_eq!(
        roles,
        [
            TranscriptRole::User,
            TranscriptRole::ToolCall,
            TranscriptRole::ToolResult,
            TranscriptRole::Assistant
        ]
    );
    // The receipt counts calls per tool.
    let receipt = ask.receipt.unwrap();
    assert_eq!(receipt.tools.len(), 1);
    assert_eq!(
        (receipt.tools[0].tool.as_str(), receipt.tools[0].calls),
        ("lookup", 1)
    );
    // Events: the call, then its result, with the module's id.
    let events: Vec<RunEvent> = recorder
        .events()
        .into_iter()
        .map(|record| record.event)
        .collect();
    let call_at = events
        .iter()
        .position(|event| matches!(event, RunEvent::ModuleToolCall { tool, arguments, .. } if tool == "lookup" && arguments["key"] == "tides"))
        .unwrap();
    let result_at = events
        .iter()
        .position(|event| matches!(event, RunEvent::ModuleToolResult { ok: true, summary, .. } if summary.contains("tides")))
        .unwrap();
    assert!(call_at < result_at);
    // What it gave is in the run state, for templates downstream.
    let state = recorder.state();
    assert!(
        state["ask.tools.lookup"].contains("\"found\":true"),
        "{state:?}"
    );
}

#[tokio::test]
async fn several_calls_at_once_each_get_their_result_and_locked_arguments_are_never_the_models() {
    let (outcome, recorder) = run(
        &sim_engine(),
        lookup_task(json!({
            "instruction": "Work it out.\n[sim:tool add {\"expression\": \"1+1\"}]\n[sim:tool policy {\"key\": \"made up by the model\"}]",
            "agent_config": {"provider": "sim", "model": "sim-1"},
            "tools": [
                {"server": "patchbay", "tool": "calculate", "as": "add"},
                {"server": "patchbay", "tool": "lookup", "as": "policy", "arguments": {"key": "refund-policy"}}
            ]
        })),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let ask = record(&recorder, "ask");
    let calls = support::tool_outcomes(&ask);
    assert_eq!(
        calls,
        [("add", ToolOutcome::Ok), ("policy", ToolOutcome::Ok)]
    );
    assert_eq!(ask.tool_calls[0].result["result"], 2.0);
    // The locked key was used, whatever the model wrote, and is shown as
    // locked in the record and the events.
    assert_eq!(ask.tool_calls[1].result["decision"], "approved");
    assert_eq!(ask.tool_calls[1].arguments["key"], graph::tools::LOCKED);
    let asked: String = ask
        .transcript
        .iter()
        .filter(|entry| entry.role == TranscriptRole::ToolCall)
        .map(|entry| entry.text.clone())
        .collect();
    assert!(
        !asked.contains("refund-policy") && asked.contains("🔒 locked"),
        "{asked}"
    );
    let events = recorder.events();
    assert!(events.iter().all(|record| !matches!(&record.event, RunEvent::ModuleToolCall { arguments, .. } if arguments.to_string().contains("refund-policy"))));
    // The seed's routing path reads what the tool gave.
    let state = recorder.state();
    assert!(state["ask.tools.policy"].contains("approved"));
}

#[tokio::test]
async fn a_tool_result_steers_a_cable_by_the_seeds_path_and_a_tool_never_called_takes_the_catch_all()
 {
    let routed = |instruction: &str| {
        graph(
            vec![
                module("in", "step.input", json!({})),
                module(
                    "ask",
                    "step.agent_task",
                    json!({
                        "instruction": instruction,
                        "agent_config": {"provider": "sim", "model": "sim-1"},
                        "tools": [{"server": "patchbay", "tool": "lookup", "as": "approval"}]
                    }),
                ),
                module("approved", "step.output", json!({})),
                module("other", "step.output", json!({})),
            ],
            vec![
                cable("c1", ("in", "data_out"), ("ask", "data_in")),
                json!({"id": "c2", "from": {"module": "ask", "port": "data_out"}, "to": {"module": "approved", "port": "data_in"},
                       "condition": "get('$.tools.approval.outputs.latest.decision') == 'approved'"}),
                cable("c3", ("ask", "data_out"), ("other", "data_in")),
            ],
        )
    };
    let reached = |recorder: &MemoryRecorder| -> Vec<String> {
        ["approved", "other"]
            .into_iter()
            .filter(|module| recorder.activation(module, 1).is_some())
            .map(str::to_owned)
            .collect()
    };
    let (_, called) = run(
        &sim_engine(),
        routed("Check it.\n[sim:tool approval {\"key\": \"refund-policy\"}]"),
    )
    .await;
    assert_eq!(reached(&called), ["approved"]);
    let (_, never) = run(&sim_engine(), routed("Check it, no tool.")).await;
    assert_eq!(reached(&never), ["other"]);
}

#[tokio::test]
async fn past_max_tool_calls_the_activation_fails_onto_error_out_never_as_a_success() {
    let (outcome, recorder) = run(
        &sim_engine(),
        lookup_task(json!({
            "instruction": "Loop.\n[sim:tool-forever lookup {\"key\": \"tides\"}]",
            "agent_config": {"provider": "sim", "model": "sim-1"},
            "tools": [{"server": "patchbay", "tool": "lookup"}],
            "max_tool_calls": 3
        })),
    )
    .await;
    assert_eq!(
        outcome.status,
        RunStatus::Completed,
        "error_out takes it: {:?}",
        outcome.error
    );
    assert!(recorder.activation("out", 1).is_none(), "not a success");
    let failed = record(&recorder, "failed");
    assert_eq!(failed.status, wire::ActivationStatus::Completed);
    let ask = record(&recorder, "ask");
    assert!(
        ask.error.as_deref().unwrap().starts_with(
            "tools.limit_reached: \"ask\" asked for 4 tool calls, more than it may make (3"
        ),
        "{:?}",
        ask.error
    );
    // Three made, the fourth paired with its not being made.
    let outcomes: Vec<ToolOutcome> = ask.tool_calls.iter().map(|call| call.outcome).collect();
    assert_eq!(
        outcomes,
        [
            ToolOutcome::Ok,
            ToolOutcome::Ok,
            ToolOutcome::Ok,
            ToolOutcome::NotRun
        ]
    );
    let calls = ask
        .transcript
        .iter()
        .filter(|entry| entry.role == TranscriptRole::ToolCall)
        .count();
    let results = ask
        .transcript
        .iter()
        .filter(|entry| entry.role == TranscriptRole::ToolResult)
        .count();
    assert_eq!((calls, results), (4, 4));
    // The live view hears of the fourth too: announced, and not made.
    let events = recorder.events();
    let announced = events
        .iter()
        .filter(|record| matches!(record.event, RunEvent::ModuleToolCall { .. }))
        .count();
    let ended: Vec<bool> = events
        .iter()
        .filter_map(|record| match &record.event {
            RunEvent::ModuleToolResult { ok, .. } => Some(*ok),
            _ => None,
        })
        .collect();
    assert_eq!(announced, 4);
    assert_eq!(ended, [true, true, true, false]);
}

#[tokio::test]
async fn a_re_prompt_that_allows_no_tools_offers_none_and_one_of_an_unknown_server_is_refused() {
    let (outcome, recorder) = run(
        &sim_engine(),
        lookup_task(json!({
            "instruction": "First.\n[sim:tool lookup {\"key\": \"tides\"}]",
            "re_prompts": [{"text": "Again.\n[sim:tool lookup {\"key\": \"everest\"}]", "allowed_tools": []}],
            "agent_config": {"provider": "sim", "model": "sim-1"},
            "tools": [{"server": "patchbay", "tool": "lookup"}]
        })),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let ask = record(&recorder, "ask");
    assert_eq!(ask.tool_calls.len(), 1, "the re-prompt offered no tool");
    let (_, refused) = run(
        &sim_engine(),
        lookup_task(json!({
            "instruction": "Go.",
            "agent_config": {"provider": "sim", "model": "sim-1"},
            "tools": [{"server": "elsewhere", "tool": "lookup"}]
        })),
    )
    .await;
    let ask = record(&refused, "ask");
    assert_eq!(
        ask.error.as_deref(),
        Some(
            "\"ask\" uses tools of MCP server \"elsewhere\", which this server does not have (the operator's [[mcp_servers]])"
        )
    );
}

#[tokio::test]
async fn a_run_stopped_after_a_tool_answered_resumes_without_calling_it_or_asking_for_it_again() {
    use engine::{RunControl, RunInput, RunSpec, execute_controlled};
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use support::{Counting, engine_with, registry_with};

    let spec = || RunSpec {
        run_id: "r_tools_resume".to_owned(),
        graph: lookup_task(json!({
            "instruction": "How often do tides come?\n[sim:tool lookup {\"key\": \"tides\"}]",
            "agent_config": {"provider": "sim", "model": "sim-1"},
            "tools": [{"server": "patchbay", "tool": "lookup"}]
        })),
        input: RunInput {
            text: "the moon".to_owned(),
            files: Vec::new(),
        },
        budget_usd: None,
    };
    let settings = || engine::EngineSettings {
        stop_grace: std::time::Duration::ZERO,
        ..engine::EngineSettings::default()
    };
    // The model's second call (after the tool's result) never comes back,
    // and the run is stopped there.
    let hanging = Counting::new(Some(2));
    let engine = engine_with(registry_with("sim", hanging.clone()), settings());
    let recorder = Arc::new(MemoryRecorder::default());
    let stop = tokio_util::sync::CancellationToken::new();
    let running = {
        let recorder = Arc::clone(&recorder);
        let control = RunControl {
            stop: stop.clone(),
            ..RunControl::default()
        };
        tokio::spawn(async move { execute_controlled(&engine, spec(), recorder, control).await })
    };
    while hanging.calls.load(Ordering::SeqCst) < 2 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    stop.cancel();
    assert_eq!(running.await.unwrap().status, RunStatus::Interrupted);
    let kept = record(&recorder, "ask");
    assert_eq!(kept.tool_calls.len(), 1);
    assert_eq!(kept.tool_calls[0].outcome, ToolOutcome::Ok);
    assert!(!kept.responses[0].complete);

    let fresh = Counting::new(None);
    let engine = engine_with(registry_with("sim", fresh.clone()), settings());
    let outcome = execute_controlled(
        &engine,
        spec(),
        Arc::clone(&recorder),
        RunControl {
            resume: Some(recorder.resume()),
            ..RunControl::default()
        },
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    // One model call: the one after the tool's result, with the question,
    // the call and its result (never the first call again).
    assert_eq!(fresh.calls.load(Ordering::SeqCst), 1);
    assert_eq!(*fresh.requests.lock().unwrap(), [3]);
    let tool_calls = recorder
        .events()
        .into_iter()
        .filter(|record| matches!(record.event, RunEvent::ModuleToolCall { .. }))
        .count();
    assert_eq!(tool_calls, 1, "the tool was called once in all");
    let ask = record(&recorder, "ask");
    assert_eq!(ask.tool_calls.len(), 1);
    assert_eq!(ask.responses.len(), 1);
    assert_eq!(ask.responses[0].calls, 2);
    assert!(ask.responses[0].complete);
    let roles: Vec<TranscriptRole> = ask.transcript.iter().map(|entry| entry.role).collect();
    assert_eq!(
        roles,
        [
            TranscriptRole::User,
            TranscriptRole::ToolCall,
            TranscriptRole::ToolResult,
            TranscriptRole::Assistant
        ]
    );
    assert!(recorder.state()["ask.tools.lookup"].contains("\"found\":true"));
}
