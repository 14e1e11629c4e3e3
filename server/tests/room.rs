//! Editing together through the API (PRODUCT §3.16): a graph's room stream,
//! presence and changes, on SQLite and PostgreSQL; and from the side of
//! someone who should not: no token, a view link, a forged token, another
//! graph's token, someone else's connection.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use graph::Limits;
use graph::starter::starter_graph;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::{as_editor, call, create_graph, get, post};
use tower::ServiceExt;

/// A browser's stream of a graph's room, read event by event.
struct Stream {
    body: Body,
    buffer: String,
    connection: String,
    secret: String,
    revision: i64,
}

impl Stream {
    async fn open(router: &Router, graph_id: &str, since: Option<i64>) -> Stream {
        let uri = match since {
            Some(since) => format!("/api/graphs/{graph_id}/room?since={since}"),
            None => format!("/api/graphs/{graph_id}/room"),
        };
        let response = router.clone().oneshot(get(&uri)).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let mut stream = Stream {
            body: response.into_body(),
            buffer: String::new(),
            connection: String::new(),
            secret: String::new(),
            revision: 0,
        };
        let (name, hello) = stream.next().await;
        assert_eq!(name, "hello");
        stream.connection = hello["connection"].as_str().unwrap().to_owned();
        stream.secret = hello["secret"].as_str().unwrap().to_owned();
        stream.revision = hello["revision"].as_i64().unwrap();
        stream
    }

    /// The next event: its name and data.
    async fn next(&mut self) -> (String, Value) {
        support::within("the room's next event", async {
            loop {
                if let Some(end) = self.buffer.find("\n\n") {
                    let block: String = self.buffer.drain(..end + 2).collect();
                    let mut name = String::new();
                    let mut data = String::new();
                    for line in block.lines() {
                        if let Some(value) = line.strip_prefix("event:") {
                            name = value.trim().to_owned();
                        } else if let Some(value) = line.strip_prefix("data:") {
                            data.push_str(value.trim_start());
                        }
                    }
                    if name.is_empty() {
                        continue; // a keep-alive comment
                    }
                    return (name, serde_json::from_str(&data).unwrap());
                }
                let frame = self.body.frame().await.unwrap().unwrap();
                if let Ok(bytes) = frame.into_data() {
                    self.buffer.push_str(&String::from_utf8_lossy(&bytes));
                }
            }
        })
        .await
    }

    /// The next event of this name, skipping others.
    async fn next_named(&mut self, wanted: &str) -> Value {
        loop {
            let (name, data) = self.next().await;
            if name == wanted {
                return data;
            }
        }
    }

    fn presence(&self, graph_id: &str, name: &str) -> Request<Body> {
        post(
            &format!("/api/graphs/{graph_id}/presence"),
            json!({"connection": self.connection, "secret": self.secret, "name": name, "pointer": [10.0, 20.0], "selection": ["m2"]}),
        )
    }

    fn change(&self, graph_id: &str, base: i64, edits: Value) -> Request<Body> {
        post(
            &format!("/api/graphs/{graph_id}/changes"),
            json!({"connection": self.connection, "secret": self.secret, "base": base, "edits": edits}),
        )
    }
}

fn set(path: &[&str], before: Value, after: Value) -> Value {
    json!({"set": {"path": path, "before": before, "after": after}})
}

async fn document(router: &Router, graph_id: &str) -> Value {
    let (status, document) = call(router, get(&format!("/api/graphs/{graph_id}"))).await;
    assert_eq!(status, StatusCode::OK);
    document
}

async fn router(database: &support::TestDatabase) -> Router {
    server::router::router(support::state(database, Limits::default()).await)
}

