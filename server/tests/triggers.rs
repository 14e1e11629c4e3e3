//! Triggers through the API (PRODUCT §6.5), on SQLite and PostgreSQL: a
//! schedule or webhook is saved in the document and refused where it is
//! wrong; the editors list them with next times and addresses and make a
//! webhook's secret; a delivery with the secret starts a run with its
//! body as input (JSON, text, a form's files) that says which trigger
//! started it; one `Idempotency-Key` starts one run however many
//! deliveries race; and from the side of someone who should not — no
//! secret, a forged one, a rotated one, another graph's, a paused or
//! removed trigger, the secret used where a token is needed.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use graph::Limits;
use graph::starter::starter_graph;
use serde_json::{Value, json};
use support::{as_editor, call, create_graph, get, post, wait_for};

fn with_triggers(triggers: Value) -> Value {
    let mut document = serde_json::to_value(starter_graph()).unwrap();
    document["triggers"] = triggers;
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

fn deliver(trigger: &str, secret: Option<&str>, content_type: &str, body: &str) -> Request<Body> {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(format!("/hooks/{trigger}"))
        .header(header::CONTENT_TYPE, content_type);
    if let Some(secret) = secret {
        request = request.header("X-Patchbay-Secret", secret);
    }
    request.body(Body::from(body.to_owned())).unwrap()
}

async fn make_secret(router: &Router, graph: &str, trigger: &str) -> String {
    let (status, body) = call(
        router,
        as_editor(
            post(
                &format!("/api/graphs/{graph}/triggers/{trigger}/secret"),
                json!({}),
            ),
            graph,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["url"], format!("/hooks/{trigger}"));
    assert_eq!(body["header"], "X-Patchbay-Secret");
    let secret = body["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("pbh_"), "{secret}");
    secret
}

/// How many runs the graph's editors see.
async fn run_count(router: &Router, graph: &str) -> usize {
    let (_, runs) = call(
        router,
        as_editor(get(&format!("/api/graphs/{graph}/runs")), graph),
    )
    .await;
    runs["runs"].as_array().unwrap().len()
}

/// The graph's triggers as its editors list them.
async fn triggers_of(router: &Router, graph: &str) -> Value {
    let (status, listed) = call(
        router,
        as_editor(get(&format!("/api/graphs/{graph}/triggers")), graph),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    listed
}

/// Delivers and waits for the run it started; returns the run's record.
async fn delivered_run(router: &Router, request: Request<Body>) -> Value {
    let (status, body) = call(router, request).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let run_id = body["run_id"].as_str().unwrap();
    assert_eq!(body["url"], format!("/api/runs/{run_id}"));
    wait_for(router, run_id, &["completed", "failed"]).await
}

#[tokio::test]
async fn a_save_with_a_trigger_that_cannot_run_is_refused_where_it_is() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let cases = [
            (
                json!([{"id": "daily", "kind": "schedule", "cron": "every day"}]),
                "triggers[0].cron",
            ),
            (
                json!([{"id": "daily", "kind": "schedule", "cron": "0 9 * * *", "timezone": "Mars/Olympus"}]),
                "triggers[0].timezone",
            ),
            (
                json!([{"id": "hook", "kind": "webhook"}, {"id": "hook", "kind": "webhook"}]),
                "triggers[1].id",
            ),
            (json!([{"id": "a b", "kind": "webhook"}]), "triggers[0].id"),
        ];
        for (triggers, path) in &cases {
            let (status, body) = call(
                &router,
                post("/api/graphs", with_triggers(triggers.clone())),
            )
            .await;
            assert_eq!(
                status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{}: {body}",
                database.name
            );
            assert_eq!(body["error"]["details"]["path"], *path, "{body}");
        }
        // A save through PUT is held to the same, and nothing is stored.
        let graph = create_graph(&router, with_triggers(json!([]))).await;
        let (status, body) = call(
            &router,
            as_editor(
                put(
                    &format!("/api/graphs/{graph}"),
                    1,
                    &with_triggers(cases[0].0.clone()),
                ),
                &graph,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["details"]["path"], "triggers[0].cron");
        let (_, stored) = call(&router, get(&format!("/api/graphs/{graph}"))).await;
        assert_eq!(stored["revision"], 1);
    }
}

#[tokio::test]
async fn the_editors_see_next_times_and_addresses_and_a_copy_starts_paused() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let graph = create_graph(
            &router,
            with_triggers(json!([
                {"id": "every-minute", "kind": "schedule", "cron": "* * * * *", "timezone": "Europe/Paris"},
                {"id": "inbox", "kind": "webhook"}
            ])),
        )
        .await;
        let listed = triggers_of(&router, &graph).await;
        let times: Vec<i64> = listed["triggers"][0]["next_times"]
            .as_array()
            .unwrap()
            .iter()
            .map(|time| time.as_i64().unwrap())
            .collect();
        assert_eq!(times.len(), 5, "{listed}");
        assert!(
            times.windows(2).all(|pair| pair[1] - pair[0] == 60_000),
            "{times:?}"
        );
        assert!(times.iter().all(|time| time % 60_000 == 0), "{times:?}");
        assert_eq!(listed["triggers"][1]["url"], "/hooks/inbox");
        assert!(listed["triggers"][1].get("secret_made_at").is_none());
        make_secret(&router, &graph, "inbox").await;
        let listed = triggers_of(&router, &graph).await;
        assert!(listed["triggers"][1]["secret_made_at"].is_i64(), "{listed}");

        // Strangers see nothing of it: no token, a view link's nothing,
        // another graph's token.
        let other = create_graph(&router, with_triggers(json!([]))).await;
        let (status, _) = call(&router, get(&format!("/api/graphs/{graph}/triggers"))).await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let mut foreign = get(&format!("/api/graphs/{graph}/triggers"));
        foreign = as_editor(foreign, &other);
        let (status, _) = call(&router, foreign).await;
        assert_eq!(status, StatusCode::FORBIDDEN);

        // A fork's triggers wait for its own editors.
        let (status, fork) = call(
            &router,
            post(&format!("/api/graphs/{graph}/fork"), json!({})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{fork}");
        let (_, copy) = call(
            &router,
            get(&format!("/api/graphs/{}", fork["id"].as_str().unwrap())),
        )
        .await;
        assert_eq!(copy["triggers"][0]["paused"], true, "{copy}");
        assert_eq!(copy["triggers"][1]["paused"], true, "{copy}");

        // When a schedule falls, asked before it is saved.
        let (status, next) = call(
            &router,
            post(
                "/api/schedules/next",
                json!({"cron": "0 9 * * MON-FRI", "timezone": "America/New_York", "count": 3}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{next}");
        assert_eq!(next["times"].as_array().unwrap().len(), 3);
        let (status, wrong) = call(
            &router,
            post("/api/schedules/next", json!({"cron": "61 * * * *"})),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(wrong["error"]["code"], "schedule.invalid_request");
        assert_eq!(wrong["error"]["details"]["path"], "cron");
    }
}

#[tokio::test]
async fn a_webhook_starts_a_run_with_its_body_and_says_so() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let graph = create_graph(
            &router,
            with_triggers(json!([{"id": "inbox", "kind": "webhook"}])),
        )
        .await;
        let secret = make_secret(&router, &graph, "inbox").await;

        let body = r#"{"ticket": 42, "subject": "Printer on fire"}"#;
        let run = delivered_run(
            &router,
            deliver("inbox", Some(&secret), "application/json", body),
        )
        .await;
        assert_eq!(run["input"]["text"], body, "{}", database.name);
        assert_eq!(
            run["started_by"],
            json!({"how": "webhook", "trigger": "inbox"})
        );

        let run = delivered_run(
            &router,
            deliver("inbox", Some(&secret), "text/plain", "Tides"),
        )
        .await;
        assert_eq!(run["input"]["text"], "Tides");

        // The address alone, for senders that only take a URL.
        let request = Request::builder()
            .method(Method::POST)
            .uri(format!("/hooks/inbox?secret={secret}"))
            .body(Body::from("From the address"))
            .unwrap();
        let run = delivered_run(&router, request).await;
        assert_eq!(run["input"]["text"], "From the address");

        // A form's files are the run's files.
        let boundary = "XyZ";
        let form = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nSummarise the notes\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\nThe tide turns at six.\r\n--{boundary}--\r\n"
        );
        let run = delivered_run(
            &router,
            deliver(
                "inbox",
                Some(&secret),
                &format!("multipart/form-data; boundary={boundary}"),
                &form,
            ),
        )
        .await;
        assert_eq!(run["input"]["text"], "Summarise the notes", "{run}");
        assert_eq!(run["input"]["files"][0]["name"], "notes.txt");
        assert_eq!(run["input"]["files"][0]["media_type"], "text/plain");

        // Not JSON when it says JSON: refused, nothing started.
        let (status, refused) = call(
            &router,
            deliver("inbox", Some(&secret), "application/json", "{nope"),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        assert_eq!(refused["error"]["code"], "hook.invalid_body");

        assert_eq!(run_count(&router, &graph).await, 4);
    }
}

#[tokio::test]
async fn a_webhook_refuses_strangers_and_paused_or_removed_triggers() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let document = with_triggers(json!([{"id": "inbox", "kind": "webhook"}]));
        let graph = create_graph(&router, document.clone()).await;
        let other = create_graph(&router, document.clone()).await;
        let secret = make_secret(&router, &graph, "inbox").await;
        let others_secret = make_secret(&router, &other, "inbox").await;
        let refused = |request, status: StatusCode, code: &'static str| {
            let router = router.clone();
            async move {
                let (got, body) = call(&router, request).await;
                assert_eq!(
                    (got, body["error"]["code"].as_str().unwrap_or_default()),
                    (status, code),
                    "{body}"
                );
            }
        };

        refused(
            deliver("inbox", None, "text/plain", "x"),
            StatusCode::UNAUTHORIZED,
            "hook.secret_required",
        )
        .await;
        refused(
            deliver("inbox", Some("pbh_forged"), "text/plain", "x"),
            StatusCode::FORBIDDEN,
            "hook.secret_invalid",
        )
        .await;
        // The secret is its trigger's: another trigger id with it is nothing.
        refused(
            deliver("daily", Some(&secret), "text/plain", "x"),
            StatusCode::FORBIDDEN,
            "hook.secret_invalid",
        )
        .await;
        // It is a webhook's secret and nothing else: no save, no run, no secret made.
        let mut save = put(&format!("/api/graphs/{graph}"), 1, &document);
        save.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {secret}").parse().unwrap(),
        );
        refused(save, StatusCode::FORBIDDEN, "graph.edit_token_invalid").await;
        let mut start = post(&format!("/api/graphs/{graph}/runs"), json!({}));
        start.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {secret}").parse().unwrap(),
        );
        refused(start, StatusCode::FORBIDDEN, "graph.edit_token_invalid").await;
        let mut rotate = post(
            &format!("/api/graphs/{graph}/triggers/inbox/secret"),
            json!({}),
        );
        rotate.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {secret}").parse().unwrap(),
        );
        refused(rotate, StatusCode::FORBIDDEN, "graph.edit_token_invalid").await;
        refused(
            post(
                &format!("/api/graphs/{graph}/triggers/inbox/secret"),
                json!({}),
            ),
            StatusCode::FORBIDDEN,
            "graph.edit_token_required",
        )
        .await;
        refused(
            as_editor(
                post(
                    &format!("/api/graphs/{graph}/triggers/inbox/secret"),
                    json!({}),
                ),
                &other,
            ),
            StatusCode::FORBIDDEN,
            "graph.edit_token_invalid",
        )
        .await;
        refused(
            as_editor(
                post(
                    &format!("/api/graphs/{graph}/triggers/nightly/secret"),
                    json!({}),
                ),
                &graph,
            ),
            StatusCode::NOT_FOUND,
            "trigger.not_found",
        )
        .await;

        // Another graph's secret starts that graph's run, never this one's.
        let theirs = delivered_run(
            &router,
            deliver("inbox", Some(&others_secret), "text/plain", "x"),
        )
        .await;
        assert_eq!(theirs["graph_id"], other.as_str());

        // Rotated, the old secret stops at once.
        let rotated = make_secret(&router, &graph, "inbox").await;
        refused(
            deliver("inbox", Some(&secret), "text/plain", "x"),
            StatusCode::FORBIDDEN,
            "hook.secret_invalid",
        )
        .await;

        // Paused, then removed: refused, and said why.
        let paused = with_triggers(json!([{"id": "inbox", "kind": "webhook", "paused": true}]));
        let revision = support::save(&router, &graph, 1, &paused).await;
        refused(
            deliver("inbox", Some(&rotated), "text/plain", "x"),
            StatusCode::CONFLICT,
            "trigger.paused",
        )
        .await;
        support::save(&router, &graph, revision, &with_triggers(json!([]))).await;
        refused(
            deliver("inbox", Some(&rotated), "text/plain", "x"),
            StatusCode::NOT_FOUND,
            "trigger.not_found",
        )
        .await;

        assert_eq!(run_count(&router, &graph).await, 0);
    }
}

