//! A graph's history (PRODUCT §6): `GET /api/graphs/{id}/revisions` lists
//! the revisions it keeps, newest first, a page at a time, and
//! `GET /api/graphs/{id}/revisions/{revision}` returns one document. Only
//! the graph's editors may read them: a past revision may hold what an
//! editor took out (a pasted key, a draft), and a view link shows the graph
//! as it is now. A run's page shows the graph as that run ran it from the
//! run's own snapshot, not from here.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::http::header::{CONTENT_TYPE, ETAG};
use axum::response::{IntoResponse, Response};
use wire::graphs::{RevisionList, RevisionSummary};

use crate::capability::require_edit_token;
use crate::error::ApiError;
use crate::state::AppState;

/// A page of the history when the request names no `limit`.
const DEFAULT_PAGE: i64 = 50;
/// The most one page may hold.
const MAX_PAGE: i64 = 200;

/// `before` and `limit` from the address, each a whole number.
fn page_query(
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<(Option<i64>, i64), ApiError> {
    let Query(pairs) = query.map_err(|rejection| ApiError::RevisionsQuery {
        path: String::new(),
        message: rejection.body_text(),
    })?;
    let mut before = None;
    let mut limit = DEFAULT_PAGE;
    for (name, value) in pairs {
        let number = |range: std::ops::RangeInclusive<i64>| {
            value
                .parse::<i64>()
                .ok()
                .filter(|number| range.contains(number))
                .ok_or_else(|| ApiError::RevisionsQuery {
                    path: name.clone(),
                    message: format!(
                        "a whole number from {} to {}, not \"{value}\"",
                        range.start(),
                        range.end()
                    ),
                })
        };
        match name.as_str() {
            "before" => before = Some(number(1..=i64::MAX)?),
            "limit" => limit = number(1..=MAX_PAGE)?,
            _ => {
                return Err(ApiError::RevisionsQuery {
                    message: "only `before` and `limit` may be given".to_owned(),
                    path: name,
                });
            }
        }
    }
    Ok((before, limit))
}

pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Json<RevisionList>, ApiError> {
    require_edit_token(&state.store, &id, &headers, "reading the graph's history").await?;
    let (before, limit) = page_query(query)?;
    let current = state
        .store
        .graph(&id)
        .await?
        .ok_or(ApiError::GraphNotFound)?
        .revision;
    let (kept, kept_bytes) = state.store.revisions_kept(&id).await?;
    let stored = state.store.revisions(&id, before, limit).await?;
    let next_before = (stored.len() as i64 == limit)
        .then(|| stored.last().map(|revision| revision.revision))
        .flatten()
        .filter(|&oldest| oldest > 1);
    Ok(Json(RevisionList {
        current,
        kept,
        kept_bytes,
        revisions: stored
            .into_iter()
            .map(|revision| RevisionSummary {
                revision: revision.revision,
                saved_at: revision.saved_at,
                size_bytes: revision.size_bytes,
                origin: revision.origin,
                summary: revision.summary,
            })
            .collect(),
        next_before,
    }))
}

pub async fn get(
    State(state): State<AppState>,
    Path((id, revision)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "reading the graph's history").await?;
    let number = revision
        .parse::<i64>()
        .map_err(|_| ApiError::RevisionNotFound(revision.clone()))?;
    let document = state
        .store
        .graph_revision(&id, number)
        .await?
        .ok_or(ApiError::RevisionNotFound(revision))?;
    Ok((
        [
            (CONTENT_TYPE, "application/json".to_owned()),
            (ETAG, format!("\"{number}\"")),
        ],
        document,
    )
        .into_response())
}
