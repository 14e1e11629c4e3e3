//! Anthropic Messages API, streaming: `message_start` (input tokens), text
//! and tool-input deltas, `message_delta` (cumulative output tokens, stop
//! reason), `message_stop`; `ping` at any time; `error` mid-stream.
//! Structured output is asked for by forcing a tool whose input schema is
//! the wanted schema, which every current model supports.

use std::time::Duration;

mod request;

use futures::StreamExt;
use serde_json::Value;

use super::{ChatRequest, ChatResponse, DeltaSink, Provider, ProviderError, ProviderFuture, Usage};
use eventsource_stream::Eventsource;
use request::MessagesRequest;

pub const API_VERSION: &str = "2023-06-01";
/// Messages requires `max_tokens`; this is used when a module sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

pub struct AnthropicProvider {
    http: reqwest::Client,
    endpoint: String,
    api_key: String,
    /// The longest wait for the next piece of a reply.
    read_timeout: Duration,
}

impl AnthropicProvider {
    /// `base_url` like `https://api.anthropic.com`.
    pub fn new(
        base_url: &str,
        api_key: &str,
        timeout: Duration,
    ) -> Result<AnthropicProvider, ProviderError> {
        let http = super::http_client()?;
        Ok(AnthropicProvider {
            http,
            endpoint: format!("{}/v1/messages", base_url.trim_end_matches('/')),
            api_key: api_key.trim().to_owned(),
            read_timeout: timeout,
        })
    }
}

/// `error.message` of an Anthropic error body, or the body itself.
fn error_message(body: &str) -> (Option<String>, String) {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => (
            value
                .pointer("/error/type")
                .and_then(Value::as_str)
                .map(str::to_owned),
            value
                .pointer("/error/message")
                .and_then(Value::as_str)
                .map_or_else(|| body.chars().take(500).collect(), str::to_owned),
        ),
        Err(_) => (None, body.chars().take(500).collect()),
    }
}

/// Accumulates a streamed reply.
#[derive(Default)]
struct Reply {
    text: String,
    /// Tool input JSON, for structured replies.
    tool_input: String,
    input_tokens: u64,
    output_tokens: u64,
    cached_input_tokens: u64,
    stop_reason: Option<String>,
    finished: bool,
}

impl Reply {
    fn apply(
        &mut self,
        event: &str,
        data: &Value,
        on_delta: &mut (dyn FnMut(&str) + Send),
    ) -> Result<(), ProviderError> {
        match event {
            "message_start" => {
                let count = |field: &str| {
                    data.pointer(&format!("/message/usage/{field}"))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                // Anthropic counts what it read from and wrote to its cache
                // apart from `input_tokens`; all of it is input.
                self.cached_input_tokens = count("cache_read_input_tokens");
                self.input_tokens = count("input_tokens")
                    + count("cache_creation_input_tokens")
                    + self.cached_input_tokens;
                self.output_tokens = data
                    .pointer("/message/usage/output_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
            }
            "content_block_delta" => match data.pointer("/delta/type").and_then(Value::as_str) {
                Some("text_delta") => {
                    if let Some(text) = data.pointer("/delta/text").and_then(Value::as_str) {
                        self.text.push_str(text);
                        on_delta(text);
                    }
                }
                Some("input_json_delta") => {
                    if let Some(partial) =
                        data.pointer("/delta/partial_json").and_then(Value::as_str)
                    {
                        self.tool_input.push_str(partial);
                        on_delta(partial);
                    }
                }
                _ => {}
            },
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                // Cumulative, so the last one counts.
                if let Some(tokens) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.output_tokens = tokens;
                }
            }
            "message_stop" => self.finished = true,
            "error" => {
                let kind = data
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let message = data
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("the provider reported an error");
                return Err(ProviderError {
                    message: format!("{kind}: {message}"),
                    retryable: matches!(
                        kind,
                        "overloaded_error" | "api_error" | "rate_limit_error"
                    ),
                    status: None,
                    retry_after_seconds: None,
                });
            }
            _ => {}
        }
        Ok(())
    }
}

impl Provider for AnthropicProvider {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let sent = self
                .http
                .post(&self.endpoint)
                .header("x-api-key", &self.api_key)
                .header("anthropic-version", API_VERSION)
                .json(&MessagesRequest::new(request))
                .send();
            let response = tokio::time::timeout(self.read_timeout, sent)
                .await
                .map_err(|_| super::unanswered(self.read_timeout))?
                .map_err(|error| ProviderError {
                    message: super::request_failure(&error),
                    retryable: error.is_timeout() || error.is_connect() || error.is_request(),
                    status: None,
                    retry_after_seconds: None,
                })?;
            let status = response.status().as_u16();
            if !response.status().is_success() {
                let retry_after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| value.trim().parse::<u64>().ok());
                let body = response.text().await.unwrap_or_default();
                let (_, message) = error_message(&body);
                return Err(ProviderError::from_status(
                    status,
                    format!("HTTP {status}: {message}"),
                    retry_after,
                ));
            }
            let mut reply = Reply::default();
            let mut events = response.bytes_stream().eventsource();
            while let Some(event) = tokio::time::timeout(self.read_timeout, events.next())
                .await
                .map_err(|_| super::stalled(self.read_timeout))?
            {
                let event = event.map_err(|error| {
                    ProviderError::retryable(format!("the stream broke off: {error}"))
                })?;
                let name = event.event.as_str();
                if name == "ping" {
                    continue;
                }
                let data: Value = serde_json::from_str(&event.data).map_err(|error| {
                    ProviderError::retryable(format!(
                        "the stream sent an unreadable event ({name}): {error}"
                    ))
                })?;
                reply.apply(name, &data, on_delta)?;
                if reply.finished {
                    break;
                }
            }
            if !reply.finished {
                return Err(ProviderError::retryable(
                    "the stream ended before the reply was complete",
                ));
            }
            let text = if request.response_schema.is_some() && !reply.tool_input.is_empty() {
                reply.tool_input
            } else {
                reply.text
            };
            Ok(ChatResponse {
                text,
                usage: Usage {
                    input_tokens: reply.input_tokens,
                    output_tokens: reply.output_tokens,
                    cached_input_tokens: reply.cached_input_tokens,
                },
                finish_reason: reply.stop_reason,
                cost: None,
            })
        })
    }
}
