//! How the page reads a run record (`GET /api/runs/{id}`, the `wire` types):
//! the text each activation produced, with an output module's results each
//! under the name of the module it came from.

use graph::kinds::output::{result_key, result_number};
use graph::ports::DATA_OUT;
use wire::{ActivationRecord, PortValue};

/// A port value's text: a bundle's content (a response bundle's merged
/// text), nothing for signals and receipts.
pub fn value_text(value: &PortValue) -> String {
    match value {
        PortValue::Bundle(bundle) => bundle.as_text(),
        PortValue::Signal { .. } | PortValue::Receipt(_) => String::new(),
    }
}

fn source_of(value: &PortValue) -> Option<&str> {
    match value {
        PortValue::Bundle(bundle) => Some(&bundle.source_module),
        PortValue::Signal { source_module } => Some(source_module),
        PortValue::Receipt(_) => None,
    }
}

/// The merged output text of `data_out`; for an output module, every
/// result it collected, each under the label (`label_of` a module id) of
/// where it came from when there are several.
pub fn merged(activation: &ActivationRecord, label_of: &dyn Fn(&str) -> String) -> Option<String> {
    let mut results: Vec<(usize, &PortValue)> = activation
        .outputs
        .iter()
        .filter_map(|(key, value)| Some((result_number(key)?, value)))
        .collect();
    graph::order::by_rank(&mut results, |(number, _)| *number);
    if results.len() > 1 {
        return Some(
            results
                .iter()
                .map(|(_, value)| {
                    let source =
                        source_of(value).map_or_else(|| "another module".to_owned(), label_of);
                    format!("── From “{source}” ──\n{}", value_text(value))
                })
                .collect::<Vec<_>>()
                .join("\n\n"),
        );
    }
    let value = activation
        .outputs
        .get(DATA_OUT)
        .or_else(|| activation.outputs.get(&result_key(1)))
        .or_else(|| {
            activation
                .outputs
                .values()
                .find(|value| matches!(value, PortValue::Bundle(_)))
        })?;
    match value {
        PortValue::Bundle(bundle) => Some(bundle.as_text()),
        PortValue::Signal { .. } | PortValue::Receipt(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wire::RunRecord;

    #[test]
    fn a_run_as_the_api_gives_it_reads_back() {
        let record: RunRecord = serde_json::from_value(json!({
            "id": "r_x", "graph_id": "g_y", "graph_revision": 3, "status": "completed", "error": null,
            "created_at": 1, "started_at": 2, "finished_at": 9, "input": {"text": "tides", "files": []},
            "graph": graph::starter::starter_graph(),
            "modules": {"m2": {"activations": [{
                "module_id": "m2", "activation": 1, "status": "completed", "started_at": 3, "finished_at": 7,
                "responses": [{"index": 0, "label": "Original", "text": "a", "tokens_in": 5, "tokens_out": 1, "duration_ms": 1, "complete": true}],
                "outputs": {"data_out": {"type": "bundle", "content": {"merged_content": "a\\n───── Re-prompt 1 ─────\\nb", "response_count": 2, "has_re_prompts": true}, "content_type": "application/vnd.patchbay.merged+json", "source_module": "m2", "meta": {}}},
                "named_outputs": {}, "receipt": {"module_id": "m2", "activation": 1, "provider": "sim", "model": "sim-1", "simulated": true, "tokens_in": 10, "tokens_out": 4, "duration_ms": 4, "cost": 0.0, "re_prompt_count": 1},
                "transcript": [{"role": "user", "text": "hi"}], "error": null
            }]}},
            "last_event_id": 12
        }))
        .unwrap();
        let draft = record.last("m2").unwrap();
        assert_eq!(
            merged(draft, &str::to_owned).unwrap(),
            "a\\n───── Re-prompt 1 ─────\\nb"
        );
        assert_eq!(draft.tokens(), 14);
        assert_eq!(draft.duration_ms(), Some(4));
        assert!(record.is_finished());
    }
}
