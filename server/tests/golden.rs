//! Golden files of the public surface: every API response body and every SSE
//! event of a few representative runs (the three starter examples, a run
//! that fails, the error bodies a stranger meets), with ids, tokens and
//! times masked. They were recorded before the wire types moved into a
//! crate of their own, so a refactor that changes what a client reads shows
//! up here as a diff. `PATCHBAY_BLESS_GOLDEN=1` writes them anew (only
//! when a change to the surface is intended).

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, header};
use graph::Limits;
use http_body_util::BodyExt;
use serde_json::{Map, Value, json};
use support::{as_editor, create_graph, get, post, wait_for};
use tower::ServiceExt;

/// Fields whose values differ from one run of the test to the next.
const TIME_FIELDS: [&str; 9] = [
    "ts",
    "created_at",
    "started_at",
    "finished_at",
    "updated_at",
    "duration_ms",
    "last_edit",
    "last_run_at",
    "edited_at",
];
const SECRET_FIELDS: [&str; 3] = ["edit_token", "view_token", "token"];

/// Replaces ids by stable names in order of appearance (`<id 1>`, …) and
/// masks times and tokens.
#[derive(Default)]
struct Masker {
    ids: BTreeMap<String, String>,
}

impl Masker {
    fn name_for(&mut self, id: &str) -> String {
        let next = self.ids.len() + 1;
        self.ids
            .entry(id.to_owned())
            .or_insert_with(|| format!("<id {next}>"))
            .clone()
    }

    /// Learns the ids (graph `g_…`, run `r_…`, attachment `a_…`: a
    /// prefix and at least 16 URL-safe characters) inside a string.
    fn learn(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let url_safe = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-';
        for start in 0..bytes.len().saturating_sub(2) {
            if !matches!(bytes[start], b'g' | b'r' | b'a')
                || bytes[start + 1] != b'_'
                || (start > 0 && url_safe(bytes[start - 1]))
            {
                continue;
            }
            let length = bytes[start + 2..]
                .iter()
                .take_while(|byte| url_safe(**byte))
                .count();
            if length >= 16 {
                self.name_for(&text[start..start + 2 + length]);
            }
        }
    }

    fn text(&mut self, text: &str) -> String {
        self.learn(text);
        let mut masked = text.to_owned();
        let mut known: Vec<_> = self.ids.iter().collect();
        known.sort_by_key(|(id, _)| std::cmp::Reverse(id.len()));
        for (id, name) in known {
            masked = masked.replace(id.as_str(), name);
        }
        masked
    }

    fn value(&mut self, value: &Value) -> Value {
        match value {
            Value::Object(object) => {
                let mut masked = Map::new();
                // Keys sorted: a client reads an object by name, and the
                // order of a map's entries depends on the database's.
                let mut fields: Vec<_> = object.iter().collect();
                fields.sort_by_key(|(key, _)| key.as_str());
                for (key, field) in fields {
                    // The run state's `<label>.duration_ms` is a time too.
                    let time = TIME_FIELDS.contains(&key.as_str()) || key.ends_with(".duration_ms");
                    let field = if time && !field.is_null() {
                        json!("<time>")
                    } else if key == "commit" && field.is_string() {
                        // A git commit's hash has the time it was made in it.
                        json!("<commit>")
                    } else if SECRET_FIELDS.contains(&key.as_str())
                        && let Some(token) = field.as_str()
                    {
                        // Links that carry it are masked with it.
                        let next = self.ids.len() + 1;
                        self.ids
                            .entry(token.to_owned())
                            .or_insert_with(|| format!("<token {next}>"));
                        json!("<token>")
                    } else {
                        self.value(field)
                    };
                    masked.insert(key.clone(), field);
                }
                Value::Object(masked)
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| self.value(item)).collect())
            }
            Value::String(text) => Value::String(self.text(text)),
            other => other.clone(),
        }
    }
}

/// What the test saw, in order: each exchange's request line, status and
/// masked body.
#[derive(Default)]
struct Recording {
    masker: Masker,
    exchanges: Vec<Value>,
}

