//! `POST /api/graphs/summaries`: what the home page lists. A browser keeps
//! the edit tokens of its graphs (never the server: it has only their
//! hashes), so it sends them, and gets back each graph's name, last edit,
//! last run and the run waiting for a person, if one does — only for the
//! graphs whose token it holds. Everything
//! else, whether gone, never there or held with a wrong token, comes back
//! as `unknown`, with nothing about it. It changes nothing.

use std::collections::{HashMap, HashSet};

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use wire::RunStatus;
use wire::graphs::{GraphSummary, LastRun, Summaries, SummariesRequest};

use crate::body::JsonBody;
use crate::capability::{is_graph_id, token_matches};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::GraphHeading;

/// The most graphs one request may ask about. A browser holding more asks
/// in several requests.
pub const MAX_GRAPHS: usize = 500;

fn read_request(body: &[u8]) -> Result<SummariesRequest, ApiError> {
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(body)).map_err(
        |error| ApiError::SummariesRequest {
            path: error.path().to_string(),
            message: error.into_inner().to_string(),
        },
    )
}

pub async fn summaries(
    State(state): State<AppState>,
    body: JsonBody,
) -> Result<Response, ApiError> {
    let request = read_request(&body.0)?;
    if request.graphs.len() > MAX_GRAPHS {
        return Err(ApiError::TooManyGraphs { max: MAX_GRAPHS });
    }
    let mut asked: Vec<&str> = Vec::new();
    let mut seen = HashSet::new();
    for held in &request.graphs {
        if seen.insert(held.id.as_str()) {
            asked.push(&held.id);
        }
    }
    let well_formed: Vec<&str> = asked.iter().copied().filter(|id| is_graph_id(id)).collect();
    let headings = state.store.graph_headings(&well_formed).await?;
    let by_id: HashMap<&str, &GraphHeading> = headings
        .iter()
        .map(|heading| (heading.id.as_str(), heading))
        .collect();
    // The same constant-time check as every capability; a graph listed
    // twice is granted if either token is its own.
    let granted: HashSet<&str> = request
        .graphs
        .iter()
        .filter(|held| {
            by_id
                .get(held.id.as_str())
                .is_some_and(|heading| token_matches(&held.edit_token, &heading.edit_token_hash))
        })
        .map(|held| held.id.as_str())
        .collect();
    let mut listed: Vec<&GraphHeading> = headings
        .iter()
        .filter(|heading| granted.contains(heading.id.as_str()))
        .collect();
    listed.sort_by(|left, right| {
        right
            .updated_at
            .cmp(&left.updated_at)
            .then_with(|| left.id.cmp(&right.id))
    });
    let mut graphs = Vec::with_capacity(listed.len());
    for heading in listed {
        let last_run = match state.store.last_run(&heading.id).await? {
            Some(run) => Some(LastRun {
                status: RunStatus::parse(&run.status).ok_or_else(|| {
                    ApiError::Internal(format!(
                        "run {} has an unknown status {}",
                        run.id, run.status
                    ))
                })?,
                id: run.id,
                created_at: run.created_at,
            }),
            None => None,
        };
        let waiting_run = state.store.waiting_run(&heading.id).await?;
        graphs.push(GraphSummary {
            id: heading.id.clone(),
            name: heading.name.clone(),
            revision: heading.revision,
            updated_at: heading.updated_at,
            last_run,
            waiting_run,
        });
    }
    let unknown = asked
        .into_iter()
        .filter(|id| !granted.contains(id))
        .map(str::to_owned)
        .collect();
    Ok(Json(Summaries { graphs, unknown }).into_response())
}