#[tokio::test]
async fn one_idempotency_key_starts_one_run_however_many_deliveries_race() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let graph = create_graph(
            &router,
            with_triggers(json!([{"id": "inbox", "kind": "webhook"}])),
        )
        .await;
        let secret = make_secret(&router, &graph, "inbox").await;
        let deliveries = (0..8).map(|_| {
            let mut request = deliver("inbox", Some(&secret), "text/plain", "once");
            request
                .headers_mut()
                .insert("Idempotency-Key", "delivery-7".parse().unwrap());
            call(&router, request)
        });
        let answers = futures::future::join_all(deliveries).await;
        let mut runs: Vec<&str> = answers
            .iter()
            .map(|(status, body)| {
                assert_eq!(*status, StatusCode::ACCEPTED, "{body}");
                body["run_id"].as_str().unwrap()
            })
            .collect();
        runs.sort_unstable();
        runs.dedup();
        assert_eq!(runs.len(), 1, "{}: {runs:?}", database.name);
        assert_eq!(run_count(&router, &graph).await, 1);
    }
}

#[tokio::test]
async fn a_tick_is_claimed_once_however_many_processes_race() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let graph = create_graph(
            &router,
            with_triggers(json!([{"id": "hourly", "kind": "schedule", "cron": "0 * * * *"}])),
        )
        .await;
        // Two connections to one database, as two processes have.
        let stores = [
            support::store(&database).await,
            support::store(&database).await,
        ];
        let ticks = stores[0].schedule_ticks(&graph).await.unwrap();
        let (trigger, next_at) = (ticks[0].0.clone(), ticks[0].1.unwrap());
        assert_eq!(trigger, "hourly");
        assert_eq!(next_at % 3_600_000, 0, "the next full hour");
        let claims = (0..16).map(|index| {
            let store = stores[index % 2].clone();
            let graph = graph.clone();
            async move {
                store
                    .claim_tick(&graph, "hourly", next_at, Some(next_at + 3_600_000))
                    .await
                    .unwrap()
            }
        });
        let won = futures::future::join_all(claims)
            .await
            .into_iter()
            .filter(|won| *won)
            .count();
        assert_eq!(won, 1, "{}", database.name);
        let ticks = stores[1].schedule_ticks(&graph).await.unwrap();
        assert_eq!(ticks[0].1, Some(next_at + 3_600_000));

        // Saving the graph unchanged keeps the tick; a new cron moves it.
        let (_, document) = call(&router, get(&format!("/api/graphs/{graph}"))).await;
        let revision = support::save(&router, &graph, 1, &document).await;
        assert_eq!(
            stores[0].schedule_ticks(&graph).await.unwrap()[0].1,
            Some(next_at + 3_600_000)
        );
        let mut changed = document.clone();
        changed["triggers"][0]["cron"] = json!("30 * * * *");
        support::save(&router, &graph, revision, &changed).await;
        let moved = stores[0].schedule_ticks(&graph).await.unwrap()[0]
            .1
            .unwrap();
        assert_eq!(moved % 3_600_000, 30 * 60_000, "{moved}");
    }
}

