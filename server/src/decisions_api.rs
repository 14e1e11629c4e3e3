//! Decisions on approvals (PRODUCT §3.14, §6): `POST /api/runs/{run_id}/
//! modules/{module_id}/decision` takes a person's decision on a waiting
//! approval, with the graph's edit token or an approver token of that run;
//! `POST /api/runs/{run_id}/approver-links` makes an approver link, with
//! the edit token. An approver token decides that run's approvals and
//! nothing else: every other endpoint asks for the edit token.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use wire::ActivationRecord;
use wire::activation::ActivationStatus;
use wire::approval::{ApproverLink, Decider, Decision, DecisionRecord, DecisionRequest};

use crate::body::JsonBody;
use crate::capability::{bearer_token, hash_token, new_edit_token, token_matches};
use crate::error::ApiError;
use crate::runs::decisions::pending;
use crate::runs::is_run_id;
use crate::state::AppState;
use crate::store::{StoredDecision, StoredRun, TIMED_OUT, now_millis};

/// The longest feedback or edited value a decision may carry.
pub const MAX_DECISION_TEXT_BYTES: usize = 256 * 1024;

pub(crate) async fn stored_run(state: &AppState, id: &str) -> Result<StoredRun, ApiError> {
    if !is_run_id(id) {
        return Err(ApiError::RunNotFound);
    }
    state.store.run(id).await?.ok_or(ApiError::RunNotFound)
}

/// Who may decide on this run's approvals: someone with its graph's edit
/// token, or with one of its approver tokens.
pub(crate) async fn decider(
    state: &AppState,
    run: &StoredRun,
    headers: &HeaderMap,
) -> Result<Decider, ApiError> {
    let token = bearer_token(headers).ok_or(ApiError::DecisionTokenRequired)?;
    if let Some(graph_id) = &run.graph_id
        && let Some(hash) = state.store.edit_token_hash(graph_id).await?
        && token_matches(token, &hash)
    {
        return Ok(Decider::Editor);
    }
    if state.store.is_approver_token(&run.id, token).await? {
        return Ok(Decider::ApproverLink);
    }
    Err(ApiError::DecisionTokenInvalid)
}

fn read_request(body: &[u8]) -> Result<DecisionRequest, ApiError> {
    let request: DecisionRequest = serde_path_to_error::deserialize(
        &mut serde_json::Deserializer::from_slice(body),
    )
    .map_err(|error| ApiError::DecisionRequest {
        path: error.path().to_string(),
        message: error.into_inner().to_string(),
    })?;
    let too_long = |text: &Option<String>| {
        text.as_ref()
            .is_some_and(|text| text.len() > MAX_DECISION_TEXT_BYTES)
    };
    for (field, text) in [("feedback", &request.feedback), ("value", &request.value)] {
        if too_long(text) {
            return Err(ApiError::DecisionRequest {
                path: field.to_owned(),
                message: format!("at most {MAX_DECISION_TEXT_BYTES} bytes"),
            });
        }
    }
    if request.decision == Decision::Revise
        && request
            .feedback
            .as_deref()
            .is_none_or(|feedback| feedback.trim().is_empty())
    {
        return Err(ApiError::DecisionRequest {
            path: "feedback".to_owned(),
            message: "sending it back needs feedback: say what to do again".to_owned(),
        });
    }
    if request.call.is_some() {
        crate::call_decisions_api::check_request(&request)?;
    }
    if request.value.is_some() && request.decision != Decision::Approve {
        return Err(ApiError::DecisionRequest {
            path: "value".to_owned(),
            message: "only an approval passes an edited value on".to_owned(),
        });
    }
    Ok(request)
}

