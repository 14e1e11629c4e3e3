//! What travels along cables: ContextBundles, signals and receipts
//! (PRODUCT §2.1); the run record keeps them as each port's value.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::MergedResponses;
use crate::fields::{Fields, read_by_hand};

/// Content types a bundle can carry.
pub mod content_type {
    pub const TEXT: &str = "text/plain";
    /// [`MergedResponses`].
    pub const MERGED: &str = "application/vnd.patchbay.merged+json";
    pub const JSON: &str = "application/json";
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextBundle {
    pub content: Value,
    pub content_type: String,
    /// The module id that produced it.
    pub source_module: String,
    /// The chat session that produced it, for `session_mode: continue`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source_session_key: Option<String>,
    /// The workspace a coding module left, where a coding module it feeds
    /// starts from (PRODUCT §1.2, `step.coding`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source_workspace: Option<SourceWorkspace>,
    #[serde(default)]
    pub meta: Map<String, Value>,
}

/// A coding module's workspace as an activation left it: the run and the
/// workspace's name in it (the module's id, or a variant's), and the commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceWorkspace {
    pub run_id: String,
    pub workspace: String,
    pub commit: String,
}

impl ContextBundle {
    pub fn text(source_module: &str, text: impl Into<String>) -> ContextBundle {
        ContextBundle {
            content: Value::String(text.into()),
            content_type: content_type::TEXT.to_owned(),
            source_module: source_module.to_owned(),
            source_session_key: None,
            source_workspace: None,
            meta: Map::new(),
        }
    }

    pub fn json(source_module: &str, content: Value) -> ContextBundle {
        ContextBundle {
            content,
            content_type: content_type::JSON.to_owned(),
            source_module: source_module.to_owned(),
            source_session_key: None,
            source_workspace: None,
            meta: Map::new(),
        }
    }

    /// A re-prompt chain's merged output, as `data_out` carries it.
    pub fn merged(source_module: &str, merged: &MergedResponses) -> ContextBundle {
        ContextBundle {
            content_type: content_type::MERGED.to_owned(),
            ..ContextBundle::typed(source_module, merged)
        }
    }

    /// A bundle of typed content (`crate::content`), as JSON.
    pub fn typed(source_module: &str, content: &impl Serialize) -> ContextBundle {
        ContextBundle::json(
            source_module,
            serde_json::to_value(content).unwrap_or(Value::Null),
        )
    }

    /// The content read as `T`; `None` when it is not one.
    pub fn content_as<T: DeserializeOwned>(&self) -> Option<T> {
        // From an owned copy: the browser bundle has the decoders of an
        // owned `Value` anyway (`PortValue` is read through one), and those
        // of a borrowed one would be more code in it.
        T::deserialize(self.content.clone()).ok()
    }

    /// The bundle as prompt text: plain text as is, a merged bundle's
    /// `merged_content`, anything else as pretty JSON.
    pub fn as_text(&self) -> String {
        match &self.content {
            Value::String(text) => text.clone(),
            Value::Object(_) if self.content_type == content_type::MERGED => self
                .content_as::<MergedResponses>()
                .map(|merged| merged.merged_content)
                .unwrap_or_default(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        }
    }
}

/// Run metadata of one activation (`receipt_out`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Receipt {
    pub module_id: String,
    pub activation: u32,
    pub provider: String,
    pub model: String,
    pub simulated: bool,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub duration_ms: u64,
    /// In US dollars, from the tokens the provider reported and the
    /// model's configured price; `None` when the model has no price (not
    /// the same as free: the simulated provider costs 0).
    pub cost: Option<f64>,
    pub re_prompt_count: u32,
    /// The tools it called, each with how many calls and their time
    /// (PRODUCT §3.17).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolUse>,
}

/// How one tool was used in an activation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolUse {
    /// The name the model called it by.
    pub tool: String,
    pub calls: u32,
    pub duration_ms: u64,
}

