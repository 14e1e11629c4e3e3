//! The merged re-prompt output format (DOC23 §4.1); what travels along
//! cables is declared in `wire::bundle`.

use wire::content::MergedResponses;

pub use wire::bundle::{ContextBundle, PortValue, Receipt, content_type};

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
    let merged = MergedResponses {
        merged_content: merge_responses(responses),
        response_count: responses.len(),
        has_re_prompts,
    };
    ContextBundle {
        source_session_key: session_key,
        ..ContextBundle::merged(source_module, &merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
