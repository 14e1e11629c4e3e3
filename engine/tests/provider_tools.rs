//! Tool calls on the real providers' wires (PRODUCT §3.17), against a
//! loopback server that replays them: OpenAI's streamed `tool_calls`
//! deltas (two calls in one reply, their arguments in pieces, told apart
//! by index) answered with `role: tool` messages, and Anthropic's
//! `tool_use` blocks with `input_json_delta` answered with `tool_result`
//! blocks. The tools are the built-in server's; a locked argument never
//! reaches the provider, in the schema or anywhere else.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::post;
use engine::provider::anthropic::AnthropicProvider;
use engine::provider::openai::OpenAiProvider;
use engine::provider::{Provider, ProviderInfo, ProviderRegistry};
use engine::recorder::MemoryRecorder;
use engine::{Engine, EngineSettings, RunInput, RunSpec, execute};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wire::activation::{ToolOutcome, TranscriptRole};
use wire::event::RunStatus;

/// The locked argument's value, which the provider must never see.
const LOCKED_KEY: &str = "refund-policy";

#[derive(Default)]
struct Fixture {
    requests: Mutex<Vec<Value>>,
}

impl Fixture {
    /// Keeps `body`; says whether it is the first request.
    fn first(&self, body: &str) -> bool {
        let mut requests = self.requests.lock().unwrap();
        requests.push(serde_json::from_str(body).unwrap());
        requests.len() == 1
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

/// First: a reply calling `add` and `policy` at once, in pieces; then an
/// answer.
async fn openai(State(fixture): State<Arc<Fixture>>, body: String) -> Response {
    let first = fixture.first(&body);
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "fixture-model",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let mut stream = chunk(json!({"role": "assistant", "content": null}), Value::Null);
    if first {
        for delta in [
            json!({"tool_calls": [{"index": 0, "id": "call_add", "type": "function", "function": {"name": "add", "arguments": ""}}]}),
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"expression\": "}}]}),
            json!({"tool_calls": [{"index": 1, "id": "call_policy", "type": "function", "function": {"name": "policy", "arguments": "{}"}}]}),
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"6*7\"}"}}]}),
        ] {
            stream.push_str(&chunk(delta, Value::Null));
        }
        stream.push_str(&chunk(json!({}), json!("tool_calls")));
    } else {
        stream.push_str(&chunk(
            json!({"content": "42, and refunds are approved."}),
            Value::Null,
        ));
        stream.push_str(&chunk(json!({}), json!("stop")));
    }
    stream.push_str("data: [DONE]\n\n");
    support::loopback::sse(stream)
}

async fn anthropic(State(fixture): State<Arc<Fixture>>, body: String) -> Response {
    let first = fixture.first(&body);
    let event = support::loopback::named_event;
    let mut stream = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
               "model": "claude-fixture", "stop_reason": null, "usage": {"input_tokens": 20, "output_tokens": 1}}}),
    );
    let mut block = |index: u32, start: Value, deltas: &[Value]| {
        stream.push_str(&event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            stream.push_str(&event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        stream.push_str(&event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    };
    let stop_reason = if first {
        block(
            0,
            json!({"type": "text", "text": ""}),
            &[json!({"type": "text_delta", "text": "Let me check both."})],
        );
        block(
            1,
            json!({"type": "tool_use", "id": "toolu_add", "name": "add", "input": {}}),
            &[
                json!({"type": "input_json_delta", "partial_json": "{\"expression\""}),
                json!({"type": "input_json_delta", "partial_json": ": \"6*7\"}"}),
            ],
        );
        block(
            2,
            json!({"type": "tool_use", "id": "toolu_policy", "name": "policy", "input": {}}),
            &[json!({"type": "input_json_delta", "partial_json": ""})],
        );
        "tool_use"
    } else {
        block(
            0,
            json!({"type": "text", "text": ""}),
            &[json!({"type": "text_delta", "text": "42, and refunds are approved."})],
        );
        "end_turn"
    };
    stream.push_str(&event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 9}})));
    stream.push_str(&event("message_stop", json!({"type": "message_stop"})));
    support::loopback::sse(stream)
}

async fn serve(fixture: Arc<Fixture>) -> String {
    let router = Router::new()
        .route("/v1/chat/completions", post(openai))
        .route("/v1/messages", post(anthropic))
        .with_state(fixture);
    support::loopback::serve(router).await
}

