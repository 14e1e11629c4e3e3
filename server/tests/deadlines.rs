//! Nothing holds a run for ever: a provider that keeps trickling words
//! fails its module at the provider's deadline, one that goes silent at its
//! read timeout, each saying that it timed out and which provider; and a
//! run as a whole fails at its maximum duration.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::response::Response;
use graph::starter::starter_graph;
use serde_json::{Value, json};
use support::{create_graph, router_with_config, start, wait_for};

/// An OpenAI-compatible server that answers every chat completion with a
/// stream that sends a word every `every` (or, with `None`, nothing after
/// its first word) and never ends.
async fn endless_provider(every: Option<Duration>) -> String {
    let app = Router::new().fallback(move || async move {
        let chunk = |word: &str| {
            let data = json!({
                "id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": null}],
            });
            Ok::<Bytes, Infallible>(Bytes::from(format!("data: {data}\n\n")))
        };
        let words = futures::stream::unfold(0_u64, move |sent| async move {
            if sent > 0 {
                match every {
                    Some(pause) => tokio::time::sleep(pause).await,
                    None => std::future::pending::<()>().await,
                }
            }
            Some((chunk("more "), sent + 1))
        });
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(words))
            .unwrap()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}/v1")
}

/// The starter graph with its agent task on provider `provider`.
fn starter_on(provider: &str) -> Value {
    let mut graph = serde_json::to_value(starter_graph()).unwrap();
    graph["modules"][1]["config"]["agent_config"] = json!({"provider": provider, "model": "m"});
    graph
}

async fn failure_of_the_draft(router: &Router, graph: Value) -> (String, Duration) {
    let graph_id = create_graph(router, graph).await;
    let began = Instant::now();
    let run_id = start(router, &graph_id, "the moon").await;
    let run = wait_for(router, &run_id, &["completed", "failed", "cancelled"]).await;
    let took = began.elapsed();
    assert_eq!(run["status"], "failed", "{run}");
    let error = run["modules"]["m2"]["activations"][0]["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (error, took)
}

#[tokio::test]
async fn a_provider_that_keeps_trickling_fails_the_module_at_its_deadline() {
    let base = endless_provider(Some(Duration::from_millis(200))).await;
    let (router, _folder, _database) = router_with_config(&format!(
        "[[providers]]\nid = \"trickle\"\nkind = \"openai\"\nbase_url = \"{base}\"\nmodels = [\"m\"]\ntimeout_seconds = 1\ndeadline_seconds = 2\n"
    ))
    .await;
    let (error, took) = failure_of_the_draft(&router, starter_on("trickle")).await;
    assert!(
        error.contains("provider \"trickle\" timed out after 2 s"),
        "{error}"
    );
    // One attempt, not retried: well within twice the deadline.
    assert!(took < Duration::from_secs(4), "{took:?}");
}

#[tokio::test]
async fn a_provider_that_goes_silent_fails_at_its_read_timeout_saying_so() {
    let base = endless_provider(None).await;
    let (router, _folder, _database) = router_with_config(&format!(
        "[[providers]]\nid = \"silent\"\nkind = \"openai\"\nbase_url = \"{base}\"\nmodels = [\"m\"]\ntimeout_seconds = 1\ndeadline_seconds = 60\n"
    ))
    .await;
    let (error, _) = failure_of_the_draft(&router, starter_on("silent")).await;
    assert!(error.contains("provider \"silent\""), "{error}");
    assert!(
        error.contains("timed out after 1 s waiting for the rest of the reply"),
        "{error}"
    );
    assert!(!error.contains("error sending request"), "{error}");
}

#[tokio::test]
async fn a_run_fails_at_its_maximum_duration() {
    // The simulator writes a word every 200 ms: the draft alone takes longer.
    let (router, _folder, _database) =
        router_with_config("[sim]\nlatency_ms_per_token = 200\n[engine]\nmax_run_seconds = 1\n")
            .await;
    let graph_id = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
    let run_id = start(&router, &graph_id, "the moon").await;
    let run = wait_for(&router, &run_id, &["completed", "failed", "cancelled"]).await;
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        run["error"]
            .as_str()
            .unwrap()
            .contains("the run timed out after 1 s, its maximum duration"),
        "{run}"
    );
    // What was running was stopped and kept.
    assert_eq!(
        run["modules"]["m2"]["activations"][0]["status"],
        "cancelled"
    );
}
