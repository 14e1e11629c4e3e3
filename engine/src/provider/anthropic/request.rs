//! The body of a Messages request: the conversation, streamed, with the
//! system prompt and temperature when set, the tools the model may call
//! (their calls are `tool_use` blocks, their results `tool_result` blocks
//! of the next user turn), and a forced tool whose input schema is the
//! wanted one when a structured reply is asked for.

use serde::Serialize;
use serde_json::Value;

use super::DEFAULT_MAX_TOKENS;
use crate::provider::{ChatRequest, ContentPart, Role};

#[derive(Serialize)]
pub(super) struct MessagesRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    messages: Vec<Message<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ToolChoice<'a>>,
}

#[derive(Serialize)]
struct Message<'a> {
    /// `user` or `assistant`: tool results go back in a user turn.
    role: &'static str,
    content: Vec<Part<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text {
        text: &'a str,
    },
    Image {
        source: ImageSource<'a>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        is_error: bool,
    },
}

/// What a model wrote that was not an object stands as its input's text.
fn as_input(arguments: &Value) -> &Value {
    static EMPTY: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    if arguments.is_object() {
        arguments
    } else {
        EMPTY.get_or_init(|| Value::Object(serde_json::Map::new()))
    }
}

#[derive(Serialize)]
struct ImageSource<'a> {
    /// Always `base64`: the bytes travel in the request.
    #[serde(rename = "type")]
    encoding: &'static str,
    media_type: &'a str,
    data: &'a str,
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ToolChoice<'a> {
    /// This tool, and no answer without it.
    Tool { name: &'a str },
}

impl<'a> MessagesRequest<'a> {
    pub(super) fn new(request: &'a ChatRequest) -> MessagesRequest<'a> {
        let messages = request
            .messages
            .iter()
            .map(|message| Message {
                role: match message.role {
                    Role::Assistant => "assistant",
                    Role::User | Role::Tool => "user",
                },
                content: message
                    .content
                    .iter()
                    .filter(|part| !matches!(part, ContentPart::Text { text } if text.is_empty()))
                    .map(|part| match part {
                        ContentPart::Text { text } => Part::Text { text },
                        ContentPart::Image {
                            media_type,
                            data_base64,
                        } => Part::Image {
                            source: ImageSource {
                                encoding: "base64",
                                media_type,
                                data: data_base64,
                            },
                        },
                        ContentPart::ToolCall(call) => Part::ToolUse {
                            id: &call.id,
                            name: &call.name,
                            input: as_input(&call.arguments),
                        },
                        ContentPart::ToolResult {
                            call_id,
                            text,
                            is_error,
                        } => Part::ToolResult {
                            tool_use_id: call_id,
                            content: text,
                            is_error: *is_error,
                        },
                    })
                    .collect(),
            })
            .collect();
        let schema = request.response_schema.as_ref();
        // A structured reply is one forced tool; otherwise the tools the
        // model may call.
        let tools = match schema {
            Some(schema) => vec![Tool {
                name: &schema.name,
                description: "Give the answer in exactly this structure.",
                input_schema: &schema.schema,
            }],
            None => request
                .tools
                .iter()
                .map(|tool| Tool {
                    name: &tool.name,
                    description: &tool.description,
                    input_schema: &tool.parameters,
                })
                .collect(),
        };
        MessagesRequest {
            model: &request.model,
            max_tokens: request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            messages,
            stream: true,
            system: request
                .system
                .as_deref()
                .filter(|system| !system.is_empty()),
            temperature: request.temperature,
            tools,
            tool_choice: schema.map(|schema| ToolChoice::Tool { name: &schema.name }),
        }
    }
}
