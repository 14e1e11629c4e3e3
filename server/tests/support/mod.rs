//! Shared test setup: stores on SQLite (always) and PostgreSQL (when
//! `PATCHBAY_TEST_POSTGRES_URL` names one; scripts/test starts it and sets
//! `PATCHBAY_REQUIRE_POSTGRES=1` so a missing server fails instead of skipping).

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::Duration;

pub mod coding;
pub mod mcp;
pub mod priced;
pub mod processes;
pub mod real_agent;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

use graph::Limits;
use server::settings::Settings;
use server::state::AppState;
use server::store::Store;

pub struct TestDatabase {
    pub name: &'static str,
    pub url: String,
    /// Keeps a SQLite file's folder alive for the test.
    _folder: Option<tempfile::TempDir>,
}

/// A fresh PostgreSQL database for one test, so tests running side by side
/// never see each other's runs (scripts/test drops them all beforehand).
async fn fresh_postgres(admin_url: &str) -> String {
    use sqlx::Connection;
    let name = format!("patchbay_test_{:016x}", rand::random::<u64>());
    let mut connection = within(
        "connecting to PostgreSQL",
        sqlx::PgConnection::connect(admin_url),
    )
    .await
    .unwrap_or_else(|error| panic!("PostgreSQL at PATCHBAY_TEST_POSTGRES_URL: {error}"));
    within(
        "CREATE DATABASE",
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut connection),
    )
    .await
    .unwrap_or_else(|error| panic!("cannot create a test database: {error}"));
    let (base, _) = admin_url
        .rsplit_once('/')
        .expect("a database URL ends in /name");
    format!("{base}/{name}")
}

pub async fn databases() -> Vec<TestDatabase> {
    let folder = tempfile::tempdir().expect("temporary folder");
    let mut databases = vec![TestDatabase {
        name: "sqlite",
        url: format!("sqlite://{}/patchbay.db", folder.path().display()),
        _folder: Some(folder),
    }];
    match std::env::var("PATCHBAY_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => databases.push(TestDatabase {
            name: "postgres",
            url: fresh_postgres(&url).await,
            _folder: None,
        }),
        _ => {
            assert!(
                std::env::var("PATCHBAY_REQUIRE_POSTGRES").is_err(),
                "PATCHBAY_REQUIRE_POSTGRES is set but PATCHBAY_TEST_POSTGRES_URL is not"
            );
            eprintln!(
                "PostgreSQL tests skipped: PATCHBAY_TEST_POSTGRES_URL is not set (scripts/test sets it)"
            );
        }
    }
    databases
}

/// The PostgreSQL database of a test that needs several processes on one
/// (none when PostgreSQL is not set up here).
pub async fn postgres() -> Option<TestDatabase> {
    databases()
        .await
        .into_iter()
        .find(|database| database.name == "postgres")
}

pub async fn store(database: &TestDatabase) -> Store {
    Store::connect(&database.url)
        .await
        .unwrap_or_else(|error| panic!("{}: {error}", database.name))
}

/// Stores run `id` with nothing in it (no graph, an empty snapshot and
/// input, held by no process), for tests of the store's records of a run.
pub async fn insert_bare_run(store: &Store, id: &str) {
    store
        .insert_run(server::store::NewRun {
            id,
            graph_id: None,
            graph_revision: None,
            snapshot: "{}",
            input: "{}",
            budget_usd: None,
            lease: None,
            from: None,
            started_by: None,
        })
        .await
        .unwrap_or_else(|error| panic!("run {id}: {error}"));
}

pub fn settings(database: &TestDatabase, limits: Limits) -> Settings {
    let mut settings = Settings::for_database(&database.url);
    settings.site_root = PathBuf::from("target/site-for-tests");
    settings.limits = limits;
    // Instant simulated replies unless a test slows them down.
    settings.sim_latency_ms = Some(0);
    // The test binary is not `patchbay`: the simulated coding agent is.
    settings.sim_agent_program = Some(PathBuf::from(env!("CARGO_BIN_EXE_patchbay")));
    settings
}

