//! `GET /metrics` (PRODUCT §6): Prometheus' text format. With an access
//! key configured it needs the key, in `X-Patchbay-Access-Key` or as a
//! bearer token (what Prometheus' `authorization` setting sends): the
//! figures say what a server runs, which is the operator's to see.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::access::KEY_HEADER;
use crate::capability::{bearer_token, hash_token, token_matches};
use crate::error::ApiError;
use crate::state::AppState;

pub async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(key) = &state.settings.access.key {
        let sent = headers
            .get(KEY_HEADER)
            .and_then(|value| value.to_str().ok())
            .or_else(|| bearer_token(&headers));
        match sent {
            None => return ApiError::AccessKeyRequired.into_response(),
            Some(sent) if !token_matches(sent.trim(), &hash_token(key)) => {
                return ApiError::AccessKeyInvalid.into_response();
            }
            Some(_) => {}
        }
    }
    let waiting = match state.store.count_waiting_runs().await {
        Ok(count) => count,
        Err(error) => {
            tracing::warn!(%error, "metrics: the runs waiting could not be counted");
            -1
        }
    };
    let backlog = i64::try_from(state.store.peak_write_backlog()).unwrap_or(i64::MAX);
    let connections = i64::try_from(state.rooms.connections()).unwrap_or(i64::MAX);
    match state.runner.metrics.encode(waiting, backlog, connections) {
        Ok(text) => (
            StatusCode::OK,
            [(
                CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}
