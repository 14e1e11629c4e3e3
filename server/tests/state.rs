//! The run state through the API (PRODUCT §3.5): kept in the database with
//! the run and part of `GET /api/runs/{id}`; a confined command reads it
//! from `$PATCHBAY_STATE` and sets keys of its own with
//! `PATCHBAY_SET:name=value`, which a later prompt uses as
//! `{{ <label>.set.<name> }}`; a key no command can set is refused before
//! the run.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::coding::setup_running_commands;
use support::{as_editor, call, create_graph, post, start, wait_for};

/// input → "Draft" (an agent task) → "check" (a command) → "Report" (an
/// agent task told `report`).
fn pipeline(command: &str, report: &str) -> Value {
    json!({
        "name": "State",
        "modules": [
            {"id": "in", "kind": "step.input", "label": "Topic", "config": {}},
            {"id": "draft", "kind": "step.agent_task", "label": "Draft", "config": {"instruction": "Write", "agent_config": {"provider": "sim"}}},
            {"id": "check", "kind": "step.command", "label": "check", "config": {"command": command}},
            {"id": "report", "kind": "step.agent_task", "label": "Report", "config": {"instruction": report, "agent_config": {"provider": "sim"}}},
        ],
        "cables": [
            {"id": "c1", "from": {"module": "in", "port": "data_out"}, "to": {"module": "draft", "port": "data_in"}},
            {"id": "c2", "from": {"module": "draft", "port": "data_out"}, "to": {"module": "check", "port": "data_in"}},
            {"id": "c3", "from": {"module": "check", "port": "pass_out"}, "to": {"module": "report", "port": "data_in"}},
        ],
    })
}

#[tokio::test]
async fn a_command_reads_the_run_state_and_sets_keys_a_later_prompt_uses() {
    let setup = setup_running_commands().await;
    let command = "grep -o '\"Draft.status\":\"[a-z]*\"' \"$PATCHBAY_STATE\"; echo PATCHBAY_SET:verdict=looks fine";
    let graph_id = create_graph(
        &setup.router,
        pipeline(command, "The check said: {{ check.set.verdict }}."),
    )
    .await;
    let run_id = start(&setup.router, &graph_id, "tides").await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed", "{run}");
    // The command saw the state as it was when it ran.
    let checked = &run["modules"]["check"]["activations"][0]["outputs"]["pass_out"]["content"];
    assert!(
        checked
            .as_str()
            .unwrap()
            .contains("\"Draft.status\":\"completed\""),
        "{checked}"
    );
    // The key it set is in the state, and the later prompt had it.
    let state = &run["state"];
    assert_eq!(state["check.set.verdict"], "looks fine");
    assert_eq!(state["Draft.status"], "completed");
    assert_eq!(state["input"], "tides");
    assert_eq!(state["Report.attempt"], "1");
    let prompt = run["modules"]["report"]["activations"][0]["transcript"][0]["text"]
        .as_str()
        .unwrap();
    assert!(prompt.ends_with("The check said: looks fine."), "{prompt}");

    // A key the command did not set fails the activation that needs it,
    // saying which, never an empty string.
    let graph_id = create_graph(
        &setup.router,
        pipeline("echo nothing set", "Use {{ check.set.verdict }}"),
    )
    .await;
    let run_id = start(&setup.router, &graph_id, "tides").await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "failed", "{run}");
    let error = run["error"].as_str().unwrap();
    assert!(
        error.contains("{{ check.set.verdict }} has no value")
            && error.contains("PATCHBAY_SET:verdict=…"),
        "{error}"
    );
}

#[tokio::test]
async fn a_key_no_command_upstream_can_set_is_refused_before_the_run() {
    let setup = setup_running_commands().await;
    for (report, why) in [
        ("Use {{ Draft.set.verdict }}", "\"Draft\" is not a command"),
        (
            "Use {{ nobody.set.verdict }}",
            "no module upstream of it is labelled \"nobody\"",
        ),
    ] {
        let graph_id = create_graph(&setup.router, pipeline("true", report)).await;
        let (status, body) = call(
            &setup.router,
            as_editor(
                post(&format!("/api/graphs/{graph_id}/runs"), json!({})),
                &graph_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let finding = &body["error"]["details"]["findings"][0];
        assert_eq!(finding["code"], "validation.template_unresolved");
        assert!(
            finding["message"].as_str().unwrap().contains(why),
            "{finding}"
        );
    }
}
