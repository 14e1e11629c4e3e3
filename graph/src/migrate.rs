//! Migration of DOC23 R3.1 coding configs (PRODUCT §1.4, DOC23 §9).
//!
//! R3.1 finished a coding module by `tests_pass` (with a `test_command`) or by
//! `iteration_limit`. R3.2 has only `agent_signals`; the old intent becomes
//! re-prompts on the first agent. The migration runs on the raw JSON before
//! the configs are typed, because the typed config no longer has those fields.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Where a migrated document says what was changed, once, for the editor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationNote {
    pub module_id: String,
    /// The schema the module was written in, e.g. `doc23/R3.1`.
    pub from: String,
    pub message: String,
}

pub const R31: &str = "doc23/R3.1";

/// The default R3.1 cap when a document does not give `max_iterations`.
const DEFAULT_FIX_CYCLES: u64 = 3;

pub fn tests_pass_re_prompt(test_command: Option<&str>, fix_cycles: u64) -> String {
    let command = match test_command.map(str::trim) {
        Some(command) if !command.is_empty() => format!(" (`{command}`)"),
        _ => String::new(),
    };
    format!(
        "Run the tests for this project{command}. If any tests fail, fix the issues and run the \
         tests again. Repeat until all tests pass or you've attempted {fix_cycles} fix cycles."
    )
}

pub const ITERATION_LIMIT_RE_PROMPTS: [&str; 2] = [
    "Review your implementation for completeness and correctness.",
    "Address any remaining issues and finalize.",
];

/// Migrates every R3.1 coding module of a raw document in place and returns
/// a note per migrated module.
pub fn migrate_r31(document: &mut Value) -> Vec<MigrationNote> {
    let mut notes = Vec::new();
    let Some(modules) = document.get_mut("modules").and_then(Value::as_array_mut) else {
        return notes;
    };
    for module in modules {
        if module.get("kind").and_then(Value::as_str) != Some("step.coding") {
            continue;
        }
        let module_id = module
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(config) = module.get_mut("config").and_then(Value::as_object_mut) else {
            continue;
        };
        if let Some(message) = migrate_coding_config(config) {
            notes.push(MigrationNote {
                module_id,
                from: R31.to_owned(),
                message,
            });
        }
    }
    notes
}

fn migrate_coding_config(config: &mut Map<String, Value>) -> Option<String> {
    let mode = config.get("completion_mode").and_then(Value::as_str)?;
    let fix_cycles = config
        .get("max_iterations")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_FIX_CYCLES);
    let (re_prompts, message) = match mode {
        "tests_pass" => {
            let test_command = config
                .get("test_command")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let message = match &test_command {
                Some(command) if !command.trim().is_empty() => format!(
                    "Completion mode \"tests_pass\" with test command `{}` became a re-prompt on the first agent.",
                    command.trim()
                ),
                _ => "Completion mode \"tests_pass\" became a re-prompt on the first agent."
                    .to_owned(),
            };
            (
                vec![tests_pass_re_prompt(test_command.as_deref(), fix_cycles)],
                message,
            )
        }
        "iteration_limit" => (
            ITERATION_LIMIT_RE_PROMPTS.map(str::to_owned).to_vec(),
            "Completion mode \"iteration_limit\" became two re-prompts on the first agent."
                .to_owned(),
        ),
        _ => return None,
    };
    config.insert("completion_mode".to_owned(), json!("agent_signals"));
    config.remove("test_command");

    let agents = config
        .entry("agents")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !agents.is_array() {
        // A broken `agents` is reported by typed loading, not papered over here.
        return Some(message);
    }
    if let Some(agents) = agents.as_array_mut() {
        if agents.is_empty() {
            agents.push(json!({"role": "builder"}));
        }
        if let Some(first) = agents.first_mut().and_then(Value::as_object_mut) {
            let list = first
                .entry("re_prompts")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Some(list) = list.as_array_mut() {
                list.extend(re_prompts.into_iter().map(Value::String));
            }
        }
    }
    Some(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Graph, ModuleConfig};

    fn r31_document(config: Value) -> Value {
        json!({"modules": [{"id": "m1", "kind": "step.coding", "config": config}]})
    }

    fn coding(graph: &Graph) -> &crate::config::CodingConfig {
        match &graph.modules[0].config {
            ModuleConfig::Coding(config) => config,
            other => panic!("not coding: {other:?}"),
        }
    }

    #[test]
    fn tests_pass_becomes_a_re_prompt_on_the_first_agent() {
        let graph = Graph::from_value(r31_document(json!({
            "completion_mode": "tests_pass",
            "test_command": "npm test",
            "max_iterations": 3,
            "agents": [{"role": "builder", "re_prompts": []}, {"role": "reviewer"}]
        })))
        .unwrap();
        let config = coding(&graph);
        assert_eq!(config.agents[0].re_prompts.len(), 1);
        assert_eq!(
            config.agents[0].re_prompts[0].text,
            "Run the tests for this project (`npm test`). If any tests fail, fix the issues and \
             run the tests again. Repeat until all tests pass or you've attempted 3 fix cycles."
        );
        assert!(config.agents[1].re_prompts.is_empty());
        assert_eq!(config.max_iterations, 3);
        assert!(!config.extra.contains_key("test_command"));
        let written = serde_json::to_value(&graph).unwrap();
        assert_eq!(
            written["modules"][0]["config"]["completion_mode"],
            "agent_signals"
        );
        assert!(
            written["modules"][0]["config"]
                .get("test_command")
                .is_none()
        );
        assert_eq!(graph.migrations.len(), 1);
        assert_eq!(graph.migrations[0].module_id, "m1");
        assert_eq!(graph.migrations[0].from, R31);
    }

    #[test]
    fn iteration_limit_becomes_the_two_doc23_re_prompts() {
        let graph = Graph::from_value(r31_document(json!({
            "completion_mode": "iteration_limit",
            "max_iterations": 3,
            "agents": [{"role": "builder"}]
        })))
        .unwrap();
        let texts: Vec<&str> = coding(&graph).agents[0]
            .re_prompts
            .iter()
            .map(|prompt| prompt.text.as_str())
            .collect();
        assert_eq!(texts, ITERATION_LIMIT_RE_PROMPTS);
        assert_eq!(graph.migrations.len(), 1);
    }

    #[test]
    fn a_module_without_agents_gets_a_builder() {
        let graph = Graph::from_value(r31_document(json!({
            "completion_mode": "tests_pass", "test_command": "cargo test"
        })))
        .unwrap();
        let config = coding(&graph);
        assert_eq!(config.agents.len(), 1);
        assert_eq!(config.agents[0].role, "builder");
        assert!(config.agents[0].re_prompts[0].text.contains("`cargo test`"));
        assert!(config.agents[0].re_prompts[0].text.contains("3 fix cycles"));
    }

    #[test]
    fn a_current_document_is_left_alone() {
        let graph = Graph::from_value(r31_document(json!({
            "completion_mode": "agent_signals",
            "agents": [{"role": "builder", "re_prompts": ["Check"]}]
        })))
        .unwrap();
        assert!(graph.migrations.is_empty());
        assert_eq!(coding(&graph).agents[0].re_prompts.len(), 1);
    }

    #[test]
    fn an_unknown_completion_mode_is_a_load_error_not_a_silent_default() {
        let error =
            Graph::from_value(r31_document(json!({"completion_mode": "vibes"}))).unwrap_err();
        assert_eq!(error.path, "modules[0].config.completion_mode");
    }
}