/// A router on the first test database, with configuration file `text`
/// (its folder and the database kept alive by what is returned) and the
/// file's simulator pace rather than the tests' instant one.
pub async fn router_with_config(text: &str) -> (Router, tempfile::TempDir, TestDatabase) {
    let database = databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("patchbay.toml");
    std::fs::write(&file, text).unwrap();
    let mut settings = settings(&database, Limits::default());
    settings.config_file = Some(file);
    settings.sim_latency_ms = None;
    let router = server::router::router(server::build_state(settings).await.unwrap());
    (router, folder, database)
}

pub async fn state(database: &TestDatabase, limits: Limits) -> AppState {
    server::build_state(settings(database, limits))
        .await
        .unwrap_or_else(|error| panic!("{}: {error}", database.name))
}

// Talking to the router as a client does.

/// Awaits `work`, failing the test with `what` if it takes over 60 s: a
/// request that never answers should fail and say which, not hang CI.
pub async fn within<T>(what: &str, work: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), work)
        .await
        .unwrap_or_else(|_| panic!("{what} did not answer within 60 s"))
}

pub async fn call(router: &Router, request: Request<Body>) -> (StatusCode, Value) {
    let what = format!("{} {}", request.method(), request.uri());
    within(&what, async {
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    })
    .await
}

pub fn post(uri: &str, body: Value) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

pub fn get(uri: &str) -> Request<Body> {
    Request::builder().uri(uri).body(Body::empty()).unwrap()
}

/// The edit tokens of the graphs the tests made, by graph id: what the
/// creating browser keeps in its local storage.
static EDIT_TOKENS: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, String>>,
> = std::sync::LazyLock::new(Default::default);

/// The edit token `create_graph` got for `graph_id`.
pub fn edit_token(graph_id: &str) -> String {
    EDIT_TOKENS
        .lock()
        .unwrap()
        .get(graph_id)
        .cloned()
        .unwrap_or_else(|| panic!("no edit token for {graph_id}: it was not made by create_graph"))
}

/// `request` as the graph's editor sends it: with its edit token.
pub fn as_editor(mut request: Request<Body>, graph_id: &str) -> Request<Body> {
    let value = format!("Bearer {}", edit_token(graph_id));
    request
        .headers_mut()
        .insert(header::AUTHORIZATION, value.parse().unwrap());
    request
}

pub async fn create_graph(router: &Router, document: Value) -> String {
    let (status, body) = call(router, post("/api/graphs", document)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["id"].as_str().unwrap().to_owned();
    EDIT_TOKENS
        .lock()
        .unwrap()
        .insert(id.clone(), body["edit_token"].as_str().unwrap().to_owned());
    id
}

/// Saves `document` over `revision` with the editor's token.
pub async fn save(router: &Router, id: &str, revision: i64, document: &Value) -> i64 {
    let request = Request::builder()
        .method("PUT")
        .uri(format!("/api/graphs/{id}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::IF_MATCH, revision.to_string())
        .body(Body::from(document.to_string()))
        .unwrap();
    let (status, body) = call(router, as_editor(request, id)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["revision"].as_i64().unwrap()
}

pub async fn start(router: &Router, graph_id: &str, text: &str) -> String {
    let (status, body) = call(
        router,
        as_editor(
            post(
                &format!("/api/graphs/{graph_id}/runs"),
                json!({"input": {"text": text}}),
            ),
            graph_id,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["graph_id"], graph_id);
    body["id"].as_str().unwrap().to_owned()
}

/// Waits up to 30 s for the run to reach one of `wanted`: a provider that
/// keeps timing out is tried 5 times with backoff between, about 15 s.
pub async fn wait_for(router: &Router, run_id: &str, wanted: &[&str]) -> Value {
    for _ in 0..1500 {
        let (_, run) = call(router, get(&format!("/api/runs/{run_id}"))).await;
        if wanted.contains(&run["status"].as_str().unwrap_or_default()) {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("run {run_id} never reached {wanted:?}");
}
