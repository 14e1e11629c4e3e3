//! Poll modules through the API (PRODUCT §3.10, Cloche's `poll`): a
//! confined script run every interval until it reports a decision, after
//! the seed's exit-status and marker table; a script that fails; one that
//! never decides within its timeout; one that overruns three intervals;
//! and what a script is given (run id, attempt, poll, state).

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use support::coding::{Setup, setup_running_commands};
use support::{create_graph, start, wait_for};

/// input → "wait" (a poll with `config`, results approved and fix) →
/// one output module per port of `wired`, named "after_<port>".
fn polling(config: Value, wired: &[&str]) -> Value {
    let mut config = config;
    config["results"] = json!(["approved", "fix"]);
    let mut modules = vec![
        json!({"id": "in", "kind": "step.input", "config": {}}),
        json!({"id": "wait", "kind": "step.poll", "label": "wait", "config": config}),
    ];
    let mut cables = vec![
        json!({"id": "c1", "from": {"module": "in", "port": "data_out"}, "to": {"module": "wait", "port": "data_in"}}),
    ];
    for port in wired {
        let target = format!("after_{}", port.replace(':', "_"));
        modules.push(json!({"id": target, "kind": "step.output", "config": {}}));
        cables.push(json!({"id": format!("c_{target}"), "from": {"module": "wait", "port": port}, "to": {"module": target, "port": "data_in"}}));
    }
    json!({"name": "Polling", "modules": modules, "cables": cables})
}

async fn run(setup: &Setup, config: Value, wired: &[&str]) -> Value {
    let graph_id = create_graph(&setup.router, polling(config, wired)).await;
    let run_id = start(&setup.router, &graph_id, "the release").await;
    wait_for(&setup.router, &run_id, &["completed", "failed"]).await
}

fn ran(run: &Value, module: &str) -> usize {
    run["modules"][module]["activations"]
        .as_array()
        .map_or(0, Vec::len)
}

