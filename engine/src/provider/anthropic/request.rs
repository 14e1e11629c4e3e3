//! The body of a Messages request: the conversation, streamed, with the
//! system prompt and temperature when set, and a forced tool whose input
//! schema is the wanted one when a structured reply is asked for.

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
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<[Tool<'a>; 1]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ToolChoice<'a>>,
}

#[derive(Serialize)]
struct Message<'a> {
    role: Role,
    content: Vec<Part<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: &'a str },
    Image { source: ImageSource<'a> },
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
    description: &'static str,
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
                role: message.role,
                content: message
                    .content
                    .iter()
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
                    })
                    .collect(),
            })
            .collect();
        let schema = request.response_schema.as_ref();
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
            tools: schema.map(|schema| {
                [Tool {
                    name: &schema.name,
                    description: "Give the answer in exactly this structure.",
                    input_schema: &schema.schema,
                }]
            }),
            tool_choice: schema.map(|schema| ToolChoice::Tool { name: &schema.name }),
        }
    }
}
