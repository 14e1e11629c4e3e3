//! The server from the side of someone who should not get in: no token, a
//! view link only, a forged token, another graph's token, no access key, a
//! client starting runs without end, a page framed by another site.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, Request, StatusCode, header};
use graph::Limits;
use graph::starter::starter_graph;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use server::settings::Settings;
use support::{as_editor, call, create_graph, edit_token, get, post, start, wait_for};
use tower::ServiceExt;

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    text: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    }
}

async fn send(router: &Router, request: Request<Body>) -> Reply {
    support::within(&format!("{} {}", request.method(), request.uri()), async {
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            headers,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }
    })
    .await
}

fn starter() -> Value {
    serde_json::to_value(starter_graph()).unwrap()
}

async fn router_with(settings: Settings) -> Router {
    server::router::router(server::build_state(settings).await.unwrap())
}

/// `request` with the given `Authorization: Bearer`.
fn bearer(mut request: Request<Body>, token: &str) -> Request<Body> {
    request.headers_mut().insert(
        header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    request
}

fn run_request(graph_id: &str) -> Request<Body> {
    post(
        &format!("/api/graphs/{graph_id}/runs"),
        json!({"input": {"text": "the moon"}}),
    )
}

#[tokio::test]
async fn only_the_edit_token_of_the_graph_starts_cancels_and_lists_its_runs() {
    for database in support::databases().await {
        let mut settings = support::settings(&database, Limits::default());
        // Slow enough that a run is still going when it is cancelled.
        settings.sim_latency_ms = Some(30);
        let router = router_with(settings).await;
        let graph = create_graph(&router, starter()).await;
        let other = create_graph(&router, starter()).await;
        let forged = "A".repeat(43);

        // Starting: no token (a view link), forged, another graph's token.
        let reply = send(&router, run_request(&graph)).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text);
        assert_eq!(reply.code(), "graph.edit_token_required");
        assert!(
            reply.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("fork")
        );
        let reply = send(&router, bearer(run_request(&graph), &forged)).await;
        assert_eq!(
            (reply.status, reply.code().as_str()),
            (StatusCode::FORBIDDEN, "graph.edit_token_invalid")
        );
        let reply = send(&router, bearer(run_request(&graph), &edit_token(&other))).await;
        assert_eq!(
            (reply.status, reply.code().as_str()),
            (StatusCode::FORBIDDEN, "graph.edit_token_invalid")
        );

        // Listing.
        let list = format!("/api/graphs/{graph}/runs");
        for request in [
            get(&list),
            bearer(get(&list), &forged),
            bearer(get(&list), &edit_token(&other)),
        ] {
            let reply = send(&router, request).await;
            assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text);
        }

        // The editor starts one; strangers cannot stop it.
        let run_id = start(&router, &graph, "slow").await;
        let cancel = format!("/api/runs/{run_id}/cancel");
        let reply = send(&router, post(&cancel, json!({}))).await;
        assert_eq!(
            (reply.status, reply.code().as_str()),
            (StatusCode::FORBIDDEN, "graph.edit_token_required")
        );
        for token in [forged.clone(), edit_token(&other)] {
            let reply = send(&router, bearer(post(&cancel, json!({})), &token)).await;
            assert_eq!(
                (reply.status, reply.code().as_str()),
                (StatusCode::FORBIDDEN, "graph.edit_token_invalid")
            );
        }
        let (_, still) = call(&router, get(&format!("/api/runs/{run_id}"))).await;
        assert!(
            ["queued", "running"].contains(&still["status"].as_str().unwrap()),
            "{still}"
        );

        // The run's own link is a read capability for that run, no token.
        let reply = send(&router, get(&format!("/api/runs/{run_id}"))).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert!(!reply.text.contains(&edit_token(&graph)));
        let reply = send(&router, get(&format!("/g/{graph}/runs/{run_id}"))).await;
        assert_eq!(reply.status, StatusCode::OK);

        // The editor can list and cancel.
        let (status, listed) = call(&router, as_editor(get(&list), &graph)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(listed["runs"][0]["id"], run_id.as_str());
        let (status, _) = call(&router, as_editor(post(&cancel, json!({})), &graph)).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        wait_for(&router, &run_id, &["cancelled"]).await;
    }
}

