//! Starting runs on this server: a snapshot stored, the engine spawned with
//! a recorder on the database, the run registered in the hub while it lasts.

pub mod hub;
pub mod interrupted;
pub mod recorder;

use std::sync::Arc;

use engine::{RunInput, RunSpec};
use graph::Graph;

pub use crate::capability::{is_run_id, new_run_id};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::NewRun;
use recorder::StoreRecorder;

/// Stores the run (queued) and starts it; returns its id.
pub async fn start_run(
    state: &AppState,
    graph: Graph,
    graph_id: Option<&str>,
    graph_revision: Option<i64>,
    input: RunInput,
) -> Result<String, ApiError> {
    let run_id = new_run_id();
    let snapshot = graph
        .to_json()
        .map_err(|error| ApiError::Internal(error.to_string()))?;
    let input_json =
        serde_json::to_string(&input).map_err(|error| ApiError::Internal(error.to_string()))?;
    state
        .store
        .insert_run(NewRun {
            id: &run_id,
            graph_id,
            graph_revision,
            snapshot: &snapshot,
            input: &input_json,
        })
        .await?;
    let (events, cancel) = state.hub.register(&run_id);
    let recorder = Arc::new(StoreRecorder {
        store: state.store.clone(),
        events,
    });
    let engine = state.engine.clone();
    let hub = state.hub.clone();
    let spec = RunSpec {
        run_id: run_id.clone(),
        graph,
        input,
    };
    tokio::spawn(async move {
        let run_id = spec.run_id.clone();
        let outcome = engine::execute(&engine, spec, recorder, cancel).await;
        tracing::info!(run = %run_id, status = outcome.status.as_str(), activations = outcome.activations, "run ended");
        hub.finish(&run_id);
    });
    Ok(run_id)
}
