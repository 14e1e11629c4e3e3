//! `GET /api/graphs/{id}/estimate`: what a run of the graph may cost,
//! from its last finished runs — each module's average spend per run —
//! for the run dialog to show before a run starts. Only the graph's
//! editor may ask, as only the editor may list its runs.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use graph::Graph;
use wire::activation::ActivationRecord;
use wire::cost::{Estimate, ModuleEstimate};

use crate::capability::require_edit_token;
use crate::error::ApiError;
use crate::state::AppState;

/// How many finished runs an estimate goes by.
const RUNS: usize = 10;

pub async fn estimate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "estimating a run's cost").await?;
    let stored = state
        .store
        .graph(&id)
        .await?
        .ok_or(ApiError::GraphNotFound)?;
    let graph = Graph::load(&stored.document)
        .map_err(|error| ApiError::Internal(format!("stored graph {id}: {error}")))?;
    let runs: Vec<_> = state
        .store
        .runs_for_graph(&id, 100)
        .await?
        .into_iter()
        .filter(|run| run.status == "completed")
        .take(RUNS)
        .collect();
    // Per module: what it spent in each run; `None` once a call had no price.
    let mut spent: BTreeMap<String, Option<f64>> = BTreeMap::new();
    for run in &runs {
        for text in state.store.activations(&run.id).await? {
            let Ok(record) = serde_json::from_str::<ActivationRecord>(&text) else {
                continue;
            };
            if record.receipt.is_none() && record.responses.is_empty() {
                continue;
            }
            let entry = spent.entry(record.module_id.clone()).or_insert(Some(0.0));
            *entry = wire::cost::add(*entry, record.cost());
        }
    }
    let count = runs.len() as f64;
    let modules = graph
        .modules
        .iter()
        .filter_map(|module| {
            let total = spent.get(&module.id)?;
            Some(ModuleEstimate {
                module_id: module.id.clone(),
                label: module.display_label().to_owned(),
                average: total.map(|total| total / count),
            })
        })
        .collect();
    Ok(Json(Estimate {
        runs: u32::try_from(runs.len()).unwrap_or(u32::MAX),
        modules,
    })
    .into_response())
}
