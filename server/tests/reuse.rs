//! A run from a module (PRODUCT §3.15), through the HTTP API: the modules
//! upstream of it are reused from a recorded run — no provider called,
//! recorded as `reused` with that run's outputs — and the rest runs on
//! their values; refused, naming the module, when the recorded run or the
//! graph does not allow it; and never for someone without the edit token.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};
use support::priced::{Priced, priced_server, priced_server_on};
use support::{as_editor, call, create_graph, get, post, save, wait_for};

fn task(id: &str, label: &str, instruction: &str, x: i64) -> Value {
    json!({"id": id, "kind": "step.agent_task", "label": label, "position": {"x": x, "y": 0}, "config": {
        "instruction": instruction,
        "agent_config": {"provider": "paid", "model": "priced"}}})
}

fn cable(id: &str, from: &str, to: &str) -> Value {
    json!({"id": id, "from": {"module": from, "port": "data_out"}, "to": {"module": to, "port": "data_in"}})
}

/// Topic → Outline → Draft → Polish: three priced calls a run.
fn chain(polish: &str) -> Value {
    json!({
        "name": "Three steps",
        "modules": [
            {"id": "m1", "kind": "step.input", "label": "Topic", "position": {"x": 0, "y": 0}, "config": {}},
            task("a1", "Outline", "Outline {{ input }}.", 250),
            task("a2", "Draft", "Draft it.", 500),
            task("a3", "Polish", polish, 750),
        ],
        "cables": [cable("c1", "m1", "a1"), cable("c2", "a1", "a2"), cable("c3", "a2", "a3")]
    })
}

async fn run_with(router: &Router, graph_id: &str, body: Value) -> (StatusCode, Value) {
    call(
        router,
        as_editor(
            post(&format!("/api/graphs/{graph_id}/runs"), body),
            graph_id,
        ),
    )
    .await
}

/// Starts a run with `body` and waits for its end; returns it, completed.
async fn run_to_end(server: &Priced, graph_id: &str, body: Value) -> Value {
    let (status, started) = run_with(&server.router, graph_id, body).await;
    assert_eq!(status, StatusCode::CREATED, "{started}");
    let run = wait_for(
        &server.router,
        started["id"].as_str().unwrap(),
        &["completed", "failed"],
    )
    .await;
    assert_eq!(run["status"], "completed", "{run}");
    run
}

/// A run of the chain on "the moon", to its end.
async fn first_run(server: &Priced, graph_id: &str) -> Value {
    run_to_end(server, graph_id, json!({"input": {"text": "the moon"}})).await
}

fn from(run: &Value, module: &str) -> Value {
    json!({"from": {"run": run["id"], "module": module}})
}

fn only(run: &Value, module: &str) -> Value {
    let activations = run["modules"][module]["activations"].as_array().unwrap();
    assert_eq!(activations.len(), 1, "{module}: {activations:?}");
    activations[0].clone()
}

#[tokio::test]
async fn a_run_from_the_last_module_calls_the_provider_for_it_alone_and_reuses_the_rest() {
    for database in support::databases().await {
        let server = priced_server_on(database).await;
        let id = create_graph(&server.router, chain("Polish it.")).await;
        let first = first_run(&server, &id).await;
        assert_eq!(server.calls(), 3);
        // The last module's instruction changes.
        let revision = save(&server.router, &id, 1, &chain("Polish it, briefly.")).await;
        let run = run_to_end(&server, &id, from(&first, "a3")).await;
        assert_eq!(server.calls(), 4, "only Polish called the provider");
        let asked = server.asked();
        assert!(
            asked[3].contains("Polish it, briefly.") && asked[3].contains("Reply 2."),
            "Polish ran its new instruction on the recorded draft: {}",
            asked[3]
        );
        for module in ["m1", "a1", "a2"] {
            let reused = only(&run, module);
            let recorded = only(&first, module);
            assert_eq!(reused["status"], "reused", "{reused}");
            assert_eq!(
                reused["reused_from"],
                json!({"run_id": first["id"], "activation": 1})
            );
            assert_eq!(reused["outputs"], recorded["outputs"]);
            assert_eq!(reused["transcript"], recorded["transcript"]);
            assert_eq!(reused["receipt"], recorded["receipt"]);
        }
        assert_eq!(only(&run, "a3")["status"], "completed");
        assert_eq!(run["state"]["Draft.output"], "Reply 2.");
        assert_eq!(run["state"]["Polish.output"], "Reply 4.");
        // Its input is the recorded run's, and the run says where it came from.
        assert_eq!(run["input"]["text"], "the moon");
        assert_eq!(run["from"], json!({"run": first["id"], "module": "a3"}));
        assert_eq!(run["graph_revision"], revision);
        let (_, list) = call(
            &server.router,
            as_editor(get(&format!("/api/graphs/{id}/runs")), &id),
        )
        .await;
        assert_eq!(list["runs"][0]["from"]["run"], first["id"], "{list}");
        // Its events say what was reused, and from where.
        let (_, document) = call(
            &server.router,
            as_editor(get(&format!("/api/graphs/{id}/revisions/{revision}")), &id),
        )
        .await;
        assert_eq!(
            document["modules"][3]["config"]["instruction"],
            "Polish it, briefly."
        );
        let events = events_of(&server.router, run["id"].as_str().unwrap()).await;
        let reused: Vec<&str> = events
            .iter()
            .filter(|(name, _)| name == "module.reused")
            .map(|(_, data)| data["module_id"].as_str().unwrap())
            .collect();
        assert_eq!(reused, ["m1", "a1", "a2"]);
        assert!(
            events
                .iter()
                .all(|(name, data)| name != "module.activated" || data["module_id"] == "a3"),
            "nothing reused was activated"
        );
    }
}