impl Recording {
    async fn call(&mut self, router: &Router, what: &str, request: Request<Body>) -> Value {
        let line = format!("{} {}", request.method(), request.uri());
        let response = support::within(&line, router.clone().oneshot(request))
            .await
            .unwrap();
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = if content_type.starts_with("text/event-stream") {
            events(&text)
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        let masked_line = self.masker.text(&line);
        let masked_body = self.masker.value(&body);
        self.exchanges.push(json!({
            "what": what,
            "request": masked_line,
            "status": status.as_u16(),
            "body": masked_body,
        }));
        body
    }

    fn check(self, name: &str) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(format!("{name}.json"));
        let actual = serde_json::to_string_pretty(&Value::Array(self.exchanges)).unwrap() + "\n";
        if std::env::var_os("PATCHBAY_BLESS_GOLDEN").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &actual).unwrap();
            return;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|error| {
            panic!(
                "{}: {error} (PATCHBAY_BLESS_GOLDEN=1 records it)",
                path.display()
            )
        });
        if expected != actual {
            let first = expected
                .lines()
                .zip(actual.lines())
                .position(|(want, got)| want != got)
                .unwrap_or(expected.lines().count().min(actual.lines().count()));
            let window = |text: &str| {
                text.lines()
                    .skip(first.saturating_sub(3))
                    .take(8)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            panic!(
                "{} differs from what the server says now, from line {}:\n--- golden\n{}\n--- now\n{}",
                path.display(),
                first + 1,
                window(&expected),
                window(&actual)
            );
        }
    }
}

/// An SSE body as a list of `{id, event, data}`.
fn events(text: &str) -> Value {
    let mut events = Vec::new();
    let mut current = Map::new();
    for line in text.lines() {
        if line.is_empty() {
            if !current.is_empty() {
                events.push(Value::Object(std::mem::take(&mut current)));
            }
        } else if let Some((field, value)) = line.split_once(": ") {
            let value = if field == "data" {
                serde_json::from_str(value).unwrap_or(json!(value))
            } else {
                json!(value)
            };
            current.insert(field.to_owned(), value);
        }
    }
    if !current.is_empty() {
        events.push(Value::Object(current));
    }
    Value::Array(events)
}

fn put(uri: &str, revision: u64, body: Value) -> Request<Body> {
    Request::builder()
        .method("PUT")
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::IF_MATCH, format!("\"{revision}\""))
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn example(id: &str) -> Value {
    serde_json::to_value(graph::starter::example(id).unwrap().graph).unwrap()
}

/// One example run through the API as a browser drives it: the graph made,
/// the run started, its record, its events, the graph's run list.
async fn run_example(recording: &mut Recording, router: &Router, example_id: &str, input: &str) {
    let graph_id = create_graph(router, example(example_id)).await;
    recording
        .call(router, "the graph", get(&format!("/api/graphs/{graph_id}")))
        .await;
    let started = recording
        .call(
            router,
            "start a run",
            as_editor(
                post(
                    &format!("/api/graphs/{graph_id}/runs"),
                    json!({"input": {"text": input}}),
                ),
                &graph_id,
            ),
        )
        .await;
    let run_id = started["id"].as_str().unwrap().to_owned();
    let finished = wait_for(router, &run_id, &["completed", "failed", "cancelled"]).await;
    assert_ne!(finished["status"], "running");
    recording
        .call(
            router,
            "the run's record",
            get(&format!("/api/runs/{run_id}")),
        )
        .await;
    recording
        .call(
            router,
            "the run's events",
            get(&format!("/api/runs/{run_id}/events")),
        )
        .await;
    recording
        .call(
            router,
            "the graph's runs",
            as_editor(get(&format!("/api/graphs/{graph_id}/runs")), &graph_id),
        )
        .await;
}

#[tokio::test]
async fn the_examples_run_as_recorded() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let mut recording = Recording::default();
        recording
            .call(&router, "the providers", get("/api/providers"))
            .await;
        run_example(
            &mut recording,
            &router,
            "draft-review-finalize",
            "the tides",
        )
        .await;
        run_example(
            &mut recording,
            &router,
            "revise-until-approved",
            "moon phases",
        )
        .await;
        run_example(
            &mut recording,
            &router,
            "triage",
            "Technical: the app crashes when I open settings.",
        )
        .await;
        run_example(&mut recording, &router, "coding-agent", "a haiku file").await;
        run_example(
            &mut recording,
            &router,
            "an-agent-that-looks-things-up",
            "Can I return a coat I bought 12 days ago?",
        )
        .await;
        recording.check("examples");
    }
}

