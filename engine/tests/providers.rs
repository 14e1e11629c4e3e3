//! The real providers against a loopback fixture server that replays the
//! OpenAI and Anthropic streaming wire formats: usage chunks with empty
//! `choices`, Anthropic's named events and pings, errors mid-stream, 429
//! then success. A re-prompt chain grows the history by two messages a turn.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use engine::provider::anthropic::AnthropicProvider;
use engine::provider::openai::OpenAiProvider;
use engine::provider::retry::RetryPolicy;
use engine::provider::{
    ChatMessage, ChatRequest, Provider, ProviderInfo, ProviderRegistry, ResponseSchema,
};
use engine::recorder::MemoryRecorder;
use engine::{Engine, EngineSettings, RunInput, RunSpec, execute};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wire::cost::Price;
use wire::event::{RunEvent, RunStatus};

/// What the fixture does for the next request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Script {
    Reply,
    TooManyRequests,
    BreakMidStream,
}

#[derive(Default)]
struct Fixture {
    /// Request bodies received, in order.
    requests: Mutex<Vec<Value>>,
    /// Headers of each request.
    headers: Mutex<Vec<HeaderMap>>,
    /// Scripted answers, consumed in order; then plain replies.
    script: Mutex<Vec<Script>>,
}

impl Fixture {
    fn next(&self, body: Value, headers: HeaderMap) -> (Script, usize) {
        let mut requests = self.requests.lock().unwrap();
        requests.push(body);
        self.headers.lock().unwrap().push(headers);
        let mut script = self.script.lock().unwrap();
        let step = if script.is_empty() {
            Script::Reply
        } else {
            script.remove(0)
        };
        (step, requests.len())
    }
}

fn too_many() -> Response {
    Response::builder()
        .status(StatusCode::TOO_MANY_REQUESTS)
        .header("retry-after", "0")
        .header("content-type", "application/json")
        .body(Body::from(
            r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#,
        ))
        .unwrap()
}

async fn openai(State(fixture): State<Arc<Fixture>>, headers: HeaderMap, body: String) -> Response {
    let body: Value = serde_json::from_str(&body).unwrap();
    let messages = body["messages"].as_array().map_or(0, Vec::len);
    let (step, number) = fixture.next(body, headers);
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "fixture-model",
                   "system_fingerprint": "fp_1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": null})
        )
    };
    match step {
        Script::TooManyRequests => too_many(),
        Script::BreakMidStream => support::loopback::sse(format!(
            "{}data: {}\n\n",
            chunk(
                json!({"role": "assistant", "content": "Half an ans"}),
                Value::Null
            ),
            json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error"}})
        )),
        Script::Reply => {
            let mut stream = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
            stream.push_str(&chunk(
                json!({"content": format!("Reply {number} ")}),
                Value::Null,
            ));
            stream.push_str(&chunk(
                json!({"content": format!("to {messages} messages.")}),
                Value::Null,
            ));
            stream.push_str(&chunk(json!({}), json!("stop")));
            // include_usage: one more chunk, with empty choices, before [DONE].
            stream.push_str(&format!(
                "data: {}\n\n",
                json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "fixture-model",
                       "choices": [], "usage": {"prompt_tokens": 10 * number, "completion_tokens": 7, "total_tokens": 10 * number + 7,
                                                "prompt_tokens_details": {"cached_tokens": 4}}})
            ));
            stream.push_str("data: [DONE]\n\n");
            support::loopback::sse(stream)
        }
    }
}

async fn anthropic(
    State(fixture): State<Arc<Fixture>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let body: Value = serde_json::from_str(&body).unwrap();
    let messages = body["messages"].as_array().map_or(0, Vec::len);
    let structured = body.get("tool_choice").is_some();
    let (step, number) = fixture.next(body, headers);
    let event = support::loopback::named_event;
    let start = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
               "model": "claude-fixture", "stop_reason": null,
               "usage": {"input_tokens": 20 * number, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 5, "output_tokens": 1}}}),
    );
    match step {
        Script::TooManyRequests => too_many(),
        Script::BreakMidStream => support::loopback::sse(format!(
            "{start}{}{}",
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
            ),
            event(
                "error",
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            )
        )),
        Script::Reply => {
            let mut stream = start;
            if structured {
                stream.push_str(&event("content_block_start", json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "tool_use", "id": "toolu_1", "name": "review_decision", "input": {}}})));
                stream.push_str(&event("content_block_delta", json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": "{\"decision\": \"approve\", "}})));
                stream.push_str(&event("content_block_delta", json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": "\"feedback\": \"fine\"}"}})));
            } else {
                stream.push_str(&event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
                stream.push_str(&event("ping", json!({"type": "ping"})));
                stream.push_str(&event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": format!("Reply {number} ")}})));
                stream.push_str(&event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": format!("to {messages} messages.")}})));
            }
            stream.push_str(&event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ));
            stream.push_str(&event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 3}})));
            stream.push_str(&event(
                "message_delta",
                json!({"type": "message_delta", "delta": {}, "usage": {"output_tokens": 9}}),
            ));
            stream.push_str(&event("message_stop", json!({"type": "message_stop"})));
            support::loopback::sse(stream)
        }
    }
}

