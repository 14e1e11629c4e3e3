//! Re-prompts (DOC23 §2) and the file attachments a prompt can carry.
//!
//! A re-prompt is written as a plain string when it has no attachments, so a
//! DOC23 `re_prompts: string[]` document round-trips unchanged, and as
//! `{ "text", "attachments" }` when it has some.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::Extra;

/// What a model can be sent of an attachment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachmentKind {
    /// Sent as text in the prompt (its bytes must be UTF-8).
    Text,
    /// Sent as an image, of a type every provider takes.
    Image,
}

/// The image types providers take.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// What is said when a file cannot be sent.
pub const ACCEPTED_KINDS: &str =
    "Patchbay sends text files (UTF-8) and PNG, JPEG, GIF or WebP images to models";

/// How an attachment of `media_type` is sent, or `None` when it cannot be
/// (an archive, a PDF, a binary). The same rule everywhere: the editor
/// and validation on the type, the server on the bytes when they arrive,
/// the engine when it sends them.
pub fn attachment_kind(media_type: &str) -> Option<AttachmentKind> {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if IMAGE_TYPES.contains(&essence.as_str()) {
        return Some(AttachmentKind::Image);
    }
    let textual = essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-sh"
                | "application/sql"
                | "application/x-ndjson"
        );
    textual.then_some(AttachmentKind::Text)
}

/// A file uploaded to the server and referenced from the graph. The document
/// holds only the reference; the bytes live in server storage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Attachment {
    pub id: String,
    pub name: String,
    pub media_type: String,
    pub size_bytes: u64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One ordered follow-up prompt, sent as a new user turn in the same session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RePrompt {
    pub text: String,
    /// Included in this re-prompt's turn only.
    pub attachments: Vec<Attachment>,
    /// The module's tools this turn may call, by the name the model knows
    /// them by; `None` is all of them, empty none (PRODUCT §3.17).
    pub allowed_tools: Option<Vec<String>>,
    /// Unknown fields of the object form, kept for forward compatibility.
    pub extra: Extra,
}

impl RePrompt {
    pub fn new(text: impl Into<String>) -> RePrompt {
        RePrompt {
            text: text.into(),
            ..RePrompt::default()
        }
    }

    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }
}

impl From<&str> for RePrompt {
    fn from(text: &str) -> RePrompt {
        RePrompt::new(text)
    }
}

#[derive(Serialize, Deserialize)]
struct RePromptObject {
    #[serde(default)]
    text: String,
    #[serde(default)]
    attachments: Vec<Attachment>,
    #[serde(default)]
    allowed_tools: Option<Vec<String>>,
    #[serde(flatten)]
    extra: Extra,
}

#[derive(Serialize)]
struct RePromptObjectRef<'a> {
    text: &'a str,
    attachments: &'a [Attachment],
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed_tools: Option<&'a [String]>,
    #[serde(flatten)]
    extra: &'a Extra,
}

impl Serialize for RePrompt {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.attachments.is_empty() && self.extra.is_empty() && self.allowed_tools.is_none() {
            serializer.serialize_str(&self.text)
        } else {
            RePromptObjectRef {
                text: &self.text,
                attachments: &self.attachments,
                allowed_tools: self.allowed_tools.as_deref(),
                extra: &self.extra,
            }
            .serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for RePrompt {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RePrompt, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(RePrompt::new(text)),
            object @ Value::Object(_) => {
                let parsed: RePromptObject =
                    serde_json::from_value(object).map_err(D::Error::custom)?;
                Ok(RePrompt {
                    text: parsed.text,
                    attachments: parsed.attachments,
                    allowed_tools: parsed.allowed_tools,
                    extra: parsed.extra,
                })
            }
            other => Err(D::Error::custom(format!(
                "a re-prompt is a string or {{\"text\", \"attachments\"}}, not {}",
                crate::document::json_type_name(&other)
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_and_four_image_types_can_be_sent_and_nothing_else() {
        assert_eq!(attachment_kind("text/markdown"), Some(AttachmentKind::Text));
        assert_eq!(
            attachment_kind("application/ld+json; charset=utf-8"),
            Some(AttachmentKind::Text)
        );
        assert_eq!(attachment_kind("image/svg+xml"), Some(AttachmentKind::Text));
        assert_eq!(attachment_kind("IMAGE/PNG"), Some(AttachmentKind::Image));
        assert_eq!(attachment_kind("image/tiff"), None);
        assert_eq!(attachment_kind("application/zip"), None);
        assert_eq!(attachment_kind("application/octet-stream"), None);
    }

    #[test]
    fn plain_string_round_trips_as_a_string() {
        let prompt: RePrompt = serde_json::from_value(json!("Review your work")).unwrap();
        assert_eq!(prompt.text, "Review your work");
        assert_eq!(
            serde_json::to_value(&prompt).unwrap(),
            json!("Review your work")
        );
    }

    #[test]
    fn object_without_attachments_is_written_back_as_a_string() {
        let prompt: RePrompt =
            serde_json::from_value(json!({"text": "Again", "attachments": []})).unwrap();
        assert_eq!(serde_json::to_value(&prompt).unwrap(), json!("Again"));
    }

    #[test]
    fn object_with_attachments_keeps_its_object_form() {
        let wire = json!({
            "text": "Compare with the spec",
            "attachments": [{"id": "a1", "name": "spec.md", "media_type": "text/markdown", "size_bytes": 12}]
        });
        let prompt: RePrompt = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(prompt.attachments.len(), 1);
        assert_eq!(serde_json::to_value(&prompt).unwrap(), wire);
    }

    #[test]
    fn a_number_is_refused_with_a_clear_message() {
        let error = serde_json::from_value::<RePrompt>(json!(3)).unwrap_err();
        assert!(
            error.to_string().contains("a re-prompt is a string"),
            "{error}"
        );
    }
}
