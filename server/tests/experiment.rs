//! Experiments through the HTTP API: the "Which prompt is better?" example
//! runs three variants of a chain and a judge; the record carries the
//! comparison and the judge's scores, the run page shows it, the event
//! stream names each variant, and a broken experiment is refused before it
//! starts.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use axum::http::StatusCode;
use graph::Limits;
use serde_json::{Value, json};
use support::{as_editor, call, create_graph, get, start, wait_for};

#[tokio::test]
async fn which_prompt_is_better_runs_three_variants_and_a_judge_through_the_api() {
    for database in support::databases().await {
        let state = support::state(&database, Limits::default()).await;
        let router = server::router::router(state);
        let example = graph::starter::example("which-prompt-is-better").unwrap();
        let document = serde_json::to_value(example.graph).unwrap();
        let graph_id = create_graph(&router, document.clone()).await;
        let run_id = start(&router, &graph_id, "Why tide tables matter").await;
        let run = wait_for(&router, &run_id, &["completed", "failed"]).await;
        assert_eq!(run["status"], "completed", "{}: {run}", database.name);

        let draft = &run["modules"]["draft"]["activations"][0];
        let comparison = &draft["outputs"]["comparison_out"];
        assert_eq!(
            comparison["content_type"],
            "application/vnd.patchbay.comparison+json"
        );
        let variants = comparison["content"]["variants"].as_array().unwrap();
        let names: Vec<&str> = variants
            .iter()
            .map(|variant| variant["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["As written", "Concrete", "Devil's advocate"]);
        for variant in variants {
            assert_eq!(variant["status"], "completed", "{variant}");
            assert_eq!(variant["data_out"]["response_count"], 3, "{variant}");
        }
        // Each response is kept, labelled with its variant.
        let labels: Vec<&str> = draft["responses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|response| response["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels.len(), 9);
        assert!(
            labels.contains(&"Devil's advocate · Re-prompt 2"),
            "{labels:?}"
        );

        let judge = &run["modules"]["judge"]["activations"][0];
        let scores = &judge["outputs"]["scores_out"]["content"];
        assert_eq!(scores["variants"].as_array().unwrap().len(), 3);
        let winner = scores["winner"].as_str().unwrap();
        assert!(names.contains(&winner));
        let verdict = run["state"]["Verdict.output"].as_str().unwrap();
        assert!(verdict.contains(&format!("Winner: {winner}")), "{verdict}");

        // The log names each variant as it starts and ends.
        let events = events_of(&router, &run_id).await;
        let count = |name: &str| events.iter().filter(|line| line.as_str() == name).count();
        assert_eq!(count("module.variant_started"), 3);
        assert_eq!(count("module.variant_finished"), 3);

        // A variant with no name, and one of the same name, are refused.
        let mut broken = document;
        broken["modules"][1]["config"]["variants"] =
            json!([{"name": "A"}, {"name": "A"}, {"name": ""}]);
        let broken_id = create_graph(&router, broken).await;
        let (status, body) = call(
            &router,
            as_editor(
                support::post(&format!("/api/graphs/{broken_id}/runs"), json!({})),
                &broken_id,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let codes: Vec<Value> = body["error"]["details"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|finding| finding["code"].clone())
            .collect();
        assert_eq!(
            codes,
            [
                json!("validation.experiment_invalid"),
                json!("validation.experiment_invalid")
            ]
        );
    }
}

/// The event names of a finished run's stream, in order.
async fn events_of(router: &axum::Router, run_id: &str) -> Vec<String> {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let response = router
        .clone()
        .oneshot(get(&format!("/api/runs/{run_id}/events")))
        .await
        .unwrap();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|line| line.strip_prefix("event: "))
        .map(str::to_owned)
        .collect()
}
