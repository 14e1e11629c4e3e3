//! Notes in the document (PRODUCT §1.6), through the HTTP API: saved and
//! given back, refused where they are wrong (on create and on a save of a
//! revision, nothing stored), counted in the history's summary, drawn in
//! the page a view link gets with everything typed kept as text, and
//! unchangeable without the edit token.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use graph::Limits;
use graph::starter::starter_graph;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::{as_editor, call, create_graph, get, post};
use tower::ServiceExt;

fn with_notes(notes: Value) -> Value {
    let mut document = serde_json::to_value(starter_graph()).unwrap();
    document["notes"] = notes;
    document
}

fn put(uri: &str, revision: i64, document: &Value) -> Request<Body> {
    Request::builder()
        .method(Method::PUT)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::IF_MATCH, revision.to_string())
        .body(Body::from(document.to_string()))
        .unwrap()
}

async fn page(router: &Router, uri: &str) -> String {
    let response = router.clone().oneshot(get(uri)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

const NOTE: &str =
    "# Review loop\n- see [the guide](https://example.com/guide)\n<script>alert(1)</script>";

#[tokio::test]
async fn notes_are_saved_counted_and_drawn_by_the_server_as_text() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let graph = create_graph(
            &router,
            with_notes(
                json!([{ "id": "note-1", "text": NOTE, "position": { "x": 40, "y": -160 },
                                "size": { "width": 260, "height": 150 }, "colour": "blue" }]),
            ),
        )
        .await;
        let (_, stored) = call(&router, get(&format!("/api/graphs/{graph}"))).await;
        assert_eq!(stored["notes"][0]["text"], NOTE, "{}", database.name);
        assert_eq!(stored["notes"][0]["colour"], "blue");

        // Another note, and one changed: the history says so.
        let mut document = stored.clone();
        document["notes"][0]["text"] = json!("# Review loop, edited");
        document["notes"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "id": "note-2", "text": "Ask **Sam**" }));
        let (status, body) = call(
            &router,
            as_editor(put(&format!("/api/graphs/{graph}"), 1, &document), &graph),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (_, revisions) = call(
            &router,
            as_editor(get(&format!("/api/graphs/{graph}/revisions")), &graph),
        )
        .await;
        assert_eq!(
            revisions["revisions"][0]["summary"], "1 note added, 1 note changed",
            "{revisions}"
        );

        // The page a view link gets draws the notes, escaped.
        document["notes"][0]["text"] = json!(NOTE);
        let (status, _) = call(
            &router,
            as_editor(put(&format!("/api/graphs/{graph}"), 2, &document), &graph),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let html = page(&router, &format!("/g/{graph}")).await;
        assert!(html.contains(r#"data-note-id="note-1""#), "{html}");
        assert!(html.contains("<h3>Review loop</h3>"));
        assert!(html.contains(
            r#"<a href="https://example.com/guide" target="_blank" rel="noopener noreferrer">the guide</a>"#
        ));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!html.contains("<script>alert(1)"));
        assert!(html.contains("<strong>Sam</strong>"));
        assert!(html.contains(r#"class="note note-blue""#));
    }
}

#[tokio::test]
async fn a_note_the_server_cannot_read_is_refused_where_it_is_and_nothing_is_stored() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let cases = [
            (json!({}), "notes"),
            (json!([{ "text": "no id" }]), "notes[0].id"),
            (json!([{ "id": "a", "colour": "red" }]), "notes[0].colour"),
            (
                json!([{ "id": "a", "size": { "width": 1 } }]),
                "notes[0].size.width",
            ),
            (
                json!([{ "id": "a", "text": "x".repeat(20_001) }]),
                "notes[0].text",
            ),
        ];
        for (notes, path) in &cases {
            let (status, body) =
                call(&router, post("/api/graphs", with_notes(notes.clone()))).await;
            assert_eq!(
                status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{}: {body}",
                database.name
            );
            assert_eq!(body["error"]["code"], "document.invalid", "{body}");
            assert_eq!(body["error"]["details"]["path"], *path, "{body}");
        }
        // Two notes with one id: the code every duplicate id has.
        let (status, body) = call(
            &router,
            post(
                "/api/graphs",
                with_notes(json!([{ "id": "a" }, { "id": "a" }])),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["code"], "document.duplicate_id", "{body}");
        assert_eq!(body["error"]["details"]["path"], "notes[1].id");
        let groups = json!([{ "id": "g", "collapsed": "yes" }]);
        let mut document = with_notes(json!([]));
        document["groups"] = groups;
        let (status, body) = call(&router, post("/api/graphs", document)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["details"]["path"], "groups[0].collapsed");

        // A save of a revision is held to the same, and nothing is stored.
        let graph = create_graph(&router, with_notes(json!([{ "id": "a", "text": "kept" }]))).await;
        let (status, body) = call(
            &router,
            as_editor(
                put(
                    &format!("/api/graphs/{graph}"),
                    1,
                    &with_notes(cases[2].0.clone()),
                ),
                &graph,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["details"]["path"], "notes[0].colour");
        let (_, stored) = call(&router, get(&format!("/api/graphs/{graph}"))).await;
        assert_eq!(stored["revision"], 1);
        assert_eq!(stored["notes"][0]["text"], "kept");
    }
}

#[tokio::test]
async fn without_the_edit_token_nobody_changes_a_note() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let graph = create_graph(&router, with_notes(json!([{ "id": "a", "text": "kept" }]))).await;
        let other = create_graph(&router, with_notes(json!([]))).await;
        let changed = with_notes(json!([{ "id": "a", "text": "defaced" }]));
        let uri = format!("/api/graphs/{graph}");
        let attempts = [
            ("no token", put(&uri, 1, &changed)),
            ("a forged token", {
                let mut request = put(&uri, 1, &changed);
                request
                    .headers_mut()
                    .insert(header::AUTHORIZATION, "Bearer pbe_forged".parse().unwrap());
                request
            }),
            (
                "another graph's token",
                as_editor(put(&uri, 1, &changed), &other),
            ),
        ];
        for (who, request) in attempts {
            let (status, body) = call(&router, request).await;
            assert!(
                status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN,
                "{who}: {status} {body}"
            );
        }
        let (_, stored) = call(&router, get(&uri)).await;
        assert_eq!(stored["notes"][0]["text"], "kept");
        assert_eq!(stored["revision"], 1);
    }
}
