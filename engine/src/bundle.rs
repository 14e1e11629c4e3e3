//! What travels along cables: ContextBundles, signals and receipts
//! (PRODUCT §2.1), and the merged re-prompt output format (DOC23 §4.1).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Content types a bundle can carry.
pub mod content_type {
    pub const TEXT: &str = "text/plain";
    /// `{ merged_content, response_count, has_re_prompts }`.
    pub const MERGED: &str = "application/vnd.patchbay.merged+json";
    pub const JSON: &str = "application/json";
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextBundle {
    pub content: Value,
    pub content_type: String,
    /// The module id that produced it.
    pub source_module: String,
    /// The chat session that produced it, for `session_mode: continue`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source_session_key: Option<String>,
    #[serde(default)]
    pub meta: Map<String, Value>,
}

impl ContextBundle {
    pub fn text(source_module: &str, text: impl Into<String>) -> ContextBundle {
        ContextBundle {
            content: Value::String(text.into()),
            content_type: content_type::TEXT.to_owned(),
            source_module: source_module.to_owned(),
            source_session_key: None,
            meta: Map::new(),
        }
    }

    pub fn json(source_module: &str, content: Value) -> ContextBundle {
        ContextBundle {
            content,
            content_type: content_type::JSON.to_owned(),
            source_module: source_module.to_owned(),
            source_session_key: None,
            meta: Map::new(),
        }
    }

    /// The bundle as prompt text: plain text as is, a merged bundle's
    /// `merged_content`, anything else as pretty JSON.
    pub fn as_text(&self) -> String {
        match &self.content {
            Value::String(text) => text.clone(),
            Value::Object(object) if self.content_type == content_type::MERGED => object
                .get("merged_content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        }
    }
}

/// The separator line before re-prompt `index`'s response (DOC23 §4.1).
pub fn reprompt_separator(index: usize) -> String {
    format!("───── Re-prompt {index} ─────")
}

/// `response_0`, then for each re-prompt its separator line and response.
pub fn merge_responses(responses: &[String]) -> String {
    let mut merged = String::new();
    for (index, response) in responses.iter().enumerate() {
        if index > 0 {
            merged.push('\n');
            merged.push_str(&reprompt_separator(index));
            merged.push('\n');
        }
        merged.push_str(response);
    }
    merged
}

/// The `data_out` bundle of a re-prompt chain.
pub fn merged_bundle(
    source_module: &str,
    responses: &[String],
    has_re_prompts: bool,
    session_key: Option<String>,
) -> ContextBundle {
    ContextBundle {
        content: json!({
            "merged_content": merge_responses(responses),
            "response_count": responses.len(),
            "has_re_prompts": has_re_prompts,
        }),
        content_type: content_type::MERGED.to_owned(),
        source_module: source_module.to_owned(),
        source_session_key: session_key,
        meta: Map::new(),
    }
}

/// Run metadata of one activation (`receipt_out`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    pub module_id: String,
    pub activation: u32,
    pub provider: String,
    pub model: String,
    pub simulated: bool,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub duration_ms: u64,
    /// In US dollars, when the provider's price is known; 0 otherwise.
    pub cost: f64,
    pub re_prompt_count: u32,
}

/// A value on a port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PortValue {
    Bundle(ContextBundle),
    Signal { source_module: String },
    Receipt(Receipt),
}

impl PortValue {
    /// The value as a bundle, for bundle inputs (a receipt feeds a bundle
    /// input as its JSON; PRODUCT §2.1).
    pub fn as_bundle(&self) -> Option<ContextBundle> {
        match self {
            PortValue::Bundle(bundle) => Some(bundle.clone()),
            PortValue::Receipt(receipt) => Some(ContextBundle::json(
                &receipt.module_id,
                serde_json::to_value(receipt).unwrap_or(Value::Null),
            )),
            PortValue::Signal { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merged_format_is_byte_for_byte_doc23() {
        assert_eq!(merge_responses(&["only".to_owned()]), "only");
        assert_eq!(
            merge_responses(&["first".to_owned(), "second".to_owned(), "third".to_owned()]),
            "first\n───── Re-prompt 1 ─────\nsecond\n───── Re-prompt 2 ─────\nthird"
        );
        let bundle = merged_bundle(
            "m2",
            &["a".to_owned(), "b".to_owned()],
            true,
            Some("s1".to_owned()),
        );
        assert_eq!(
            bundle.content,
            json!({"merged_content": "a\n───── Re-prompt 1 ─────\nb", "response_count": 2, "has_re_prompts": true})
        );
        assert_eq!(bundle.as_text(), "a\n───── Re-prompt 1 ─────\nb");
    }
}
