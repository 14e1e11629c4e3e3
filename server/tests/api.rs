//! The graphs API and the pages through the router (`tower::ServiceExt::oneshot`),
//! on SQLite and, when configured, PostgreSQL.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use graph::Limits;
use graph::starter::starter_graph;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    text: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.text))
    }

    /// The `code` of an error body, after checking its shape.
    fn error_code(&self) -> String {
        let body = self.json();
        let error = &body["error"];
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|message| !message.is_empty()),
            "{body}"
        );
        error["code"].as_str().expect("error.code").to_owned()
    }
}

async fn send(router: &Router, request: Request<Body>) -> Reply {
    let what = format!("{} {}", request.method(), request.uri());
    let (status, headers, bytes) = support::within(&what, async {
        let response = router
            .clone()
            .oneshot(request)
            .await
            .expect("router answers");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("body")
            .to_bytes();
        (status, headers, bytes)
    })
    .await;
    Reply {
        status,
        headers,
        text: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

fn json_request(method: &str, uri: &str) -> axum::http::request::Builder {
    Request::builder()
        .method(method)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
}

fn post_json(uri: &str, body: &Value) -> Request<Body> {
    json_request("POST", uri)
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn put_graph(id: &str, token: Option<&str>, if_match: Option<&str>, body: &Value) -> Request<Body> {
    let mut builder = json_request("PUT", &format!("/api/graphs/{id}"));
    if let Some(token) = token {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    if let Some(revision) = if_match {
        builder = builder.header(header::IF_MATCH, revision);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

fn get(uri: &str) -> Request<Body> {
    Request::builder().uri(uri).body(Body::empty()).unwrap()
}

async fn app(database: &support::TestDatabase, limits: Limits) -> (Router, server::store::Store) {
    let state = support::state(database, limits).await;
    let store = state.store.clone();
    (server::router::router(state), store)
}

fn starter_json() -> Value {
    serde_json::to_value(starter_graph()).unwrap()
}

/// Creates the starter graph; returns (id, edit token).
async fn create(router: &Router) -> (String, String) {
    let reply = send(router, post_json("/api/graphs", &starter_json())).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    let body = reply.json();
    (
        body["id"].as_str().unwrap().to_owned(),
        body["edit_token"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn create_then_get_returns_the_document_with_its_id_and_revision() {
    for database in support::databases().await {
        let (router, store) = app(&database, Limits::default()).await;
        let reply = send(&router, post_json("/api/graphs", &starter_json())).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", database.name);
        let body = reply.json();
        let id = body["id"].as_str().unwrap();
        assert!(server::capability::is_graph_id(id), "{id}");
        let token = body["edit_token"].as_str().unwrap();
        assert!(token.len() >= 43, "256-bit token");
        assert_eq!(body["revision"], 1);
        assert_eq!(body["findings"], json!([]));
        assert_eq!(body["edit_url"], format!("/g/{id}#edit={token}"));
        assert_eq!(reply.headers[header::LOCATION], format!("/g/{id}").as_str());

        // The server keeps only the token's hash.
        let stored_hash = store.edit_token_hash(id).await.unwrap().unwrap();
        assert_ne!(stored_hash, token);
        assert_eq!(stored_hash, server::capability::hash_token(token));

        let fetched = send(&router, get(&format!("/api/graphs/{id}"))).await;
        assert_eq!(fetched.status, StatusCode::OK);
        assert_eq!(fetched.headers[header::ETAG], "\"1\"");
        let document = fetched.json();
        assert_eq!(document["id"], id);
        assert_eq!(document["revision"], 1);
        assert_eq!(document["modules"].as_array().unwrap().len(), 3);
        assert_eq!(
            document["modules"][1]["config"]["re_prompts"],
            json!([
                "Review your work above. What did you miss?",
                "Incorporate your review into a final version."
            ])
        );
        assert!(
            !fetched.text.contains(token),
            "the token never appears in the document"
        );
    }
}

#[tokio::test]
async fn saving_needs_the_token_and_the_current_revision() {
    for database in support::databases().await {
        let (router, _) = app(&database, Limits::default()).await;
        let (id, token) = create(&router).await;
        let mut document = starter_json();
        document["name"] = json!("Renamed");

        let reply = send(&router, put_graph(&id, None, Some("1"), &document)).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN);
        assert_eq!(reply.error_code(), "graph.edit_token_required");

        let reply = send(
            &router,
            put_graph(&id, Some("not-the-token"), Some("1"), &document),
        )
        .await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN);
        assert_eq!(reply.error_code(), "graph.edit_token_invalid");

        let reply = send(&router, put_graph(&id, Some(&token), None, &document)).await;
        assert_eq!(reply.status, StatusCode::PRECONDITION_REQUIRED);
        assert_eq!(reply.error_code(), "graph.revision_required");

        let reply = send(
            &router,
            put_graph(&id, Some(&token), Some("one"), &document),
        )
        .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        assert_eq!(reply.error_code(), "graph.revision_malformed");

        let reply = send(
            &router,
            put_graph(&id, Some(&token), Some("\"1\""), &document),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        assert_eq!(reply.json()["revision"], 2);
        assert_eq!(reply.headers[header::ETAG], "\"2\"");

        // A second writer still at revision 1 is told the current revision.
        document["name"] = json!("Theirs");
        let reply = send(&router, put_graph(&id, Some(&token), Some("1"), &document)).await;
        assert_eq!(reply.status, StatusCode::CONFLICT, "{}", database.name);
        assert_eq!(reply.error_code(), "graph.revision_conflict");
        assert_eq!(reply.json()["error"]["details"]["current_revision"], 2);

        let fetched = send(&router, get(&format!("/api/graphs/{id}")))
            .await
            .json();
        assert_eq!(fetched["name"], "Renamed");
        assert_eq!(fetched["revision"], 2);
    }
}

#[tokio::test]
async fn a_save_returns_the_findings_of_the_saved_document() {
    for database in support::databases().await {
        let (router, _) = app(&database, Limits::default()).await;
        let (id, token) = create(&router).await;
        let mut document = starter_json();
        document["modules"][1]["config"]["re_prompts"] = json!(["Review", "  "]);
        let reply = send(&router, put_graph(&id, Some(&token), Some("1"), &document)).await;
        assert_eq!(reply.status, StatusCode::OK);
        let body = reply.json();
        assert_eq!(body["has_errors"], true);
        assert_eq!(body["findings"][0]["code"], "validation.reprompt_empty");
        assert_eq!(body["findings"][0]["module_id"], "m2");
    }
}

#[tokio::test]
async fn fork_makes_an_independent_copy_with_its_own_token() {
    for database in support::databases().await {
        let (router, _) = app(&database, Limits::default()).await;
        let (id, token) = create(&router).await;
        let reply = send(
            &router,
            Request::builder()
                .method("POST")
                .uri(format!("/api/graphs/{id}/fork"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        let body = reply.json();
        let fork_id = body["id"].as_str().unwrap().to_owned();
        let fork_token = body["edit_token"].as_str().unwrap().to_owned();
        assert_ne!(fork_id, id);
        assert_ne!(fork_token, token);

        let fork = send(&router, get(&format!("/api/graphs/{fork_id}")))
            .await
            .json();
        let original = send(&router, get(&format!("/api/graphs/{id}")))
            .await
            .json();
        assert_eq!(
            fork["name"],
            format!("{} (fork)", original["name"].as_str().unwrap()),
            "a fork says it is one"
        );
        assert_eq!(fork["modules"], original["modules"]);
        assert_eq!(fork["cables"], original["cables"]);
        assert_eq!(fork["id"], fork_id.as_str());
        assert_eq!(fork["revision"], 1);

        // The original's token does not open the fork, and the fork's token saves it.
        let reply = send(&router, put_graph(&fork_id, Some(&token), Some("1"), &fork)).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN);
        let reply = send(
            &router,
            put_graph(&fork_id, Some(&fork_token), Some("1"), &fork),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK);

        let reply = send(
            &router,
            Request::builder()
                .method("POST")
                .uri("/api/graphs/g_AAAAAAAAAAAAAAAAAAAAAAAA/fork")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
        assert_eq!(reply.error_code(), "graph.not_found");
    }
}

#[tokio::test]
async fn validate_returns_findings_for_a_posted_document() {
    for database in support::databases().await {
        let (router, store) = app(&database, Limits::default()).await;
        let mut document = starter_json();
        document["modules"][1]["config"]["agent_config"]["provider"] = json!("nonexistent");
        document["modules"][1]["config"]["separate_outputs"] = json!(false);
        document["cables"][1]["from"]["port"] = json!("reprompt_1_out");
        let before = store.graph_count().await.unwrap();
        let reply = send(&router, post_json("/api/validate", &document)).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        let body = reply.json();
        assert_eq!(body["has_errors"], true);
        let codes: Vec<&str> = body["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|finding| finding["code"].as_str().unwrap())
            .collect();
        assert!(codes.contains(&"validation.unknown_provider"), "{codes:?}");
        assert!(codes.contains(&"validation.dangling_cable"), "{codes:?}");
        assert_eq!(
            store.graph_count().await.unwrap(),
            before,
            "validate stores nothing"
        );

        let clean = send(&router, post_json("/api/validate", &starter_json()))
            .await
            .json();
        assert_eq!(clean, json!({"has_errors": false, "findings": []}));
    }
}

/// An agent task set to continue its input's session, fed by a coding
/// module: validation says it cannot (a coding agent's ACP session).
#[tokio::test]
async fn validate_says_an_agent_task_cannot_continue_a_coding_session() {
    let database = support::databases().await.remove(0);
    let (router, _) = app(&database, Limits::default()).await;
    let mut document = starter_json();
    document["modules"][1]["kind"] = json!("step.coding");
    document["modules"][1]["config"] =
        json!({"instruction": "Build it", "agents": [{"role": "builder"}]});
    document["modules"].as_array_mut().unwrap().push(json!({
        "id": "m4", "kind": "step.agent_task", "label": "Explain", "position": {"x": 600, "y": 200},
        "config": {"instruction": "Explain what was built", "session_mode": "continue", "agent_config": {"provider": "sim"}}
    }));
    document["cables"].as_array_mut().unwrap().push(json!({
        "id": "c9", "from": {"module": "m2", "port": "data_out"}, "to": {"module": "m4", "port": "data_in"}
    }));
    let body = send(&router, post_json("/api/validate", &document))
        .await
        .json();
    let finding = body["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|finding| finding["code"] == "validation.session_not_continuable")
        .unwrap_or_else(|| panic!("{body}"))
        .clone();
    assert_eq!(finding["module_id"], "m4");
    assert_eq!(finding["severity"], "warning");
    assert_eq!(body["has_errors"], false, "{body}");
}

#[tokio::test]
async fn bad_input_gets_a_clear_4xx_and_writes_nothing() {
    for database in support::databases().await {
        let limits = Limits {
            max_modules: 5,
            max_cables: 4,
            max_document_bytes: 16 * 1024,
        };
        let (router, store) = app(&database, limits).await;
        let before = store.graph_count().await.unwrap();

        let malformed = json_request("POST", "/api/graphs")
            .body(Body::from("{\"modules\": [}"))
            .unwrap();
        let reply = send(&router, malformed).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        assert_eq!(reply.error_code(), "document.malformed_json");
        assert!(
            reply.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("line 1")
        );

        let mut wrong_type = starter_json();
        wrong_type["modules"][1]["config"]["agent_config"]["temperature"] = json!("warm");
        let reply = send(&router, post_json("/api/graphs", &wrong_type)).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(reply.error_code(), "document.invalid");
        assert_eq!(
            reply.json()["error"]["details"]["path"],
            "modules[1].config.agent_config.temperature"
        );

        let mut not_a_list = starter_json();
        not_a_list["cables"] = json!("c1");
        let reply = send(&router, post_json("/api/graphs", &not_a_list)).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(reply.json()["error"]["details"]["path"], "cables");

        let mut duplicate = starter_json();
        duplicate["modules"][2]["id"] = json!("m1");
        let reply = send(&router, post_json("/api/graphs", &duplicate)).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(reply.error_code(), "document.duplicate_id");

        let reply = send(
            &router,
            post_json("/api/graphs", &json!({"format": "patchbay.graph/2"})),
        )
        .await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(reply.error_code(), "document.unsupported_format");

        let reply = send(&router, post_json("/api/graphs", &json!([1, 2, 3]))).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(reply.error_code(), "document.invalid");

        let mut oversized = starter_json();
        oversized["name"] = json!("x".repeat(20 * 1024));
        let reply = send(&router, post_json("/api/graphs", &oversized)).await;
        assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(reply.error_code(), "document.too_large");
        assert_eq!(reply.json()["error"]["details"]["max_bytes"], 16 * 1024);

        let mut too_many = starter_json();
        let extra: Vec<Value> = (10..16)
            .map(|index| json!({"id": format!("m{index}"), "kind": "step.output"}))
            .collect();
        too_many["modules"].as_array_mut().unwrap().extend(extra);
        let reply = send(&router, post_json("/api/graphs", &too_many)).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(reply.error_code(), "document.over_limit");
        assert_eq!(reply.json()["error"]["details"]["limit"], "max_modules");

        let text = Request::builder()
            .method("POST")
            .uri("/api/graphs")
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from(starter_json().to_string()))
            .unwrap();
        let reply = send(&router, text).await;
        assert_eq!(reply.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(reply.error_code(), "request.unsupported_media_type");

        assert_eq!(
            store.graph_count().await.unwrap(),
            before,
            "{}: a refused request left a row behind",
            database.name
        );

        // A refused save leaves the graph as it was.
        let (id, token) = create(&router).await;
        let reply = send(
            &router,
            put_graph(&id, Some(&token), Some("1"), &wrong_type),
        )
        .await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
        let fetched = send(&router, get(&format!("/api/graphs/{id}")))
            .await
            .json();
        assert_eq!(fetched["revision"], 1);
        assert_eq!(store.revision_count(&id).await.unwrap(), 1);
    }
}

#[tokio::test]
async fn unknown_kinds_are_stored_and_reported_not_refused() {
    // PRODUCT §1: unknown kinds load and fail validation rather than the load,
    // so a document from a newer Patchbay is never lost on save.
    for database in support::databases().await {
        let (router, _) = app(&database, Limits::default()).await;
        let mut document = starter_json();
        document["modules"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "m9", "kind": "step.teleport", "config": {"beam": "me up"}}));
        let reply = send(&router, post_json("/api/graphs", &document)).await;
        assert_eq!(reply.status, StatusCode::CREATED);
        let body = reply.json();
        assert_eq!(body["findings"][0]["code"], "validation.unknown_kind");
        let id = body["id"].as_str().unwrap();
        let fetched = send(&router, get(&format!("/api/graphs/{id}")))
            .await
            .json();
        assert_eq!(fetched["modules"][3]["config"], json!({"beam": "me up"}));
    }
}

#[tokio::test]
async fn unknown_graphs_routes_and_methods_are_json_errors() {
    for database in support::databases().await {
        let (router, _) = app(&database, Limits::default()).await;
        for uri in [
            "/api/graphs/g_AAAAAAAAAAAAAAAAAAAAAAAA",
            "/api/graphs/nonsense",
            "/api/graphs/..%2F..%2Fetc",
        ] {
            let reply = send(&router, get(uri)).await;
            assert_eq!(reply.status, StatusCode::NOT_FOUND, "{uri}");
            assert_eq!(reply.error_code(), "graph.not_found", "{uri}");
        }
        let reply = send(&router, get("/api/nothing-here")).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
        assert_eq!(reply.error_code(), "request.not_found");

        let reply = send(
            &router,
            Request::builder()
                .method("DELETE")
                .uri("/api/graphs")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(reply.error_code(), "request.method_not_allowed");

        let reply = send(
            &router,
            put_graph(
                "g_AAAAAAAAAAAAAAAAAAAAAAAA",
                Some("x"),
                Some("1"),
                &starter_json(),
            ),
        )
        .await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn new_creates_a_starter_graph_and_redirects_with_the_token_in_the_fragment() {
    for database in support::databases().await {
        let (router, store) = app(&database, Limits::default()).await;
        let before = store.graph_count().await.unwrap();
        let reply = send(&router, get("/new")).await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER);
        let location = reply.headers[header::LOCATION].to_str().unwrap().to_owned();
        let (path, fragment) = location
            .split_once("#edit=")
            .expect("token in the fragment");
        let id = path.strip_prefix("/g/").unwrap();
        assert!(server::capability::is_graph_id(id));
        assert_eq!(
            store.edit_token_hash(id).await.unwrap().unwrap(),
            server::capability::hash_token(fragment)
        );
        assert_eq!(store.graph_count().await.unwrap(), before + 1);
    }
}

#[tokio::test]
async fn the_graph_page_is_rendered_on_the_server_with_modules_and_cables() {
    for database in support::databases().await {
        let (router, _) = app(&database, Limits::default()).await;
        let (id, _) = create(&router).await;
        let reply = send(&router, get(&format!("/g/{id}"))).await;
        assert_eq!(reply.status, StatusCode::OK);
        let html = &reply.text;
        for module in ["m1", "m2", "m3"] {
            assert!(
                html.contains(&format!("data-node-id=\"{module}\"")),
                "{module} missing"
            );
        }
        for cable in ["c1", "c2"] {
            assert!(
                html.contains(&format!("data-edge-id=\"{cable}\"")),
                "{cable} missing"
            );
        }
        // Ports come from ports(): the agent task's inputs and outputs.
        for port in [
            "data_in",
            "context_in",
            "instruction_in",
            "signal_in",
            "data_out",
            "receipt_out",
        ] {
            assert!(
                html.contains(&format!("data-port-id=\"{port}\"")),
                "{port} missing"
            );
        }
        // The cable c1 runs from the input's data_out anchor (80+182, 120+1+24+4+10)
        // to the agent task's data_in anchor (360, 159).
        assert!(
            html.contains("M262.0,159.0 C311.0,159.0 311.0,159.0 360.0,159.0"),
            "cable geometry"
        );
        assert!(html.contains("Draft, review, finalize"));
        assert!(html.contains("/pkg/app.js"), "hydration script");
    }
}

/// Listing the app's routes holds back every resource load in the whole
/// process while it runs (Leptos counts that in one global), so a page
/// rendered meanwhile waited for ever: seen as tests that hung now and then,
/// each test building its own router while another rendered. The routes
/// are listed once per process; building routers while pages render stalls
/// none of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn building_routers_while_pages_render_stalls_no_page() {
    let database = support::databases().await.remove(0);
    let state = support::state(&database, Limits::default()).await;
    let router = server::router::router(state.clone());
    let (id, _) = create(&router).await;
    let building = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let builder = {
        let building = std::sync::Arc::clone(&building);
        let runtime = tokio::runtime::Handle::current();
        std::thread::spawn(move || {
            let _entered = runtime.enter();
            while building.load(std::sync::atomic::Ordering::Relaxed) {
                drop(server::router::router(state.clone()));
            }
        })
    };
    for round in 0..40 {
        let reply = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            send(&router, get(&format!("/g/{id}"))),
        )
        .await;
        let Ok(reply) = reply else {
            building.store(false, std::sync::atomic::Ordering::Relaxed);
            panic!("the graph page did not answer within 10 s (round {round})");
        };
        assert_eq!(reply.status, StatusCode::OK);
        assert!(reply.text.contains("data-node-id=\"m2\""), "round {round}");
    }
    building.store(false, std::sync::atomic::Ordering::Relaxed);
    builder.join().unwrap();
}

#[tokio::test]
async fn an_unknown_graph_gets_a_404_page() {
    for database in support::databases().await {
        let (router, _) = app(&database, Limits::default()).await;
        for path in [
            "/g/g_AAAAAAAAAAAAAAAAAAAAAAAA",
            "/g/not-an-id",
            "/no/such/page",
        ] {
            let reply = send(&router, get(path)).await;
            assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
            assert!(
                reply.headers[header::CONTENT_TYPE]
                    .to_str()
                    .unwrap()
                    .starts_with("text/html")
            );
            assert!(reply.text.contains("Not found"), "{path}: {}", reply.text);
        }
    }
}

#[tokio::test]
async fn attachments_upload_with_the_token_and_download_sandboxed() {
    for database in support::databases().await {
        let (router, _) = app(&database, Limits::default()).await;
        let (id, token) = create(&router).await;
        let upload = |token: Option<&str>| {
            let mut builder = Request::builder()
                .method("POST")
                .uri(format!("/api/graphs/{id}/attachments"))
                .header(header::CONTENT_TYPE, "text/html")
                .header("X-Filename", "page%20one.html");
            if let Some(token) = token {
                builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
            }
            builder
                .body(Body::from("<script>alert(1)</script>"))
                .unwrap()
        };
        let reply = send(&router, upload(None)).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN);
        let reply = send(&router, upload(Some("wrong"))).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN);

        let reply = send(&router, upload(Some(&token))).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
        let attachment = reply.json();
        assert_eq!(attachment["name"], "page one.html");
        assert_eq!(attachment["media_type"], "text/html");
        assert_eq!(attachment["size_bytes"], 25);
        let attachment_id = attachment["id"].as_str().unwrap();

        let reply = send(&router, get(&format!("/api/attachments/{attachment_id}"))).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.text, "<script>alert(1)</script>");
        // An uploaded page never runs as our page.
        assert_eq!(
            reply.headers[header::CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        assert_eq!(reply.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert!(
            reply.headers[header::CONTENT_SECURITY_POLICY]
                .to_str()
                .unwrap()
                .starts_with("sandbox")
        );

        let reply = send(&router, get("/api/attachments/a_AAAAAAAAAAAAAAAAAAAAAAAA")).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
        assert_eq!(reply.error_code(), "attachment.not_found");
    }
}

#[tokio::test]
async fn a_file_no_model_can_be_sent_is_refused_when_it_is_uploaded() {
    let database = support::databases().await.remove(0);
    let router = server::router::router(support::state(&database, Limits::default()).await);
    let (id, token) = create(&router).await;
    let upload = |media_type: &str, name: &str, body: Vec<u8>| {
        Request::builder()
            .method("POST")
            .uri(format!("/api/graphs/{id}/attachments"))
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .header(header::CONTENT_TYPE, media_type)
            .header("x-filename", name)
            .body(Body::from(body))
            .unwrap()
    };
    let reply = send(
        &router,
        upload(
            "application/octet-stream",
            "model.bin",
            vec![0, 159, 146, 150],
        ),
    )
    .await;
    assert_eq!(
        reply.status,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "{}",
        reply.text
    );
    let body = reply.json();
    assert_eq!(body["error"]["code"], "attachment.unsupported");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("PNG, JPEG, GIF or WebP")
    );
    let reply = send(
        &router,
        upload("image/tiff", "scan.tiff", vec![73, 73, 42, 0]),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let reply = send(
        &router,
        upload("text/plain", "latin1.txt", vec![0xe9, 0x74, 0xe9]),
    )
    .await;
    assert_eq!(
        reply.status,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "text must be UTF-8"
    );
    // A text file whose type the browser could not tell is taken as text.
    let reply = send(
        &router,
        upload("application/octet-stream", "notes.md", b"# Notes".to_vec()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    assert_eq!(reply.json()["media_type"], "text/plain");
    let reply = send(
        &router,
        upload("image/png", "dot.png", vec![137, 80, 78, 71]),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED);
}