async fn serve(fixture: Arc<Fixture>) -> String {
    let router = Router::new()
        .route("/v1/chat/completions", post(openai))
        .route("/v1/messages", post(anthropic))
        .with_state(fixture);
    support::loopback::serve(router).await
}

fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(10),
        max_retry_after: Duration::from_secs(1),
    }
}

fn request(messages: Vec<ChatMessage>) -> ChatRequest {
    ChatRequest {
        model: "fixture-model".to_owned(),
        system: Some("Be brief.".to_owned()),
        messages,
        temperature: Some(0.2),
        max_tokens: Some(64),
        response_schema: None,
        tools: Vec::new(),
    }
}

async fn complete(
    provider: &dyn Provider,
    request: &ChatRequest,
) -> Result<(engine::provider::ChatResponse, String), engine::provider::ProviderError> {
    let mut streamed = String::new();
    let mut sink = |text: &str| streamed.push_str(text);
    let response = provider.complete(request, &mut sink).await?;
    Ok((response, streamed))
}

#[tokio::test]
async fn openai_streams_text_and_reads_usage_from_the_empty_choices_chunk() {
    let fixture = Arc::new(Fixture::default());
    let base = serve(Arc::clone(&fixture)).await;
    let provider =
        OpenAiProvider::new(&format!("{base}/v1"), "sk-test", Duration::from_secs(5)).unwrap();
    let (response, streamed) = complete(&provider, &request(vec![ChatMessage::user("Hello")]))
        .await
        .unwrap();
    assert_eq!(response.text, "Reply 1 to 2 messages.");
    assert_eq!(streamed, response.text);
    assert_eq!(response.usage.input_tokens, 10);
    assert_eq!(response.usage.cached_input_tokens, 4);
    assert_eq!(response.usage.output_tokens, 7);
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    let sent = fixture.requests.lock().unwrap()[0].clone();
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"]["include_usage"], true);
    assert_eq!(
        sent["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(sent["max_tokens"], 64);
    let headers = fixture.headers.lock().unwrap()[0].clone();
    assert_eq!(headers["authorization"], "Bearer sk-test");
}

#[tokio::test]
async fn openai_sends_a_json_schema_when_structure_is_wanted() {
    let fixture = Arc::new(Fixture::default());
    let base = serve(Arc::clone(&fixture)).await;
    let provider = OpenAiProvider::new(&format!("{base}/v1"), "", Duration::from_secs(5)).unwrap();
    let mut structured = request(vec![ChatMessage::user("Decide")]);
    structured.response_schema = Some(ResponseSchema {
        name: "review_decision".to_owned(),
        schema: json!({"type": "object", "properties": {"decision": {"type": "string"}}}),
    });
    complete(&provider, &structured).await.unwrap();
    let sent = fixture.requests.lock().unwrap()[0].clone();
    assert_eq!(sent["response_format"]["type"], "json_schema");
    assert_eq!(
        sent["response_format"]["json_schema"]["name"],
        "review_decision"
    );
    assert_eq!(sent["response_format"]["json_schema"]["strict"], true);
}

#[tokio::test]
async fn anthropic_reads_named_events_pings_and_cumulative_usage() {
    let fixture = Arc::new(Fixture::default());
    let base = serve(Arc::clone(&fixture)).await;
    let provider = AnthropicProvider::new(&base, "sk-ant-test", Duration::from_secs(5)).unwrap();
    let (response, streamed) = complete(&provider, &request(vec![ChatMessage::user("Hello")]))
        .await
        .unwrap();
    assert_eq!(response.text, "Reply 1 to 1 messages.");
    assert_eq!(streamed, response.text);
    // input from message_start (what it read from and wrote to its cache
    // is input too), output from the last (cumulative) message_delta.
    assert_eq!(response.usage.input_tokens, 20 + 2 + 5);
    assert_eq!(response.usage.cached_input_tokens, 5);
    assert_eq!(response.usage.output_tokens, 9);
    assert_eq!(response.finish_reason.as_deref(), Some("end_turn"));
    let sent = fixture.requests.lock().unwrap()[0].clone();
    assert_eq!(sent["system"], "Be brief.");
    assert_eq!(sent["max_tokens"], 64);
    assert_eq!(
        sent["messages"][0]["content"][0],
        json!({"type": "text", "text": "Hello"})
    );
    let headers = fixture.headers.lock().unwrap()[0].clone();
    assert_eq!(headers["x-api-key"], "sk-ant-test");
    assert_eq!(headers["anthropic-version"], "2023-06-01");
}

#[tokio::test]
async fn anthropic_structured_replies_come_through_a_forced_tool() {
    let fixture = Arc::new(Fixture::default());
    let base = serve(Arc::clone(&fixture)).await;
    let provider = AnthropicProvider::new(&base, "k", Duration::from_secs(5)).unwrap();
    let mut structured = request(vec![ChatMessage::user("Decide")]);
    structured.response_schema = Some(ResponseSchema {
        name: "review_decision".to_owned(),
        schema: json!({"type": "object"}),
    });
    let (response, _) = complete(&provider, &structured).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&response.text).unwrap(),
        json!({"decision": "approve", "feedback": "fine"})
    );
    let sent = fixture.requests.lock().unwrap()[0].clone();
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "tool", "name": "review_decision"})
    );
}

