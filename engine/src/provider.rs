//! LLM providers behind one trait ("Gateway", PRODUCT §3.4): the built-in
//! simulated provider, OpenAI-compatible Chat Completions and Anthropic
//! Messages. A request carries the whole conversation and the tools the
//! model may call; a provider streams the reply's text through a callback
//! and returns the reply, with the tool calls it asks for, and its usage.

pub mod anthropic;
pub mod deadline;
pub mod openai;
pub mod retry;
pub mod sim;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    /// What tools gave back for the calls of the assistant message before
    /// it, one result each.
    Tool,
}

/// A tool the model may call: the name it calls it by, what it does, and
/// the JSON schema of its arguments (PRODUCT §3.17).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// A call the model asked for. `arguments` is what it wrote, as JSON when
/// it wrote JSON, else as the text it wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// A piece of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    Text {
        text: String,
    },
    /// An image, sent to providers that take images.
    Image {
        media_type: String,
        data_base64: String,
    },
    /// A call the assistant asked for.
    ToolCall(ToolCall),
    /// What a call gave back, or why it gave nothing (`is_error`).
    ToolResult {
        call_id: String,
        text: String,
        is_error: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: Vec<ContentPart>,
}

impl ChatMessage {
    pub fn user(text: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: Role::User,
            content: vec![ContentPart::Text { text: text.into() }],
        }
    }

    pub fn assistant(text: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: Role::Assistant,
            content: vec![ContentPart::Text { text: text.into() }],
        }
    }

    /// An assistant's reply that asks for tool calls, with what it said
    /// before them, if anything.
    pub fn assistant_calling(text: impl Into<String>, calls: &[ToolCall]) -> ChatMessage {
        let text = text.into();
        let mut content = Vec::with_capacity(calls.len() + 1);
        if !text.is_empty() {
            content.push(ContentPart::Text { text });
        }
        content.extend(calls.iter().cloned().map(ContentPart::ToolCall));
        ChatMessage {
            role: Role::Assistant,
            content,
        }
    }

    /// The results of an assistant message's tool calls.
    pub fn tool_results(results: Vec<ContentPart>) -> ChatMessage {
        ChatMessage {
            role: Role::Tool,
            content: results,
        }
    }

    /// The message's text parts joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The tool calls an assistant message asks for.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|part| match part {
            ContentPart::ToolCall(call) => Some(call),
            _ => None,
        })
    }
}

/// Ask for a JSON reply matching a schema.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResponseSchema {
    pub name: String,
    pub schema: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<ChatMessage>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub response_schema: Option<ResponseSchema>,
    /// The tools the model may call this time; none when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDefinition>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Every input token, cached ones included.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The part of `input_tokens` the provider served from its cache, where
    /// it says (priced at the cached rate).
    #[serde(default)]
    pub cached_input_tokens: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub text: String,
    pub usage: Usage,
    /// Why generation stopped, in the provider's words (`stop`, `end_turn`, …).
    pub finish_reason: Option<String>,
    /// The tool calls the reply asks for, in its order (several at once run
    /// side by side); none when it answers.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// What the call cost, from `usage` and the model's price: set by the
    /// activation that made the call, never by a provider; `None` when the
    /// model has no price configured.
    #[serde(default)]
    pub cost: Option<f64>,
}

/// Why a provider call failed, and whether trying again may help.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub message: String,
    pub retryable: bool,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    /// Seconds the provider asked us to wait (`Retry-After`).
    pub retry_after_seconds: Option<u64>,
}

impl ProviderError {
    pub fn fatal(message: impl Into<String>) -> ProviderError {
        ProviderError {
            message: message.into(),
            retryable: false,
            status: None,
            retry_after_seconds: None,
        }
    }

    pub fn retryable(message: impl Into<String>) -> ProviderError {
        ProviderError {
            message: message.into(),
            retryable: true,
            status: None,
            retry_after_seconds: None,
        }
    }

