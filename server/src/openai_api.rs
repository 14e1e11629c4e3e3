//! A graph as an OpenAI-compatible model (PRODUCT §6.4): `POST
//! /v1/chat/completions` with `model: "graph:<id>"` and a run token of that
//! graph as the API key. The last user message is the run's input and the
//! output modules' text the answer, so any OpenAI client or chat front end
//! talks to a graph. A run that waits for a person answers with the
//! approver link; one that fails or outlasts the wait is an error that
//! says so, with where to follow the run.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use wire::status::RunStatus;

use crate::body::JsonBody;
use crate::capability::require_starter;
use crate::error::ApiError;
use crate::invoke_api::{answered, settled};
use crate::rate_limit::ClientAddress;
use crate::runs_api::launch;
use crate::state::AppState;

/// How long a completion waits for its run: OpenAI's clients give up after
/// ten minutes; proxies sooner.
const WAIT: Duration = Duration::from_secs(300);

/// What is read of a chat completion request; the rest (temperature,
/// tools, …) is the graph's to decide, and ignored.
#[derive(Deserialize)]
struct ChatRequest {
    model: String,
    messages: Vec<ChatMessage>,
    #[serde(default)]
    stream: bool,
}

#[derive(Deserialize)]
struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Value,
}

/// A message's text: a string, or the text parts of a list of parts.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn invalid(path: &str, message: &str) -> ApiError {
    ApiError::InvokeRequest {
        path: path.to_owned(),
        message: message.to_owned(),
    }
}

/// The graph a `model` names, and the last user message's text.
fn read(body: &[u8]) -> Result<(String, String, bool), ApiError> {
    let request: ChatRequest = serde_path_to_error::deserialize(
        &mut serde_json::Deserializer::from_slice(body),
    )
    .map_err(|error| {
        invalid(
            &error.path().to_string(),
            &format!(
                "a chat completion request has \"model\" and \"messages\": {}",
                error.into_inner()
            ),
        )
    })?;
    let graph = request
        .model
        .strip_prefix("graph:")
        .filter(|id| crate::capability::is_graph_id(id))
        .ok_or_else(|| {
            invalid(
                "model",
                "the model is \"graph:<id>\", the id of a graph this server keeps",
            )
        })?
        .to_owned();
    let input = request
        .messages
        .iter()
        .rev()
        .find(|message| message.role == "user")
        .map(|message| text_of(&message.content))
        .ok_or_else(|| invalid("messages", "there is no user message to run the graph on"))?;
    Ok((graph, input, request.stream))
}

pub async fn chat_completions(
    State(state): State<AppState>,
    client: ClientAddress,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Result<Response, ApiError> {
    let (graph_id, input, stream) = read(&body?.0)?;
    let starter = require_starter(&state.store, &graph_id, &headers, "calling the graph").await?;
    let input = wire::RunInput {
        text: input,
        files: Vec::new(),
    };
    let started = launch(
        &state,
        &graph_id,
        &client,
        &starter,
        input,
        crate::runs_api::Asked::default(),
    )
    .await?;
    let model = format!("graph:{graph_id}");
    let id = format!("chatcmpl-{}", started.id);
    let created = crate::store::now_millis() / 1000;
    if stream {
        return Ok(streamed(state, graph_id, started, model, id, created));
    }
    let record = settled(&state, &started.id, WAIT).await?;
    let text = answer_text(&state, &graph_id, &started.id, &record).await?;
    Ok(Json(json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }],
        "usage": usage(&record),
    }))
    .into_response())
}

/// The answer: the outputs of a run that completed, the approver link of
/// one that waits; an error for one that failed or goes on.
async fn answer_text(
    state: &AppState,
    graph_id: &str,
    run_id: &str,
    record: &wire::RunRecord,
) -> Result<String, ApiError> {
    let answered = answered(state, graph_id, run_id, record).await?;
    match record.status {
        RunStatus::Completed => Ok(answered.text.unwrap_or_default()),
        RunStatus::Waiting => Ok(format!(
            "This run waits for a person to decide. Decide at {} (run {run_id}).",
            answered.approver_url.unwrap_or_default()
        )),
        status if status.is_finished() => Err(ApiError::RunEnded {
            run_id: run_id.to_owned(),
            status: status.as_str().to_owned(),
            error: record.error.clone().unwrap_or_default(),
        }),
        _ => Err(ApiError::RunStillGoing {
            run_id: run_id.to_owned(),
        }),
    }
}

/// Tokens the run's model calls counted, as OpenAI's `usage`.
fn usage(record: &wire::RunRecord) -> Value {
    let (mut input, mut output) = (0u64, 0u64);
    for activation in record
        .modules
        .values()
        .flat_map(|module| &module.activations)
    {
        for response in &activation.responses {
            input += response.tokens_in;
            output += response.tokens_out;
        }
    }
    json!({"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output})
}

/// `stream: true`: the role at once, then the answer when the run has one,
/// then `[DONE]`; an error the same way OpenAI's streams end with one.
fn streamed(
    state: AppState,
    graph_id: String,
    started: wire::run::RunStarted,
    model: String,
    id: String,
    created: i64,
) -> Response {
    let (sender, receiver) =
        tokio::sync::mpsc::channel::<Result<Event, std::convert::Infallible>>(8);
    tokio::spawn(async move {
        let chunk = |delta: Value, finish: Option<&str>| {
            Event::default().data(
                json!({
                    "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                })
                .to_string(),
            )
        };
        if sender
            .send(Ok(chunk(json!({"role": "assistant", "content": ""}), None)))
            .await
            .is_err()
        {
            return;
        }
        let answer = match settled(&state, &started.id, WAIT).await {
            Ok(record) => answer_text(&state, &graph_id, &started.id, &record).await,
            Err(error) => Err(error),
        };
        let events = match answer {
            Ok(text) => vec![
                chunk(json!({"content": text}), None),
                chunk(json!({}), Some("stop")),
            ],
            Err(error) => vec![Event::default().data(json!(error.body()).to_string())],
        };
        for event in events {
            if sender.send(Ok(event)).await.is_err() {
                return;
            }
        }
        let _ = sender.send(Ok(Event::default().data("[DONE]"))).await;
    });
    Sse::new(tokio_stream::wrappers::ReceiverStream::new(receiver))
        .keep_alive(axum::response::sse::KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}
