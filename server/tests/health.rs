//! `GET /api/health` for load balancers (PRODUCT §6): `200` while the
//! database answers with every migration of this build, `503` when it
//! lacks one or stops answering, never naming the database; open without
//! the access key. On SQLite and PostgreSQL.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::http::StatusCode;
use graph::Limits;
use serde_json::Value;
use sqlx::Connection;
use support::{call, databases, get, settings};

#[tokio::test]
async fn health_is_ok_only_while_the_database_answers_with_every_migration_of_this_build() {
    for database in databases().await {
        let name = database.name;
        let mut configured = settings(&database, Limits::default());
        // Load balancers have no key: health needs none.
        configured.access.key = Some("a-key-of-sixteen-or-more".to_owned());
        let state = server::build_state(configured).await.unwrap();
        let router = server::router::router(state.clone());

        let (status, healthy) = call(&router, get("/api/health")).await;
        assert_eq!(status, StatusCode::OK, "{name}: {healthy}");
        assert_eq!(healthy["status"], "ok");
        assert_eq!(healthy["database"], "ok");
        let expected = healthy["migrations"]["expected"].as_u64().unwrap();
        assert!(expected >= 11, "{name}: {healthy}");
        assert_eq!(healthy["migrations"]["applied"].as_u64(), Some(expected));

        // A database of another version: one of this build's migrations
        // is not in it.
        let mut connection = sqlx::AnyConnection::connect(&database.url).await.unwrap();
        sqlx::query(
            "DELETE FROM _sqlx_migrations WHERE version = (SELECT MAX(version) FROM _sqlx_migrations)",
        )
        .execute(&mut connection)
        .await
        .unwrap();
        connection.close().await.unwrap();
        let (status, behind) = call(&router, get("/api/health")).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{name}: {behind}");
        assert_eq!(behind["status"], "unavailable");
        assert_eq!(behind["database"], "ok");
        assert_eq!(behind["migrations"]["applied"].as_u64(), Some(expected - 1));
        assert!(
            behind["problem"]
                .as_str()
                .unwrap()
                .contains(&format!("{} of this build's {expected}", expected - 1)),
            "{name}: {behind}"
        );

        // A database that stops answering.
        state.store.close().await;
        let (status, down) = call(&router, get("/api/health")).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{name}: {down}");
        assert_eq!(down["database"], "not_answering");
        assert_named_nowhere(&down, &database.url);
    }
}

/// The answer names neither the database's address nor its credentials.
fn assert_named_nowhere(answer: &Value, url: &str) {
    let written = answer.to_string();
    let (_, path) = url.split_once("://").unwrap();
    assert!(
        !written.contains(path) && !written.contains("sqlite:") && !written.contains("postgres"),
        "{written}"
    );
}

/// `--log-format json`: every line the server logs is one JSON object,
/// with its level and message, for a collector to read.
#[tokio::test]
async fn with_log_format_json_every_log_line_is_one_json_object() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let folder = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_patchbay"))
        .args(["serve", "--log-format", "json", "--addr"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--database-url")
        .arg(format!("sqlite://{}/db.sqlite", folder.path().display()))
        .arg("--site-root")
        .arg(folder.path())
        .env_remove("RUST_LOG")
        .env_remove("PATCHBAY_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let health = format!("http://127.0.0.1:{port}/api/health");
    let mut answered = false;
    for _ in 0..300 {
        if engine::tls::client()
            .get(&health)
            .send()
            .await
            .is_ok_and(|response| response.status().is_success())
        {
            answered = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(answered, "the server did not answer");
    let mut written = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut written)
        .unwrap();
    let lines: Vec<&str> = written.lines().filter(|line| !line.is_empty()).collect();
    assert!(!lines.is_empty(), "nothing was logged");
    for line in &lines {
        let event: Value = serde_json::from_str(line)
            .unwrap_or_else(|error| panic!("not one JSON object ({error}): {line}"));
        assert!(event["level"].is_string(), "{line}");
        assert!(event["timestamp"].is_string(), "{line}");
        assert!(event["message"].is_string(), "{line}");
    }
}