/// Every event of a finished run, as its stream replays it: (name, data).
async fn events_of(router: &Router, run_id: &str) -> Vec<(String, Value)> {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let response = router
        .clone()
        .oneshot(get(&format!("/api/runs/{run_id}/events")))
        .await
        .unwrap();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body).into_owned();
    text.split("\n\n")
        .filter_map(|message| {
            let name = message
                .lines()
                .find_map(|line| line.strip_prefix("event: "))?;
            let data = message
                .lines()
                .find_map(|line| line.strip_prefix("data: "))?;
            Some((name.to_owned(), serde_json::from_str(data).ok()?))
        })
        .collect()
}

async fn refused(server: &Priced, graph_id: &str, body: Value) -> Value {
    let calls = server.calls();
    let error = refused_while_another_runs(server, graph_id, body).await;
    assert_eq!(server.calls(), calls, "nothing was called");
    error
}

/// Refused, while a run of the graph goes on calling the provider: the
/// calls made meanwhile are that run's (the caller counts them once it has
/// ended).
async fn refused_while_another_runs(server: &Priced, graph_id: &str, body: Value) -> Value {
    let (status, error) = run_with(&server.router, graph_id, body).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
    assert_eq!(error["error"]["code"], "run.from_invalid", "{error}");
    error["error"].clone()
}

#[tokio::test]
async fn a_module_that_continues_its_input_s_session_continues_the_recorded_one() {
    let server = priced_server().await;
    let mut document = chain("Polish it.");
    document["modules"][3]["config"]["session_mode"] = json!("continue");
    let id = create_graph(&server.router, document.clone()).await;
    let first = first_run(&server, &id).await;
    document["modules"][3]["config"]["instruction"] = json!("Polish it, briefly.");
    save(&server.router, &id, 1, &document).await;
    run_to_end(&server, &id, from(&first, "a3")).await;
    let sent = server.sent().pop().unwrap();
    let said: Vec<(&str, &str)> = sent
        .iter()
        .map(|message| {
            (
                message["role"].as_str().unwrap(),
                message["content"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    // Draft's conversation as recorded, then Polish's new turn.
    let assistant: Vec<&str> = said
        .iter()
        .filter(|(role, _)| *role == "assistant")
        .map(|(_, text)| *text)
        .collect();
    assert_eq!(assistant, ["Reply 2."], "{said:?}");
    assert!(
        said.iter()
            .any(|(role, text)| *role == "user" && text.contains("Draft it."))
    );
    assert!(said.last().unwrap().1.contains("Polish it, briefly."));
}

#[tokio::test]
async fn a_change_upstream_is_refused_naming_it() {
    let server = priced_server().await;
    let id = create_graph(&server.router, chain("Polish it.")).await;
    let first = first_run(&server, &id).await;
    let mut changed = chain("Polish it.");
    changed["modules"][1]["config"]["instruction"] = json!("Outline {{ input }} in three parts.");
    save(&server.router, &id, 1, &changed).await;
    let error = refused(&server, &id, from(&first, "a2")).await;
    assert_eq!(error["details"]["module_id"], "a1");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("\"Outline\" had its settings changed since run r_"),
        "{message}"
    );
    // A module added upstream, and one rewired, are named too.
    let mut added = chain("Polish it.");
    added["modules"]
        .as_array_mut()
        .unwrap()
        .push(task("a4", "Facts", "List facts.", 250));
    added["cables"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "c4", "from": {"module": "a4", "port": "data_out"}, "to": {"module": "a2", "port": "context_in"}}));
    save(&server.router, &id, 2, &added).await;
    let error = refused(&server, &id, from(&first, "a3")).await;
    assert_eq!(error["details"]["module_id"], "a2", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("\"Draft\" had its cables in changed")
    );
    // Downstream of the change, it runs.
    let (status, body) = run_with(&server.router, &id, from(&first, "a2")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"Facts\" was added since run r_"),
        "{body}"
    );
}