/// An agent task with the built-in `calculate` (as `add`) and `lookup` (as
/// `policy`, its key locked), run on `provider`.
async fn run_on(provider_id: &str, provider: Arc<dyn Provider>) -> Arc<MemoryRecorder> {
    let mut registry = ProviderRegistry::new();
    registry.add(
        ProviderInfo {
            id: provider_id.to_owned(),
            label: provider_id.to_owned(),
            models: vec!["fixture-model".to_owned()],
            simulated: false,
            prices: Default::default(),
            tool_calling: true,
        },
        provider,
    );
    let engine = Engine {
        providers: Arc::new(registry),
        settings: Arc::new(EngineSettings::default()),
    };
    let graph = graph::Graph::from_value(json!({
        "modules": [
            {"id": "in", "kind": "step.input"},
            {"id": "task", "kind": "step.agent_task", "config": {
                "instruction": "What is six times seven, and may we refund?",
                "agent_config": {"provider": provider_id, "model": "fixture-model"},
                "tools": [
                    {"server": "patchbay", "tool": "calculate", "as": "add"},
                    {"server": "patchbay", "tool": "lookup", "as": "policy", "arguments": {"key": LOCKED_KEY}}
                ]}}
        ],
        "cables": [{"id": "c1", "from": {"module": "in", "port": "data_out"}, "to": {"module": "task", "port": "data_in"}}]
    }))
    .unwrap();
    let recorder = Arc::new(MemoryRecorder::default());
    let outcome = execute(
        &engine,
        RunSpec {
            run_id: "r_tool_wire".to_owned(),
            graph,
            input: RunInput {
                text: "an order".to_owned(),
                files: vec![],
            },
            budget_usd: None,
        },
        Arc::clone(&recorder),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    recorder
}

/// Both calls made, each paired with its result, and the answer after.
fn assert_both_calls_made(recorder: &MemoryRecorder, said_first: &str) {
    let record = recorder.activation("task", 1).unwrap();
    let calls = support::tool_outcomes(&record);
    assert_eq!(
        calls,
        [("add", ToolOutcome::Ok), ("policy", ToolOutcome::Ok)]
    );
    assert_eq!(record.tool_calls[0].result["result"], 42.0);
    assert_eq!(record.tool_calls[1].result["decision"], "approved");
    assert_eq!(record.responses[0].calls, 2);
    assert_eq!(
        record.responses[0].text,
        format!("{said_first}42, and refunds are approved.")
    );
    let roles: Vec<TranscriptRole> = record.transcript.iter().map(|entry| entry.role).collect();
    let mut expected = vec![TranscriptRole::User];
    if !said_first.is_empty() {
        expected.push(TranscriptRole::Assistant);
    }
    expected.extend([
        TranscriptRole::ToolCall,
        TranscriptRole::ToolCall,
        TranscriptRole::ToolResult,
        TranscriptRole::ToolResult,
        TranscriptRole::Assistant,
    ]);
    assert_eq!(roles, expected);
}

/// The locked argument is in no request: not in the schema (which does
/// not offer it), not in a call, not in a result sent back.
fn assert_never_sent_locked(requests: &[Value]) {
    for request in requests {
        assert!(
            !request.to_string().contains(LOCKED_KEY),
            "the locked value reached the provider: {request}"
        );
    }
}

#[tokio::test]
async fn openai_streams_two_tool_calls_in_one_reply_and_takes_their_results_as_tool_messages() {
    let fixture = Arc::new(Fixture::default());
    let base = serve(Arc::clone(&fixture)).await;
    let provider =
        Arc::new(OpenAiProvider::new(&format!("{base}/v1"), "k", Duration::from_secs(5)).unwrap());
    let recorder = run_on("openai", provider).await;
    assert_both_calls_made(&recorder, "");
    let requests = fixture.requests();
    assert_eq!(requests.len(), 2);
    // The tools offered, as functions; the policy's locked key taken out.
    let tools = requests[0]["tools"].as_array().unwrap();
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(tools[0]["function"]["name"], "add");
    assert_eq!(
        tools[0]["function"]["parameters"]["required"],
        json!(["expression"])
    );
    assert_eq!(tools[1]["function"]["name"], "policy");
    assert!(
        tools[1]["function"]["parameters"]["properties"]
            .get("key")
            .is_none(),
        "{}",
        tools[1]
    );
    // The reply's calls, then a tool message per call with its id.
    let messages = requests[1]["messages"].as_array().unwrap();
    let asked = &messages[1];
    assert_eq!(asked["role"], "assistant");
    assert_eq!(asked["tool_calls"][0]["id"], "call_add");
    assert_eq!(
        asked["tool_calls"][0]["function"]["arguments"],
        "{\"expression\":\"6*7\"}"
    );
    assert_eq!(asked["tool_calls"][1]["id"], "call_policy");
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], "call_add");
    assert!(messages[2]["content"].as_str().unwrap().contains("42"));
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_policy");
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("approved")
    );
    assert_never_sent_locked(&requests);
}

#[tokio::test]
async fn anthropic_streams_tool_use_blocks_and_takes_their_results_as_tool_result_blocks() {
    let fixture = Arc::new(Fixture::default());
    let base = serve(Arc::clone(&fixture)).await;
    let provider = Arc::new(AnthropicProvider::new(&base, "k", Duration::from_secs(5)).unwrap());
    let recorder = run_on("anthropic", provider).await;
    assert_both_calls_made(&recorder, "Let me check both.\n\n");
    let requests = fixture.requests();
    assert_eq!(requests.len(), 2);
    let tools = requests[0]["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "add");
    assert_eq!(tools[0]["input_schema"]["required"], json!(["expression"]));
    assert!(tools[1]["input_schema"]["properties"].get("key").is_none());
    let messages = requests[1]["messages"].as_array().unwrap();
    let asked = messages[1]["content"].as_array().unwrap();
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(asked[0]["type"], "text");
    assert_eq!(asked[1]["type"], "tool_use");
    assert_eq!(asked[1]["id"], "toolu_add");
    assert_eq!(asked[1]["input"], json!({"expression": "6*7"}));
    assert_eq!(asked[2]["id"], "toolu_policy");
    assert_eq!(asked[2]["input"], json!({}));
    // One user message with a tool_result per call.
    assert_eq!(messages[2]["role"], "user");
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["tool_use_id"], "toolu_add");
    assert_eq!(results[1]["tool_use_id"], "toolu_policy");
    assert!(results[1].to_string().contains("approved"));
    assert_never_sent_locked(&requests);
}