#[tokio::test]
async fn graphs_errors_and_a_failed_run_read_as_recorded() {
    for database in support::databases().await {
        let router = server::router::router(support::state(&database, Limits::default()).await);
        let mut recording = Recording::default();
        let made = recording
            .call(
                &router,
                "make a graph",
                post("/api/graphs", example("draft-review-finalize")),
            )
            .await;
        let graph_id = made["id"].as_str().unwrap().to_owned();
        let token = made["edit_token"].as_str().unwrap().to_owned();
        let mut renamed = example("draft-review-finalize");
        renamed["name"] = json!("Tides, renamed");
        let mut save = put(&format!("/api/graphs/{graph_id}"), 1, renamed.clone());
        save.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        );
        recording.call(&router, "save as the editor", save).await;
        recording
            .call(
                &router,
                "save without a token",
                put(&format!("/api/graphs/{graph_id}"), 2, renamed.clone()),
            )
            .await;
        let mut stale = put(&format!("/api/graphs/{graph_id}"), 1, renamed);
        stale.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        );
        recording
            .call(&router, "save a stale revision", stale)
            .await;
        recording
            .call(
                &router,
                "fork",
                post(&format!("/api/graphs/{graph_id}/fork"), json!({})),
            )
            .await;
        recording
            .call(
                &router,
                "summaries",
                post(
                    "/api/graphs/summaries",
                    json!({"graphs": [{"id": graph_id, "edit_token": token}, {"id": "g_unknown", "edit_token": "x"}]}),
                ),
            )
            .await;
        let mut broken = example("draft-review-finalize");
        broken["cables"][0]["to"]["port"] = json!("no_such_port");
        recording
            .call(
                &router,
                "validate a broken graph",
                post("/api/validate", broken.clone()),
            )
            .await;
        recording
            .call(&router, "make a broken graph", post("/api/graphs", broken))
            .await;
        recording
            .call(
                &router,
                "bad JSON",
                Request::builder()
                    .method("POST")
                    .uri("/api/graphs")
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from("{\"modules\": ["))
                    .unwrap(),
            )
            .await;
        recording
            .call(
                &router,
                "an unknown graph",
                get("/api/graphs/g_doesnotexist00"),
            )
            .await;
        recording
            .call(&router, "an unknown run", get("/api/runs/r_doesnotexist00"))
            .await;
        recording
            .call(
                &router,
                "run without a token",
                post(
                    &format!("/api/graphs/{graph_id}/runs"),
                    json!({"input": {"text": "x"}}),
                ),
            )
            .await;
        recording
            .call(&router, "an unknown route", get("/api/nothing-here"))
            .await;
        // A run that fails: the simulated provider is told to fail.
        let mut failing = example("draft-review-finalize");
        let modules = failing["modules"].as_array_mut().unwrap();
        for module in modules {
            if module["kind"] == "step.agent_task" {
                module["config"]["instruction"] = json!("[sim:fail] Write an essay.");
            }
        }
        let failing_id = create_graph(&router, failing).await;
        let started = recording
            .call(
                &router,
                "start a failing run",
                as_editor(
                    post(
                        &format!("/api/graphs/{failing_id}/runs"),
                        json!({"input": {"text": "x"}}),
                    ),
                    &failing_id,
                ),
            )
            .await;
        let run_id = started["id"].as_str().unwrap().to_owned();
        wait_for(&router, &run_id, &["completed", "failed"]).await;
        recording
            .call(
                &router,
                "the failed run",
                get(&format!("/api/runs/{run_id}")),
            )
            .await;
        recording
            .call(
                &router,
                "the failed run's events",
                get(&format!("/api/runs/{run_id}/events")),
            )
            .await;
        recording
            .call(
                &router,
                "cancel a finished run",
                as_editor(
                    post(&format!("/api/runs/{run_id}/cancel"), json!({})),
                    &failing_id,
                ),
            )
            .await;
        recording.check("graphs_and_errors");
    }
}