/// The polls the record's transcript shows.
fn polls(run: &Value) -> usize {
    run["modules"]["wait"]["activations"][0]["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["role"] == "user")
        .count()
}

#[tokio::test]
async fn it_polls_until_the_script_decides() {
    let setup = setup_running_commands().await;
    // Not yet, not yet, then approved; the environment has what it needs.
    let script = "test -n \"$PATCHBAY_RUN_ID\" && grep -q '\"input\":\"the release\"' \"$PATCHBAY_STATE\" || exit 9\n\
                  echo \"poll $PATCHBAY_POLL of attempt $PATCHBAY_ATTEMPT\"\n\
                  if [ \"$PATCHBAY_POLL\" -ge 3 ]; then echo PATCHBAY_SET:reviewer=ana; echo PATCHBAY_RESULT:approved; fi";
    let run = run(
        &setup,
        json!({"command": script, "interval_seconds": 1}),
        &["result:approved", "result:fix", "fail_out"],
    )
    .await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(polls(&run), 3);
    assert_eq!(ran(&run, "after_result_approved"), 1);
    assert_eq!(ran(&run, "after_result_fix"), 0);
    let sent = &run["modules"]["wait"]["activations"][0]["outputs"]["result:approved"];
    assert_eq!(sent["meta"]["polls"], 3);
    // A poll sets state keys as a command does.
    assert_eq!(run["state"]["wait.set.reviewer"], "ana");
    assert_eq!(run["state"]["wait.status"], "completed");
    assert!(
        sent["content"]
            .as_str()
            .unwrap()
            .contains("poll 3 of attempt 1"),
        "{sent}"
    );
}

#[tokio::test]
async fn between_polls_the_record_says_it_waits_and_when_it_polls_next() {
    let setup = setup_running_commands().await;
    // Not yet, then approved on the second poll, 2 s later.
    let script = "[ \"$PATCHBAY_POLL\" -ge 2 ] && echo PATCHBAY_RESULT:approved; exit 0";
    let graph_id = create_graph(
        &setup.router,
        polling(
            json!({"command": script, "interval_seconds": 2}),
            &["result:approved"],
        ),
    )
    .await;
    let run_id = start(&setup.router, &graph_id, "the release").await;
    // What a reload or the run's page reads: the stored record, not the
    // process's memory.
    let mut waiting = Value::Null;
    for _ in 0..150 {
        let (_, run) =
            support::call(&setup.router, support::get(&format!("/api/runs/{run_id}"))).await;
        let activation = &run["modules"]["wait"]["activations"][0];
        if activation["status"] == "waiting" {
            waiting = activation.clone();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        waiting["status"], "waiting",
        "the poll never showed waiting"
    );
    let next = waiting["next_poll_at"]
        .as_i64()
        .expect("when it polls next");
    let started = waiting["started_at"].as_i64().unwrap();
    assert!(
        (started + 1_500..started + 4_000).contains(&next),
        "next poll at {next}, started {started}"
    );
    // It is no approval: nobody may decide it.
    assert!(waiting.get("waiting").is_none(), "{waiting}");
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    let ended = &run["modules"]["wait"]["activations"][0];
    assert_eq!(ended["status"], "completed", "{run}");
    assert!(ended.get("next_poll_at").is_none(), "{ended}");
}

#[tokio::test]
async fn a_marker_decides_whatever_the_exit_status_and_a_failure_without_one_fails() {
    let setup = setup_running_commands().await;
    let wired = ["result:approved", "result:fix", "fail_out"];
    let decided = run(
        &setup,
        json!({"command": "echo PATCHBAY_RESULT:fix; exit 3", "interval_seconds": 1}),
        &wired,
    )
    .await;
    assert_eq!(decided["status"], "completed", "{decided}");
    assert_eq!(ran(&decided, "after_result_fix"), 1);

    let failed = run(
        &setup,
        json!({"command": "echo broken >&2; exit 2", "interval_seconds": 1}),
        &wired,
    )
    .await;
    assert_eq!(ran(&failed, "after_fail_out"), 1, "{failed}");
    let why = failed["modules"]["wait"]["activations"][0]["outputs"]["fail_out"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        why.starts_with("poll 1 exited with status 2 and reported no decision")
            && why.contains("broken"),
        "{why}"
    );

    // A result it does not declare is a failure too, saying so.
    let undeclared = run(
        &setup,
        json!({"command": "echo PATCHBAY_RESULT:maybe", "interval_seconds": 1}),
        &wired,
    )
    .await;
    let why = undeclared["modules"]["wait"]["activations"][0]["outputs"]["fail_out"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        why.contains(
            "reported “maybe”, which \"wait\" does not declare (it declares approved, fix)"
        ),
        "{why}"
    );

    // Unwired, a failure fails the run naming the module.
    let unwired = run(
        &setup,
        json!({"command": "exit 2", "interval_seconds": 1}),
        &["result:approved"],
    )
    .await;
    assert_eq!(unwired["status"], "failed");
    assert!(
        unwired["error"]
            .as_str()
            .unwrap()
            .contains("\"wait\" ended with a failed check (fail_out)"),
        "{unwired}"
    );
}

#[tokio::test]
async fn a_decision_that_never_comes_times_out() {
    let setup = setup_running_commands().await;
    let run = run(
        &setup,
        json!({"command": "echo not yet", "interval_seconds": 1, "timeout_seconds": 2}),
        &["result:approved", "timeout_out"],
    )
    .await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(ran(&run, "after_timeout_out"), 1);
    assert_eq!(
        run["modules"]["wait"]["activations"][0]["error"],
        "\"wait\" timed out after 2 s"
    );
    assert!(polls(&run) >= 2, "{run}");
}

#[tokio::test]
async fn a_poll_that_overruns_three_intervals_fails_and_is_stopped() {
    let setup = setup_running_commands().await;
    let run = run(
        &setup,
        json!({"command": "sleep 30; echo PATCHBAY_RESULT:approved", "interval_seconds": 1}),
        &["result:approved", "fail_out"],
    )
    .await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(ran(&run, "after_result_approved"), 0);
    assert_eq!(ran(&run, "after_fail_out"), 1);
    let why = run["modules"]["wait"]["activations"][0]["outputs"]["fail_out"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(why.contains("3 polls were skipped in a row"), "{why}");
    // Stopped well before its 30 seconds.
    let record = &run["modules"]["wait"]["activations"][0];
    let took = record["finished_at"].as_i64().unwrap() - record["started_at"].as_i64().unwrap();
    assert!(took < 15_000, "{took} ms");
}
