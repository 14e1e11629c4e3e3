//! What the home page asks of the server: the summaries of the graphs a
//! browser holds edit tokens for (and nothing about any other graph, from
//! the stranger's side), `/new?example=` for each starter example (each one
//! runs to completion offline), and the page at `/` itself.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use graph::Limits;
use graph::starter::{examples, starter_graph};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use server::settings::Settings;
use support::{as_editor, call, create_graph, edit_token, get, post, start, wait_for};
use tower::ServiceExt;

fn starter() -> Value {
    serde_json::to_value(starter_graph()).unwrap()
}

fn named(name: &str) -> Value {
    let mut document = starter();
    document["name"] = json!(name);
    document
}

async fn router_with(settings: Settings) -> Router {
    server::router::router(server::build_state(settings).await.unwrap())
}

async fn summaries(router: &Router, held: Value) -> (StatusCode, Value) {
    call(
        router,
        post("/api/graphs/summaries", json!({ "graphs": held })),
    )
    .await
}

fn held(graph_id: &str, token: &str) -> Value {
    json!({"id": graph_id, "edit_token": token})
}

/// Status, headers and text of a page.
async fn page(router: &Router, request: Request<Body>) -> (StatusCode, header::HeaderMap, String) {
    let what = format!("{} {}", request.method(), request.uri());
    support::within(&what, async {
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            headers,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    })
    .await
}

#[tokio::test]
async fn a_browser_gets_name_last_edit_and_last_run_of_the_graphs_it_holds_newest_edit_first() {
    for database in support::databases().await {
        let router = router_with(support::settings(&database, Limits::default())).await;
        let older = create_graph(&router, named("Tide tables")).await;
        let newer = create_graph(&router, named("Moon phases")).await;
        let run_id = start(&router, &older, "the tides").await;
        wait_for(&router, &run_id, &["completed"]).await;
        // An edit makes the older one the newest edit.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let mut document = named("Tide tables, revised");
        document["revision"] = json!(1);
        let mut save = Request::builder()
            .method("PUT")
            .uri(format!("/api/graphs/{older}"))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::IF_MATCH, "\"1\"")
            .body(Body::from(document.to_string()))
            .unwrap();
        save = as_editor(save, &older);
        let (status, saved) = call(&router, save).await;
        assert_eq!(status, StatusCode::OK, "{saved}");

        let (status, body) = summaries(
            &router,
            json!([
                held(&newer, &edit_token(&newer)),
                held(&older, &edit_token(&older)),
            ]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{}: {body}", database.name);
        let graphs = body["graphs"].as_array().unwrap();
        assert_eq!(graphs.len(), 2, "{body}");
        assert_eq!(graphs[0]["id"], older.as_str(), "newest edit first");
        assert_eq!(graphs[0]["name"], "Tide tables, revised");
        assert_eq!(graphs[0]["revision"], 2);
        assert_eq!(graphs[0]["last_run"]["id"], run_id.as_str());
        assert_eq!(graphs[0]["last_run"]["status"], "completed");
        assert!(graphs[0]["last_run"]["created_at"].as_i64().unwrap() > 0);
        assert_eq!(graphs[1]["id"], newer.as_str());
        assert_eq!(graphs[1]["name"], "Moon phases");
        assert_eq!(graphs[1]["last_run"], Value::Null);
        assert!(
            graphs[0]["updated_at"].as_i64().unwrap() > graphs[1]["updated_at"].as_i64().unwrap()
        );
        assert_eq!(body["unknown"], json!([]));

        // The newest run is the one shown.
        let second = start(&router, &older, "again").await;
        wait_for(&router, &second, &["completed"]).await;
        let (_, body) = summaries(&router, json!([held(&older, &edit_token(&older))])).await;
        assert_eq!(body["graphs"][0]["last_run"]["id"], second.as_str());

        // Nothing changed: asking is not an edit.
        let (_, again) = summaries(&router, json!([held(&older, &edit_token(&older))])).await;
        assert_eq!(again["graphs"][0]["revision"], 2);
        assert_eq!(
            again["graphs"][0]["updated_at"],
            body["graphs"][0]["updated_at"]
        );
    }
}

#[tokio::test]
async fn a_stranger_learns_nothing_about_a_graph_whose_token_it_does_not_hold() {
    for database in support::databases().await {
        let router = router_with(support::settings(&database, Limits::default())).await;
        let secret = create_graph(&router, named("Secret plans")).await;
        let other = create_graph(&router, named("Other graph")).await;
        let forged = "A".repeat(43);
        let missing = "g_AAAAAAAAAAAAAAAAAAAAAAAA";
        for attempt in [
            held(&secret, &forged),
            held(&secret, &edit_token(&other)),
            held(&secret, ""),
            held(
                &secret,
                &server::capability::hash_token(&edit_token(&secret)),
            ),
        ] {
            let (status, body) = summaries(&router, json!([attempt])).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(body["graphs"], json!([]), "{attempt}: {body}");
            assert_eq!(body["unknown"], json!([secret.as_str()]));
            assert!(!body.to_string().contains("Secret plans"), "{body}");
        }
        // No token at all is a malformed request, and says nothing either.
        let (status, body) = summaries(&router, json!([{"id": secret}])).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["code"], "summaries.invalid_request");
        assert!(!body.to_string().contains("Secret plans"), "{body}");

        // Gone, never there, not even an id: unknown, in the order asked.
        let (_, body) = summaries(
            &router,
            json!([
                held(missing, &forged),
                held("../../etc/passwd", &forged),
                held(&other, &edit_token(&other)),
                held(&secret, &edit_token(&other)),
            ]),
        )
        .await;
        assert_eq!(body["graphs"].as_array().unwrap().len(), 1);
        assert_eq!(body["graphs"][0]["name"], "Other graph");
        assert_eq!(
            body["unknown"],
            json!([missing, "../../etc/passwd", secret.as_str()])
        );
        // Listed twice, with a wrong and the right token: it is this
        // browser's graph, once.
        let (_, body) = summaries(
            &router,
            json!([held(&secret, &forged), held(&secret, &edit_token(&secret)),]),
        )
        .await;
        assert_eq!(body["graphs"].as_array().unwrap().len(), 1);
        assert_eq!(body["graphs"][0]["name"], "Secret plans");
        assert_eq!(body["unknown"], json!([]));
    }
}

