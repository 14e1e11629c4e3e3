//! A graph's history through the HTTP API (PRODUCT §6): every save is a
//! revision the editor can list and read back, a run names the revision it
//! ran, and nobody without the graph's edit token reads its history.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::Router;
use axum::http::{StatusCode, header};
use graph::Limits;
use graph::starter::starter_graph;
use serde_json::{Value, json};
use support::{as_editor, call, create_graph, edit_token, get, save, start, wait_for};

async fn router() -> (Router, support::TestDatabase) {
    routers().await.remove(0)
}

/// A router on each test database: SQLite, and PostgreSQL when there is one.
async fn routers() -> Vec<(Router, support::TestDatabase)> {
    let mut routers = Vec::new();
    for database in support::databases().await {
        let state = support::state(&database, Limits::default()).await;
        routers.push((server::router::router(state), database));
    }
    routers
}

fn renamed(name: &str) -> Value {
    let mut document = serde_json::to_value(starter_graph()).unwrap();
    document["name"] = json!(name);
    document
}

#[tokio::test]
async fn every_save_is_a_revision_the_editor_lists_and_reads_back_and_a_run_names_its_own() {
    for (router, database) in routers().await {
        println!("{}", database.name);
        history_of_saves_and_a_run(&router).await;
    }
}

async fn history_of_saves_and_a_run(router: &Router) {
    let router = router.clone();
    let id = create_graph(&router, renamed("First")).await;
    let mut revision = 1;
    for name in ["Second", "Third", "Fourth"] {
        revision = save(&router, &id, revision, &renamed(name)).await;
    }
    assert_eq!(revision, 4);

    let (status, list) = call(
        &router,
        as_editor(get(&format!("/api/graphs/{id}/revisions")), &id),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["current"], 4);
    assert_eq!(list["kept"], 4);
    let numbers: Vec<i64> = list["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|revision| revision["revision"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [4, 3, 2, 1], "newest first");
    // Each says how it came to be and what changed.
    let notes: Vec<(&str, &str)> = list["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|revision| {
            (
                revision["origin"].as_str().unwrap(),
                revision["summary"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        notes,
        [
            ("saved", "renamed “Fourth”"),
            ("saved", "renamed “Third”"),
            ("saved", "renamed “Second”"),
            ("created", "")
        ]
    );
    let sizes: i64 = list["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|revision| revision["size_bytes"].as_i64().unwrap())
        .sum();
    assert_eq!(list["kept_bytes"], sizes);
    assert!(sizes > 4 * 500, "{list}");
    assert_eq!(list["next_before"], Value::Null);

    // A page at a time.
    let (_, page) = call(
        &router,
        as_editor(get(&format!("/api/graphs/{id}/revisions?limit=3")), &id),
    )
    .await;
    assert_eq!(page["revisions"].as_array().unwrap().len(), 3);
    assert_eq!(page["next_before"], 2);
    let (_, rest) = call(
        &router,
        as_editor(
            get(&format!("/api/graphs/{id}/revisions?limit=3&before=2")),
            &id,
        ),
    )
    .await;
    assert_eq!(rest["revisions"][0]["revision"], 1, "{rest}");
    assert_eq!(rest["next_before"], Value::Null);

    // Each revision is the document as it was saved.
    let (status, second) = call(
        &router,
        as_editor(get(&format!("/api/graphs/{id}/revisions/2")), &id),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(second["name"], "Second");

    // A run names the revision it ran, and its record holds that document.
    let run_id = start(&router, &id, "a topic").await;
    let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["graph_revision"], 4);
    assert_eq!(run["graph"]["name"], "Fourth");
    let (_, runs) = call(
        &router,
        as_editor(get(&format!("/api/graphs/{id}/runs")), &id),
    )
    .await;
    assert_eq!(runs["runs"][0]["graph_revision"], 4, "{runs}");
}

#[tokio::test]
async fn bad_history_requests_get_a_json_error_saying_where() {
    let (router, _database) = router().await;
    let id = create_graph(&router, renamed("First")).await;
    for (query, path) in [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("before=-1", "before"),
        ("order=asc", "order"),
    ] {
        let (status, body) = call(
            &router,
            as_editor(get(&format!("/api/graphs/{id}/revisions?{query}")), &id),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{query}: {body}");
        assert_eq!(body["error"]["code"], "graph.revisions_query_invalid");
        assert_eq!(body["error"]["details"]["path"], path, "{query}");
    }
    for missing in ["2", "0", "latest", "99999999999999999999"] {
        let (status, body) = call(
            &router,
            as_editor(get(&format!("/api/graphs/{id}/revisions/{missing}")), &id),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{missing}: {body}");
        assert_eq!(body["error"]["code"], "graph.revision_not_found");
    }
}

#[tokio::test]
async fn nobody_without_the_graph_s_edit_token_reads_its_history() {
    let (router, _database) = router().await;
    let id = create_graph(&router, renamed("Mine")).await;
    let other = create_graph(&router, renamed("Theirs")).await;
    let with = |token: Option<String>, uri: String| {
        let mut request = get(&uri);
        if let Some(token) = token {
            request.headers_mut().insert(
                header::AUTHORIZATION,
                format!("Bearer {token}").parse().unwrap(),
            );
        }
        request
    };
    for uri in [
        format!("/api/graphs/{id}/revisions"),
        format!("/api/graphs/{id}/revisions/1"),
    ] {
        // A view link (no token), a forged token, another graph's token.
        for (token, code) in [
            (None, "graph.edit_token_required"),
            (Some("B".repeat(43)), "graph.edit_token_invalid"),
            (Some(edit_token(&other)), "graph.edit_token_invalid"),
        ] {
            let (status, body) = call(&router, with(token, uri.clone())).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{uri}: {body}");
            assert_eq!(body["error"]["code"], code, "{uri}");
            assert!(!body.to_string().contains("Mine"), "{body}");
        }
    }
    // A graph that is not there is not found, whatever the token.
    let (status, _) = call(
        &router,
        as_editor(get("/api/graphs/g_nothing_here_at_all_00/revisions"), &id),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