    /// From an HTTP error status: 408, 409, 429 and 5xx are worth retrying.
    pub fn from_status(
        status: u16,
        message: impl Into<String>,
        retry_after_seconds: Option<u64>,
    ) -> ProviderError {
        ProviderError {
            message: message.into(),
            retryable: matches!(status, 408 | 409 | 429) || status >= 500,
            status: Some(status),
            retry_after_seconds,
        }
    }
}

pub type ProviderFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ChatResponse, ProviderError>> + Send + 'a>>;

/// Receives streamed text as it arrives.
pub type DeltaSink<'a> = &'a mut (dyn FnMut(&str) + Send);

pub trait Provider: Send + Sync {
    /// One completion of the conversation in `request`, streaming its text
    /// into `on_delta`. Dropping the future aborts the request.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a>;
}

/// The HTTP client of the real providers: a bounded connect. The wait for
/// the answer and for each piece of a streamed reply is timed by the
/// providers themselves (`stalled`), so that a stall says it timed out; the
/// whole call by `deadline::Deadline`.
pub fn http_client() -> Result<reqwest::Client, ProviderError> {
    crate::tls::install();
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|error| ProviderError::fatal(format!("cannot build the HTTP client: {error}")))
}

/// What a failed request says, with its causes: reqwest's own text
/// ("error sending request for url …") does not say what went wrong.
pub fn request_failure(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    if error.is_timeout() {
        format!("timed out: {text}")
    } else {
        format!("the request failed: {text}")
    }
}

/// A reply that stopped coming: nothing for the read timeout. Retried, as
/// a broken stream is.
pub fn stalled(read_timeout: std::time::Duration) -> ProviderError {
    ProviderError::retryable(format!(
        "timed out after {} s waiting for the rest of the reply (timeout_seconds)",
        read_timeout.as_secs_f64()
    ))
}

/// An answer that never started: nothing for the read timeout.
pub fn unanswered(read_timeout: std::time::Duration) -> ProviderError {
    ProviderError::retryable(format!(
        "timed out after {} s waiting for an answer (timeout_seconds)",
        read_timeout.as_secs_f64()
    ))
}

pub use wire::providers::ProviderInfo;

/// The providers a server or CLI run can use, by id.
#[derive(Clone, Default)]
pub struct ProviderRegistry {
    providers: BTreeMap<String, (ProviderInfo, Arc<dyn Provider>)>,
    default_id: Option<String>,
}

impl ProviderRegistry {
    pub fn new() -> ProviderRegistry {
        ProviderRegistry::default()
    }

    /// Adds a provider; the first one added is the default for modules that
    /// name none.
    pub fn add(&mut self, info: ProviderInfo, provider: Arc<dyn Provider>) {
        if self.default_id.is_none() {
            self.default_id = Some(info.id.clone());
        }
        self.providers.insert(info.id.clone(), (info, provider));
    }

    /// The provider for a module's `agent_config.provider` (empty = default).
    pub fn get(&self, id: &str) -> Option<(&ProviderInfo, Arc<dyn Provider>)> {
        let id = if id.is_empty() {
            self.default_id.as_deref()?
        } else {
            id
        };
        self.providers
            .get(id)
            .map(|(info, provider)| (info, Arc::clone(provider)))
    }

    pub fn infos(&self) -> Vec<ProviderInfo> {
        self.providers
            .values()
            .map(|(info, _)| info.clone())
            .collect()
    }

    pub fn ids(&self) -> Vec<String> {
        self.providers.keys().cloned().collect()
    }
}

impl From<Role> for wire::TranscriptRole {
    fn from(role: Role) -> wire::TranscriptRole {
        match role {
            Role::User => wire::TranscriptRole::User,
            Role::Assistant => wire::TranscriptRole::Assistant,
            Role::Tool => wire::TranscriptRole::ToolResult,
        }
    }
}