#[tokio::test]
async fn editors_and_viewers_see_who_is_here_and_every_change_in_the_servers_order() {
    for database in support::databases().await {
        let router = router(&database).await;
        let id = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
        let mut ana = Stream::open(&router, &id, None).await;
        assert_eq!(ana.revision, 1);
        assert_eq!(ana.next_named("people").await["people"], json!([]));
        let (status, _) = call(&router, as_editor(ana.presence(&id, ""), &id)).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{}", database.name);
        let me = ana.next_named("person").await["person"].clone();
        assert_eq!(
            (me["name"].as_str(), me["role"].as_str()),
            (Some("Editor 1"), Some("editor"))
        );

        let mut ben = Stream::open(&router, &id, Some(1)).await;
        assert_eq!(
            ben.next_named("people").await["people"][0]["name"],
            "Editor 1"
        );
        call(&router, as_editor(ben.presence(&id, ""), &id)).await;
        assert_eq!(ana.next_named("person").await["person"]["name"], "Editor 2");
        let mut visitor = Stream::open(&router, &id, Some(1)).await;
        let (status, _) = call(&router, visitor.presence(&id, "Vera")).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let vera = ana.next_named("person").await["person"].clone();
        assert_eq!(
            (vera["name"].as_str(), vera["role"].as_str()),
            (Some("Vera"), Some("viewer"))
        );
        assert_eq!(vera["pointer"], json!([10.0, 20.0]));

        // Ana moves the draft: everyone gets the change, in order.
        let moved = set(
            &[".modules", "#m2", ".position", ".x"],
            json!(360.0),
            json!(420.0),
        );
        let (status, accepted) =
            call(&router, as_editor(ana.change(&id, 1, json!([moved])), &id)).await;
        assert_eq!(status, StatusCode::OK, "{accepted}");
        assert_eq!(accepted["revision"], 2);
        for stream in [&mut ben, &mut visitor] {
            let change = stream.next_named("change").await;
            assert_eq!(
                (change["previous"].as_i64(), change["revision"].as_i64()),
                (Some(1), Some(2))
            );
            assert_eq!(change["author"], ana.connection.as_str());
            assert_eq!(change["author_name"], "Editor 1");
            assert_eq!(change["edits"], json!([moved]));
        }
        assert_eq!(
            document(&router, &id).await["modules"][1]["position"]["x"],
            420.0
        );

        // Both edit at once, from revision 2: different modules both stay.
        let label = set(
            &[".modules", "#m1", ".label"],
            json!("Topic"),
            json!("Subject"),
        );
        let output = set(
            &[".modules", "#m3", ".position", ".y"],
            json!(200.0),
            json!(260.0),
        );
        call(&router, as_editor(ana.change(&id, 2, json!([label])), &id)).await;
        let (_, second) = call(&router, as_editor(ben.change(&id, 2, json!([output])), &id)).await;
        assert_eq!(second["revision"], 4);
        let now = document(&router, &id).await;
        assert_eq!(
            (
                now["modules"][0]["label"].as_str(),
                now["modules"][2]["position"]["y"].as_f64()
            ),
            (Some("Subject"), Some(260.0))
        );

        // One field typed in by both at once: the first typist holds it
        // until they pause (graph::typing); the other's typing is refused,
        // saying who holds it, and nothing of it is stored.
        let instruction = [".modules", "#m2", ".config", ".instruction"];
        let original = now["modules"][1]["config"]["instruction"].clone();
        call(
            &router,
            as_editor(
                ana.change(
                    &id,
                    4,
                    json!([set(&instruction, original.clone(), json!("Ana's"))]),
                ),
                &id,
            ),
        )
        .await;
        let bens = json!([set(&instruction, original, json!("Ben's"))]);
        let (status, refused) =
            call(&router, as_editor(ben.change(&id, 4, bens.clone()), &id)).await;
        assert_eq!(status, StatusCode::OK, "{refused}");
        assert_eq!(refused["revision"], 5, "{}: nothing stored", database.name);
        assert_eq!(refused["not_applied"][0]["why"], "held", "{refused}");
        assert_eq!(refused["not_applied"][0]["by"], "Editor 1", "{refused}");
        assert_eq!(refused["not_applied"][0]["edit"], bens[0], "{refused}");
        assert_eq!(
            document(&router, &id).await["modules"][1]["config"]["instruction"],
            "Ana's"
        );
        // Ana typing on is hers to type.
        let (_, typed_on) = call(
            &router,
            as_editor(
                ana.change(
                    &id,
                    5,
                    json!([set(&instruction, json!("Ana's"), json!("Ana's!"))]),
                ),
                &id,
            ),
        )
        .await;
        assert_eq!(typed_on["revision"], 6, "{typed_on}");
        // Once she has paused, the field is anyone's: Ben's edit, made on
        // what she had before, is kept, and its change says whose text it
        // replaced.
        tokio::time::sleep(Duration::from_millis(
            graph::typing::HOLD_MILLIS.unsigned_abs() + 100,
        ))
        .await;
        let (_, taken) = call(&router, as_editor(ben.change(&id, 4, bens), &id)).await;
        assert_eq!(taken["revision"], 7, "{taken}");
        // Ana's stream has had every change since she opened it, in order.
        let mut revisions = Vec::new();
        let mut last = Value::Null;
        while revisions.last() != Some(&7) {
            last = ana.next_named("change").await;
            revisions.push(last["revision"].as_i64().unwrap());
        }
        assert_eq!(revisions, [2, 3, 4, 5, 6, 7]);
        assert_eq!(last["author"], ben.connection.as_str());
        assert_eq!(
            last["replaced"],
            json!([{"path": instruction, "value": "Ana's!"}])
        );
        assert_eq!(last["edits"][0]["set"]["before"], "Ana's!");
        assert_eq!(
            document(&router, &id).await["modules"][1]["config"]["instruction"],
            "Ben's"
        );

        // Ben closes the tab: the others see him go.
        let ben_connection = ben.connection.clone();
        drop(ben);
        assert_eq!(
            ana.next_named("left").await["connection"],
            ben_connection.as_str()
        );
    }
}

