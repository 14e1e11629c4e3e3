//! What the browser reads of a run: `GET /api/runs/{id}` (the engine's
//! records, seen from the page; the engine crate itself does not go into
//! the browser bundle).

use std::collections::BTreeMap;

use graph::Graph;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: String,
    pub graph_id: Option<String>,
    pub graph_revision: Option<i64>,
    pub status: String,
    pub error: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    #[serde(default)]
    pub input: Value,
    /// The graph as it was when the run started.
    pub graph: Graph,
    #[serde(default)]
    pub modules: BTreeMap<String, ModuleRecord>,
    #[serde(default)]
    pub last_event_id: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModuleRecord {
    #[serde(default)]
    pub activations: Vec<ActivationView>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseView {
    pub index: u32,
    pub label: String,
    pub text: String,
    #[serde(default)]
    pub tokens_in: u64,
    #[serde(default)]
    pub tokens_out: u64,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub complete: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TranscriptLine {
    pub role: String,
    pub text: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActivationView {
    pub module_id: String,
    pub activation: u32,
    pub status: String,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    #[serde(default)]
    pub responses: Vec<ResponseView>,
    /// Port id → value (`{"type": "bundle", "content": …}` …).
    #[serde(default)]
    pub outputs: BTreeMap<String, Value>,
    #[serde(default)]
    pub named_outputs: BTreeMap<String, String>,
    #[serde(default)]
    pub receipt: Option<Value>,
    #[serde(default)]
    pub transcript: Vec<TranscriptLine>,
    pub error: Option<String>,
}

/// A bundle's text: its content, or the merged text of a response bundle.
fn bundle_text(bundle: &Value) -> Option<String> {
    let content = bundle.get("content")?;
    Some(match content {
        Value::String(text) => text.clone(),
        Value::Object(object) => match object.get("merged_content").and_then(Value::as_str) {
            Some(merged) => merged.to_owned(),
            None => serde_json::to_string_pretty(content).unwrap_or_default(),
        },
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    })
}

impl ActivationView {
    /// The merged output text of `data_out`; for an output module, every
    /// result it collected, each under the label (`label_of` a module id)
    /// of where it came from when there are several.
    pub fn merged(&self, label_of: &dyn Fn(&str) -> String) -> Option<String> {
        let mut results: Vec<(usize, &Value)> = self
            .outputs
            .iter()
            .filter_map(|(port, value)| {
                let number = port.strip_prefix("result_")?.parse::<usize>().ok()?;
                Some((number, value))
            })
            .collect();
        results.sort_by_key(|(number, _)| *number);
        if results.len() > 1 {
            return Some(
                results
                    .iter()
                    .map(|(_, bundle)| {
                        let source = bundle
                            .get("source_module")
                            .and_then(Value::as_str)
                            .map_or_else(|| "another module".to_owned(), label_of);
                        format!(
                            "── From “{source}” ──\n{}",
                            bundle_text(bundle).unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            );
        }
        let bundle = self
            .outputs
            .get("data_out")
            .or_else(|| self.outputs.get("result_1"))
            .or_else(|| {
                self.outputs
                    .values()
                    .find(|value| value.get("type").and_then(Value::as_str) == Some("bundle"))
            })?;
        bundle_text(bundle)
    }

    /// Tokens in and out of the whole activation.
    pub fn tokens(&self) -> u64 {
        match &self.receipt {
            Some(receipt) => {
                receipt
                    .get("tokens_in")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    + receipt
                        .get("tokens_out")
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
            }
            None => self
                .responses
                .iter()
                .map(|response| response.tokens_in + response.tokens_out)
                .sum(),
        }
    }

    pub fn duration_ms(&self) -> Option<i64> {
        self.finished_at.map(|finished| finished - self.started_at)
    }
}

impl RunRecord {
    /// A module's label in the graph as it ran (its id if it is not there).
    pub fn label_of(&self, module: &str) -> String {
        self.graph.module(module).map_or_else(
            || module.to_owned(),
            |module| module.display_label().to_owned(),
        )
    }

    /// The last activation of each module.
    pub fn last(&self, module: &str) -> Option<&ActivationView> {
        self.modules.get(module)?.activations.last()
    }

    pub fn is_finished(&self) -> bool {
        matches!(
            self.status.as_str(),
            "completed" | "failed" | "cancelled" | "interrupted"
        )
    }
}

/// A run in a graph's history list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: String,
    pub status: String,
    pub error: Option<String>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_run_as_the_api_gives_it_reads_back() {
        let record: RunRecord = serde_json::from_value(json!({
            "id": "r_x", "graph_id": "g_y", "graph_revision": 3, "status": "completed", "error": null,
            "created_at": 1, "started_at": 2, "finished_at": 9, "input": {"text": "tides", "files": []},
            "graph": graph::starter::starter_graph(),
            "modules": {"m2": {"activations": [{
                "module_id": "m2", "activation": 1, "status": "completed", "started_at": 3, "finished_at": 7,
                "responses": [{"index": 0, "label": "Original", "text": "a", "tokens_in": 5, "tokens_out": 1, "duration_ms": 1, "complete": true}],
                "outputs": {"data_out": {"type": "bundle", "content": {"merged_content": "a\\n───── Re-prompt 1 ─────\\nb", "response_count": 2, "has_re_prompts": true}, "content_type": "x", "source_module": "m2", "meta": {}}},
                "named_outputs": {}, "receipt": {"tokens_in": 10, "tokens_out": 4, "re_prompt_count": 1},
                "transcript": [{"role": "user", "text": "hi"}], "error": null
            }]}},
            "last_event_id": 12
        }))
        .unwrap();
        let draft = record.last("m2").unwrap();
        assert_eq!(
            draft.merged(&str::to_owned).unwrap(),
            "a\\n───── Re-prompt 1 ─────\\nb"
        );
        assert_eq!(draft.tokens(), 14);
        assert_eq!(draft.duration_ms(), Some(4));
        assert!(record.is_finished());
    }
}
