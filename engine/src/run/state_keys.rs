//! The run state's keys a module's activation writes (PRODUCT §3.5), and
//! which of them changed since they were last recorded.

use graph::kinds::coding::DIFF_OUT;
use wire::activation::ActivationRecord;

use crate::activation::ActivationOutput;
use crate::render::RunState;

/// The flat state keys an activation writes.
pub(super) fn write_state(
    state: &mut RunState,
    label: &str,
    activation: u32,
    record: &ActivationRecord,
    output: &ActivationOutput,
) {
    let mut set = |key: &str, value: String| {
        state.insert(format!("{label}.{key}"), value);
    };
    set("output", output.output_text.clone());
    set("status", "completed".to_owned());
    set("attempt", activation.to_string());
    let duration = record.finished_at.unwrap_or(record.started_at) - record.started_at;
    set("duration_ms", duration.to_string());
    let receipt = output.receipt.clone().unwrap_or_default();
    set("tokens_in", receipt.tokens_in.to_string());
    set("tokens_out", receipt.tokens_out.to_string());
    // A module that called no model cost nothing; one whose model has no
    // price has no cost, and says so.
    let cost = output
        .receipt
        .as_ref()
        .map_or(Some(0.0), |receipt| receipt.cost);
    set(
        "cost",
        cost.map_or_else(
            || "no price configured".to_owned(),
            |cost| format!("{cost:.6}"),
        ),
    );
    set("re_prompt_count", receipt.re_prompt_count.to_string());
    set("session_id", output.session_key.clone().unwrap_or_default());
    set("turns", record.responses.len().to_string());
    // An approval completes whatever was decided: how, for templates and
    // conditions (`approve`, `reject`, `revise`, or `timeout`).
    if let Some(decided) = &record.decision {
        set("decision", decided.decision.as_str().to_owned());
    } else if record.waiting.is_some() {
        set("decision", "timeout".to_owned());
    }
    for (name, value) in &output.state_set {
        set(&format!("set.{name}"), value.clone());
    }
    // What each tool last gave back (PRODUCT §3.17): `{{ Label.tools.lookup }}`.
    for (name, value) in crate::routing::latest_tool_results(record) {
        let text = match value {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        set(&format!("tools.{name}"), text);
    }
    for (name, passed) in &output.gates {
        set(&format!("gate.{name}"), passed.to_string());
    }
    if let Some(diff) = output
        .ports
        .iter()
        .find(|(port, _)| port == DIFF_OUT)
        .and_then(|(_, value)| value.as_bundle())
    {
        set("diff", diff.as_text());
    }
}

/// Copies a module's state keys under `prev.` before it runs again
/// (Gump): `prev.<label>.output` is what its last attempt left.
pub(super) fn keep_as_previous(state: &mut RunState, label: &str) {
    let prefix = format!("{label}.");
    let previous: Vec<(String, String)> = state
        .range(prefix.clone()..)
        .take_while(|(key, _)| key.starts_with(&prefix))
        .map(|(key, value)| (format!("prev.{key}"), value.clone()))
        .collect();
    state.extend(previous);
}

/// The state keys of module `label` (its own and its `prev.` ones, the
/// only keys its activation changes) that differ from `saved`, which then
/// holds them too.
pub(super) fn changes_since(
    state: &RunState,
    saved: &mut RunState,
    label: &str,
) -> Vec<(String, String)> {
    let mut changes = Vec::new();
    for prefix in [format!("{label}."), format!("prev.{label}.")] {
        for (key, value) in state
            .range(prefix.clone()..)
            .take_while(|(key, _)| key.starts_with(&prefix))
        {
            if saved.get(key) != Some(value) {
                changes.push((key.clone(), value.clone()));
            }
        }
    }
    saved.extend(changes.iter().cloned());
    changes
}
