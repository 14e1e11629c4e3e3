//! Attempts, give-up and timeouts through the API (PRODUCT §3.9): a
//! confined command that fails its first attempt and passes its second, one
//! that gives up onto a wired `give_up_out`, one whose timeout fires on
//! `timeout_out`, and graphs a run refuses (attempts out of range, a retry
//! variable outside the retry instruction).

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::coding::setup_running_commands;
use support::{as_editor, call, create_graph, post, start, wait_for};

/// input → "check" (a command with `config`) → "passed"; and each of
/// `wired` ports of "check" to a module "after_<port>".
fn checked(config: Value, wired: &[&str]) -> Value {
    let mut modules = vec![
        json!({"id": "in", "kind": "step.input", "config": {}}),
        json!({"id": "check", "kind": "step.command", "label": "check", "config": config}),
        json!({"id": "passed", "kind": "step.output", "config": {}}),
    ];
    let mut cables = vec![
        json!({"id": "c1", "from": {"module": "in", "port": "data_out"}, "to": {"module": "check", "port": "data_in"}}),
        json!({"id": "c2", "from": {"module": "check", "port": "pass_out"}, "to": {"module": "passed", "port": "data_in"}}),
    ];
    for port in wired {
        let target = format!("after_{port}");
        modules.push(json!({"id": target, "kind": "step.output", "config": {}}));
        cables.push(json!({"id": format!("c_{port}"), "from": {"module": "check", "port": port}, "to": {"module": target, "port": "data_in"}}));
    }
    json!({"name": "Checked", "modules": modules, "cables": cables})
}

fn activations<'a>(run: &'a Value, module: &str) -> &'a Vec<Value> {
    run["modules"][module]["activations"]
        .as_array()
        .unwrap_or_else(|| panic!("no activations of {module}: {run}"))
}

#[tokio::test]
async fn a_command_that_fails_its_first_attempt_passes_its_second() {
    let setup = setup_running_commands().await;
    // The attempt is in the command's environment.
    let graph_id = create_graph(
        &setup.router,
        checked(
            json!({"command": "echo \"attempt $PATCHBAY_ATTEMPT\"; test \"$PATCHBAY_ATTEMPT\" -ge 2", "max_attempts": 3}),
            &[],
        ),
    )
    .await;
    let run_id = start(&setup.router, &graph_id, "go").await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed", "{run}");
    let attempts = activations(&run, "check");
    assert_eq!(attempts.len(), 2, "{run}");
    assert_eq!(attempts[0]["retried"]["next_attempt"], 2);
    assert_eq!(attempts[0]["retried"]["reason"], "attempt 1");
    assert!(attempts[0]["outputs"]["fail_out"].is_object());
    assert!(
        attempts[1]["outputs"]["pass_out"]["content"]
            .as_str()
            .unwrap()
            .contains("attempt 2")
    );
    assert_eq!(activations(&run, "passed").len(), 1);
}

#[tokio::test]
async fn a_command_that_keeps_failing_gives_up_where_it_is_wired() {
    let setup = setup_running_commands().await;
    let graph_id = create_graph(
        &setup.router,
        checked(
            json!({"command": "echo broken; exit 1", "max_attempts": 2}),
            &["give_up_out", "fail_out"],
        ),
    )
    .await;
    let run_id = start(&setup.router, &graph_id, "go").await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(activations(&run, "check").len(), 2);
    // A module that retries sends a failed check on only by giving up.
    assert!(
        run["modules"]["after_fail_out"]["activations"].is_null()
            || activations(&run, "after_fail_out").is_empty()
    );
    let given = activations(&run, "after_give_up_out");
    assert_eq!(given.len(), 1);
    let last = &activations(&run, "check")[1];
    assert_eq!(last["gave_up"], "broken");
    assert_eq!(
        last["outputs"]["give_up_out"]["content"],
        "\"check\" gave up after 2 attempts: broken"
    );
}

#[tokio::test]
async fn a_command_past_its_timeout_is_stopped_and_ends_on_timeout_out() {
    let setup = setup_running_commands().await;
    let graph_id = create_graph(
        &setup.router,
        checked(
            json!({"command": "sleep 30", "timeout_seconds": 1}),
            &["timeout_out"],
        ),
    )
    .await;
    let run_id = start(&setup.router, &graph_id, "go").await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed", "{run}");
    let record = &activations(&run, "check")[0];
    assert_eq!(record["error"], "\"check\" timed out after 1 s");
    assert_eq!(activations(&run, "after_timeout_out").len(), 1);
}

#[tokio::test]
async fn a_run_refuses_attempts_out_of_range_and_retry_variables_out_of_place() {
    let setup = setup_running_commands().await;
    for (config, code, path) in [
        (
            json!({"command": "true", "max_attempts": 0}),
            "validation.retry_invalid",
            "modules[1].config.max_attempts",
        ),
        (
            json!({"command": "true", "timeout_seconds": 0}),
            "validation.retry_invalid",
            "modules[1].config.timeout_seconds",
        ),
        (
            json!({"command": "echo {{ error }}", "max_attempts": 2}),
            "validation.template_unresolved",
            "modules[1].config.command",
        ),
    ] {
        let graph_id = create_graph(&setup.router, checked(config.clone(), &[])).await;
        let (status, body) = call(
            &setup.router,
            as_editor(
                post(&format!("/api/graphs/{graph_id}/runs"), json!({})),
                &graph_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{config}: {body}");
        let finding = &body["error"]["details"]["findings"][0];
        assert_eq!(finding["code"], code, "{body}");
        assert_eq!(finding["path"], path, "{body}");
    }
}
