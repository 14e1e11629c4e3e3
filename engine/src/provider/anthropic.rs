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
    /// Each `tool_use` block, by its place: id, name, its input's JSON as
    /// it streams (a structured reply is one, forced).
    tool_uses: Vec<(usize, String, String, String)>,
    /// Whether a structured reply was asked for: its tool input streams as
    /// the reply's text.
    structured: bool,
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
            "content_block_start" => {
                let block = data.get("content_block");
                if block
                    .and_then(|block| block.get("type"))
                    .and_then(Value::as_str)
                    == Some("tool_use")
                {
                    let field = |name: &str| {
                        block
                            .and_then(|block| block.get(name))
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned()
                    };
                    self.tool_uses.push((
                        block_index(data),
                        field("id"),
                        field("name"),
                        String::new(),
                    ));
                }
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
                        let index = block_index(data);
                        if let Some(tool_use) = self
                            .tool_uses
                            .iter_mut()
                            .find(|tool_use| tool_use.0 == index)
                        {
                            tool_use.3.push_str(partial);
                        }
                        if self.structured {
                            on_delta(partial);
                        }
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

/// The place of the content block an event is about.
fn block_index(data: &Value) -> usize {
    data.get("index")
        .and_then(Value::as_u64)
        .and_then(|index| usize::try_from(index).ok())
        .unwrap_or(0)
}

impl Reply {
    /// The tool calls the reply asks for, their inputs read as JSON (what
    /// is not JSON stays text, for the call to say so).
    fn tool_calls(self) -> Vec<crate::provider::ToolCall> {
        self.tool_uses
            .into_iter()
            .map(|(_, id, name, input)| crate::provider::ToolCall {
                id,
                name,
                arguments: if input.trim().is_empty() {
                    Value::Object(serde_json::Map::new())
                } else {
                    serde_json::from_str(&input).unwrap_or(Value::String(input))
                },
            })
            .collect()
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
            let mut reply = Reply {
                structured: request.response_schema.is_some(),
                ..Reply::default()
            };
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
            let usage = Usage {
                input_tokens: reply.input_tokens,
                output_tokens: reply.output_tokens,
                cached_input_tokens: reply.cached_input_tokens,
            };
            let finish_reason = reply.stop_reason.clone();
            // A structured reply is the forced tool's input.
            if reply.structured
                && let Some((_, _, _, input)) = reply.tool_uses.first()
                && !input.is_empty()
            {
                return Ok(ChatResponse {
                    text: input.clone(),
                    usage,
                    finish_reason,
                    tool_calls: Vec::new(),
                    cost: None,
                });
            }
            let text = std::mem::take(&mut reply.text);
            Ok(ChatResponse {
                text,
                usage,
                finish_reason,
                tool_calls: reply.tool_calls(),
                cost: None,
            })
        })
    }
}
