//! Runs through the HTTP API and SSE on a real socket: start, read, list,
//! cancel, refusals, providers; events resumed with Last-Event-ID without a
//! gap or a duplicate; replay after the run ends and after a restart.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use support::{as_editor, call, create_graph, get, post, start, wait_for};

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use graph::Limits;
use graph::starter::starter_graph;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use wire::event::{RunEvent, RunStatus};

/// A router whose simulator waits `latency_ms` per word.
async fn app(
    database: &support::TestDatabase,
    latency_ms: u64,
) -> (Router, server::state::AppState) {
    let mut settings = support::settings(database, Limits::default());
    settings.sim_latency_ms = Some(latency_ms);
    let state = server::build_state(settings).await.unwrap();
    (server::router::router(state.clone()), state)
}

fn starter() -> Value {
    serde_json::to_value(starter_graph()).unwrap()
}

#[tokio::test]
async fn a_run_of_the_starter_graph_records_every_response_and_output() {
    for database in support::databases().await {
        let (router, _) = app(&database, 0).await;
        let graph_id = create_graph(&router, starter()).await;
        let run_id = start(&router, &graph_id, "why tests matter").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(run["status"], "completed", "{}: {run}", database.name);
        assert_eq!(run["input"]["text"], "why tests matter");
        assert_eq!(
            run["graph"]["modules"].as_array().unwrap().len(),
            3,
            "the snapshot is kept"
        );
        assert_eq!(run["graph_revision"], 1);

        let draft = &run["modules"]["m2"]["activations"][0];
        assert_eq!(draft["status"], "completed");
        let responses: Vec<&str> = draft["responses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|response| response["text"].as_str().unwrap())
            .collect();
        assert_eq!(responses.len(), 3);
        let merged = draft["outputs"]["data_out"]["content"]["merged_content"]
            .as_str()
            .unwrap();
        assert_eq!(
            merged,
            format!(
                "{}\n───── Re-prompt 1 ─────\n{}\n───── Re-prompt 2 ─────\n{}",
                responses[0], responses[1], responses[2]
            )
        );
        assert_eq!(draft["receipt"]["re_prompt_count"], 2);
        assert_eq!(
            draft["transcript"][2]["text"],
            "Review your work above. What did you miss?"
        );
        let result = &run["modules"]["m3"]["activations"][0]["outputs"]["result_1"];
        assert_eq!(result["content"]["merged_content"], merged);
        assert!(run["last_event_id"].as_i64().unwrap() > 10);

        let (status, listed) = call(
            &router,
            as_editor(get(&format!("/api/graphs/{graph_id}/runs")), &graph_id),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(listed["runs"][0]["id"], run_id.as_str());
        assert_eq!(listed["runs"][0]["status"], "completed");
    }
}

async fn page(router: &Router, uri: &str) -> (StatusCode, String) {
    support::within(&format!("GET {uri}"), async {
        let response = router.clone().oneshot(get(uri)).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    })
    .await
}

#[tokio::test]
async fn a_recorded_run_has_its_own_read_only_page() {
    for database in support::databases().await {
        let (router, _) = app(&database, 0).await;
        let graph_id = create_graph(&router, starter()).await;
        let run_id = start(&router, &graph_id, "tides").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(run["status"], "completed", "{run}");
        let merged = run["modules"]["m2"]["activations"][0]["outputs"]["data_out"]["content"]
            ["merged_content"]
            .as_str()
            .unwrap()
            .to_owned();

        let (status, html) = page(&router, &format!("/g/{graph_id}/runs/{run_id}")).await;
        assert_eq!(status, StatusCode::OK);
        // Rendered on the server: the run, every module done, the result.
        assert!(html.contains(&run_id), "run id");
        assert!(html.contains("Recorded run"), "read-only badge");
        for module in ["m1", "m2", "m3"] {
            // The module's opening tag.
            let at = html.find(&format!("data-node-id=\"{module}\"")).unwrap();
            let start = html[..at].rfind("<div").unwrap();
            let end = at + html[at..].find('>').unwrap();
            let element = &html[start..end];
            assert!(
                element.contains("run-done"),
                "{module} not shown done: {element}"
            );
        }
        let escaped = merged
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(html.contains(&escaped), "the merged output is on the page");

        // A run under another graph's address, and unknown runs, are not found.
        let other = create_graph(&router, starter()).await;
        for uri in [
            format!("/g/{other}/runs/{run_id}"),
            format!("/g/{graph_id}/runs/r_AAAAAAAAAAAAAAAAAAAAAAAA"),
            format!("/g/{graph_id}/runs/nonsense"),
        ] {
            let (status, html) = page(&router, &uri).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
            assert!(html.contains("There is no run at this address"), "{uri}");
        }
    }
}

#[tokio::test]
async fn runs_are_refused_with_clear_errors() {
    for database in support::databases().await {
        let (router, state) = app(&database, 0).await;
        // Validation errors: 422 with the findings, and no run is stored.
        let mut broken = starter();
        broken["modules"][1]["config"]["re_prompts"] = json!(["Review", " "]);
        let graph_id = create_graph(&router, broken).await;
        let (status, body) = call(
            &router,
            as_editor(
                post(&format!("/api/graphs/{graph_id}/runs"), json!({})),
                &graph_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["error"]["code"], "run.graph_invalid");
        assert_eq!(
            body["error"]["details"]["findings"][0]["code"],
            "validation.reprompt_empty"
        );
        assert_eq!(
            state
                .store
                .runs_for_graph(&graph_id, 10)
                .await
                .unwrap()
                .len(),
            0
        );

        // Commands are off by default.
        let mut with_command = starter();
        with_command["modules"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "m4", "kind": "step.command", "config": {"command": "true"}}));
        with_command["cables"].as_array_mut().unwrap().push(json!({"id": "c3", "from": {"module": "m2", "port": "signal_out"}, "to": {"module": "m4", "port": "signal_in"}}));
        let graph_id = create_graph(&router, with_command).await;
        let (status, body) = call(
            &router,
            as_editor(
                post(&format!("/api/graphs/{graph_id}/runs"), json!({})),
                &graph_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["error"]["code"], "run.commands_disabled");
        assert_eq!(body["error"]["details"]["module_id"], "m4");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("runs shell commands (its command), and this server does not run commands: start it with --enable-commands"),
            "{message}"
        );
        // Validation says so before any run: the same words, as a finding.
        let (_, stored) = call(&router, get(&format!("/api/graphs/{graph_id}"))).await;
        let (status, validated) = call(&router, post("/api/validate", stored)).await;
        assert_eq!(status, StatusCode::OK, "{validated}");
        let finding = validated["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|finding| finding["code"] == "validation.commands_disabled")
            .unwrap_or_else(|| panic!("{validated}"))
            .clone();
        assert_eq!(finding["module_id"], "m4");
        assert_eq!(finding["severity"], "error");
        assert_eq!(finding["message"].as_str().unwrap(), message);

        // A malformed request says where.
        let graph_id = create_graph(&router, starter()).await;
        let (status, body) = call(
            &router,
            as_editor(
                post(
                    &format!("/api/graphs/{graph_id}/runs"),
                    json!({"input": {"text": 5}}),
                ),
                &graph_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["error"]["code"], "run.invalid_input");
        assert_eq!(body["error"]["details"]["path"], "input.text");

        for uri in [
            "/api/runs/r_AAAAAAAAAAAAAAAAAAAAAAAA",
            "/api/runs/nonsense",
            "/api/runs/nonsense/events",
        ] {
            let (status, body) = call(&router, get(uri)).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
            assert_eq!(body["error"]["code"], "run.not_found");
        }
        let (status, _) = call(
            &router,
            post("/api/graphs/g_AAAAAAAAAAAAAAAAAAAAAAAA/runs", json!({})),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn cancel_stops_a_run_and_keeps_what_it_produced() {
    for database in support::databases().await {
        // 40 ms a word: the first response alone takes over a second.
        let (router, _) = app(&database, 40).await;
        let graph_id = create_graph(&router, starter()).await;
        let run_id = start(&router, &graph_id, "slow").await;
        for _ in 0..200 {
            let (_, run) = call(&router, get(&format!("/api/runs/{run_id}"))).await;
            let streamed = run["modules"]["m2"]["activations"][0]["responses"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .len();
            if streamed > 0 || run["status"] == "running" && run["modules"]["m2"].is_object() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let (status, body) = call(
            &router,
            as_editor(
                post(&format!("/api/runs/{run_id}/cancel"), json!({})),
                &graph_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let run = wait_for(&router, &run_id, &["cancelled", "completed", "failed"]).await;
        assert_eq!(run["status"], "cancelled", "{}", database.name);
        let draft = &run["modules"]["m2"]["activations"][0];
        assert_eq!(draft["status"], "cancelled");
        assert!(
            run["modules"]["m3"].is_null(),
            "nothing ran after the cancel"
        );

        let (status, body) = call(
            &router,
            as_editor(
                post(&format!("/api/runs/{run_id}/cancel"), json!({})),
                &graph_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(body["error"]["code"], "run.not_running");
    }
}

#[tokio::test]
async fn providers_are_listed_without_secrets() {
    let database = support::databases().await.remove(0);
    let (router, _) = app(&database, 0).await;
    let (status, mut body) = call(&router, get("/api/providers")).await;
    assert_eq!(status, StatusCode::OK);
    // The built-in tools server, listed by what it offers (its tools'
    // schemas are the MCP tests' to read).
    let tool_servers = body
        .as_object_mut()
        .and_then(|body| body.remove("tool_servers"))
        .unwrap();
    assert_eq!(tool_servers.as_array().unwrap().len(), 1);
    assert_eq!(tool_servers[0]["id"], "patchbay");
    assert_eq!(tool_servers[0]["transport"], "built_in");
    let names: Vec<&str> = tool_servers[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["calculate", "clock", "lookup"]);
    assert_eq!(
        body,
        json!({
            "providers": [{"id": "sim", "label": "Simulated", "models": ["sim-1", "sim-long"], "simulated": true}],
            "acp_profiles": [{"id": "sim-agent", "name": "Simulated agent", "simulated": true, "modes": ["code", "ask"], "offers": null}],
            "workspace_roots": [],
            "commands_enabled": false,
            "sandbox_available": true,
        })
    );
}

/// Serves the router on a loopback port.
async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    format!("http://{address}")
}

/// An event as the stream carried it.
#[derive(Clone, Debug)]
struct SseEvent {
    id: Option<String>,
    event: Option<String>,
    data: String,
}

/// Reads SSE events; stops after `limit` events (then drops the connection)
/// or when the server closes the stream.
async fn read_events(
    client: &reqwest::Client,
    url: &str,
    last_event_id: Option<&str>,
    limit: usize,
) -> (Vec<SseEvent>, bool) {
    let mut request = client
        .get(url)
        .header("accept", "text/event-stream")
        .header("accept-encoding", "gzip");
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert!(
        response.headers().get("content-encoding").is_none(),
        "SSE must not be compressed (it would be buffered)"
    );
    let mut events = Vec::new();
    let mut stream = response.bytes_stream().eventsource();
    let reading = async {
        while let Some(event) = stream.next().await {
            let event = event.unwrap();
            events.push(SseEvent {
                id: Some(event.id).filter(|id| !id.is_empty()),
                event: Some(event.event),
                data: event.data,
            });
            if events.len() >= limit {
                return false;
            }
        }
        true
    };
    let closed = tokio::time::timeout(Duration::from_secs(30), reading)
        .await
        .expect("the stream stalled");
    (events, closed)
}

fn numbered(events: &[SseEvent]) -> Vec<u64> {
    events
        .iter()
        .map(|event| event.id.as_deref().unwrap().parse().unwrap())
        .collect()
}

#[tokio::test]
async fn sse_resumes_after_a_dropped_connection_without_gap_or_duplicate() {
    for database in support::databases().await {
        // 8 ms a word: the run lasts about a second, so the drop is mid-run.
        let (router, state) = app(&database, 8).await;
        let base = serve(router.clone()).await;
        let graph_id = create_graph(&router, starter()).await;
        let run_id = start(&router, &graph_id, "resume").await;
        let client = engine::tls::client();
        let url = format!("{base}/api/runs/{run_id}/events");

        let (first, closed) = read_events(&client, &url, None, 6).await;
        assert!(!closed, "the run should still be going");
        let (status, _) = call(&router, get(&format!("/api/runs/{run_id}"))).await;
        assert_eq!(status, StatusCode::OK);
        tokio::time::sleep(Duration::from_millis(150)).await;
        let last = first.last().unwrap().id.clone().unwrap();
        let (rest, closed) = read_events(&client, &url, Some(&last), usize::MAX).await;
        assert!(closed, "the stream ends after the run's last event");

        let mut all = first.clone();
        all.extend(rest);
        let ids = numbered(&all);
        assert_eq!(
            ids,
            (1..=ids.len() as u64).collect::<Vec<_>>(),
            "{}: gap or duplicate",
            database.name
        );
        assert_eq!(all.last().unwrap().event.as_deref(), Some("run.completed"));
        // Exactly the stored log, names and data.
        let stored = state.store.events_after(&run_id, 0).await.unwrap();
        assert_eq!(stored.len(), all.len());
        for (event, stored) in all.iter().zip(&stored) {
            assert_eq!(event.event.as_deref(), Some(stored.name.as_str()));
            let data: Value = serde_json::from_str(&event.data).unwrap();
            assert_eq!(data["run_id"], run_id.as_str());
            assert_eq!(data["ts"], stored.ts);
            let payload: Value = serde_json::from_str(&stored.payload).unwrap();
            for (key, value) in payload.as_object().unwrap() {
                assert_eq!(&data[key], value, "{key}");
            }
        }
        // The badge's events are there: Re-prompt 1/2 then 2/2.
        let dispatched: Vec<Value> = all
            .iter()
            .filter(|event| event.event.as_deref() == Some("task.agent_task.reprompt_dispatched"))
            .map(|event| serde_json::from_str::<Value>(&event.data).unwrap())
            .collect();
        assert_eq!(dispatched.len(), 2);
        assert_eq!(
            (
                dispatched[0]["reprompt_index"].clone(),
                dispatched[0]["reprompt_count"].clone()
            ),
            (json!(1), json!(2))
        );
        assert_eq!(dispatched[1]["reprompt_index"], 2);

        // A finished run replays everything and closes.
        let (replayed, closed) = read_events(&client, &url, None, usize::MAX).await;
        assert!(closed);
        assert_eq!(numbered(&replayed), ids);
        // And from the middle, only what follows.
        let (tail, _) = read_events(&client, &url, Some("5"), usize::MAX).await;
        assert_eq!(numbered(&tail), (6..=ids.len() as u64).collect::<Vec<_>>());
    }
}

#[tokio::test]
async fn the_log_replays_after_a_restart_and_unfinished_runs_end_interrupted_when_resume_is_off() {
    for database in support::databases().await {
        let (router, state) = app(&database, 0).await;
        let graph_id = create_graph(&router, starter()).await;
        let finished = start(&router, &graph_id, "before the restart").await;
        wait_for(&router, &finished, &["completed"]).await;
        // A run a crashed server left running.
        let stuck = server::runs::new_run_id();
        state
            .store
            .insert_run(server::store::NewRun {
                id: &stuck,
                graph_id: Some(&graph_id),
                graph_revision: Some(1),
                snapshot: "{}",
                input: "{}",
                budget_usd: None,
                lease: None,
                from: None,
                started_by: None,
            })
            .await
            .unwrap();
        state
            .store
            .set_run_status(&stuck, "running", None, None)
            .await
            .unwrap();
        // Its log: m2 started streaming its reply and never ended.
        let logged = |seq: i64, event: RunEvent| server::store::StoredEvent {
            seq,
            name: event.name().to_owned(),
            payload: Value::Object(event.payload()).to_string(),
            ts: 1_000 + seq,
        };
        state
            .store
            .append_events(
                &stuck,
                vec![
                    logged(
                        1,
                        RunEvent::RunStarted {
                            status: RunStatus::Running,
                        },
                    ),
                    logged(
                        2,
                        RunEvent::ModuleActivated {
                            module_id: "m2".to_owned(),
                            activation: 1,
                        },
                    ),
                    logged(
                        3,
                        RunEvent::ModuleOutputDelta {
                            module_id: "m2".to_owned(),
                            response_index: 0,
                            text: "Half a".to_owned(),
                        },
                    ),
                    logged(
                        4,
                        RunEvent::ModuleOutputDelta {
                            module_id: "m2".to_owned(),
                            response_index: 0,
                            text: " reply".to_owned(),
                        },
                    ),
                ],
                None,
            )
            .await
            .unwrap();
        let before = state.store.events_after(&finished, 0).await.unwrap();
        drop(router);
        drop(state);

        // A new server on the same database, which does not resume runs.
        let mut settings = support::settings(&database, Limits::default());
        settings.resume = false;
        let state = server::build_state(settings).await.unwrap();
        let router = server::router::router(state.clone());
        let base = serve(router.clone()).await;
        let client = engine::tls::client();
        let (events, closed) = read_events(
            &client,
            &format!("{base}/api/runs/{finished}/events"),
            None,
            usize::MAX,
        )
        .await;
        assert!(closed);
        assert_eq!(events.len(), before.len(), "{}", database.name);
        assert_eq!(
            events.last().unwrap().event.as_deref(),
            Some("run.completed")
        );
        let (_, run) = call(&router, get(&format!("/api/runs/{stuck}"))).await;
        assert_eq!(run["status"], "interrupted");
        let error = run["error"].as_str().unwrap();
        assert!(error.contains("server stopped"), "{error}");
        assert!(error.contains("does not resume runs"), "{error}");
        // The activation that was in flight is kept, with what it streamed.
        let kept = &run["modules"]["m2"]["activations"][0];
        assert_eq!(kept["status"], "interrupted", "{run}");
        assert_eq!(kept["responses"][0]["text"], "Half a reply");
        // Its log ends with a terminal event, so a client stops waiting,
        // also one that comes back with Last-Event-ID.
        let (events, closed) = read_events(
            &client,
            &format!("{base}/api/runs/{stuck}/events"),
            None,
            usize::MAX,
        )
        .await;
        assert!(closed, "an interrupted run's stream closes");
        assert_eq!(events.len(), 5, "{}", database.name);
        assert_eq!(
            events.last().unwrap().event.as_deref(),
            Some("run.interrupted")
        );
        let (after, closed) = read_events(
            &client,
            &format!("{base}/api/runs/{stuck}/events"),
            Some("4"),
            usize::MAX,
        )
        .await;
        assert!(closed);
        assert_eq!(after.len(), 1);
        assert_eq!(after[0].event.as_deref(), Some("run.interrupted"));
        // A client that has the whole log is told so: the stream closes.
        let (nothing, closed) = read_events(
            &client,
            &format!("{base}/api/runs/{stuck}/events"),
            Some("5"),
            usize::MAX,
        )
        .await;
        assert!(closed, "a stream past an ended run's last event closes");
        assert!(nothing.is_empty());
    }
}

#[tokio::test]
async fn a_request_for_revision_with_no_cable_fails_the_run_and_says_where() {
    for database in support::databases().await {
        let (router, _) = app(&database, 0).await;
        let document = json!({
            "name": "Unwired revision",
            "modules": [
                {"id": "m1", "kind": "step.input", "label": "Topic", "position": {"x": 0, "y": 0}, "config": {}},
                {"id": "m2", "kind": "step.agent_review_gate", "label": "Check", "position": {"x": 300, "y": 0},
                 "config": {"instruction": "Review [sim:revise]", "agent_config": {"provider": "sim"}, "max_rounds": 3}},
                {"id": "m3", "kind": "step.output", "label": "Approved", "position": {"x": 600, "y": 0}, "config": {}}
            ],
            "cables": [
                {"id": "c1", "from": {"module": "m1", "port": "data_out"}, "to": {"module": "m2", "port": "data_in"}},
                {"id": "c2", "from": {"module": "m2", "port": "approved_out"}, "to": {"module": "m3", "port": "data_in"}}
            ]
        });
        let graph_id = create_graph(&router, document).await;
        let run_id = start(&router, &graph_id, "a draft").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(run["status"], "failed", "{}: {run}", database.name);
        let error = run["error"].as_str().unwrap();
        assert!(
            error.contains("\"Check\" ended with a request for revision (revise_out)"),
            "{}: {error}",
            database.name
        );
        assert_eq!(
            run["modules"]["m2"]["activations"][0]["status"],
            "completed"
        );
        assert!(
            run["modules"]
                .get("m3")
                .is_none_or(|module| module["activations"].as_array().is_none_or(Vec::is_empty))
        );
    }
}

/// Out of rounds, a review gate ends as a coding review chain does: the
/// reviewed work on `exhausted_out` with the last feedback; with no cable
/// there the run fails naming that port, wired on it completes.
#[tokio::test]
async fn a_review_gate_out_of_rounds_sends_the_work_on_exhausted_out() {
    for database in support::databases().await {
        let (router, _) = app(&database, 0).await;
        let document = |wired: bool| {
            let from = if wired {
                "exhausted_out"
            } else {
                "approved_out"
            };
            json!({
                "name": "One round",
                "modules": [
                    {"id": "m1", "kind": "step.input", "label": "Topic", "position": {"x": 0, "y": 0}, "config": {}},
                    {"id": "m2", "kind": "step.agent_review_gate", "label": "Check", "position": {"x": 300, "y": 0},
                     "config": {"instruction": "Review [sim:revise]", "agent_config": {"provider": "sim"}, "max_rounds": 1}},
                    {"id": "m3", "kind": "step.output", "label": "Result", "position": {"x": 600, "y": 0}, "config": {}}
                ],
                "cables": [
                    {"id": "c1", "from": {"module": "m1", "port": "data_out"}, "to": {"module": "m2", "port": "data_in"}},
                    {"id": "c2", "from": {"module": "m2", "port": from}, "to": {"module": "m3", "port": "data_in"}}
                ]
            })
        };
        let graph_id = create_graph(&router, document(false)).await;
        let run_id = start(&router, &graph_id, "a draft").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(run["status"], "failed", "{}: {run}", database.name);
        let error = run["error"].as_str().unwrap();
        assert!(
            error.contains("\"Check\" ended with running out of rounds (exhausted_out)"),
            "{}: {error}",
            database.name
        );
        let gate = &run["modules"]["m2"]["activations"][0];
        assert_eq!(gate["status"], "completed");
        assert!(gate["outputs"].get("revise_out").is_none(), "{gate}");

        let graph_id = create_graph(&router, document(true)).await;
        let run_id = start(&router, &graph_id, "a draft").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(run["status"], "completed", "{}: {run}", database.name);
        let result = &run["modules"]["m3"]["activations"][0]["outputs"]["result_1"];
        assert!(
            result["content"].as_str().unwrap().contains("a draft"),
            "{}: {result}",
            database.name
        );
        assert_eq!(result["meta"]["decision"], "revise");
        assert!(
            result["meta"]["feedback"]
                .as_str()
                .is_some_and(|feedback| !feedback.is_empty())
        );
    }
}

/// PRODUCT §3.1: an activation ready while every concurrency slot is taken
/// is `queued` in the run record and says so on the stream
/// (`module.queued`), then `running`, then ends; one that never waited is
/// never called queued.
#[tokio::test]
async fn an_activation_waiting_for_a_slot_is_recorded_queued_then_runs() {
    let (router, _folder, _database) = support::router_with_config(
        "[sim]\nlatency_ms_per_token = 15\n[engine]\nmax_concurrency = 1\n",
    )
    .await;
    let task = |id: &str, x: f64| {
        json!({"id": id, "kind": "step.agent_task", "label": id, "position": {"x": x, "y": 0},
               "config": {"instruction": "Write a line.", "agent_config": {"provider": "sim"}}})
    };
    let document = json!({
        "name": "Two branches, one slot",
        "modules": [
            {"id": "m1", "kind": "step.input", "label": "Topic", "position": {"x": 0, "y": 0}, "config": {}},
            task("left", 300.0),
            task("right", 600.0)
        ],
        "cables": [
            {"id": "c1", "from": {"module": "m1", "port": "data_out"}, "to": {"module": "left", "port": "data_in"}},
            {"id": "c2", "from": {"module": "m1", "port": "data_out"}, "to": {"module": "right", "port": "data_in"}}
        ]
    });
    let graph_id = create_graph(&router, document).await;
    let run_id = start(&router, &graph_id, "tides").await;
    // One of the two branches waits while the other has the only slot,
    // and is recorded running from its start, not only when it ends.
    let mut waiting = None;
    let mut seen = Value::Null;
    for _ in 0..500 {
        let (_, run) = call(&router, get(&format!("/api/runs/{run_id}"))).await;
        waiting = ["left", "right"]
            .into_iter()
            .find(|module| run["modules"][module]["activations"][0]["status"] == "queued");
        let ended = ["completed", "failed"].contains(&run["status"].as_str().unwrap());
        seen = run;
        if waiting.is_some() || ended {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let waiting = waiting.expect("no activation was recorded as queued");
    let other = if waiting == "left" { "right" } else { "left" };
    assert_eq!(
        seen["modules"][other]["activations"][0]["status"], "running",
        "{seen}"
    );
    let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed", "{run}");
    for module in ["left", "right"] {
        assert_eq!(
            run["modules"][module]["activations"][0]["status"],
            "completed"
        );
    }
    let base = serve(router).await;
    let (events, _) = read_events(
        &engine::tls::client(),
        &format!("{base}/api/runs/{run_id}/events"),
        None,
        1000,
    )
    .await;
    let about = |name: &str, module: &str| {
        events.iter().position(|event| {
            event.event.as_deref() == Some(name)
                && serde_json::from_str::<Value>(&event.data).unwrap()["module_id"] == module
        })
    };
    let queued = about("module.queued", waiting).expect("module.queued");
    let activated = about("module.activated", waiting).expect("module.activated");
    assert!(queued < activated);
    // The input and the branch that had the slot never waited.
    assert_eq!(about("module.queued", other), None);
    assert_eq!(about("module.queued", "m1"), None);
}

/// A review gate and a red team run their re-prompts in their session
/// before anything else (DOC23 §3.2): the gate decides only after its last
/// re-prompt's reply, and the transcript shows every turn in order.
#[tokio::test]
async fn a_review_gate_and_a_red_team_run_their_re_prompts_before_the_decision() {
    let database = support::databases().await.remove(0);
    let (router, _) = app(&database, 0).await;
    let document = json!({
        "name": "Checked twice",
        "modules": [
            {"id": "m1", "kind": "step.input", "label": "Topic", "position": {"x": 0, "y": 0}, "config": {}},
            {"id": "gate", "kind": "step.agent_review_gate", "label": "Check", "position": {"x": 300, "y": 0},
             "config": {"instruction": "Review the draft.", "agent_config": {"provider": "sim"},
                        "re_prompts": ["Check the numbers.", "Check the tone."]}},
            {"id": "attack", "kind": "step.red_team", "label": "Attack", "position": {"x": 600, "y": 0},
             "config": {"instruction": "Attack the draft.", "agent_config": {"provider": "sim"},
                        "re_prompts": ["Attack its sources."]}}
        ],
        "cables": [
            {"id": "c1", "from": {"module": "m1", "port": "data_out"}, "to": {"module": "gate", "port": "data_in"}},
            {"id": "c2", "from": {"module": "gate", "port": "approved_out"}, "to": {"module": "attack", "port": "data_in"}}
        ]
    });
    let graph_id = create_graph(&router, document).await;
    let run_id = start(&router, &graph_id, "a draft about tides").await;
    let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed", "{run}");
    let turns = |module: &str| -> Vec<(String, String)> {
        run["modules"][module]["activations"][0]["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| entry["role"] != "system")
            .map(|entry| {
                (
                    entry["role"].as_str().unwrap().to_owned(),
                    entry["text"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let labels = |module: &str| -> Vec<String> {
        run["modules"][module]["activations"][0]["responses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|response| response["label"].as_str().unwrap().to_owned())
            .collect()
    };

    let gate = turns("gate");
    let roles: Vec<&str> = gate.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ],
        "{gate:?}"
    );
    assert!(gate[0].1.contains("Review the draft.") && gate[0].1.contains("a draft about tides"));
    assert_eq!(gate[2].1, "Check the numbers.");
    assert_eq!(gate[4].1, "Check the tone.");
    assert!(gate[6].1.starts_with("Now decide."), "{}", gate[6].1);
    assert!(gate[7].1.contains("approve"), "{}", gate[7].1);
    assert_eq!(
        labels("gate"),
        ["Original", "Re-prompt 1", "Re-prompt 2", "Decision"]
    );

    let attack = turns("attack");
    let users: Vec<&str> = attack
        .iter()
        .filter(|(role, _)| role == "user")
        .map(|(_, text)| text.as_str())
        .collect();
    assert_eq!(users.len(), 2, "{attack:?}");
    assert!(users[0].contains("Attack the draft."));
    assert_eq!(users[1], "Attack its sources.");
    assert_eq!(labels("attack"), ["Original", "Re-prompt 1"]);
}

/// Asks the graph's editor's way to start a run, and returns the answer.
async fn try_start(router: &Router, graph_id: &str) -> (StatusCode, Value) {
    call(
        router,
        as_editor(
            post(
                &format!("/api/graphs/{graph_id}/runs"),
                json!({"input": {"text": "x"}}),
            ),
            graph_id,
        ),
    )
    .await
}

#[tokio::test]
async fn structured_intents_steer_the_triage_example_through_the_api() {
    for database in support::databases().await {
        let (router, _) = app(&database, 0).await;
        let triage =
            serde_json::to_value(graph::starter::example("triage").unwrap().graph).unwrap();
        let graph_id = create_graph(&router, triage.clone()).await;
        let ran = |run: &Value, id: &str| {
            run["modules"]
                .get(id)
                .and_then(|module| module["activations"].as_array())
                .is_some_and(|activations| !activations.is_empty())
        };
        // The classifier's team (a handoff field held to three values)
        // chooses the cable.
        for (message, team) in [
            ("Billing: I was charged twice.", "billing"),
            ("The app crashes: a technical fault.", "technical"),
            ("Do you sell a team plan? Sales, please.", "sales"),
        ] {
            let run_id = start(&router, &graph_id, message).await;
            let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
            assert_eq!(run["status"], "completed", "{}: {run}", database.name);
            for other in ["billing", "technical", "sales", "general", "person"] {
                assert_eq!(ran(&run, other), other == team, "{message}: {other}");
            }
            let classify = &run["modules"]["classify"]["activations"][0];
            assert_eq!(classify["intent"]["intent"], "next");
            assert_eq!(
                classify["outputs"]["next_out"]["content"]["team"], team,
                "{classify}"
            );
        }
        // Escalate goes to the person.
        let run_id = start(&router, &graph_id, "Angry! [sim:intent escalate]").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert!(ran(&run, "person") && !ran(&run, "general"), "{run}");
        // An intent it does not allow fails fast; nothing takes the error,
        // so the run fails saying why.
        let run_id = start(&router, &graph_id, "[sim:intent abort]").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(run["status"], "failed");
        let error = run["error"].as_str().unwrap();
        assert!(
            error
                .contains("“abort” is not one of the intents it allows (it allows next, escalate)"),
            "{error}"
        );
        // A gate that cannot work is refused before the run starts.
        let mut broken = triage;
        broken["modules"][1]["config"]["intent_gate"]["allowed_intents"] = json!([]);
        let graph_id = create_graph(&router, broken).await;
        let (status, body) = try_start(&router, &graph_id).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(
            body.to_string().contains("validation.intent_gate_invalid"),
            "{body}"
        );
    }
}

#[tokio::test]
async fn conditions_on_cables_route_a_run_and_the_run_record_says_which_way() {
    for database in support::databases().await {
        let (router, _) = app(&database, 0).await;
        let branch = |id: &str, to: &str, condition: Option<&str>| {
            let mut cable = json!({"id": id, "from": {"module": "m2", "port": "data_out"}, "to": {"module": to, "port": "data_in"}});
            if let Some(condition) = condition {
                cable["condition"] = json!(condition);
            }
            cable
        };
        let output = |id: &str, label: &str| json!({"id": id, "kind": "step.output", "label": label, "position": {"x": 600, "y": 0}, "config": {}});
        let document = json!({
            "name": "Triage by condition",
            "modules": [
                {"id": "m1", "kind": "step.input", "label": "Request", "position": {"x": 0, "y": 0}, "config": {}},
                {"id": "m2", "kind": "step.agent_task", "label": "Classify", "position": {"x": 300, "y": 0},
                 "config": {"instruction": "Classify: {{ input }}", "agent_config": {"provider": "sim"}}},
                output("m3", "Sales"), output("m4", "Support"), output("m5", "Other")
            ],
            "cables": [
                {"id": "c1", "from": {"module": "m1", "port": "data_out"}, "to": {"module": "m2", "port": "data_in"}},
                branch("c2", "m3", Some("get('$.output.intent') == 'sales'")),
                branch("c3", "m4", Some("get('$.output.intent') == 'support'")),
                branch("c4", "m5", None)
            ]
        });
        let graph_id = create_graph(&router, document).await;
        // The run input steers the simulated classifier (it reaches the
        // prompt through {{ input }}).
        let run_id = start(&router, &graph_id, "[sim:reply {\"intent\": \"sales\"}]").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(run["status"], "completed", "{}: {run}", database.name);
        let ran = |id: &str| {
            run["modules"]
                .get(id)
                .and_then(|module| module["activations"].as_array())
                .is_some_and(|activations| !activations.is_empty())
        };
        assert!(ran("m3"), "{}", database.name);
        assert!(!ran("m4") && !ran("m5"), "{}", database.name);
        let routes = &run["modules"]["m2"]["activations"][0]["routes"];
        assert_eq!(routes[0]["port"], "data_out", "{}: {run}", database.name);
        assert_eq!(routes[0]["cable_id"], "c2");
        assert!(
            routes[0]["reason"]
                .as_str()
                .unwrap()
                .starts_with("condition 1 held")
        );

        // Anything else goes to the catch-all.
        let run_id = start(&router, &graph_id, "[sim:reply {\"intent\": \"legal\"}]").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(
            run["modules"]["m2"]["activations"][0]["routes"][0]["cable_id"], "c4",
            "{}",
            database.name
        );

        // A condition that does not read is refused before the run starts.
        let broken = json!({
            "name": "Broken condition",
            "modules": [
                {"id": "m1", "kind": "step.input", "label": "Request", "position": {"x": 0, "y": 0}, "config": {}},
                {"id": "m2", "kind": "step.agent_task", "label": "Classify", "position": {"x": 300, "y": 0}, "config": {}},
                output("m3", "Sales")
            ],
            "cables": [
                {"id": "c1", "from": {"module": "m1", "port": "data_out"}, "to": {"module": "m2", "port": "data_in"}},
                branch("c2", "m3", Some("get('$.output.intent') = 'sales'"))
            ]
        });
        let graph_id = create_graph(&router, broken).await;
        let (status, body) = try_start(&router, &graph_id).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}: {body}",
            database.name
        );
        assert!(
            body.to_string().contains("validation.condition_invalid"),
            "{body}"
        );

        // A condition built to exhaust the stack (400 kB of nested
        // parentheses) is saved as text and refused, and the server lives.
        let deep = format!("{}true{}", "(".repeat(200_000), ")".repeat(200_000));
        let hostile = json!({
            "name": "Deep condition",
            "modules": [
                {"id": "m1", "kind": "step.input", "label": "Request", "position": {"x": 0, "y": 0}, "config": {}},
                output("m3", "Sales")
            ],
            "cables": [
                {"id": "c1", "from": {"module": "m1", "port": "data_out"}, "to": {"module": "m3", "port": "data_in"}, "condition": deep}
            ]
        });
        let graph_id = create_graph(&router, hostile).await;
        let (status, body) = try_start(&router, &graph_id).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            database.name
        );
        assert!(body.to_string().contains("too long"), "{}", database.name);
        assert!(
            body.to_string().len() < 10_000,
            "the refusal quotes the condition, not all of it"
        );
    }
}
