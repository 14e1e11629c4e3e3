//! Decisions on tool calls that wait for a person (PRODUCT §3.17), through
//! the approvals' endpoint (`POST /api/runs/{run_id}/modules/{module_id}/
//! decision` with `call`): the same tokens decide (the graph's edit token,
//! or an approver token of that run), the first decision on a call wins
//! (`409` after, a timeout being one), and the run acts on it wherever it
//! runs.

use wire::ActivationRecord;
use wire::activation::ToolOutcome;
use wire::approval::{CallDecision, Decider, Decision, DecisionRequest};

use crate::error::ApiError;
use crate::runs::decisions::pending_call;
use crate::state::AppState;
use crate::store::{StoredCallDecision, TIMED_OUT, now_millis};

/// What a decision on a call may carry: approve or reject, arguments only
/// with an approval, never an approval's edited value.
pub fn check_request(request: &DecisionRequest) -> Result<(), ApiError> {
    let invalid = |path: &str, message: &str| ApiError::DecisionRequest {
        path: path.to_owned(),
        message: message.to_owned(),
    };
    if request.decision == Decision::Revise {
        return Err(invalid(
            "decision",
            "a tool call is approved or rejected, not sent back",
        ));
    }
    if request.value.is_some() {
        return Err(invalid(
            "value",
            "a tool call's decision edits its arguments, not a value",
        ));
    }
    if request.arguments.is_some() && request.decision != Decision::Approve {
        return Err(invalid(
            "arguments",
            "only an approval makes the call with edited arguments",
        ));
    }
    let too_long = request.arguments.as_ref().is_some_and(|arguments| {
        serde_json::to_string(arguments).map_or(0, |json| json.len())
            > crate::decisions_api::MAX_DECISION_TEXT_BYTES
    });
    if too_long {
        return Err(invalid(
            "arguments",
            &format!(
                "at most {} bytes",
                crate::decisions_api::MAX_DECISION_TEXT_BYTES
            ),
        ));
    }
    Ok(())
}

/// Why a decision on a call that does not wait is refused: taken first by
/// someone, by its timeout, or never asked.
async fn refusal(
    state: &AppState,
    run_id: &str,
    module_id: &str,
    activation: u32,
    call_id: &str,
) -> Result<ApiError, ApiError> {
    let module = module_id.to_owned();
    let first = state
        .store
        .call_decision(run_id, module_id, i64::from(activation), call_id)
        .await?;
    Ok(match first {
        Some(first) if first.decided_by == TIMED_OUT => ApiError::DecisionTimedOut { module },
        Some(_) => ApiError::DecisionAlreadyTaken { module },
        None => ApiError::DecisionNotWaiting { module },
    })
}

/// Takes a decision on call `call_id` of the module's last activation:
/// `200` with the activation as decided, `409` when the call does not
/// wait or was decided first.
pub async fn decide_call(
    state: &AppState,
    run_id: &str,
    module_id: &str,
    call_id: &str,
    by: Decider,
    request: DecisionRequest,
) -> Result<ActivationRecord, ApiError> {
    let not_waiting = || ApiError::DecisionNotWaiting {
        module: module_id.to_owned(),
    };
    let mut record = state
        .store
        .last_activation(run_id, module_id)
        .await?
        .and_then(|json| serde_json::from_str::<ActivationRecord>(&json).ok())
        .ok_or_else(not_waiting)?;
    if request
        .activation
        .is_some_and(|seen| seen != record.activation)
    {
        return Err(not_waiting());
    }
    let Some(call) = record
        .tool_calls
        .iter()
        .rev()
        .find(|call| call.call_id == call_id)
    else {
        // A call decided and taken up again may be missing from the record
        // for a moment (the activation is rebuilt from its turns): who came
        // first says why.
        return Err(refusal(state, run_id, module_id, record.activation, call_id).await?);
    };
    if let Some(arguments) = &request.arguments
        && let Some(locked) = arguments.iter().find_map(|(name, value)| {
            let shown = call.arguments.get(name)?;
            (shown.as_str() == Some(graph::tools::LOCKED) && value != shown).then_some(name)
        })
    {
        return Err(ApiError::DecisionRequest {
            path: format!("arguments.{locked}"),
            message: "a locked argument is the graph's, not the decision's".to_owned(),
        });
    }
    let stored = StoredCallDecision {
        run_id: run_id.to_owned(),
        module_id: module_id.to_owned(),
        activation: i64::from(record.activation),
        call_id: call_id.to_owned(),
        decision: request.decision.as_str().to_owned(),
        feedback: request.feedback.unwrap_or_default(),
        arguments: request
            .arguments
            .map(|arguments| serde_json::Value::Object(arguments).to_string()),
        decided_by: by.as_str().to_owned(),
        decided_at: now_millis(),
    };
    // Checked after reading who came first, not before: a call the record
    // shows decided may have a decision the run has not acted on yet.
    let waits = call.outcome == ToolOutcome::Waiting && call.decision.is_none();
    if !waits || !state.store.insert_call_decision(&stored).await? {
        return Err(refusal(state, run_id, module_id, record.activation, call_id).await?);
    }
    // Run here: it acts at once. Run by another process, or by none, it
    // is read from the database there, or when the run is resumed.
    if let Some(decided) = pending_call(&stored) {
        state.hub.decide(run_id, decided);
    }
    let decision = crate::runs::decisions::call_decision(&stored).unwrap_or(CallDecision {
        decision: request.decision,
        arguments: None,
        feedback: stored.feedback.clone(),
        by: Some(by),
        at: stored.decided_at,
    });
    if let Some(kept) = record
        .tool_calls
        .iter_mut()
        .rev()
        .find(|kept| kept.call_id == call_id)
    {
        kept.decision = Some(decision);
    }
    Ok(record)
}