#[tokio::test]
async fn a_view_link_runs_a_fork_of_its_own() {
    let database = support::databases().await.remove(0);
    let router = router_with(support::settings(&database, Limits::default())).await;
    let graph = create_graph(&router, starter()).await;
    // What "Fork and run" does: fork with the view link, run with the
    // fork's own token.
    let (status, fork) = call(
        &router,
        post(&format!("/api/graphs/{graph}/fork"), json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let fork_id = fork["id"].as_str().unwrap();
    let reply = send(
        &router,
        bearer(run_request(fork_id), fork["edit_token"].as_str().unwrap()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    assert_eq!(reply.json()["graph_id"], fork_id);
    // The fork's token is no key to the original.
    let reply = send(
        &router,
        bearer(run_request(&graph), fork["edit_token"].as_str().unwrap()),
    )
    .await;
    assert_eq!(reply.code(), "graph.edit_token_invalid");
}

const KEY: &str = "correct-horse-battery-staple";

async fn router_with_key(database: &support::TestDatabase) -> Router {
    let mut settings = support::settings(database, Limits::default());
    settings.access.key = Some(KEY.to_owned());
    router_with(settings).await
}

fn with_key(mut request: Request<Body>, key: &str) -> Request<Body> {
    request
        .headers_mut()
        .insert("x-patchbay-access-key", key.parse().unwrap());
    request
}

#[tokio::test]
async fn with_an_access_key_creating_anything_needs_it_and_reading_a_link_does_not() {
    let database = support::databases().await.remove(0);
    let router = router_with_key(&database).await;

    // Creating without the key, or with a wrong one.
    let reply = send(&router, post("/api/graphs", starter())).await;
    assert_eq!(
        (reply.status, reply.code().as_str()),
        (StatusCode::UNAUTHORIZED, "access.key_required")
    );
    let reply = send(&router, with_key(post("/api/graphs", starter()), "guess")).await;
    assert_eq!(
        (reply.status, reply.code().as_str()),
        (StatusCode::FORBIDDEN, "access.key_invalid")
    );
    let reply = send(&router, get("/new")).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert!(reply.text.contains("access key"), "{}", reply.text);

    // With the key.
    let reply = send(&router, with_key(post("/api/graphs", starter()), KEY)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let graph = reply.json()["id"].as_str().unwrap().to_owned();
    let token = reply.json()["edit_token"].as_str().unwrap().to_owned();

    // Reading by link needs no key.
    for uri in [format!("/api/graphs/{graph}"), format!("/g/{graph}")] {
        assert_eq!(
            send(&router, get(&uri)).await.status,
            StatusCode::OK,
            "{uri}"
        );
    }
    let reply = send(&router, post("/api/validate", starter())).await;
    assert_eq!(reply.status, StatusCode::OK);

    // The edit token alone does not do: the key is needed as well.
    let reply = send(&router, bearer(run_request(&graph), &token)).await;
    assert_eq!(reply.code(), "access.key_required");
    let reply = send(
        &router,
        post(&format!("/api/graphs/{graph}/fork"), json!({})),
    )
    .await;
    assert_eq!(reply.code(), "access.key_required");
    // And the key alone does not do either: the graph's token decides.
    let reply = send(&router, with_key(run_request(&graph), KEY)).await;
    assert_eq!(reply.code(), "graph.edit_token_required");
    let reply = send(&router, with_key(bearer(run_request(&graph), &token), KEY)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
}

#[tokio::test]
async fn a_browser_gets_the_key_once_from_the_link_and_keeps_it_in_a_cookie() {
    let database = support::databases().await.remove(0);
    let router = router_with_key(&database).await;
    let reply = send(&router, get("/?key=wrong-key-wrong-key")).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert!(reply.header("set-cookie").is_empty());

    let reply = send(&router, get(&format!("/g/g_x?key={KEY}&run=r_1"))).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER);
    assert_eq!(
        reply.header("location"),
        "/g/g_x?run=r_1",
        "the key leaves the address"
    );
    let cookie = reply.header("set-cookie").to_owned();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(!cookie.contains(KEY), "the cookie holds no key: {cookie}");
    let cookie = cookie.split(';').next().unwrap().to_owned();

    let mut request = get("/new");
    request
        .headers_mut()
        .insert(header::COOKIE, cookie.parse().unwrap());
    let reply = send(&router, request).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.text);
    assert!(reply.header("location").starts_with("/g/g_"));
    // A made-up cookie is refused.
    let mut request = post("/api/graphs", starter());
    request
        .headers_mut()
        .insert(header::COOKIE, "patchbay_access=0000".parse().unwrap());
    assert_eq!(send(&router, request).await.code(), "access.key_invalid");
}

#[test]
fn the_server_refuses_to_serve_beyond_loopback_without_a_key() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_patchbay"))
        .args([
            "serve",
            "--addr",
            "0.0.0.0:0",
            "--database-url",
            "sqlite::memory:",
        ])
        .env_remove("PATCHBAY_ACCESS_KEY")
        .env_remove("PATCHBAY_OPEN_ACCESS")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("without an access key"), "{said}");
    assert!(said.contains("--open-access"), "{said}");
}

#[tokio::test]
async fn pages_allow_only_their_own_scripts_and_no_framing() {
    let database = support::databases().await.remove(0);
    let router = router_with(support::settings(&database, Limits::default())).await;
    let graph = create_graph(&router, starter()).await;
    let reply = send(&router, get(&format!("/g/{graph}"))).await;
    assert_eq!(reply.status, StatusCode::OK);
    let policy = reply.header("content-security-policy").to_owned();
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(policy.contains("'wasm-unsafe-eval'"), "{policy}");
    assert!(
        !policy.contains("'unsafe-inline' 'self'")
            && !policy.contains("script-src 'self' 'unsafe-inline'")
    );
    let nonce = policy
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap();
    // Every inline script carries this response's nonce.
    let scripts = reply.text.matches("<script").count();
    assert!(scripts > 0);
    assert_eq!(
        reply.text.matches(&format!("nonce=\"{nonce}\"")).count()
            + reply.text.matches("<script src=").count(),
        scripts,
        "a script without the nonce: {}",
        reply.text
    );
    // A fresh nonce every time.
    let again = send(&router, get(&format!("/g/{graph}"))).await;
    assert_ne!(again.header("content-security-policy"), policy);

    let api = send(&router, get(&format!("/api/graphs/{graph}"))).await;
    assert_eq!(api.header("x-content-type-options"), "nosniff");
    assert!(
        api.header("content-security-policy")
            .contains("default-src 'none'")
    );
    assert_eq!(api.header("x-frame-options"), "DENY");
    let missing = send(&router, get("/api/nothing")).await;
    assert_eq!(missing.header("x-content-type-options"), "nosniff");
}

#[tokio::test]
async fn a_run_input_over_the_limit_is_refused_with_413() {
    let database = support::databases().await.remove(0);
    let mut settings = support::settings(&database, Limits::default());
    settings.run_limits.max_input_bytes = 1000;
    let router = router_with(settings).await;
    let graph = create_graph(&router, starter()).await;
    let big = "x".repeat(1001);
    let (status, body) = call(
        &router,
        as_editor(
            post(
                &format!("/api/graphs/{graph}/runs"),
                json!({"input": {"text": big}}),
            ),
            &graph,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["code"], "run.input_too_large");
    assert_eq!(body["error"]["details"]["max_bytes"], 1000);
    // Files count too, and a body far over the limit never gets read whole.
    let file = json!({"name": "a.bin", "media_type": "application/octet-stream", "content_base64": "A".repeat(4000)});
    let (status, body) = call(
        &router,
        as_editor(
            post(
                &format!("/api/graphs/{graph}/runs"),
                json!({"input": {"text": "", "files": [file]}}),
            ),
            &graph,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    let huge = "y".repeat(200_000);
    let (status, body) = call(
        &router,
        as_editor(
            post(
                &format!("/api/graphs/{graph}/runs"),
                json!({"input": {"text": huge}}),
            ),
            &graph,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["code"], "run.input_too_large");
    // Within the limit it runs.
    start(&router, &graph, "small").await;
}

/// `request` as if it came over a socket from `address`.
fn from(mut request: Request<Body>, address: &str) -> Request<Body> {
    let address: SocketAddr = address.parse().unwrap();
    request.extensions_mut().insert(ConnectInfo(address));
    request
}

#[tokio::test]
async fn a_client_starting_runs_without_end_gets_429_and_others_do_not() {
    let database = support::databases().await.remove(0);
    let mut settings = support::settings(&database, Limits::default());
    settings.run_limits.per_minute = 2;
    let router = router_with(settings).await;
    let graph = create_graph(&router, starter()).await;
    let token = edit_token(&graph);
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let reply = send(
            &router,
            from(bearer(run_request(&graph), &token), "203.0.113.9:5000"),
        )
        .await;
        statuses.push(reply.status);
        if reply.status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(reply.code(), "run.rate_limited");
            let wait: u64 = reply.header("retry-after").parse().unwrap();
            assert!((1..=60).contains(&wait), "{wait}");
            assert_eq!(reply.json()["error"]["details"]["per_minute"], 2);
        }
    }
    assert_eq!(
        statuses,
        [
            StatusCode::CREATED,
            StatusCode::CREATED,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
    // Another address, and this machine, are not held back by it.
    let reply = send(
        &router,
        from(bearer(run_request(&graph), &token), "198.51.100.7:5000"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    for _ in 0..3 {
        let reply = send(
            &router,
            from(bearer(run_request(&graph), &token), "127.0.0.1:5000"),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    }
    // A refused request (no token) does not use up a client's runs.
    let reply = send(&router, from(run_request(&graph), "192.0.2.1:5000")).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    for _ in 0..2 {
        let reply = send(
            &router,
            from(bearer(run_request(&graph), &token), "192.0.2.1:5000"),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED);
    }
}
