//! OpenAI-compatible Chat Completions (OpenAI, Ollama, vLLM, llama.cpp
//! server, LM Studio, OpenRouter) through `async-openai`, streaming with
//! `include_usage` and `json_schema` structured output.
//!
//! async-openai retries 429/5xx on its own, without a cap on `Retry-After`;
//! this provider hands it a plain HTTP service instead, so retries follow the
//! engine's bounded policy and every error keeps its HTTP status.

use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCallChunk,
    ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessageArgs,
    ChatCompletionRequestMessage, ChatCompletionRequestMessageContentPartImageArgs,
    ChatCompletionRequestMessageContentPartTextArgs, ChatCompletionRequestSystemMessageArgs,
    ChatCompletionRequestToolMessageArgs, ChatCompletionRequestUserMessageArgs,
    ChatCompletionRequestUserMessageContentPart, ChatCompletionStreamOptions, ChatCompletionTool,
    ChatCompletionTools, CreateChatCompletionRequest, CreateChatCompletionRequestArgs,
    FunctionCall, FunctionObject, ImageUrlArgs, ResponseFormat, ResponseFormatJsonSchema,
};
use futures::StreamExt;

use super::{
    ChatMessage, ChatRequest, ChatResponse, ContentPart, DeltaSink, Provider, ProviderError,
    ProviderFuture, Role, ToolCall, Usage,
};

/// An HTTP error kept whole on its way through async-openai.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct HttpStatusError {
    status: u16,
    message: String,
    retry_after_seconds: Option<u64>,
}

pub struct OpenAiProvider {
    client: Client<OpenAIConfig>,
    /// The longest wait for the next piece of a reply.
    read_timeout: Duration,
    /// api.openai.com wants `max_completion_tokens`; most compatible servers
    /// read only `max_tokens`.
    use_max_completion_tokens: bool,
}

/// The message of an OpenAI-style error body, or the body itself.
fn error_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|value| {
            value
                .pointer("/error/message")
                .or_else(|| value.get("error"))
                .or_else(|| value.get("message"))
                .and_then(|message| message.as_str().map(str::to_owned))
        })
        .unwrap_or_else(|| body.chars().take(500).collect())
}

impl OpenAiProvider {
    /// `base_url` like `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`.
    pub fn new(
        base_url: &str,
        api_key: &str,
        timeout: Duration,
    ) -> Result<OpenAiProvider, ProviderError> {
        if api_key.chars().any(|character| character.is_control()) {
            return Err(ProviderError::fatal(
                "the API key contains control characters",
            ));
        }
        let http = super::http_client()?;
        let base = base_url.trim_end_matches('/');
        let config = OpenAIConfig::new()
            .with_api_base(base)
            .with_api_key(api_key.trim())
            .with_org_id("")
            .with_project_id("");
        let service_http = http.clone();
        let service = tower::service_fn(move |factory: HttpRequestFactory| {
            let http = service_http.clone();
            async move {
                let response = http
                    .execute(factory.build().await?)
                    .await
                    .map_err(OpenAIError::Reqwest)?;
                if response.status().is_success() {
                    return Ok(response);
                }
                let status = response.status().as_u16();
                let retry_after_seconds = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| value.trim().parse::<u64>().ok());
                let body = response.text().await.unwrap_or_default();
                Err(OpenAIError::Boxed(Box::new(HttpStatusError {
                    status,
                    message: format!("HTTP {status}: {}", error_message(&body)),
                    retry_after_seconds,
                })))
            }
        });
        Ok(OpenAiProvider {
            client: Client::build(http, config).with_http_service(service),
            read_timeout: timeout,
            use_max_completion_tokens: base.contains("api.openai.com"),
        })
    }

    fn build_request(
        &self,
        request: &ChatRequest,
    ) -> Result<CreateChatCompletionRequest, OpenAIError> {
        let mut messages: Vec<ChatCompletionRequestMessage> = Vec::new();
        if let Some(system) = request
            .system
            .as_deref()
            .filter(|system| !system.is_empty())
        {
            messages.push(
                ChatCompletionRequestSystemMessageArgs::default()
                    .content(system)
                    .build()?
                    .into(),
            );
        }
        for message in &request.messages {
            match message.role {
                Role::Assistant => messages.push(assistant_message(message)?),
                Role::Tool => {
                    // One message a result, each naming its call.
                    for part in &message.content {
                        if let ContentPart::ToolResult { call_id, text, .. } = part {
                            messages.push(
                                ChatCompletionRequestToolMessageArgs::default()
                                    .content(text.clone())
                                    .tool_call_id(call_id.clone())
                                    .build()?
                                    .into(),
                            );
                        }
                    }
                }
                Role::User => messages.push(user_message(message)?),
            }
        }
        let mut builder = CreateChatCompletionRequestArgs::default();
        builder
            .model(request.model.clone())
            .messages(messages)
            .stream(true)
            .stream_options(ChatCompletionStreamOptions {
                include_usage: Some(true),
                include_obfuscation: None,
            });
        if let Some(temperature) = request.temperature {
            #[allow(clippy::cast_possible_truncation)]
            builder.temperature(temperature as f32);
        }
        if let Some(max_tokens) = request.max_tokens {
            if self.use_max_completion_tokens {
                builder.max_completion_tokens(max_tokens);
            } else {
                #[allow(deprecated)]
                builder.max_tokens(max_tokens);
            }
        }
        if !request.tools.is_empty() {
            builder.tools(
                request
                    .tools
                    .iter()
                    .map(|tool| {
                        ChatCompletionTools::Function(ChatCompletionTool {
                            function: FunctionObject {
                                name: tool.name.clone(),
                                description: Some(tool.description.clone()),
                                parameters: Some(tool.parameters.clone()),
                                strict: None,
                            },
                        })
                    })
                    .collect::<Vec<_>>(),
            );
        }
        if let Some(schema) = &request.response_schema {
            builder.response_format(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    name: schema.name.clone(),
                    description: None,
                    schema: schema.schema.clone(),
                    strict: Some(true),
                },
            });
        }
        builder.build()
    }
}