#[tokio::test]
async fn a_malformed_or_oversized_request_gets_a_json_error_never_a_500() {
    let database = support::databases().await.remove(0);
    let router = router_with(support::settings(&database, Limits::default())).await;
    let graph = create_graph(&router, starter()).await;
    let too_many: Vec<Value> = (0..501)
        .map(|_| held(&graph, &edit_token(&graph)))
        .collect();
    let (status, body) = summaries(&router, json!(too_many)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(body["error"]["code"], "summaries.too_many_graphs");
    assert_eq!(body["error"]["details"]["max_graphs"], 500);
    let five_hundred: Vec<Value> = (0..500)
        .map(|_| held(&graph, &edit_token(&graph)))
        .collect();
    let (status, body) = summaries(&router, json!(five_hundred)).await;
    assert_eq!(status, StatusCode::OK, "at most 500 is fine");
    assert_eq!(body["graphs"].as_array().unwrap().len(), 1);

    for (request, path) in [
        (json!({"graph": []}), ""),
        (json!({"graphs": "all"}), "graphs"),
        (
            json!({"graphs": [{"id": 7, "edit_token": "x"}]}),
            "graphs[0].id",
        ),
    ] {
        let (status, body) = call(&router, post("/api/graphs/summaries", request)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["code"], "summaries.invalid_request");
        if !path.is_empty() {
            assert_eq!(body["error"]["details"]["path"], path, "{body}");
        }
    }
    let broken = Request::builder()
        .method("POST")
        .uri("/api/graphs/summaries")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from("{\"graphs\": ["))
        .unwrap();
    let (status, body) = call(&router, broken).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = call(&router, get("/api/graphs/summaries")).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
}

#[tokio::test]
async fn with_an_access_key_listing_needs_no_key_and_still_needs_the_tokens() {
    let database = support::databases().await.remove(0);
    let mut settings = support::settings(&database, Limits::default());
    settings.access.key = Some("correct-horse-battery-staple".to_owned());
    let router = router_with(settings).await;
    let mut create = post("/api/graphs", named("Keyed"));
    create.headers_mut().insert(
        "x-patchbay-access-key",
        "correct-horse-battery-staple".parse().unwrap(),
    );
    let (status, created) = call(&router, create).await;
    assert_eq!(status, StatusCode::CREATED);
    let id = created["id"].as_str().unwrap();
    let token = created["edit_token"].as_str().unwrap();
    let (status, body) = summaries(&router, json!([held(id, token)])).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["graphs"][0]["name"], "Keyed");
    let (_, body) = summaries(&router, json!([held(id, &"B".repeat(43))])).await;
    assert_eq!(body["graphs"], json!([]));
}

