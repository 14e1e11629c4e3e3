//! What runs cost, through the HTTP API: a provider's model priced in the
//! server's configuration (an OpenAI-compatible fixture reporting usage),
//! the receipt, the run state and the record; a run's budget stopping it
//! with `budget_exceeded`; the estimate before a run; and who may ask.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};
use support::priced::priced_server;
use support::{as_editor, call, create_graph, get, wait_for};

fn chain(model: &str) -> Value {
    json!({
        "name": "Priced chain",
        "modules": [
            {"id": "m1", "kind": "step.input", "label": "Topic", "position": {"x": 0, "y": 0}, "config": {}},
            {"id": "m2", "kind": "step.agent_task", "label": "Draft", "position": {"x": 300, "y": 0}, "config": {
                "instruction": "Write about {{ input }}.",
                "agent_config": {"provider": "paid", "model": model},
                "re_prompts": ["Review it.", "Finalize it."]}}
        ],
        "cables": [{"id": "c1", "from": {"module": "m1", "port": "data_out"}, "to": {"module": "m2", "port": "data_in"}}]
    })
}

async fn start_with(router: &Router, graph_id: &str, body: Value) -> (StatusCode, Value) {
    call(
        router,
        as_editor(
            support::post(&format!("/api/graphs/{graph_id}/runs"), body),
            graph_id,
        ),
    )
    .await
}

/// The graph's estimate, asked by its editor.
async fn estimate_of(router: &Router, graph_id: &str) -> (StatusCode, Value) {
    call(
        router,
        as_editor(get(&format!("/api/graphs/{graph_id}/estimate")), graph_id),
    )
    .await
}

fn close(value: &Value, expected: f64) -> bool {
    value
        .as_f64()
        .is_some_and(|actual| (actual - expected).abs() < 1e-9)
}

#[tokio::test]
async fn a_priced_model_costs_what_its_usage_says_and_the_estimate_follows() {
    let server = priced_server().await;
    let router = &server.router;
    let graph_id = create_graph(router, chain("priced")).await;

    // Before any run there is nothing to go by.
    let (status, estimate) = estimate_of(router, &graph_id).await;
    assert_eq!(status, StatusCode::OK, "{estimate}");
    assert_eq!(estimate["runs"], 0);

    let (status, started) =
        start_with(router, &graph_id, json!({"input": {"text": "tides"}})).await;
    assert_eq!(status, StatusCode::CREATED, "{started}");
    let run = wait_for(
        router,
        started["id"].as_str().unwrap(),
        &["completed", "failed"],
    )
    .await;
    assert_eq!(run["status"], "completed", "{run}");
    let activation = &run["modules"]["m2"]["activations"][0];
    // Three calls of $0.006.
    assert!(close(&activation["receipt"]["cost"], 0.018), "{activation}");
    for response in activation["responses"].as_array().unwrap() {
        assert!(close(&response["cost"], 0.006), "{response}");
    }
    assert_eq!(run["state"]["Draft.cost"], "0.018000");
    assert_eq!(run.get("budget_usd"), None);

    // The estimate is the module's average.
    let (_, estimate) = estimate_of(router, &graph_id).await;
    assert_eq!(estimate["runs"], 1);
    assert_eq!(estimate["modules"][0]["module_id"], "m2");
    assert!(
        close(&estimate["modules"][0]["average"], 0.018),
        "{estimate}"
    );
}

#[tokio::test]
async fn a_model_with_no_price_says_so_in_the_receipt_and_the_state() {
    let server = priced_server().await;
    let router = &server.router;
    let graph_id = create_graph(router, chain("unpriced")).await;
    let (_, started) = start_with(router, &graph_id, json!({"input": {"text": "tides"}})).await;
    let run = wait_for(
        router,
        started["id"].as_str().unwrap(),
        &["completed", "failed"],
    )
    .await;
    assert_eq!(run["status"], "completed", "{run}");
    let activation = &run["modules"]["m2"]["activations"][0];
    assert_eq!(activation["receipt"]["cost"], Value::Null);
    assert_eq!(activation["receipt"]["tokens_out"], 1500);
    assert_eq!(run["state"]["Draft.cost"], "no price configured");
    let (_, estimate) = estimate_of(router, &graph_id).await;
    assert_eq!(estimate["modules"][0]["average"], Value::Null, "{estimate}");
}

#[tokio::test]
async fn a_run_budget_stops_the_run_and_keeps_what_it_produced() {
    let server = priced_server().await;
    let router = &server.router;
    let graph_id = create_graph(router, chain("priced")).await;
    // Two calls ($0.012) reach $0.01.
    let (status, started) = start_with(
        router,
        &graph_id,
        json!({"input": {"text": "tides"}, "budget_usd": 0.01}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{started}");
    let run = wait_for(
        router,
        started["id"].as_str().unwrap(),
        &["completed", "failed"],
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    assert!(close(&run["budget_usd"], 0.01));
    let error = run["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "budget_exceeded: the run's budget of $0.0100 is spent ($0.0120: \"Draft\" $0.0120)"
        ),
        "{error}"
    );
    let activation = &run["modules"]["m2"]["activations"][0];
    assert_eq!(activation["status"], "cancelled");
    let answered = activation["responses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|response| response["complete"] == true)
        .count();
    assert_eq!(answered, 2, "{activation}");
    assert!(server.calls() <= 3);
}

#[tokio::test]
async fn a_budget_must_be_an_amount_and_only_the_editor_may_ask_for_an_estimate() {
    let server = priced_server().await;
    let router = &server.router;
    let graph_id = create_graph(router, chain("priced")).await;
    for (budget, path) in [
        (json!(-1), "budget_usd"),
        (json!(0), "budget_usd"),
        (json!("a lot"), "budget_usd"),
    ] {
        let (status, body) = start_with(
            router,
            &graph_id,
            json!({"input": {"text": "tides"}, "budget_usd": budget}),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["details"]["path"], path, "{body}");
    }
    assert_eq!(server.calls(), 0, "no run started");

    let estimate = format!("/api/graphs/{graph_id}/estimate");
    // No token, a forged one, another graph's.
    let (status, _) = call(router, get(&estimate)).await;
    assert!(
        status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN,
        "{status}"
    );
    let mut forged = get(&estimate);
    forged.headers_mut().insert(
        axum::http::header::AUTHORIZATION,
        "Bearer et_forged".parse().unwrap(),
    );
    let (status, _) = call(router, forged).await;
    assert!(
        status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN,
        "{status}"
    );
    let other = create_graph(router, chain("priced")).await;
    let (status, _) = call(router, as_editor(get(&estimate), &other)).await;
    assert!(
        status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN,
        "{status}"
    );
    let (status, _) = call(router, as_editor(get(&estimate), &graph_id)).await;
    assert_eq!(status, StatusCode::OK);
}