/// An assistant turn as sent: its text, and the tool calls it asked for.
fn assistant_message(message: &ChatMessage) -> Result<ChatCompletionRequestMessage, OpenAIError> {
    let mut assistant = ChatCompletionRequestAssistantMessageArgs::default();
    let text = message.text();
    let calls: Vec<ChatCompletionMessageToolCalls> = message
        .tool_calls()
        .map(|call| {
            ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
                id: call.id.clone(),
                function: FunctionCall {
                    name: call.name.clone(),
                    arguments: match &call.arguments {
                        serde_json::Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    },
                },
            })
        })
        .collect();
    if !text.is_empty() || calls.is_empty() {
        assistant.content(text);
    }
    if !calls.is_empty() {
        assistant.tool_calls(calls);
    }
    Ok(assistant.build()?.into())
}

/// A user turn as sent: text, or text and images.
fn user_message(message: &ChatMessage) -> Result<ChatCompletionRequestMessage, OpenAIError> {
    let only_text = message
        .content
        .iter()
        .all(|part| matches!(part, ContentPart::Text { .. }));
    let user = if only_text {
        ChatCompletionRequestUserMessageArgs::default()
            .content(message.text())
            .build()?
    } else {
        let mut parts: Vec<ChatCompletionRequestUserMessageContentPart> = Vec::new();
        for part in &message.content {
            match part {
                ContentPart::Text { text } => parts.push(
                    ChatCompletionRequestMessageContentPartTextArgs::default()
                        .text(text.clone())
                        .build()?
                        .into(),
                ),
                ContentPart::Image {
                    media_type,
                    data_base64,
                } => parts.push(
                    ChatCompletionRequestMessageContentPartImageArgs::default()
                        .image_url(
                            ImageUrlArgs::default()
                                .url(format!("data:{media_type};base64,{data_base64}"))
                                .build()?,
                        )
                        .build()?
                        .into(),
                ),
                ContentPart::ToolCall(_) | ContentPart::ToolResult { .. } => {}
            }
        }
        ChatCompletionRequestUserMessageArgs::default()
            .content(parts)
            .build()?
    };
    Ok(user.into())
}

/// Tool calls as their pieces stream in: each by its index, its id and
/// name when they come, its arguments' text as it grows.
#[derive(Default)]
struct StreamedCalls(Vec<(String, String, String)>);

