//! Validators with failure patterns on an agent task (PRODUCT §3.11):
//! checks run when its chain is done; a failure sends its pattern's prompt,
//! filled from the validator's output, as a new turn in the same session,
//! and the checks run again, up to `on_failure.max_attempts` fix turns;
//! then it gives up.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::Arc;

use engine::EngineSettings;
use engine::provider::sim::SimProvider;
use serde_json::{Value, json};
use support::{cable, engine_with, graph, module, registry_with, run};
use wire::event::{RunEvent, RunStatus};

/// An engine that runs commands, confined, in a folder of this test's own.
fn engine(test: &str) -> engine::Engine {
    let folder =
        std::env::temp_dir().join(format!("patchbay-validators-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    engine_with(
        registry_with("sim", Arc::new(SimProvider::default())),
        EngineSettings {
            commands_enabled: true,
            workspace_root: folder,
            sandbox: engine::sandbox::Sandbox::detect("bwrap"),
            ..EngineSettings::default()
        },
    )
}

/// input → "work" (an agent task checked by `check`, which passes when it
/// prints nothing) → "done", and "work"'s give_up_out to "gave_up".
fn checked(check: &str, fixes: u32) -> graph::Graph {
    let config = json!({
        "instruction": "Write the report.",
        "agent_config": {"provider": "sim", "model": "sim-1"},
        "session_persist": true,
        "validators": [{"name": "tests", "command": check, "success_when": "empty",
                        "failure_pattern": "failing", "extract_params": {"failures": "output", "count": "line_count"}}],
        "failure_patterns": [{"name": "failing", "description": "Checks fail",
                              "prompt": "{{ count }} check(s) failed:\n{{ failures }}\nFix them.", "params": ["failures", "count"]}],
        "on_failure": {"max_attempts": fixes},
    });
    graph(
        vec![
            module("in", "step.input", json!({})),
            module("work", "step.agent_task", config),
            module("done", "step.output", json!({})),
            module("gave_up", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("work", "data_in")),
            cable("c2", ("work", "data_out"), ("done", "data_in")),
            cable("c3", ("work", "give_up_out"), ("gave_up", "data_in")),
        ],
    )
}

fn validator_events(recorder: &engine::recorder::MemoryRecorder) -> Vec<Value> {
    recorder
        .events()
        .into_iter()
        .filter_map(|record| match record.event {
            RunEvent::ModuleValidated {
                validator, passed, ..
            } => Some(json!({"validated": validator, "passed": passed})),
            RunEvent::ModuleFixDispatched { fix, of, .. } => Some(json!({"fix": fix, "of": of})),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn passing_validators_let_the_module_complete() {
    let (outcome, recorder) = run(&engine("pass"), checked("true", 3)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(
        validator_events(&recorder),
        [json!({"validated": "tests", "passed": true})]
    );
    assert_eq!(recorder.state()["work.gate.tests"], "true");
    assert!(recorder.activation("done", 1).is_some());
}

#[tokio::test]
async fn a_failed_validator_sends_its_pattern_as_a_fix_turn_in_the_same_session() {
    // Fails the first time it runs (two lines of failures), then passes.
    let check = "if [ -f .checked ]; then exit 0; fi; touch .checked; echo 'test_a failed'; echo 'test_b failed'";
    let (outcome, recorder) = run(&engine("fix"), checked(check, 3)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(
        validator_events(&recorder),
        [
            json!({"validated": "tests", "passed": false}),
            json!({"fix": 1, "of": 3}),
            json!({"validated": "tests", "passed": true}),
        ]
    );
    let work = recorder.activation("work", 1).unwrap();
    let labels: Vec<&str> = work
        .responses
        .iter()
        .map(|response| response.label.as_str())
        .collect();
    assert_eq!(labels, ["Original", "Fix 1"]);
    // The fix turn is the pattern's prompt, filled, after the first turn's
    // reply in the same conversation.
    let turns: Vec<&str> = work
        .transcript
        .iter()
        .filter(|entry| entry.role == wire::TranscriptRole::User)
        .map(|entry| entry.text.as_str())
        .collect();
    assert_eq!(turns.len(), 2, "{turns:#?}");
    assert_eq!(
        turns[1],
        "2 check(s) failed:\ntest_a failed\ntest_b failed\nFix them."
    );
    let merged = recorder.state()["work.output"].clone();
    assert!(merged.contains("───── Fix 1 ─────"), "{merged}");
    assert_eq!(recorder.state()["work.gate.tests"], "true");
}

#[tokio::test]
async fn used_fix_turns_give_up() {
    let (outcome, recorder) = run(&engine("give-up"), checked("echo still broken", 2)).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let fixes = validator_events(&recorder)
        .into_iter()
        .filter(|event| event.get("fix").is_some())
        .count();
    assert_eq!(fixes, 2);
    assert!(recorder.activation("done", 1).is_none());
    let work = recorder.activation("work", 1).unwrap();
    assert_eq!(
        work.gave_up.as_deref(),
        Some("validator “tests” still failed after 2 fix turns: still broken")
    );
    assert!(recorder.activation("gave_up", 1).is_some());
    assert_eq!(recorder.state()["work.gate.tests"], "false");
}