impl ToolUse {
    /// `calls` counted by tool, in the order first called, with their
    /// time: an activation's receipt, and a run's figures.
    pub fn tally<'a>(
        calls: impl IntoIterator<Item = &'a crate::activation::ToolCallRecord>,
    ) -> Vec<ToolUse> {
        let mut used: Vec<ToolUse> = Vec::new();
        for call in calls {
            match used.iter_mut().find(|tool| tool.tool == call.tool) {
                Some(tool) => {
                    tool.calls += 1;
                    tool.duration_ms += call.duration_ms;
                }
                None => used.push(ToolUse {
                    tool: call.tool.clone(),
                    calls: 1,
                    duration_ms: call.duration_ms,
                }),
            }
        }
        used
    }

    fn read(value: Value) -> Result<ToolUse, serde_json::Error> {
        let mut fields = Fields::of("tool use", value)?;
        Ok(ToolUse {
            tool: fields.text("tool")?,
            calls: fields.number("calls")?,
            duration_ms: fields.number("duration_ms")?,
        })
    }
}

impl Receipt {
    fn read(value: Value) -> Result<Receipt, serde_json::Error> {
        let mut fields = Fields::of("receipt", value)?;
        Ok(Receipt {
            module_id: fields.text("module_id")?,
            activation: fields.number("activation")?,
            provider: fields.text("provider")?,
            model: fields.text("model")?,
            simulated: fields.flag("simulated")?,
            tokens_in: fields.number("tokens_in")?,
            tokens_out: fields.number("tokens_out")?,
            duration_ms: fields.number("duration_ms")?,
            cost: fields.optional_float("cost")?,
            re_prompt_count: fields.number("re_prompt_count")?,
            tools: fields.optional_list("tools", ToolUse::read)?,
        })
    }
}

read_by_hand!(Receipt);

/// A value on a port.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PortValue {
    Bundle(ContextBundle),
    Signal { source_module: String },
    Receipt(Receipt),
}

// Read by hand: serde's decoder for an internally tagged enum buffers the
// whole value in its own `Content` tree, which cost the browser bundle 11 kB;
// reading a JSON object and then the variant from it reuses decoders the
// bundle has anyway.
impl<'de> Deserialize<'de> for PortValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<PortValue, D::Error> {
        use serde::de::Error;
        const VARIANTS: &[&str] = &["bundle", "signal", "receipt"];
        let mut fields = Map::<String, Value>::deserialize(deserializer)?;
        let Some(Value::String(tag)) = fields.remove("type") else {
            return Err(D::Error::missing_field("type"));
        };
        let fields = Value::Object(fields);
        let value = match tag.as_str() {
            "bundle" => ContextBundle::deserialize(fields).map(PortValue::Bundle),
            "receipt" => Receipt::deserialize(fields).map(PortValue::Receipt),
            "signal" => match fields.get("source_module") {
                Some(Value::String(source_module)) => Ok(PortValue::Signal {
                    source_module: source_module.clone(),
                }),
                _ => return Err(D::Error::missing_field("source_module")),
            },
            other => return Err(D::Error::unknown_variant(other, VARIANTS)),
        };
        value.map_err(D::Error::custom)
    }
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
    use serde_json::json;

    #[test]
    fn every_port_value_reads_back_as_written() {
        let values = [
            PortValue::Bundle(ContextBundle::text("m1", "Tides rise")),
            PortValue::Signal {
                source_module: "m2".to_owned(),
            },
            PortValue::Receipt(Receipt {
                module_id: "m3".to_owned(),
                activation: 2,
                tokens_out: 41,
                ..Receipt::default()
            }),
        ];
        for value in values {
            let written = serde_json::to_value(&value).unwrap();
            assert_eq!(serde_json::from_value::<PortValue>(written).unwrap(), value);
        }
        let signal: PortValue =
            serde_json::from_str(r#"{"type":"signal","source_module":"m4"}"#).unwrap();
        assert_eq!(
            signal,
            PortValue::Signal {
                source_module: "m4".to_owned()
            }
        );
    }

    #[test]
    fn a_port_value_without_a_known_type_is_an_error_that_names_it() {
        let unknown = serde_json::from_value::<PortValue>(json!({"type": "parcel"}));
        assert!(unknown.unwrap_err().to_string().contains("parcel"));
        let untyped = serde_json::from_value::<PortValue>(json!({"source_module": "m1"}));
        assert!(untyped.unwrap_err().to_string().contains("type"));
        let no_source = serde_json::from_value::<PortValue>(json!({"type": "signal"}));
        assert!(no_source.unwrap_err().to_string().contains("source_module"));
    }
}
