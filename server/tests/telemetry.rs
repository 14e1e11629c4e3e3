//! Traces to the operator's collector (PRODUCT §9), read by an OTLP/HTTP
//! collector on loopback that decodes what it is sent with the protocol's
//! own messages: a run's spans with the GenAI attributes under one trace,
//! the configured header sent, no text unless `capture_content`; and a
//! collector that is down costs the run nothing and the dropped spans are
//! counted in `/metrics`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::routing::post;
use graph::starter::starter_graph;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::Value;
use support::{call, create_graph, get, start, wait_for};

#[derive(Default)]
struct Collected {
    spans: Vec<Span>,
    headers: Vec<HeaderMap>,
    bodies: Vec<Vec<u8>>,
}

/// A collector on loopback: its address and what it was sent.
async fn collector() -> (String, Arc<Mutex<Collected>>) {
    let collected = Arc::new(Mutex::new(Collected::default()));
    let kept = Arc::clone(&collected);
    let app = Router::new().route(
        "/v1/traces",
        post(move |headers: HeaderMap, body: Bytes| {
            let kept = Arc::clone(&kept);
            async move {
                let request = ExportTraceServiceRequest::decode(body.as_ref()).unwrap();
                let mut kept = kept.lock().unwrap();
                kept.headers.push(headers);
                kept.bodies.push(body.to_vec());
                for resource in request.resource_spans {
                    for scope in resource.scope_spans {
                        kept.spans.extend(scope.spans);
                    }
                }
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}"), collected)
}

fn attribute(span: &Span, key: &str) -> Option<Any> {
    span.attributes
        .iter()
        .find(|pair| pair.key == key)
        .and_then(|pair| pair.value.clone()?.value)
}

/// Waits for the spans of a finished run (the run's own span comes last).
async fn run_spans(collected: &Mutex<Collected>) -> Vec<Span> {
    for _ in 0..100 {
        let spans = collected.lock().unwrap().spans.clone();
        if spans.iter().any(|span| span.name.starts_with("run ")) {
            return spans;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the collector got no run span within 10 s");
}

#[tokio::test]
async fn a_run_is_one_trace_of_spans_with_the_genai_attributes() {
    let (endpoint, collected) = collector().await;
    let config = format!(
        "[telemetry]\notlp_endpoint = \"{endpoint}\"\nheaders_env = {{ \"x-collector-home\" = \"HOME\" }}\n"
    );
    let (router, _folder, _database) = support::router_with_config(&config).await;
    let graph = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
    let run_id = start(&router, &graph, "Tides").await;
    wait_for(&router, &run_id, &["completed"]).await;
    let spans = run_spans(&collected).await;

    let run = spans
        .iter()
        .find(|span| span.name.starts_with("run "))
        .unwrap();
    assert!(run.parent_span_id.is_empty(), "the run's span is the root");
    assert!(
        spans.iter().all(|span| span.trace_id == run.trace_id),
        "one trace"
    );
    let activations: Vec<&Span> = spans
        .iter()
        .filter(|span| span.name.starts_with("activation "))
        .collect();
    assert_eq!(activations.len(), 3, "input, agent task, output");
    assert!(
        activations
            .iter()
            .all(|span| span.parent_span_id == run.span_id)
    );
    let draft = activations
        .iter()
        .find(|span| {
            attribute(span, "patchbay.module.kind")
                == Some(Any::StringValue("step.agent_task".to_owned()))
        })
        .expect("the agent task's activation");
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|span| span.name.starts_with("chat "))
        .collect();
    assert_eq!(chats.len(), 3, "the instruction and two re-prompts");
    for chat in &chats {
        assert_eq!(chat.parent_span_id, draft.span_id);
        assert_eq!(
            attribute(chat, "gen_ai.operation.name"),
            Some(Any::StringValue("chat".to_owned()))
        );
        assert_eq!(
            attribute(chat, "gen_ai.request.model"),
            Some(Any::StringValue("sim-1".to_owned()))
        );
        assert!(
            matches!(attribute(chat, "gen_ai.usage.input_tokens"), Some(Any::IntValue(tokens)) if tokens > 0)
        );
        assert!(chat.end_time_unix_nano >= chat.start_time_unix_nano);
    }
    // The header the configuration names, from the environment.
    let home = std::env::var("HOME").unwrap();
    let kept = collected.lock().unwrap();
    assert!(
        kept.headers
            .iter()
            .all(|headers| headers["x-collector-home"] == home.as_str())
    );
    // No text of the run without capture_content.
    let sent = kept.bodies.concat();
    assert!(!String::from_utf8_lossy(&sent).contains("Simulated reply"));
    assert!(!String::from_utf8_lossy(&sent).contains("Tides"));
}

#[tokio::test]
async fn with_capture_content_the_replies_are_in_the_spans() {
    let (endpoint, collected) = collector().await;
    let config = format!("[telemetry]\notlp_endpoint = \"{endpoint}\"\ncapture_content = true\n");
    let (router, _folder, _database) = support::router_with_config(&config).await;
    let graph = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
    let run_id = start(&router, &graph, "Tides").await;
    wait_for(&router, &run_id, &["completed"]).await;
    let spans = run_spans(&collected).await;
    let said: Vec<String> = spans
        .iter()
        .filter_map(|span| match attribute(span, "gen_ai.output.messages") {
            Some(Any::StringValue(text)) => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(said[0].contains("Simulated reply"), "{said:?}");
}

#[tokio::test]
async fn a_collector_that_is_down_costs_the_run_nothing_and_is_counted() {
    // An address nothing listens on.
    let closed = {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap()
    };
    let config = format!("[telemetry]\notlp_endpoint = \"http://{closed}\"\n");
    let (router, _folder, _database) = support::router_with_config(&config).await;
    let graph = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
    let run_id = start(&router, &graph, "Tides").await;
    let run: Value = wait_for(&router, &run_id, &["completed", "failed"]).await;
    assert_eq!(run["status"], "completed");
    for _ in 0..100 {
        let response = tower::ServiceExt::oneshot(router.clone(), get("/metrics"))
            .await
            .unwrap();
        let bytes = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let dropped = text
            .lines()
            .find_map(|line| line.strip_prefix("patchbay_spans_dropped_total "))
            .and_then(|count| count.trim().parse::<u64>().ok())
            .unwrap_or(0);
        if dropped >= 5 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, metrics) = call(&router, get("/metrics")).await;
    panic!("the dropped spans were not counted: {metrics}");
}