#[tokio::test]
async fn errors_mid_stream_are_reported_as_retryable_with_the_providers_message() {
    let fixture = Arc::new(Fixture::default());
    fixture
        .script
        .lock()
        .unwrap()
        .extend([Script::BreakMidStream, Script::BreakMidStream]);
    let base = serve(Arc::clone(&fixture)).await;
    let openai = OpenAiProvider::new(&format!("{base}/v1"), "k", Duration::from_secs(5)).unwrap();
    let error = complete(&openai, &request(vec![ChatMessage::user("Hi")]))
        .await
        .unwrap_err();
    assert!(error.retryable);
    assert!(
        error.message.contains("The server had an error"),
        "{}",
        error.message
    );
    let anthropic = AnthropicProvider::new(&base, "k", Duration::from_secs(5)).unwrap();
    let error = complete(&anthropic, &request(vec![ChatMessage::user("Hi")]))
        .await
        .unwrap_err();
    assert!(error.retryable);
    assert_eq!(error.message, "overloaded_error: Overloaded");
}

#[tokio::test]
async fn a_429_carries_its_status_and_retry_after() {
    let fixture = Arc::new(Fixture::default());
    fixture
        .script
        .lock()
        .unwrap()
        .extend([Script::TooManyRequests, Script::TooManyRequests]);
    let base = serve(Arc::clone(&fixture)).await;
    for provider in [
        Box::new(OpenAiProvider::new(&format!("{base}/v1"), "k", Duration::from_secs(5)).unwrap())
            as Box<dyn Provider>,
        Box::new(AnthropicProvider::new(&base, "k", Duration::from_secs(5)).unwrap()),
    ] {
        let error = complete(provider.as_ref(), &request(vec![ChatMessage::user("Hi")]))
            .await
            .unwrap_err();
        assert_eq!(error.status, Some(429));
        assert!(error.retryable);
        assert_eq!(error.retry_after_seconds, Some(0));
        assert!(
            error.message.contains("Rate limit reached"),
            "{}",
            error.message
        );
    }
    // Only one attempt each: providers do not retry on their own.
    assert_eq!(fixture.requests.lock().unwrap().len(), 2);
}

/// input → agent task (2 re-prompts) on a provider pointed at the fixture.
async fn chain_through(
    provider_id: &str,
    provider: Arc<dyn Provider>,
) -> (engine::RunOutcome, Arc<MemoryRecorder>) {
    chain_priced(provider_id, provider, None).await
}