#[tokio::test]
async fn a_save_through_the_api_reaches_open_editors_and_a_browser_away_catches_up() {
    for database in support::databases().await {
        let router = router(&database).await;
        let id = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
        let mut ana = Stream::open(&router, &id, Some(1)).await;
        let mut saved = document(&router, &id).await;
        saved["name"] = json!("Renamed by a script");
        let revision = support::save(&router, &id, 1, &saved).await;
        assert_eq!(revision, 2);
        let change = ana.next_named("change").await;
        assert_eq!(change["author_name"], "A save through the API");
        assert_eq!(
            change["edits"],
            json!([set(
                &[".name"],
                json!("Draft, review, finalize"),
                json!("Renamed by a script")
            )])
        );
        // A browser that had revision 1 catches up with the change; one
        // that names a revision the log cannot bring gets the document.
        let mut back = Stream::open(&router, &id, Some(1)).await;
        assert_eq!(back.next_named("change").await["revision"], 2);
        let mut lost = Stream::open(&router, &id, Some(0)).await;
        let document = lost.next_named("document").await;
        assert_eq!(
            (
                document["revision"].as_i64(),
                document["document"]["name"].as_str()
            ),
            (Some(2), Some("Renamed by a script"))
        );
        // A run started by someone: every stream hears that one started,
        // never its id (listing the graph's runs needs the edit token).
        let run = support::start(&router, &id, "Tides").await;
        let started = ana.next_named("run").await;
        assert_eq!(started, json!({"event": "run"}));
        assert!(!started.to_string().contains(&run));
        // The history kept the save, as before.
        let (_, revisions) = call(
            &router,
            as_editor(get(&format!("/api/graphs/{id}/revisions")), &id),
        )
        .await;
        assert_eq!(revisions["revisions"][0]["revision"], 2, "{revisions}");
    }
}