#[tokio::test]
async fn new_starts_from_each_example_and_each_runs_to_completion_offline() {
    // Commands enabled (confined, offline): the checks example runs them.
    let setup = support::coding::setup_running_commands().await;
    let router = &setup.router;
    for example in examples() {
        let (status, headers, text) =
            page(router, get(&format!("/new?example={}", example.id))).await;
        assert_eq!(status, StatusCode::SEE_OTHER, "{}: {text}", example.id);
        let location = headers[header::LOCATION].to_str().unwrap();
        let (path, token) = location.split_once("#edit=").unwrap();
        let id = path.strip_prefix("/g/").unwrap();
        let (_, document) = call(router, get(&format!("/api/graphs/{id}"))).await;
        assert_eq!(document["name"], example.title);
        assert_eq!(
            document["modules"].as_array().unwrap().len(),
            example.graph.modules.len()
        );
        // The server's own findings: nothing to fix before running.
        let (status, checked) = call(router, post("/api/validate", document.clone())).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(checked["findings"], json!([]), "{}", example.id);

        let mut run = post(
            &format!("/api/graphs/{id}/runs"),
            json!({"input": {"text": "an example run"}}),
        );
        run.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        );
        let (status, started) = call(router, run).await;
        assert_eq!(status, StatusCode::CREATED, "{}: {started}", example.id);
        let run_id = started["id"].as_str().unwrap();
        let ended = ["completed", "failed", "cancelled"];
        let mut finished = wait_for(router, run_id, &[&ended[..], &["waiting"]].concat()).await;
        // An example that asks a person is approved, as a person would
        // (each waiting activation once: the run may still say `waiting`
        // for a moment after a decision, until it acts on it).
        let mut decided = Vec::new();
        while finished["status"] == "waiting" {
            approve_what_waits(router, run_id, token, &finished, &mut decided).await;
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            finished = wait_for(router, run_id, &[&ended[..], &["waiting"]].concat()).await;
        }
        assert_eq!(
            finished["status"], "completed",
            "{}: {}",
            example.id, finished["error"]
        );
    }
}

/// Approves every approval of the run that waits for a person and was not
/// decided yet (`decided`: module and activation).
async fn approve_what_waits(
    router: &Router,
    run_id: &str,
    token: &str,
    run: &Value,
    decided: &mut Vec<(String, u64)>,
) {
    let modules = run["modules"].as_object().unwrap();
    let waiting = modules.iter().filter_map(|(module_id, module)| {
        let last = module["activations"].as_array()?.last()?;
        let activation = (module_id.clone(), last["activation"].as_u64()?);
        (last["status"] == "waiting" && !decided.contains(&activation)).then_some(activation)
    });
    let waiting: Vec<(String, u64)> = waiting.collect();
    for (module_id, activation) in waiting {
        let mut decide = post(
            &format!("/api/runs/{run_id}/modules/{module_id}/decision"),
            json!({"decision": "approve"}),
        );
        decide.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        );
        let (status, body) = call(router, decide).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        decided.push((module_id, activation));
    }
}

