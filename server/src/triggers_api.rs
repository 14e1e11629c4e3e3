//! A graph's triggers for its editors (PRODUCT §6.5): each with its next
//! times or its webhook's address, a webhook's secret made or rotated
//! (shown once), and a schedule's next times worked out before it is saved.
//! The triggers themselves are edited in the document, like any field.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use graph::Graph;
use graph::triggers::{Trigger, TriggerKind};
use wire::triggers::{NextTimes, NextTimesRequest, TriggerList, TriggerSecretMade, TriggerState};

use crate::body::JsonBody;
use crate::capability::{hash_token, new_edit_token, require_edit_token};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::now_millis;
use crate::triggers::cadence::{Cadence, MOST_TIMES};

/// How many next times a schedule shows unless asked.
const NEXT_TIMES: usize = 5;
/// The header a webhook's secret comes in.
pub const SECRET_HEADER: &str = "X-Patchbay-Secret";

pub fn hook_url(trigger_id: &str) -> String {
    format!("/hooks/{trigger_id}")
}

async fn triggers_of(state: &AppState, id: &str) -> Result<Vec<Trigger>, ApiError> {
    let stored = state
        .store
        .graph(id)
        .await?
        .ok_or(ApiError::GraphNotFound)?;
    let graph = Graph::load(&stored.document)
        .map_err(|error| ApiError::Internal(format!("stored graph {id}: {error}")))?;
    Ok(graph::triggers::triggers(&graph)?)
}

/// `GET /api/graphs/{id}/triggers` with the edit token.
pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "listing its triggers").await?;
    let triggers = triggers_of(&state, &id).await?;
    let ticks = state.store.schedule_ticks(&id).await?;
    let secrets = state.store.trigger_secrets(&id).await?;
    let now = now_millis();
    let triggers = triggers
        .into_iter()
        .map(|trigger| {
            let mut shown = TriggerState {
                id: trigger.id.clone(),
                kind: String::new(),
                paused: trigger.paused,
                next_times: Vec::new(),
                url: None,
                secret_made_at: None,
            };
            match &trigger.kind {
                TriggerKind::Schedule(schedule) => {
                    shown.kind = "schedule".to_owned();
                    let next_at = ticks
                        .iter()
                        .find(|(trigger_id, _)| *trigger_id == trigger.id)
                        .and_then(|(_, next_at)| *next_at);
                    if let (false, Some(next_at), Ok(cadence)) = (
                        trigger.paused,
                        next_at,
                        Cadence::parse(&schedule.cron, &schedule.timezone),
                    ) {
                        shown.next_times = std::iter::once(next_at)
                            .chain(cadence.next_times(next_at.max(now), NEXT_TIMES - 1))
                            .collect();
                    }
                }
                TriggerKind::Webhook => {
                    shown.kind = "webhook".to_owned();
                    shown.url = Some(hook_url(&trigger.id));
                    shown.secret_made_at = secrets
                        .iter()
                        .find(|(trigger_id, _)| *trigger_id == trigger.id)
                        .map(|(_, made_at)| *made_at);
                }
            }
            shown
        })
        .collect();
    Ok(Json(TriggerList { triggers }).into_response())
}

/// `POST /api/graphs/{id}/triggers/{trigger_id}/secret` with the edit
/// token: a new secret for a webhook trigger of the saved document; the
/// one before it stops working at once.
pub async fn make_secret(
    State(state): State<AppState>,
    Path((id, trigger_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "making a webhook's secret").await?;
    let triggers = triggers_of(&state, &id).await?;
    if !triggers
        .iter()
        .any(|trigger| trigger.id == trigger_id && trigger.is_webhook())
    {
        return Err(ApiError::TriggerNotFound {
            trigger: trigger_id,
            kind: "webhook",
        });
    }
    let secret = format!("pbh_{}", new_edit_token());
    let created_at = now_millis();
    state
        .store
        .set_trigger_secret(&id, &trigger_id, &hash_token(&secret), created_at)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(TriggerSecretMade {
            url: hook_url(&trigger_id),
            trigger_id,
            secret,
            header: SECRET_HEADER.to_owned(),
            created_at,
        }),
    )
        .into_response())
}

/// `POST /api/schedules/next` with `{"cron", "timezone", "count"}`: when
/// the schedule would fall next, or which field cannot be read. Works out
/// a time and reads nothing stored, so it needs no token.
pub async fn next_times(body: Result<JsonBody, ApiError>) -> Result<Response, ApiError> {
    let body = body?;
    let request: NextTimesRequest =
        serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(&body.0))
            .map_err(|error| ApiError::ScheduleRequest {
                path: error.path().to_string(),
                message: format!(
                    "ask with {{\"cron\", \"timezone\", \"count\"}}: {}",
                    error.into_inner()
                ),
            })?;
    let timezone = request.timezone.unwrap_or_else(|| "UTC".to_owned());
    let count = request.count.unwrap_or(NEXT_TIMES);
    if count == 0 || count > MOST_TIMES {
        return Err(ApiError::ScheduleRequest {
            path: "count".to_owned(),
            message: format!("from 1 to {MOST_TIMES} times"),
        });
    }
    let cadence =
        Cadence::parse(&request.cron, &timezone).map_err(|error| ApiError::ScheduleRequest {
            path: error.field().to_owned(),
            message: error.message().to_owned(),
        })?;
    let times = cadence.next_times(now_millis(), count);
    Ok(Json(NextTimes {
        local: times.iter().map(|time| cadence.local_time(*time)).collect(),
        times,
        timezone,
    })
    .into_response())
}