#[tokio::test]
async fn a_run_of_another_graph_one_still_running_or_one_that_failed_before_is_refused() {
    let server = priced_server().await;
    let id = create_graph(&server.router, chain("Polish it.")).await;
    let other = create_graph(&server.router, chain("Polish it.")).await;
    let others_run = first_run(&server, &other).await;
    let error = refused(&server, &id, from(&others_run, "a3")).await;
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("is not a run of this graph"),
        "{error}"
    );
    // Still running: three calls take a while.
    let calls = server.calls();
    let (_, running) = run_with(&server.router, &id, json!({"input": {"text": "mars"}})).await;
    let error = refused_while_another_runs(&server, &id, from(&running, "a3")).await;
    assert!(
        error["message"].as_str().unwrap().contains("is still"),
        "{error}"
    );
    wait_for(
        &server.router,
        running["id"].as_str().unwrap(),
        &["completed"],
    )
    .await;
    assert_eq!(
        server.calls(),
        calls + 3,
        "the running run's three calls, and none for the refused one"
    );
    // A run that a budget stopped after its first call never reached Draft.
    let (_, stopped) = run_with(
        &server.router,
        &id,
        json!({"input": {"text": "mars"}, "budget_usd": 0.005}),
    )
    .await;
    let stopped = wait_for(
        &server.router,
        stopped["id"].as_str().unwrap(),
        &["failed", "completed"],
    )
    .await;
    assert_eq!(stopped["status"], "failed", "{stopped}");
    let error = refused(&server, &id, from(&stopped, "a3")).await;
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("in run r_") && message.contains("so it has no result to reuse"),
        "{message}"
    );
    // A module that is not there, and a run that does not exist.
    refused(&server, &id, from(&running, "nope")).await;
    refused(
        &server,
        &id,
        json!({"from": {"run": "r_0000000000000000", "module": "a3"}}),
    )
    .await;
}

#[tokio::test]
async fn another_input_is_refused_while_the_input_module_is_reused() {
    let server = priced_server().await;
    let id = create_graph(&server.router, chain("Polish it.")).await;
    let first = first_run(&server, &id).await;
    let mut body = from(&first, "a2");
    body["input"] = json!({"text": "jupiter"});
    let error = refused(&server, &id, body).await;
    assert_eq!(error["details"]["module_id"], "m1");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("run from \"Topic\" to use a new input"),
        "{error}"
    );
    // From the input module itself, the new input is used.
    let mut body = from(&first, "m1");
    body["input"] = json!({"text": "jupiter"});
    let run = run_to_end(&server, &id, body).await;
    assert_eq!(run["input"]["text"], "jupiter");
    assert_eq!(only(&run, "m1")["status"], "completed");
}

#[tokio::test]
async fn no_one_without_the_edit_token_runs_from_a_module() {
    let server = priced_server().await;
    let id = create_graph(&server.router, chain("Polish it.")).await;
    let other = create_graph(&server.router, chain("Polish it.")).await;
    let first = first_run(&server, &id).await;
    let calls = server.calls();
    let uri = format!("/api/graphs/{id}/runs");
    // No token (a view link has none), a forged one, another graph's.
    let (status, body) = call(&server.router, post(&uri, from(&first, "a3"))).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["error"]["code"], "graph.edit_token_required");
    let mut forged = post(&uri, from(&first, "a3"));
    forged.headers_mut().insert(
        axum::http::header::AUTHORIZATION,
        "Bearer et_forged".parse().unwrap(),
    );
    let (status, body) = call(&server.router, forged).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["error"]["code"], "graph.edit_token_invalid");
    let (status, _) = call(
        &server.router,
        as_editor(post(&uri, from(&first, "a3")), &other),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // Another graph's editor cannot reuse this graph's run from theirs.
    let error = refused(&server, &other, from(&first, "a3")).await;
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("is not a run of this graph")
    );
    assert_eq!(server.calls(), calls);
}