#[tokio::test]
async fn a_change_that_would_break_the_document_is_refused_whole_and_edits_inside_a_deleted_module_are_said()
 {
    for database in support::databases().await {
        let router = router(&database).await;
        let id = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
        let ana = Stream::open(&router, &id, Some(1)).await;
        let broken = json!([
            set(
                &[".modules", "#m1", ".label"],
                json!("Topic"),
                json!("Fine")
            ),
            set(
                &[".modules", "#m2", ".position"],
                json!(null),
                json!("nowhere")
            ),
        ]);
        let (status, body) = call(&router, as_editor(ana.change(&id, 1, broken), &id)).await;
        assert!(status.is_client_error(), "{status} {body}");
        assert!(
            body["error"]["code"]
                .as_str()
                .unwrap()
                .starts_with("document."),
            "{body}"
        );
        let now = document(&router, &id).await;
        assert_eq!(
            (
                now["revision"].as_i64(),
                now["modules"][0]["label"].as_str()
            ),
            (Some(1), Some("Topic"))
        );

        // The draft is deleted (with its cables); an edit of it made without
        // having seen that comes back as not applied.
        let draft = now["modules"][1].clone();
        let mut deletion = vec![json!({"set": {"path": [".modules", "#m2"], "before": draft}})];
        for cable in now["cables"].as_array().unwrap() {
            deletion.push(json!({"set": {"path": [".cables", format!("#{}", cable["id"].as_str().unwrap())], "before": cable}}));
        }
        let (status, _) = call(
            &router,
            as_editor(ana.change(&id, 1, Value::Array(deletion)), &id),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let late = json!([set(
            &[".modules", "#m2", ".label"],
            json!("Draft"),
            json!("Essay")
        )]);
        let (status, accepted) = call(&router, as_editor(ana.change(&id, 1, late), &id)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(accepted["revision"], 2, "nothing new was stored");
        assert_eq!(accepted["not_applied"][0]["why"], "gone", "{accepted}");
    }
}

#[tokio::test]
async fn a_change_whose_base_cannot_be_moved_along_is_refused_and_changes_nothing() {
    for database in support::databases().await {
        let router = router(&database).await;
        let id = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
        let ana = Stream::open(&router, &id, Some(1)).await;
        let rename = |before: &str, after: &str| {
            json!([set(
                &[".modules", "#m1", ".label"],
                json!(before),
                json!(after)
            )])
        };
        let (status, _) = call(
            &router,
            as_editor(ana.change(&id, 1, rename("Topic", "Subject")), &id),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        // A base the graph has not reached.
        let (status, body) = call(
            &router,
            as_editor(ana.change(&id, 9, rename("Subject", "Ahead")), &id),
        )
        .await;
        assert_eq!(
            (
                status,
                body["error"]["code"].as_str(),
                body["error"]["details"]["current_revision"].as_i64()
            ),
            (
                StatusCode::CONFLICT,
                Some("graph.revision_conflict"),
                Some(2)
            ),
            "{}: {body}",
            database.name
        );
        // A base older than the log keeps: the changes since cannot all
        // be read, so the edits could not be moved along them.
        tokio::time::sleep(Duration::from_millis(5)).await;
        support::store(&database)
            .await
            .prune_changes(0)
            .await
            .unwrap();
        let (status, body) = call(
            &router,
            as_editor(ana.change(&id, 1, rename("Topic", "Behind")), &id),
        )
        .await;
        assert_eq!(status, StatusCode::CONFLICT, "{}: {body}", database.name);
        // From the revision it has, the editor's change goes as ever.
        let (status, accepted) = call(
            &router,
            as_editor(ana.change(&id, 2, rename("Subject", "Theme")), &id),
        )
        .await;
        assert_eq!(
            (status, accepted["revision"].as_i64()),
            (StatusCode::OK, Some(3))
        );
        let now = document(&router, &id).await;
        assert_eq!(now["modules"][0]["label"], "Theme", "{}", database.name);
    }
}

#[tokio::test]
async fn strangers_can_neither_change_a_graph_nor_speak_for_someone_else() {
    let database = support::databases().await.remove(0);
    let router = router(&database).await;
    let id = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
    let other = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
    let visitor = Stream::open(&router, &id, Some(1)).await;
    let edit = json!([set(
        &[".name"],
        json!("Draft, review, finalize"),
        json!("Mine now")
    )]);
    let bearer = |request: Request<Body>, token: &str| {
        let mut request = request;
        request.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        );
        request
    };
    // No token, a forged one, another graph's: no change.
    for (request, code) in [
        (
            visitor.change(&id, 1, edit.clone()),
            "graph.edit_token_required",
        ),
        (
            bearer(
                visitor.change(&id, 1, edit.clone()),
                "forged-token-forged-token-forged",
            ),
            "graph.edit_token_invalid",
        ),
        (
            bearer(
                visitor.change(&id, 1, edit.clone()),
                &support::edit_token(&other),
            ),
            "graph.edit_token_invalid",
        ),
    ] {
        let (status, body) = call(&router, request).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(body["error"]["code"], code);
    }
    // A forged token cannot make a viewer an editor either.
    let (status, body) = call(
        &router,
        bearer(
            visitor.presence(&id, "Eve"),
            "forged-token-forged-token-forged",
        ),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::FORBIDDEN, Some("graph.edit_token_invalid"))
    );
    // The edit token with a connection it did not open, or one of its own
    // with the wrong secret: refused.
    let mut impostor = Stream::open(&router, &id, Some(1)).await;
    impostor.secret = visitor.secret.clone();
    for request in [
        as_editor(impostor.change(&id, 1, edit.clone()), &id),
        impostor.presence(&id, "Not Vera"),
    ] {
        let (status, body) = call(&router, request).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::FORBIDDEN, Some("room.connection_invalid")),
            "{body}"
        );
    }
    assert_eq!(
        document(&router, &id).await["name"],
        "Draft, review, finalize"
    );
    // A body that is not a change says where it is wrong.
    let (status, body) = call(
        &router,
        as_editor(post(&format!("/api/graphs/{id}/changes"), json!({"connection": visitor.connection, "secret": visitor.secret, "base": "one", "edits": []})), &id),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("room.invalid_request")
        )
    );
    assert_eq!(body["error"]["details"]["path"], "base");
    // An unknown graph has no room.
    let (status, _) = call(&router, get("/api/graphs/g_AAAAAAAAAAAAAAAAAAAAAAAA/room")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // A connection that sends without end is told to wait.
    let mut limited = 0;
    for _ in 0..120 {
        let (status, body) = call(&router, visitor.presence(&id, "Vera")).await;
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(body["error"]["code"], "room.rate_limited");
            limited += 1;
        }
    }
    assert!(limited > 0);
    tokio::time::sleep(Duration::from_millis(1)).await;
}