/// The same, with `price` configured for the fixture's model.
async fn chain_priced(
    provider_id: &str,
    provider: Arc<dyn Provider>,
    price: Option<Price>,
) -> (engine::RunOutcome, Arc<MemoryRecorder>) {
    let mut registry = ProviderRegistry::new();
    registry.add(
        ProviderInfo {
            id: provider_id.to_owned(),
            label: provider_id.to_owned(),
            models: vec!["fixture-model".to_owned()],
            simulated: false,
            prices: price
                .map(|price| ("fixture-model".to_owned(), price))
                .into_iter()
                .collect(),
            tool_calling: true,
        },
        provider,
    );
    let engine = Engine {
        providers: Arc::new(registry),
        settings: Arc::new(EngineSettings {
            retry: quick_retries(),
            ..EngineSettings::default()
        }),
    };
    let graph = graph::Graph::from_value(json!({
        "modules": [
            {"id": "in", "kind": "step.input"},
            {"id": "task", "kind": "step.agent_task", "config": {
                "instruction": "Write", "agent_config": {"provider": provider_id, "model": "fixture-model"},
                "re_prompts": ["Review", "Finalize"]}}
        ],
        "cables": [{"id": "c1", "from": {"module": "in", "port": "data_out"}, "to": {"module": "task", "port": "data_in"}}]
    }))
    .unwrap();
    let recorder = Arc::new(MemoryRecorder::default());
    let outcome = execute(
        &engine,
        RunSpec {
            run_id: "r_fixture".to_owned(),
            graph,
            input: RunInput {
                text: "tides".to_owned(),
                files: vec![],
            },
            budget_usd: None,
        },
        Arc::clone(&recorder),
        CancellationToken::new(),
    )
    .await;
    (outcome, recorder)
}

fn message_counts(fixture: &Fixture) -> Vec<usize> {
    fixture
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|request| request["messages"].as_array().map_or(0, Vec::len))
        .collect()
}

#[tokio::test]
async fn a_re_prompt_chain_on_openai_grows_the_history_by_two_a_turn_and_survives_a_429() {
    let fixture = Arc::new(Fixture::default());
    // The first re-prompt hits a rate limit once.
    fixture
        .script
        .lock()
        .unwrap()
        .extend([Script::Reply, Script::TooManyRequests]);
    let base = serve(Arc::clone(&fixture)).await;
    let provider =
        Arc::new(OpenAiProvider::new(&format!("{base}/v1"), "k", Duration::from_secs(5)).unwrap());
    let (outcome, recorder) = chain_through("openai", provider).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    // user; user+assistant+user (429); the same again; then 2 more.
    assert_eq!(message_counts(&fixture), [1, 3, 3, 5]);
    let requests = fixture.requests.lock().unwrap().clone();
    assert_eq!(requests[3]["messages"][2]["content"], "Review");
    assert_eq!(
        requests[3]["messages"][3]["content"],
        "Reply 3 to 3 messages."
    );
    assert_eq!(requests[3]["messages"][4]["content"], "Finalize");
    let record = recorder.activation("task", 1).unwrap();
    assert_eq!(record.responses[1].text, "Reply 3 to 3 messages.");
    assert_eq!(record.responses[2].text, "Reply 4 to 5 messages.");
}

#[tokio::test]
async fn a_re_prompt_chain_on_anthropic_grows_the_history_by_two_a_turn_and_survives_a_broken_stream()
 {
    let fixture = Arc::new(Fixture::default());
    fixture
        .script
        .lock()
        .unwrap()
        .extend([Script::Reply, Script::Reply, Script::BreakMidStream]);
    let base = serve(Arc::clone(&fixture)).await;
    let provider = Arc::new(AnthropicProvider::new(&base, "k", Duration::from_secs(5)).unwrap());
    let (outcome, recorder) = chain_through("anthropic", provider).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    assert_eq!(message_counts(&fixture), [1, 3, 5, 5]);
    let record = recorder.activation("task", 1).unwrap();
    // The broken attempt's partial text is replaced by the retried reply.
    assert_eq!(record.responses[2].text, "Reply 4 to 5 messages.");
    let receipt = record.receipt.unwrap();
    assert_eq!(receipt.tokens_out, 27, "three replies of 9 output tokens");
    assert!(!receipt.simulated);
}

#[tokio::test]
async fn a_provider_that_keeps_failing_fails_the_module_with_its_message() {
    let fixture = Arc::new(Fixture::default());
    fixture
        .script
        .lock()
        .unwrap()
        .extend([Script::TooManyRequests; 5]);
    let base = serve(Arc::clone(&fixture)).await;
    let provider =
        Arc::new(OpenAiProvider::new(&format!("{base}/v1"), "k", Duration::from_secs(5)).unwrap());
    let (outcome, _) = chain_through("openai", provider).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap();
    assert!(
        error.contains("Rate limit reached") && error.contains("after 3 attempts"),
        "{error}"
    );
}

