//! `GET /metrics` (PRODUCT §6): what a run here did, in Prometheus' text
//! format, counted from its events; with an access key, only for the key.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use graph::Limits;
use graph::starter::starter_graph;
use http_body_util::BodyExt;
use support::{create_graph, start, wait_for};
use tower::ServiceExt;

async fn scrape(router: &axum::Router, request: Request<Body>) -> (StatusCode, String) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

fn metrics_request(key: Option<(&str, &str)>) -> Request<Body> {
    let mut request = Request::builder().uri("/metrics");
    if let Some((name, value)) = key {
        request = request.header(name, value);
    }
    request.body(Body::empty()).unwrap()
}

#[tokio::test]
async fn a_run_is_counted_by_status_module_kind_model_and_duration() {
    for database in support::databases().await {
        let state = support::state(&database, Limits::default()).await;
        let router = server::router::router(state);
        let graph_id = create_graph(&router, serde_json::to_value(starter_graph()).unwrap()).await;
        let run_id = start(&router, &graph_id, "why metrics matter").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(run["status"], "completed");

        let (status, text) = scrape(&router, metrics_request(None)).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        let name = database.name;
        for line in [
            "patchbay_runs_started_total 1",
            "patchbay_runs_ended_total{status=\"completed\"} 1",
            "patchbay_run_duration_seconds_count{status=\"completed\"} 1",
            "patchbay_activations_ended_total{kind=\"step.agent_task\",status=\"completed\"} 1",
            "patchbay_activations_ended_total{kind=\"step.output\",status=\"completed\"} 1",
            "patchbay_activation_duration_seconds_count{kind=\"step.agent_task\"} 1",
            "patchbay_runs_waiting 0",
            "patchbay_runs_taken_over_total 0",
        ] {
            assert!(text.contains(line), "{name}: no {line:?} in\n{text}");
        }
        // The simulated model's tokens, by the module's provider and model.
        let tokens_in = text
            .lines()
            .find(|line| {
                line.starts_with("patchbay_tokens_total{") && line.contains("direction=\"in\"")
            })
            .unwrap_or_else(|| panic!("{name}: no tokens in\n{text}"));
        assert!(tokens_in.contains("provider=\"sim\""), "{tokens_in}");
        let count: u64 = tokens_in.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(count > 0, "{tokens_in}");
    }
}

#[tokio::test]
async fn with_an_access_key_the_metrics_are_the_keys_alone() {
    let database = support::databases().await.remove(0);
    let mut settings = support::settings(&database, Limits::default());
    settings.access.key = Some("a-key-of-sixteen-or-more".to_owned());
    let router = server::router::router(server::build_state(settings).await.unwrap());
    let (status, _) = scrape(&router, metrics_request(None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = scrape(
        &router,
        metrics_request(Some(("x-patchbay-access-key", "a-forged-key-of-sixteen"))),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, text) = scrape(
        &router,
        metrics_request(Some((
            header::AUTHORIZATION.as_str(),
            "Bearer a-key-of-sixteen-or-more",
        ))),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("patchbay_runs_started_total 0"), "{text}");
    let (status, _) = scrape(
        &router,
        metrics_request(Some(("x-patchbay-access-key", "a-key-of-sixteen-or-more"))),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}