#[tokio::test]
async fn deliveries_to_one_webhook_are_limited_on_their_own_and_need_no_access_key() {
    let database = support::databases().await.remove(0);
    let mut settings = support::settings(&database, Limits::default());
    settings.run_limits.per_minute = 3;
    let key = "an-access-key-of-this-server";
    settings.access.key = Some(key.to_owned());
    let router = server::router::router(server::build_state(settings).await.unwrap());
    let mut creating = post(
        "/api/graphs",
        with_triggers(json!([{"id": "inbox", "kind": "webhook"}])),
    );
    creating
        .headers_mut()
        .insert("x-patchbay-access-key", key.parse().unwrap());
    let (status, created) = call(&router, creating).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let graph = created["id"].as_str().unwrap();
    let edit = created["edit_token"].as_str().unwrap();
    let mut making = post(
        &format!("/api/graphs/{graph}/triggers/inbox/secret"),
        json!({}),
    );
    making.headers_mut().insert(
        header::AUTHORIZATION,
        format!("Bearer {edit}").parse().unwrap(),
    );
    // Making a secret changes something: it needs the key.
    let (status, _) = call(&router, making).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let mut making = post(
        &format!("/api/graphs/{graph}/triggers/inbox/secret"),
        json!({}),
    );
    making.headers_mut().insert(
        header::AUTHORIZATION,
        format!("Bearer {edit}").parse().unwrap(),
    );
    making
        .headers_mut()
        .insert("x-patchbay-access-key", key.parse().unwrap());
    let (status, made) = call(&router, making).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let secret = made["secret"].as_str().unwrap();
    // Eight deliveries at once, without the key: three start runs.
    let deliveries = (0..8).map(|_| {
        call(
            &router,
            deliver("inbox", Some(secret), "text/plain", "burst"),
        )
    });
    let statuses: Vec<StatusCode> = futures::future::join_all(deliveries)
        .await
        .into_iter()
        .map(|(status, _)| status)
        .collect();
    let count = |wanted: StatusCode| statuses.iter().filter(|status| **status == wanted).count();
    assert_eq!(
        (
            count(StatusCode::ACCEPTED),
            count(StatusCode::TOO_MANY_REQUESTS)
        ),
        (3, 5),
        "{statuses:?}"
    );
}
