//! `GET /api/health` (PRODUCT §6): `200` when this process's database
//! answers and has every migration this build carries, `503` when not,
//! for load balancers; open without the access key, as it says nothing
//! of any graph. Why the database did not answer goes to the log, not to
//! the answer (it may name the database's address), once each time the
//! answer changes: a probe every few seconds would otherwise fill it.

use std::sync::atomic::{AtomicBool, Ordering};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use wire::health::Health;

use crate::state::AppState;
use crate::store::StoreHealth;

/// Whether the last answer was unavailable.
static WAS_UNAVAILABLE: AtomicBool = AtomicBool::new(false);

pub async fn health(State(state): State<AppState>) -> Response {
    let found = state.store.health().await;
    let unavailable = !found.is_ok();
    if WAS_UNAVAILABLE.swap(unavailable, Ordering::Relaxed) != unavailable {
        said_in_the_log(&found);
    }
    let health = Health::of(found.problem.is_none(), found.applied, found.expected);
    let status = if health.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(health)).into_response()
}

fn said_in_the_log(found: &StoreHealth) {
    if found.is_ok() {
        tracing::info!("health: the database answers again, with every migration");
    } else if let Some(problem) = &found.problem {
        tracing::warn!("health: the database does not answer: {problem}");
    } else {
        tracing::warn!(
            applied = found.applied,
            expected = found.expected,
            "health: the database lacks migrations of this build"
        );
    }
}
