//! Run tokens and a graph called as an API (PRODUCT §6.2, §6.3), on SQLite
//! and PostgreSQL: a run token starts runs of its graph, which say how
//! they started, and does nothing else — tried from the side of someone
//! who should not (no token, a forged one, another graph's, a revoked one,
//! a run token where the edit token is needed); `invoke` answers the
//! output, gives `202` for a run still going and an approver link for one
//! that waits, streams the events, works without the access key, and is
//! limited per token.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use graph::Limits;
use graph::starter::starter_graph;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::{as_editor, call, create_graph, edit_token, get, post, wait_for};
use tower::ServiceExt;

fn starter() -> Value {
    serde_json::to_value(starter_graph()).unwrap()
}

fn with_token(mut request: Request<Body>, token: &str) -> Request<Body> {
    request.headers_mut().insert(
        header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    request
}

fn request(method: Method, uri: &str, body: Value) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// Makes a run token of `graph` named `name`: its id and the token.
async fn make_token(router: &Router, graph: &str, name: &str) -> (String, String) {
    let (status, body) = call(
        router,
        as_editor(
            post(
                &format!("/api/graphs/{graph}/run-tokens"),
                json!({"name": name}),
            ),
            graph,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["name"], name);
    let token = body["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("pbr_"), "{token}");
    (body["id"].as_str().unwrap().to_owned(), token)
}

fn run_request(graph: &str) -> Request<Body> {
    post(
        &format!("/api/graphs/{graph}/runs"),
        json!({"input": {"text": "Tides"}}),
    )
}

#[tokio::test]
async fn a_run_token_starts_runs_of_its_graph_and_does_nothing_else() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let graph = create_graph(&router, starter()).await;
        let other = create_graph(&router, starter()).await;
        let (token_id, token) = make_token(&router, &graph, "Nightly report").await;

        // It starts a run of its graph, which says how it started.
        let (status, started) = call(&router, with_token(run_request(&graph), &token)).await;
        assert_eq!(status, StatusCode::CREATED, "{}: {started}", database.name);
        let run_id = started["id"].as_str().unwrap();
        let run = wait_for(&router, run_id, &["completed"]).await;
        assert_eq!(
            run["started_by"],
            json!({"how": "api", "token": "Nightly report"})
        );
        let by_editor = support::start(&router, &graph, "Tides").await;
        let (_, listed) = call(
            &router,
            as_editor(get(&format!("/api/graphs/{graph}/runs")), &graph),
        )
        .await;
        let how: Vec<&Value> = listed["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|run| &run["started_by"]["how"])
            .collect();
        assert_eq!(how, [&json!("editor"), &json!("api")], "{listed}");
        assert_eq!(listed["runs"][0]["id"], by_editor.as_str());

        // The editors see the token listed, never the token itself.
        let (status, tokens) = call(
            &router,
            as_editor(get(&format!("/api/graphs/{graph}/run-tokens")), &graph),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(tokens["tokens"][0]["id"], token_id.as_str());
        assert!(tokens["tokens"][0]["last_used_at"].is_i64(), "{tokens}");
        assert!(!tokens.to_string().contains(&token), "{tokens}");

        // Nothing else: each answered as a stranger is.
        let document = request(Method::PUT, &format!("/api/graphs/{graph}"), starter());
        let refused = [
            ("saving", with_token(document, &token)),
            (
                "cancelling",
                with_token(
                    post(&format!("/api/runs/{run_id}/cancel"), json!({})),
                    &token,
                ),
            ),
            (
                "listing runs",
                with_token(get(&format!("/api/graphs/{graph}/runs")), &token),
            ),
            (
                "making a token",
                with_token(
                    post(&format!("/api/graphs/{graph}/run-tokens"), json!({})),
                    &token,
                ),
            ),
            (
                "listing tokens",
                with_token(get(&format!("/api/graphs/{graph}/run-tokens")), &token),
            ),
            (
                "revoking a token",
                with_token(
                    request(
                        Method::DELETE,
                        &format!("/api/graphs/{graph}/run-tokens/{token_id}"),
                        json!({}),
                    ),
                    &token,
                ),
            ),
            (
                "an approver link",
                with_token(
                    post(&format!("/api/runs/{run_id}/approver-links"), json!({})),
                    &token,
                ),
            ),
            (
                "another graph's run",
                with_token(run_request(&other), &token),
            ),
            (
                "a forged token",
                with_token(run_request(&graph), "pbr_forged"),
            ),
        ];
        for (what, request) in refused {
            let (status, body) = call(&router, request).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{what}: {body}");
            assert_eq!(body["error"]["code"], "graph.edit_token_invalid", "{what}");
        }
        let (status, body) = call(&router, run_request(&graph)).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(body["error"]["code"], "graph.edit_token_required");

        // A run from a module reads an earlier run: the editors' only.
        let (status, body) = call(
            &router,
            with_token(
                post(
                    &format!("/api/graphs/{graph}/runs"),
                    json!({"from": {"run": run_id, "module": "m3"}}),
                ),
                &token,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["code"], "run.from_invalid");

        // Revoked, it starts nothing; an unknown token is a 404.
        let revoke = |id: &str| {
            as_editor(
                request(
                    Method::DELETE,
                    &format!("/api/graphs/{graph}/run-tokens/{id}"),
                    json!({}),
                ),
                &graph,
            )
        };
        let (status, _) = call(&router, revoke(&token_id)).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (status, body) = call(&router, with_token(run_request(&graph), &token)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        let (status, body) = call(&router, revoke("t_nothing")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["error"]["code"], "run_token.not_found");
        let (_, tokens) = call(
            &router,
            as_editor(get(&format!("/api/graphs/{graph}/run-tokens")), &graph),
        )
        .await;
        assert!(tokens["tokens"][0]["revoked_at"].is_i64(), "{tokens}");
        // Another graph's editors cannot revoke it either.
        let (status, _) = call(
            &router,
            with_token(
                request(
                    Method::DELETE,
                    &format!("/api/graphs/{graph}/run-tokens/{token_id}"),
                    json!({}),
                ),
                &edit_token(&other),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
}

fn invoke(graph: &str, body: Value) -> Request<Body> {
    post(&format!("/api/graphs/{graph}/invoke"), body)
}

#[tokio::test]
async fn invoking_a_graph_answers_what_its_output_received() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let graph = create_graph(&router, starter()).await;
        let (_, token) = make_token(&router, &graph, "Script").await;
        let (status, answer) = call(
            &router,
            with_token(invoke(&graph, json!({"input": "Tides"})), &token),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{}: {answer}", database.name);
        assert_eq!(answer["status"], "completed");
        // What the output module received, as the run's record has it.
        let (_, run) = call(&router, get(answer["url"].as_str().unwrap())).await;
        let output = &run["modules"]["m3"]["activations"][0]["outputs"]["result_1"];
        let received = output["content"]["merged_content"]
            .as_str()
            .unwrap_or_default();
        assert!(!received.is_empty(), "{output}");
        assert_eq!(answer["outputs"][0]["module_id"], "m3");
        assert_eq!(answer["outputs"][0]["text"], received, "{answer}");
        assert_eq!(answer["text"], received);
        assert_eq!(run["input"]["text"], "Tides");
        assert_eq!(run["started_by"]["how"], "api");

        // Bad requests say where.
        for (body, path) in [
            (json!({"input": 7}), "input"),
            (json!({"wait_seconds": 1000}), "wait_seconds"),
            (json!({"inputs": "x"}), "inputs"),
        ] {
            let (status, refused) = call(&router, with_token(invoke(&graph, body), &token)).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
            assert_eq!(refused["error"]["code"], "invoke.invalid_request");
            assert!(
                refused["error"]["details"]["path"]
                    .as_str()
                    .unwrap()
                    .starts_with(path)
                    || refused["error"]["message"].as_str().unwrap().contains(path),
                "{refused}"
            );
        }
        let (status, _) = call(&router, invoke(&graph, json!({}))).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
}

#[tokio::test]
async fn invoking_a_slow_graph_gives_where_to_follow_it_and_its_events() {
    let database = support::databases().await.remove(0);
    let mut settings = support::settings(&database, Limits::default());
    // Each word of a simulated reply 20 ms apart: seconds a run.
    settings.sim_latency_ms = Some(20);
    let router = server::router::router(server::build_state(settings).await.unwrap());
    let graph = create_graph(&router, starter()).await;
    let (_, token) = make_token(&router, &graph, "Slow").await;
    let response = router
        .clone()
        .oneshot(with_token(
            invoke(&graph, json!({"input": "Tides", "wait_seconds": 0})),
            &token,
        ))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let location = response.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(
        ["queued", "running"].contains(&answer["status"].as_str().unwrap()),
        "{answer}"
    );
    assert_eq!(location, answer["url"].as_str().unwrap());
    assert!(answer.get("outputs").is_none(), "{answer}");

    // As a stream: every event of the run, to its end.
    let mut streamed = with_token(invoke(&graph, json!({"input": "Tides"})), &token);
    streamed
        .headers_mut()
        .insert(header::ACCEPT, "text/event-stream".parse().unwrap());
    let response = support::within("the invoked run's events", router.clone().oneshot(streamed))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let bytes = support::within("the stream's end", response.into_body().collect())
        .await
        .unwrap()
        .to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    let first = text.find("event: run.started").expect("run.started");
    let dispatched = text
        .find("event: task.agent_task.reprompt_dispatched")
        .expect("re-prompts");
    let last = text.find("event: run.completed").expect("run.completed");
    assert!(first < dispatched && dispatched < last, "{text}");
}

#[tokio::test]
async fn invoking_a_graph_that_waits_for_a_person_gives_an_approver_link() {
    let database = support::databases().await.remove(0);
    let router = server::router::router(support::state(&database, Limits::default()).await);
    let module = |id: &str, kind: &str| json!({"id": id, "kind": kind, "label": id, "position": {"x": 0, "y": 0}, "config": {}});
    let cable = |id: &str, from: (&str, &str), to: (&str, &str)| json!({"id": id, "from": {"module": from.0, "port": from.1}, "to": {"module": to.0, "port": to.1}});
    let graph = create_graph(
        &router,
        json!({
            "modules": [module("in", "step.input"), module("approve", "step.approval"), module("done", "step.output")],
            "cables": [
                cable("c1", ("in", "data_out"), ("approve", "data_in")),
                cable("c2", ("approve", "approved_out"), ("done", "data_in")),
            ]
        }),
    )
    .await;
    let (_, token) = make_token(&router, &graph, "Waits").await;
    let (status, answer) = call(
        &router,
        with_token(invoke(&graph, json!({"input": "Ship it?"})), &token),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    assert_eq!(answer["status"], "waiting");
    let link = answer["approver_url"].as_str().unwrap();
    let (path, approver) = link.split_once("#approve=").unwrap();
    assert!(path.ends_with(answer["run_id"].as_str().unwrap()), "{link}");
    // The link decides, as any approver link does.
    let run_id = answer["run_id"].as_str().unwrap();
    let (status, body) = call(
        &router,
        with_token(
            post(
                &format!("/api/runs/{run_id}/modules/approve/decision"),
                json!({"decision": "approve"}),
            ),
            approver,
        ),
    )
    .await;
    assert!(status.is_success(), "{body}");
    wait_for(&router, run_id, &["completed"]).await;
}

#[tokio::test]
async fn with_an_access_key_a_run_token_invokes_without_it_and_is_limited_on_its_own() {
    let database = support::databases().await.remove(0);
    let mut settings = support::settings(&database, Limits::default());
    let key = "an-access-key-of-this-server";
    settings.access.key = Some(key.to_owned());
    settings.run_limits.per_minute = 2;
    let router = server::router::router(server::build_state(settings).await.unwrap());
    let mut creating = post("/api/graphs", starter());
    creating
        .headers_mut()
        .insert("x-patchbay-access-key", key.parse().unwrap());
    let (status, created) = call(&router, creating).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let graph = created["id"].as_str().unwrap();
    let edit = created["edit_token"].as_str().unwrap();
    // Making a token needs the key.
    let making = || {
        with_token(
            post(
                &format!("/api/graphs/{graph}/run-tokens"),
                json!({"name": "CI"}),
            ),
            edit,
        )
    };
    let (status, body) = call(&router, making()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "access.key_required");
    let mut keyed = making();
    keyed
        .headers_mut()
        .insert("x-patchbay-access-key", key.parse().unwrap());
    let (status, made) = call(&router, keyed).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let token = made["token"].as_str().unwrap();
    // Invoking does not; past the limit, the token waits (this client on
    // loopback is not limited, the token is).
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let (status, body) = call(
            &router,
            with_token(invoke(graph, json!({"input": "x"})), token),
        )
        .await;
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(body["error"]["code"], "run.rate_limited");
        }
        statuses.push(status);
    }
    assert_eq!(
        statuses,
        [
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
    // The editors' own runs are not counted against the token.
    let (status, body) = call(
        &router,
        with_token(
            {
                let mut run = run_request(graph);
                run.headers_mut()
                    .insert("x-patchbay-access-key", key.parse().unwrap());
                run
            },
            edit,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn eight_runs_at_once_with_one_token_start_no_more_than_its_limit() {
    for database in support::databases().await {
        let mut settings = support::settings(&database, Limits::default());
        settings.run_limits.per_minute = 3;
        let router = server::router::router(server::build_state(settings).await.unwrap());
        let graph = create_graph(&router, starter()).await;
        let (_, token) = make_token(&router, &graph, "Burst").await;
        let starts = (0..8).map(|_| call(&router, with_token(run_request(&graph), &token)));
        let statuses: Vec<StatusCode> = futures::future::join_all(starts)
            .await
            .into_iter()
            .map(|(status, _)| status)
            .collect();
        let started = statuses
            .iter()
            .filter(|status| **status == StatusCode::CREATED)
            .count();
        let limited = statuses
            .iter()
            .filter(|status| **status == StatusCode::TOO_MANY_REQUESTS)
            .count();
        assert_eq!(
            (started, limited),
            (3, 5),
            "{}: {statuses:?}",
            database.name
        );
    }
}

#[tokio::test]
async fn eight_invokes_at_once_with_one_idempotency_key_start_one_run() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let graph = create_graph(&router, starter()).await;
        let (_, token) = make_token(&router, &graph, "Webhook relay").await;
        let keyed = |key: &str| {
            let mut request = with_token(invoke(&graph, json!({"input": "Tides"})), &token);
            request
                .headers_mut()
                .insert("idempotency-key", key.parse().unwrap());
            request
        };
        let answers =
            futures::future::join_all((0..8).map(|_| call(&router, keyed("delivery-1")))).await;
        let runs: std::collections::BTreeSet<String> = answers
            .iter()
            .map(|(status, answer)| {
                assert_eq!(*status, StatusCode::OK, "{}: {answer}", database.name);
                answer["run_id"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(runs.len(), 1, "{}: {runs:?}", database.name);
        let (_, listed) = call(
            &router,
            as_editor(get(&format!("/api/graphs/{graph}/runs")), &graph),
        )
        .await;
        assert_eq!(listed["runs"].as_array().unwrap().len(), 1, "{listed}");
        // Another key is another run; a key the editors use is theirs.
        let (_, other) = call(&router, keyed("delivery-2")).await;
        assert!(!runs.contains(other["run_id"].as_str().unwrap()));
        let mut by_editor = as_editor(invoke(&graph, json!({"input": "Tides"})), &graph);
        by_editor
            .headers_mut()
            .insert("idempotency-key", "delivery-1".parse().unwrap());
        let (_, theirs) = call(&router, by_editor).await;
        assert!(!runs.contains(theirs["run_id"].as_str().unwrap()));
        // A key that is not one says so.
        let (status, refused) = call(&router, keyed("two words")).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(refused["error"]["details"]["path"], "Idempotency-Key");
    }
}