/// `POST /api/runs/{run_id}/modules/{module_id}/decision`: the first
/// decision on the module's waiting activation wins (`200` with the
/// activation); a second is `409 decision.already_taken` — also once the
/// first was acted on, or when it names an earlier round than the one
/// waiting —, one for a module that does not wait `409
/// decision.not_waiting`; one that came after its timeout was taken `409
/// decision.timed_out` (a timeout is the decision on its activation too,
/// stored by the run when it fires: whichever is stored first wins).
pub async fn decide(
    State(state): State<AppState>,
    Path((run_id, module_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Result<Json<ActivationRecord>, ApiError> {
    let run = stored_run(&state, &run_id).await?;
    let by = decider(&state, &run, &headers).await?;
    let request = read_request(&body?.0)?;
    if let Some(call_id) = request.call.clone() {
        return crate::call_decisions_api::decide_call(
            &state, &run_id, &module_id, &call_id, by, request,
        )
        .await
        .map(Json);
    }
    let not_waiting = || ApiError::DecisionNotWaiting {
        module: module_id.clone(),
    };
    let record = state
        .store
        .last_activation(&run_id, &module_id)
        .await?
        .and_then(|json| serde_json::from_str::<ActivationRecord>(&json).ok())
        .ok_or_else(not_waiting)?;
    let already_taken = || ApiError::DecisionAlreadyTaken {
        module: module_id.clone(),
    };
    // A decision on an earlier round came after the one that ended it.
    match request.activation {
        Some(seen) if seen < record.activation => return Err(already_taken()),
        Some(seen) if seen > record.activation => return Err(not_waiting()),
        _ => {}
    }
    if record.status != ActivationStatus::Waiting || record.waiting.is_none() {
        return Err(if record.decision.is_some() {
            already_taken()
        } else if record.outputs.contains_key(graph::ports::TIMEOUT_OUT) {
            ApiError::DecisionTimedOut {
                module: module_id.clone(),
            }
        } else {
            not_waiting()
        });
    }
    let decision = DecisionRecord {
        decision: request.decision,
        feedback: request.feedback.unwrap_or_default(),
        value: request.value,
        by,
        at: now_millis(),
    };
    let stored = StoredDecision {
        run_id: run_id.clone(),
        module_id: module_id.clone(),
        activation: i64::from(record.activation),
        decision: decision.decision.as_str().to_owned(),
        feedback: decision.feedback.clone(),
        edited_value: decision.value.clone(),
        decided_by: by.as_str().to_owned(),
        decided_at: decision.at,
    };
    if !state.store.insert_decision(&stored).await? {
        let first = state
            .store
            .decision(&run_id, &module_id, stored.activation)
            .await?;
        return Err(match first {
            Some(first) if first.decision == TIMED_OUT => ApiError::DecisionTimedOut {
                module: module_id.clone(),
            },
            _ => already_taken(),
        });
    }
    // Run here: it acts at once. Run by another process, or by none, it
    // is read from the database there, or when the run is resumed.
    if let Some(decided) = pending(&stored) {
        state.hub.decide(&run_id, decided);
    }
    let mut decided = record;
    decided.decision = Some(decision);
    Ok(Json(decided))
}

/// `POST /api/runs/{run_id}/approver-links` with the edit token: a link
/// that can decide this run's approvals and nothing else. Its token is
/// shown once; the server keeps a hash.
pub async fn approver_link(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let run = stored_run(&state, &run_id).await?;
    let graph_id = run.graph_id.clone().ok_or(ApiError::EditTokenInvalid)?;
    crate::capability::require_edit_token(
        &state.store,
        &graph_id,
        &headers,
        "making an approver link",
    )
    .await
    .map_err(|error| match error {
        ApiError::GraphNotFound => ApiError::EditTokenInvalid,
        other => other,
    })?;
    let link = make_approver_link(&state.store, &graph_id, &run_id).await?;
    Ok((StatusCode::CREATED, Json(link)).into_response())
}

/// A new approver token of the run, stored as a hash, and its link.
pub async fn make_approver_link(
    store: &crate::store::Store,
    graph_id: &str,
    run_id: &str,
) -> Result<ApproverLink, ApiError> {
    let token = new_edit_token();
    store
        .insert_approver_token(run_id, &hash_token(&token), now_millis())
        .await?;
    Ok(ApproverLink {
        url: format!("/g/{graph_id}/runs/{run_id}#approve={token}"),
        token,
    })
}
