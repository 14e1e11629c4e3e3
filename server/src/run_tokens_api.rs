//! Run tokens (PRODUCT §6.2): a graph's editors make, list and revoke
//! them with the edit token. A token is shown once, when it is made.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use wire::run_tokens::{NewRunToken, RunTokenInfo, RunTokenList, RunTokenMade};

use crate::body::JsonBody;
use crate::capability::{hash_token, new_edit_token, require_edit_token};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{StoredRunToken, now_millis};

/// A name says what a token is for; a long one says nothing more.
const MAX_NAME_CHARACTERS: usize = 80;

fn info(token: StoredRunToken) -> RunTokenInfo {
    RunTokenInfo {
        id: token.id,
        name: token.name,
        created_at: token.created_at,
        last_used_at: token.last_used_at,
        revoked_at: token.revoked_at,
    }
}

/// `POST /api/graphs/{id}/run-tokens` with `{"name"}` (or no body).
pub async fn make(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "making a run token").await?;
    let body = body?;
    let request: NewRunToken = if body.0.iter().all(u8::is_ascii_whitespace) {
        NewRunToken::default()
    } else {
        serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(&body.0))
            .map_err(|error| ApiError::RunTokenRequest {
                path: error.path().to_string(),
                message: format!(
                    "a run token is made with {{\"name\"}}: {}",
                    error.into_inner()
                ),
            })?
    };
    let name = request.name.trim();
    if name.chars().count() > MAX_NAME_CHARACTERS {
        return Err(ApiError::RunTokenRequest {
            path: "name".to_owned(),
            message: format!("a run token's name has at most {MAX_NAME_CHARACTERS} characters"),
        });
    }
    let secret = format!("pbr_{}", new_edit_token());
    let token = StoredRunToken {
        id: crate::capability::new_run_token_id(),
        graph_id: id,
        name: if name.is_empty() {
            "API".to_owned()
        } else {
            name.to_owned()
        },
        created_at: now_millis(),
        revoked_at: None,
        last_used_at: None,
    };
    state
        .store
        .insert_run_token(&token, &hash_token(&secret))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(RunTokenMade {
            info: info(token),
            token: secret,
        }),
    )
        .into_response())
}

/// `GET /api/graphs/{id}/run-tokens`: newest first, never a token.
pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "listing its run tokens").await?;
    let tokens = state.store.run_tokens(&id).await?;
    Ok(Json(RunTokenList {
        tokens: tokens.into_iter().map(info).collect(),
    })
    .into_response())
}

/// `DELETE /api/graphs/{id}/run-tokens/{token_id}`: the token starts
/// nothing from now on. Revoking one twice is no error.
pub async fn revoke(
    State(state): State<AppState>,
    Path((id, token_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "revoking a run token").await?;
    if !crate::capability::is_run_token_id(&token_id)
        || !state
            .store
            .revoke_run_token(&id, &token_id, now_millis())
            .await?
    {
        return Err(ApiError::RunTokenNotFound);
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}