#[tokio::test]
async fn editors_on_two_processes_see_each_other_through_postgresql() {
    let Some(database) = support::postgres().await else {
        return;
    };
    // Two servers on one database, as two machines would be.
    let first = router(&database).await;
    let second = router(&database).await;
    let id = create_graph(&first, serde_json::to_value(starter_graph()).unwrap()).await;
    let mut ana = Stream::open(&first, &id, Some(1)).await;
    let mut ben = Stream::open(&second, &id, Some(1)).await;
    // The listener of each process may still be connecting: presence is
    // said again until the other side hears it (browsers say it every 15 s).
    ben.next_named("people").await;
    let mut heard = None;
    for _ in 0..50 {
        call(&first, as_editor(ana.presence(&id, "Ana"), &id)).await;
        if let Ok((_, person)) = tokio::time::timeout(Duration::from_millis(200), ben.next()).await
        {
            heard = Some(person);
            break;
        }
    }
    let heard = heard.expect("the other process heard of Ana");
    assert_eq!(heard["person"]["name"], "Ana");
    // Ben's change on the second process reaches Ana on the first.
    let moved = set(
        &[".modules", "#m1", ".position", ".y"],
        json!(120.0),
        json!(240.0),
    );
    let (status, _) = call(&second, as_editor(ben.change(&id, 1, json!([moved])), &id)).await;
    assert_eq!(status, StatusCode::OK);
    let change = ana.next_named("change").await;
    assert_eq!(
        (change["revision"].as_i64(), change["edits"][0].clone()),
        (Some(2), moved)
    );
}