impl StreamedCalls {
    fn add(&mut self, chunk: &ChatCompletionMessageToolCallChunk) {
        let index = usize::try_from(chunk.index).unwrap_or(usize::MAX).min(64);
        while self.0.len() <= index {
            self.0.push(Default::default());
        }
        let (id, name, arguments) = &mut self.0[index];
        if let Some(given) = &chunk.id {
            id.clone_from(given);
        }
        if let Some(function) = &chunk.function {
            if let Some(given) = &function.name {
                name.push_str(given);
            }
            if let Some(piece) = &function.arguments {
                arguments.push_str(piece);
            }
        }
    }

    /// The calls, their arguments read as JSON (none is `{}`; what is not
    /// JSON stays the text the model wrote, for the call to say so).
    fn calls(self) -> Vec<ToolCall> {
        self.0
            .into_iter()
            .filter(|(_, name, _)| !name.is_empty())
            .enumerate()
            .map(|(index, (id, name, arguments))| ToolCall {
                id: if id.is_empty() {
                    format!("call_{index}")
                } else {
                    id
                },
                name,
                arguments: if arguments.trim().is_empty() {
                    serde_json::Value::Object(serde_json::Map::new())
                } else {
                    serde_json::from_str(&arguments).unwrap_or(serde_json::Value::String(arguments))
                },
            })
            .collect()
    }
}

fn provider_error(error: OpenAIError) -> ProviderError {
    match error {
        OpenAIError::Boxed(inner) => match inner.downcast::<HttpStatusError>() {
            Ok(http) => {
                ProviderError::from_status(http.status, http.message, http.retry_after_seconds)
            }
            Err(other) => ProviderError::retryable(other.to_string()),
        },
        OpenAIError::ApiError(response) => ProviderError::from_status(
            response.status_code.as_u16(),
            response.api_error.message,
            None,
        ),
        OpenAIError::Reqwest(error) => {
            let retryable =
                error.is_timeout() || error.is_connect() || error.is_request() || error.is_body();
            ProviderError {
                message: super::request_failure(&error),
                retryable,
                status: error.status().map(|status| status.as_u16()),
                retry_after_seconds: None,
            }
        }
        // A chunk that is not a completion chunk: usually an error event in
        // the middle of the stream.
        OpenAIError::JSONDeserialize(_, body) => {
            ProviderError::retryable(format!("the stream broke off: {}", error_message(&body)))
        }
        OpenAIError::StreamError(error) => {
            ProviderError::retryable(format!("the stream broke off: {error}"))
        }
        OpenAIError::InvalidArgument(message) => ProviderError::fatal(message),
        other => ProviderError::fatal(other.to_string()),
    }
}

impl Provider for OpenAiProvider {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        Box::pin(async move {
            let body = self.build_request(request).map_err(provider_error)?;
            let chat = self.client.chat();
            let mut stream = tokio::time::timeout(self.read_timeout, chat.create_stream(body))
                .await
                .map_err(|_| super::unanswered(self.read_timeout))?
                .map_err(provider_error)?;
            let mut text = String::new();
            let mut finish_reason = None;
            let mut usage = None;
            let mut calls = StreamedCalls::default();
            while let Some(item) = tokio::time::timeout(self.read_timeout, stream.next())
                .await
                .map_err(|_| super::stalled(self.read_timeout))?
            {
                let chunk = item.map_err(provider_error)?;
                if let Some(reported) = chunk.usage {
                    usage = Some(Usage {
                        input_tokens: u64::from(reported.prompt_tokens),
                        output_tokens: u64::from(reported.completion_tokens),
                        cached_input_tokens: reported
                            .prompt_tokens_details
                            .and_then(|details| details.cached_tokens)
                            .map_or(0, u64::from),
                    });
                }
                if let Some(choice) = chunk.choices.first() {
                    if let Some(delta) = &choice.delta.content {
                        text.push_str(delta);
                        on_delta(delta);
                    }
                    for piece in choice.delta.tool_calls.iter().flatten() {
                        calls.add(piece);
                    }
                    if let Some(reason) = &choice.finish_reason {
                        finish_reason = Some(format!("{reason:?}").to_lowercase());
                    }
                }
            }
            if finish_reason.is_none() {
                return Err(ProviderError::retryable(
                    "the stream ended before the reply was complete",
                ));
            }
            Ok(ChatResponse {
                usage: usage.unwrap_or_default(),
                text,
                finish_reason,
                tool_calls: calls.calls(),
                cost: None,
            })
        })
    }
}
