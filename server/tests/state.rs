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

/// Whoever runs a graph gives its input, and a model writes what it
/// answers: neither may write the commands a graph runs. A command's
/// `{{ … }}` gets the value as written, in every place of the script, and
/// none of it runs.
#[tokio::test]
async fn a_value_filled_into_a_command_is_data_never_code() {
    let setup = setup_running_commands().await;
    let input = "it's $(echo INJECTED) `echo INJECTED`; echo PATCHBAY_SET:verdict=forged";
    let command =
        "printf '[%s]\\n' {{ input }} \"{{ input }}\" '{{ input }}'\ncat <<EOF\n<{{ input }}>\nEOF";
    let graph_id = create_graph(&setup.router, pipeline(command, "Report")).await;
    let run_id = start(&setup.router, &graph_id, input).await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed", "{run}");
    let printed = run["modules"]["check"]["activations"][0]["outputs"]["pass_out"]["content"]
        .as_str()
        .unwrap();
    assert_eq!(
        printed,
        format!("[{input}]\n[{input}]\n[{input}]\n<{input}>\n"),
        "{run}"
    );
    assert!(run["state"].get("check.set.verdict").is_none(), "{run}");
    // The transcript shows the script as it ran and what each value was.
    let transcript = run["modules"]["check"]["activations"][0]["transcript"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        transcript.contains("\"${PATCHBAY_VALUE_1}\"")
            && transcript.contains("# $PATCHBAY_VALUE_1: {{ input }}")
            && !transcript.contains("INJECTED"),
        "{transcript}"
    );
}

#[tokio::test]
async fn a_key_no_command_upstream_can_set_is_refused_before_the_run() {
    let setup = setup_running_commands().await;
    for (report, why) in [
        (
            "Use {{ Draft.set.verdict }}",
            "\"Draft\" is not a command or a poll",
        ),
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

#[tokio::test]
async fn the_build_until_the_checks_pass_example_fixes_what_its_validators_find() {
    let setup = setup_running_commands().await;
    let example = graph::starter::example("build-until-the-checks-pass").unwrap();
    let graph_id = create_graph(&setup.router, serde_json::to_value(example.graph).unwrap()).await;
    let run_id = start(
        &setup.router,
        &graph_id,
        "A script that greets whoever is named",
    )
    .await;
    let run = wait_for(&setup.router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed", "{run}");
    let build = &run["modules"]["build"]["activations"][0];
    let labels: Vec<&str> = build["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|response| response["label"].as_str().unwrap())
        .collect();
    // The usage notes were missing, so the builder got the pattern's
    // prompt as a fix turn in its session; then both checks passed.
    assert_eq!(labels, ["builder · Original", "builder · Fix 1"], "{run}");
    let transcript = build["transcript"].to_string();
    assert!(
        transcript.contains("A check failed: USAGE.md is missing: nobody will know how to run it"),
        "{transcript}"
    );
    assert_eq!(run["state"]["Build.gate.runs"], "true");
    assert_eq!(run["state"]["Build.gate.documented"], "true");
    let diff = build["outputs"]["diff_out"]["content"].to_string();
    assert!(
        diff.contains("USAGE.md") && diff.contains("greet.sh"),
        "{diff}"
    );
}

#[tokio::test]
async fn the_run_state_is_kept_key_by_key_on_every_database() {
    for database in support::databases().await {
        let store = support::store(&database).await;
        support::insert_bare_run(&store, "r_state").await;
        let set = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect()
        };
        store
            .save_state(
                "r_state",
                &set(&[("Draft.status", "retrying"), ("Draft.attempt", "1")]),
                None,
            )
            .await
            .unwrap();
        // A change replaces the key's value; the others stay.
        store
            .save_state(
                "r_state",
                &set(&[
                    ("Draft.status", "completed"),
                    ("prev.Draft.status", "retrying"),
                ]),
                None,
            )
            .await
            .unwrap();
        // More keys than one statement binds.
        let many: Vec<(String, String)> = (0..700)
            .map(|index| (format!("Step {index}.status"), "completed".to_owned()))
            .collect();
        store.save_state("r_state", &many, None).await.unwrap();
        let state = store.state("r_state").await.unwrap();
        assert_eq!(state.len(), 703, "{}", database.name);
        assert_eq!(state["Draft.status"], "completed", "{}", database.name);
        assert_eq!(state["Draft.attempt"], "1");
        assert_eq!(state["prev.Draft.status"], "retrying");
    }
}

#[tokio::test]
async fn a_server_without_commands_refuses_validators_and_polls_before_the_run() {
    let setup = support::coding::setup(None).await;
    let example = graph::starter::example("build-until-the-checks-pass").unwrap();
    let poll = json!({"name": "Poll", "modules": [
        {"id": "in", "kind": "step.input", "config": {}},
        {"id": "wait", "kind": "step.poll", "config": {"command": "true", "results": ["ok"]}},
    ], "cables": [
        {"id": "c1", "from": {"module": "in", "port": "data_out"}, "to": {"module": "wait", "port": "data_in"}},
    ]});
    for (document, module) in [
        (serde_json::to_value(example.graph).unwrap(), "build"),
        (poll, "wait"),
    ] {
        let graph_id = create_graph(&setup.router, document).await;
        let (status, body) = call(
            &setup.router,
            as_editor(
                post(&format!("/api/graphs/{graph_id}/runs"), json!({})),
                &graph_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["code"], "run.commands_disabled");
        assert_eq!(body["error"]["details"]["module_id"], module);
    }
}

/// A database made before the state became one object per run (migration
/// 0011) keeps every run's state, quotes and all.
#[tokio::test]
async fn a_database_from_before_the_state_was_one_object_keeps_each_runs_state() {
    sqlx::any::install_default_drivers();
    for database in support::databases().await {
        let (folder, url) = if database.name == "sqlite" {
            ("sqlite", format!("{}?mode=rwc", database.url))
        } else {
            ("postgres", database.url.clone())
        };
        let migrations = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../migrations")
            .join(folder);
        let migrator = sqlx::migrate::Migrator::new(migrations).await.unwrap();
        let pool = sqlx::AnyPool::connect(&url).await.unwrap();
        migrator.run_to(10, &pool).await.unwrap();
        sqlx::query(
            "INSERT INTO runs (id, snapshot, input, status, created_at) VALUES ('r_old', '{}', '{}', 'completed', 1)",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO run_state (run_id, key, value) VALUES
             ('r_old', 'Draft.output', 'A \"quoted\" line\nand {\"json\": 1}'),
             ('r_old', 'Draft.status', 'completed')",
        )
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;

        let store = support::store(&database).await;
        let state = store.state("r_old").await.unwrap();
        assert_eq!(state.len(), 2, "{}", database.name);
        assert_eq!(
            state["Draft.output"], "A \"quoted\" line\nand {\"json\": 1}",
            "{}",
            database.name
        );
        assert_eq!(state["Draft.status"], "completed", "{}", database.name);
        // And it goes on changing key by key.
        store
            .save_state(
                "r_old",
                &[("Draft.status".to_owned(), "retrying".to_owned())],
                None,
            )
            .await
            .unwrap();
        let state = store.state("r_old").await.unwrap();
        assert_eq!(state["Draft.status"], "retrying", "{}", database.name);
        assert_eq!(state.len(), 2, "{}", database.name);
    }
}
