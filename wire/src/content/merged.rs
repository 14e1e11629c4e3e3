//! The merged output of a re-prompt chain (DOC23 §4.1), the content of an
//! agent task's and a coding module's `data_out`
//! ([`crate::bundle::content_type::MERGED`]).

use serde::Serialize;
use serde_json::{Error, Value};

use crate::fields::{Fields, read_by_hand};

/// Every response of a chain in one text, with what the text is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MergedResponses {
    /// `response_0`, then each re-prompt's response after its separator line.
    pub merged_content: String,
    pub response_count: usize,
    pub has_re_prompts: bool,
}

impl MergedResponses {
    /// A field that is not there, or not what it should be, reads as
    /// empty: the text is what readers want.
    fn read(value: Value) -> Result<MergedResponses, Error> {
        let mut fields = Fields::of("merged responses", value)?;
        Ok(MergedResponses {
            merged_content: fields.text("merged_content").unwrap_or_default(),
            response_count: fields.number("response_count").unwrap_or_default(),
            has_re_prompts: fields.flag("has_re_prompts").unwrap_or_default(),
        })
    }
}

read_by_hand!(MergedResponses);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merged_responses_are_written_as_the_chain_always_wrote_them() {
        let merged = MergedResponses {
            merged_content: "a\n───── Re-prompt 1 ─────\nb".to_owned(),
            response_count: 2,
            has_re_prompts: true,
        };
        assert_eq!(
            serde_json::to_string(&merged).unwrap(),
            r#"{"merged_content":"a\n───── Re-prompt 1 ─────\nb","response_count":2,"has_re_prompts":true}"#
        );
        assert_eq!(
            serde_json::from_value::<MergedResponses>(json!({"merged_content": "only"})).unwrap(),
            MergedResponses {
                merged_content: "only".to_owned(),
                ..MergedResponses::default()
            }
        );
    }
}
