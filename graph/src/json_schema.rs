//! The JSON Schemas a model's reply is held to (OpenAI's `json_schema`,
//! an Anthropic tool's `input_schema`), as a type: the intent gate's here,
//! and the engine's for its reviews, scores and claims. Only what those
//! schemas use, written in the order providers have always been sent it.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemaType {
    Object,
    Array,
    String,
    Integer,
}

/// A schema, or a property's schema inside one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Schema {
    #[serde(rename = "type")]
    pub schema_type: SchemaType,
    /// The only values a string may take.
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<u32>,
    /// An array's items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Schema>>,
    /// An object's properties, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Properties>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    #[serde(
        rename = "additionalProperties",
        skip_serializing_if = "Option::is_none"
    )]
    pub additional_properties: Option<bool>,
}

/// An object's properties, written as a JSON object in this order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Properties(pub Vec<(String, Schema)>);

impl Serialize for Properties {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, schema) in &self.0 {
            map.serialize_entry(name, schema)?;
        }
        map.end()
    }
}

impl Schema {
    fn of(schema_type: SchemaType) -> Schema {
        Schema {
            schema_type,
            choices: None,
            minimum: None,
            maximum: None,
            items: None,
            properties: None,
            required: None,
            additional_properties: None,
        }
    }

    pub fn string() -> Schema {
        Schema::of(SchemaType::String)
    }

    /// A string that is one of `choices`.
    pub fn one_of<Choice: ToString>(choices: impl IntoIterator<Item = Choice>) -> Schema {
        Schema {
            choices: Some(
                choices
                    .into_iter()
                    .map(|choice| choice.to_string())
                    .collect(),
            ),
            ..Schema::string()
        }
    }

    /// An integer from `minimum` to `maximum`.
    pub fn integer(minimum: u32, maximum: u32) -> Schema {
        Schema {
            minimum: Some(minimum),
            maximum: Some(maximum),
            ..Schema::of(SchemaType::Integer)
        }
    }

    pub fn array(items: Schema) -> Schema {
        Schema {
            items: Some(Box::new(items)),
            ..Schema::of(SchemaType::Array)
        }
    }

    /// A strict object, as OpenAI's structured output asks: every property
    /// required, no other allowed.
    pub fn object<Name: Into<String>>(
        properties: impl IntoIterator<Item = (Name, Schema)>,
    ) -> Schema {
        let properties: Vec<(String, Schema)> = properties
            .into_iter()
            .map(|(name, schema)| (name.into(), schema))
            .collect();
        Schema {
            required: Some(properties.iter().map(|(name, _)| name.clone()).collect()),
            properties: Some(Properties(properties)),
            additional_properties: Some(false),
            ..Schema::of(SchemaType::Object)
        }
    }

    /// The schema as JSON, as a request carries it.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_is_written_in_the_order_providers_are_sent_it() {
        let schema = Schema::object([
            (
                "scores",
                Schema::array(Schema::object([
                    ("criterion", Schema::one_of(["Clarity"])),
                    ("score", Schema::integer(0, 10)),
                    ("reasoning", Schema::string()),
                ])),
            ),
            ("summary", Schema::string()),
        ]);
        assert_eq!(
            serde_json::to_string(&schema).unwrap(),
            concat!(
                r#"{"type":"object","properties":{"scores":{"type":"array","items":{"type":"object","properties":{"#,
                r#""criterion":{"type":"string","enum":["Clarity"]},"score":{"type":"integer","minimum":0,"maximum":10},"reasoning":{"type":"string"}},"#,
                r#""required":["criterion","score","reasoning"],"additionalProperties":false}},"summary":{"type":"string"}},"#,
                r#""required":["scores","summary"],"additionalProperties":false}"#
            )
        );
    }
}
