//! The graphs API (PRODUCT §6): create, get, save with `If-Match`, fork,
//! and validate a posted document.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header::{CONTENT_TYPE, ETAG, IF_MATCH, LOCATION};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use graph::{Graph, has_errors, validate};
use wire::graphs::{GraphCreated, GraphSaved, ValidationReport};

use crate::body::JsonBody;
use crate::capability::{
    hash_token, is_graph_id, new_edit_token, new_graph_id, require_edit_token,
};
use crate::error::ApiError;
use crate::room::apply::{Author, Base, apply_change};
use crate::state::AppState;
use crate::store::NewGraph;
use crate::store::{Keep, StoredGraph};

/// A graph just created (or forked), with the edit token shown this once.
pub struct Created {
    pub id: String,
    pub edit_token: String,
}

/// Stores `graph` under a fresh id and token at revision 1.
pub async fn create_graph(
    state: &AppState,
    mut graph: Graph,
    forked_from: Option<&str>,
) -> Result<Created, ApiError> {
    let id = new_graph_id();
    let edit_token = new_edit_token();
    graph.id = Some(id.clone());
    graph.revision = 1;
    graph::frame::check(&graph)?;
    let schedules =
        crate::triggers::schedule_rows(&crate::triggers::read(&graph)?, engine::now_millis());
    let document = graph
        .to_json()
        .map_err(|error| ApiError::Internal(error.to_string()))?;
    state
        .store
        .insert_graph(NewGraph {
            id: &id,
            edit_token_hash: &hash_token(&edit_token),
            name: &graph.name,
            document: &document,
            forked_from,
            schedules: &schedules,
        })
        .await?;
    Ok(Created { id, edit_token })
}

fn created_response(state: &AppState, created: Created, graph: &Graph) -> Response {
    let findings = validate(graph, &state.validation_context());
    let location = format!("/g/{}", created.id);
    let body = GraphCreated {
        edit_url: format!("{location}#edit={}", created.edit_token),
        id: created.id,
        revision: 1,
        edit_token: created.edit_token,
        url: location.clone(),
        findings,
    };
    (StatusCode::CREATED, [(LOCATION, location)], Json(body)).into_response()
}

pub async fn create(State(state): State<AppState>, body: JsonBody) -> Result<Response, ApiError> {
    let graph = body.into_graph(&state.settings.limits)?;
    let created = create_graph(&state, graph.clone(), None).await?;
    Ok(created_response(&state, created, &graph))
}

async fn stored(state: &AppState, id: &str) -> Result<StoredGraph, ApiError> {
    if !is_graph_id(id) {
        return Err(ApiError::GraphNotFound);
    }
    state.store.graph(id).await?.ok_or(ApiError::GraphNotFound)
}

pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let graph = stored(&state, &id).await?;
    Ok((
        [
            (CONTENT_TYPE, "application/json".to_owned()),
            (ETAG, format!("\"{}\"", graph.revision)),
        ],
        graph.document,
    )
        .into_response())
}

/// The revision an `If-Match` names: `7`, `"7"` or `W/"7"`.
fn expected_revision(headers: &HeaderMap) -> Result<i64, ApiError> {
    let value = headers.get(IF_MATCH).ok_or(ApiError::RevisionRequired)?;
    let text = value.to_str().unwrap_or_default().trim();
    text.trim_start_matches("W/")
        .trim_matches('"')
        .parse::<i64>()
        .map_err(|_| ApiError::RevisionMalformed(text.to_owned()))
}

pub async fn update(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: JsonBody,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "saving").await?;
    let expected = expected_revision(&headers)?;
    let graph = body.into_graph(&state.settings.limits)?;
    let current = stored(&state, &id).await?;
    if current.revision != expected {
        return Err(ApiError::RevisionConflict {
            current: current.revision,
        });
    }
    // A save is a change like an editor's (room_api.rs): open editors see
    // it as it is, and it is kept in the history whatever the last
    // revision's age. Unlike an editor's it is not moved along: it is
    // stored only on the revision `If-Match` names, or refused.
    let before = Graph::load(&current.document)
        .ok()
        .and_then(|before| serde_json::to_value(before).ok())
        .unwrap_or_default();
    let after =
        serde_json::to_value(&graph).map_err(|error| ApiError::Internal(error.to_string()))?;
    let accepted = apply_change(
        &state,
        &id,
        Author {
            connection: "",
            name: SAVED_BY,
            keep: Keep::Always,
        },
        Base::Exactly(expected),
        &graph::edits::diff(&before, &after),
    )
    .await?;
    let findings = validate(&graph, &state.validation_context());
    Ok((
        [(ETAG, format!("\"{}\"", accepted.revision))],
        Json(GraphSaved {
            id,
            revision: accepted.revision,
            has_errors: has_errors(&findings),
            findings,
        }),
    )
        .into_response())
}

/// Who a save through the API is, to the people editing the graph.
const SAVED_BY: &str = "A save through the API";

/// Anyone who can view a graph may fork it: a copy under a new id and token.
pub async fn fork(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let original = stored(&state, &id).await?;
    let mut graph = Graph::load(&original.document)
        .map_err(|error| ApiError::Internal(format!("stored graph {id} does not load: {error}")))?;
    // Two graphs of one name in a person's list could not be told apart.
    graph.name = graph::names::fork_name(&graph.name);
    // A copy's schedules and webhooks wait for its own editors to start
    // them, or the original's schedule would fire twice.
    graph::triggers::pause_all(&mut graph);
    let created = create_graph(&state, graph.clone(), Some(&id)).await?;
    Ok(created_response(&state, created, &graph))
}

pub async fn validate_document(
    State(state): State<AppState>,
    body: JsonBody,
) -> Result<Response, ApiError> {
    let graph = body.into_graph(&state.settings.limits)?;
    let findings = validate(&graph, &state.validation_context());
    Ok(Json(ValidationReport {
        has_errors: has_errors(&findings),
        findings,
    })
    .into_response())
}