#[tokio::test]
async fn new_with_an_unknown_example_is_a_404_page_and_creates_nothing() {
    let database = support::databases().await.remove(0);
    let state = server::build_state(support::settings(&database, Limits::default()))
        .await
        .unwrap();
    let store = state.store.clone();
    let router = server::router::router(state);
    let before = store.graph_count().await.unwrap();
    for address in [
        "/new?example=no-such-example",
        "/new?example=",
        "/new?example=%3Cscript%3E",
    ] {
        let (status, headers, text) = page(&router, get(address)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{address}");
        assert!(
            headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
        assert!(text.contains("No such example"), "{text}");
        assert!(text.contains("href=\"/\""), "{text}");
        assert!(!text.contains("<script"), "{text}");
    }
    assert_eq!(store.graph_count().await.unwrap(), before);
    // Without an example, still the starter graph.
    let (status, headers, _) = page(&router, get("/new")).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let location = headers[header::LOCATION].to_str().unwrap();
    let id = location
        .strip_prefix("/g/")
        .unwrap()
        .split('#')
        .next()
        .unwrap();
    let (_, document) = call(&router, get(&format!("/api/graphs/{id}"))).await;
    assert_eq!(document["name"], "Draft, review, finalize");
}

#[tokio::test]
async fn the_home_page_is_the_apps_own_and_creates_nothing() {
    let database = support::databases().await.remove(0);
    let state = server::build_state(support::settings(&database, Limits::default()))
        .await
        .unwrap();
    let store = state.store.clone();
    let router = server::router::router(state);
    let before = store.graph_count().await.unwrap();
    let (status, headers, html) = page(&router, get("/")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        store.graph_count().await.unwrap(),
        before,
        "/ makes no graph"
    );
    assert!(html.contains("Your graphs"), "{html}");
    assert!(html.contains("href=\"/new\""), "{html}");
    for example in examples() {
        assert!(html.contains(example.title), "{}", example.title);
        assert!(
            html.contains(&format!("href=\"/new?example={}\"", example.id)),
            "{}",
            example.id
        );
    }
    // Its scripts are the app's, each with this response's nonce.
    let policy = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    let nonce = policy
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap();
    let scripts = html.matches("<script").count();
    assert!(scripts > 0);
    assert_eq!(
        html.matches(&format!("nonce=\"{nonce}\"")).count() + html.matches("<script src=").count(),
        scripts,
        "{html}"
    );
}

#[tokio::test]
async fn the_bundle_goes_out_in_the_smallest_form_the_browser_takes() {
    let database = support::databases().await.remove(0);
    let site = tempfile::tempdir().unwrap();
    let pkg = site.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    // What scripts/build leaves: each file beside its brotli and gzip forms
    // (the app's script has no brotli form here: it falls back to gzip).
    std::fs::write(pkg.join("app.wasm"), "the bundle").unwrap();
    std::fs::write(pkg.join("app.wasm.br"), "the bundle, brotli").unwrap();
    std::fs::write(pkg.join("app.wasm.gz"), "the bundle, gzip").unwrap();
    std::fs::write(pkg.join("app.js"), "the script").unwrap();
    std::fs::write(pkg.join("app.js.gz"), "the script, gzip").unwrap();
    let mut settings = support::settings(&database, Limits::default());
    settings.site_root = site.path().to_path_buf();
    let router = router_with(settings).await;

    let fetch = |path: &'static str, accepts: Option<&'static str>| {
        let router = router.clone();
        async move {
            let mut request = get(path);
            if let Some(accepts) = accepts {
                request
                    .headers_mut()
                    .insert(header::ACCEPT_ENCODING, accepts.parse().unwrap());
            }
            let response = router.oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{path} ({accepts:?})");
            let headers = response.headers().clone();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (
                headers
                    .get(header::CONTENT_ENCODING)
                    .map(|value| value.to_str().unwrap().to_owned()),
                headers
                    .get(header::VARY)
                    .map(|value| value.to_str().unwrap().to_owned()),
                String::from_utf8(body.to_vec()).unwrap(),
            )
        }
    };
    // Chromium says `gzip, deflate, br, zstd`: brotli, the smallest.
    let (encoding, vary, body) = fetch("/pkg/app.wasm", Some("gzip, deflate, br, zstd")).await;
    assert_eq!(encoding.as_deref(), Some("br"));
    assert_eq!(body, "the bundle, brotli");
    assert_eq!(vary.as_deref(), Some("accept-encoding"));
    let (encoding, _, body) = fetch("/pkg/app.wasm", Some("gzip")).await;
    assert_eq!(encoding.as_deref(), Some("gzip"));
    assert_eq!(body, "the bundle, gzip");
    let (encoding, vary, body) = fetch("/pkg/app.wasm", None).await;
    assert_eq!(encoding, None);
    assert_eq!(body, "the bundle");
    assert_eq!(vary.as_deref(), Some("accept-encoding"));
    let (encoding, _, body) = fetch("/pkg/app.js", Some("gzip, deflate, br, zstd")).await;
    assert_eq!(encoding.as_deref(), Some("gzip"));
    assert_eq!(body, "the script, gzip");
}