/// What docs/manual/configuration.md promises: a provider call that keeps failing is retried
/// up to 4 times (5 calls in all), by the server's default
/// policy (the fixture's `Retry-After: 0` makes it wait for nothing).
#[tokio::test]
async fn the_default_policy_retries_a_failing_call_four_times() {
    let fixture = Arc::new(Fixture::default());
    fixture
        .script
        .lock()
        .unwrap()
        .extend([Script::TooManyRequests; 10]);
    let base = serve(Arc::clone(&fixture)).await;
    let provider = OpenAiProvider::new(&format!("{base}/v1"), "k", Duration::from_secs(5)).unwrap();
    let request = request(vec![ChatMessage::user("Hello")]);
    let policy = EngineSettings::default().retry;
    let error = engine::provider::retry::with_retries(policy, |_| async {
        complete(&provider, &request)
            .await
            .map(|(response, _)| response)
    })
    .await
    .map(|_| ())
    .unwrap_err();
    assert_eq!(fixture.requests.lock().unwrap().len(), 5);
    assert!(
        error.message.contains("after 5 attempts"),
        "{}",
        error.message
    );
}

const PRICE: Price = Price {
    input_per_million: 1.0,
    output_per_million: 2.0,
    cached_input_per_million: Some(0.5),
};

/// The cost each `module.usage` event of the task says.
fn usage_costs(recorder: &MemoryRecorder) -> Vec<Option<f64>> {
    recorder
        .events()
        .iter()
        .filter_map(|record| match &record.event {
            RunEvent::ModuleUsage { cost, .. } => Some(*cost),
            _ => None,
        })
        .collect()
}

fn close(actual: Option<f64>, expected: f64) -> bool {
    actual.is_some_and(|actual| (actual - expected).abs() < 1e-12)
}

#[tokio::test]
async fn a_call_on_openai_costs_what_its_usage_chunk_says_at_the_configured_price() {
    let fixture = Arc::new(Fixture::default());
    let base = serve(Arc::clone(&fixture)).await;
    let provider =
        Arc::new(OpenAiProvider::new(&format!("{base}/v1"), "k", Duration::from_secs(5)).unwrap());
    let (outcome, recorder) = chain_priced("openai", provider, Some(PRICE)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    // Call n reads 10n tokens, 4 of them cached, and writes 7.
    let call = |n: f64| ((10.0 * n - 4.0) * 1.0 + 4.0 * 0.5 + 7.0 * 2.0) / 1e6;
    let record = recorder.activation("task", 1).unwrap();
    for (index, response) in record.responses.iter().enumerate() {
        assert!(
            close(response.cost, call(index as f64 + 1.0)),
            "{index}: {:?}",
            response.cost
        );
    }
    let total = call(1.0) + call(2.0) + call(3.0);
    assert!(close(record.receipt.as_ref().unwrap().cost, total));
    assert!(close(record.cost(), total));
    let costs = usage_costs(&recorder);
    assert_eq!(costs.len(), 3);
    assert!(close(costs[2], call(3.0)));
    assert_eq!(recorder.state()["Agent task.cost"], format!("{total:.6}"));
}

#[tokio::test]
async fn a_call_on_anthropic_counts_its_cache_reads_at_the_cached_rate() {
    let fixture = Arc::new(Fixture::default());
    let base = serve(Arc::clone(&fixture)).await;
    let provider = Arc::new(AnthropicProvider::new(&base, "k", Duration::from_secs(5)).unwrap());
    let (outcome, recorder) = chain_priced("anthropic", provider, Some(PRICE)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    // Call n: 20n fresh input and 2 written to the cache (input), 5 read
    // from the cache, 9 output.
    let call = |n: f64| ((20.0 * n + 2.0) * 1.0 + 5.0 * 0.5 + 9.0 * 2.0) / 1e6;
    let record = recorder.activation("task", 1).unwrap();
    let total = call(1.0) + call(2.0) + call(3.0);
    assert!(
        close(record.receipt.as_ref().unwrap().cost, total),
        "{:?}",
        record.receipt
    );
}

#[tokio::test]
async fn a_model_with_no_price_has_no_cost_not_a_cost_of_nothing() {
    let fixture = Arc::new(Fixture::default());
    let base = serve(Arc::clone(&fixture)).await;
    let provider =
        Arc::new(OpenAiProvider::new(&format!("{base}/v1"), "k", Duration::from_secs(5)).unwrap());
    let (outcome, recorder) = chain_through("openai", provider).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    let record = recorder.activation("task", 1).unwrap();
    assert_eq!(record.receipt.as_ref().unwrap().cost, None);
    assert_eq!(record.cost(), None);
    assert_eq!(usage_costs(&recorder), [None, None, None]);
    assert_eq!(recorder.state()["Agent task.cost"], "no price configured");
    // The tokens are still counted.
    assert_eq!(record.receipt.unwrap().tokens_out, 21);
}
