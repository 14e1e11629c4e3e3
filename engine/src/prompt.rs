//! Assembling user turns: the primary prompt (context and input bundles,
//! then the instruction; PRODUCT §3.2 step 1) and attachments.

use std::sync::Arc;

use base64::Engine;
use graph::Attachment;
use graph::ports::{CONTEXT_IN, DATA_IN, INSTRUCTION_IN};

use crate::activation::{ActivationContext, ActivationError};
use crate::provider::{ChatMessage, ContentPart, Role};

/// An uploaded file's bytes, for attachments.
#[derive(Clone, Debug)]
pub struct AttachmentContent {
    pub name: String,
    pub media_type: String,
    pub bytes: Vec<u8>,
}

/// Where attachment bytes come from (the server's upload store).
pub trait AttachmentSource: Send + Sync {
    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<AttachmentContent>> + Send + 'a>>;
}

/// Which input bundles the primary turn repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputSelection<'a> {
    All,
    /// A continued session already holds the rest.
    FreshOnly,
    /// Continuing an upstream module's session: its output is already there.
    AllBut(&'a str),
    /// Continuing a coding agent's session: the bundle that named it
    /// (`source_session_key`) is already there, the module's other ports
    /// (its diff, say) are not.
    AllButSession(&'a str),
}

/// The first user turn: `## Context from "…"` and `## Input from "…"`
/// sections for the bundles on `context_in` and `data_in` (one entry per
/// upstream module: the chain history), then `## Instruction`, which a
/// repeated activation starts with why it runs again. With no inputs it is
/// the instruction alone.
pub fn primary_turn(
    context: &ActivationContext,
    instruction: &str,
    selection: InputSelection<'_>,
) -> String {
    let included =
        |fresh: bool, source: &str, bundle: &crate::bundle::ContextBundle| match selection {
            InputSelection::All => true,
            InputSelection::FreshOnly => fresh,
            InputSelection::AllBut(skipped) => source != skipped,
            InputSelection::AllButSession(key) => bundle.source_session_key.as_deref() != Some(key),
        };
    let mut sections = Vec::new();
    for (port, heading) in [(CONTEXT_IN, "Context"), (DATA_IN, "Input")] {
        for (input, bundle) in context.bundles_on(port) {
            if included(input.fresh, &input.source_module, &bundle) {
                sections.push(format!(
                    "## {heading} from \"{}\"\n\n{}",
                    input.source_label,
                    bundle.as_text()
                ));
            }
        }
    }
    let mut instruction = instruction.to_owned();
    // A module that runs again after a failure, or because its reply asked
    // to repeat, is told why, whichever kind it is and whether or not it
    // keeps its session; a retry instruction says it in its own words.
    if context.retry_instruction().is_none()
        && let Some(note) = context
            .attempt
            .as_ref()
            .and_then(|attempt| attempt.note(context.activation))
    {
        instruction = format!("{note}\n\n{instruction}");
    }
    for (_, bundle) in context.bundles_on(INSTRUCTION_IN) {
        if !instruction.is_empty() {
            instruction.push_str("\n\n");
        }
        instruction.push_str(&bundle.as_text());
    }
    if sections.is_empty() {
        instruction
    } else {
        sections.push(format!("## Instruction\n\n{instruction}"));
        sections.join("\n\n")
    }
}

/// A user turn: the text, then each attachment — text files inline, images
/// as images. A missing attachment fails the activation.
pub async fn turn(
    source: Option<&Arc<dyn AttachmentSource>>,
    text: String,
    attachments: &[Attachment],
) -> Result<ChatMessage, ActivationError> {
    let mut content = vec![ContentPart::Text { text }];
    for attachment in attachments {
        let found = match source {
            Some(source) => source.load(&attachment.id).await,
            None => None,
        };
        let loaded = found.ok_or_else(|| {
            ActivationError::Failed(format!(
                "attachment \"{}\" is not on this server",
                attachment.name
            ))
        })?;
        if graph::attachment_kind(&loaded.media_type) == Some(graph::AttachmentKind::Image) {
            content.push(ContentPart::Image {
                media_type: loaded.media_type.clone(),
                data_base64: base64::engine::general_purpose::STANDARD.encode(&loaded.bytes),
            });
        } else {
            match String::from_utf8(loaded.bytes) {
                Ok(body) => content.push(ContentPart::Text {
                    text: format!("Attached file `{}`:\n```\n{body}\n```", loaded.name),
                }),
                Err(_) => {
                    return Err(ActivationError::Failed(format!(
                        "attachment \"{}\" ({}) is neither text nor an image",
                        loaded.name, loaded.media_type
                    )));
                }
            }
        }
    }
    Ok(ChatMessage {
        role: Role::User,
        content,
    })
}
