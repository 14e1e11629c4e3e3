//! Webhook deliveries (PRODUCT §6.5): `POST /hooks/{trigger_id}` with the
//! trigger's secret starts a run of its graph with the body as the input —
//! JSON or text as sent, a multipart form's files as files. The secret is
//! the whole capability: it starts runs of that graph through that
//! trigger, nothing else. An `Idempotency-Key` seen within a day answers
//! the run the first delivery started.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Path, Request, State};
use axum::http::StatusCode;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, LOCATION};
use axum::response::{IntoResponse, Response};
use graph::Graph;
use wire::triggers::HookDelivered;
use wire::{InputFile, RunInput};

use crate::capability::{Starter, hash_token};
use crate::error::ApiError;
use crate::invoke_api::{idempotency_key, started_once};
use crate::rate_limit::ClientAddress;
use crate::runs_api::{Asked, launch};
use crate::state::AppState;
use crate::triggers_api::SECRET_HEADER;

pub async fn deliver(
    State(state): State<AppState>,
    Path(trigger_id): Path<String>,
    client: ClientAddress,
    request: Request,
) -> Result<Response, ApiError> {
    let secret = presented_secret(&request).ok_or(ApiError::HookSecretRequired)?;
    // Only an id a document could hold is looked up.
    if !graph::triggers::is_trigger_id(&trigger_id) {
        return Err(ApiError::HookSecretInvalid);
    }
    let graph_id = state
        .store
        .webhook_graph(&trigger_id, &hash_token(&secret))
        .await?
        .ok_or(ApiError::HookSecretInvalid)?;
    webhook_of(&state, &graph_id, &trigger_id).await?;
    let headers = request.headers().clone();
    let key = idempotency_key(&headers)?;
    let input = read_input(&state, request).await?;
    let starter = Starter::Webhook {
        graph_id: graph_id.clone(),
        trigger: trigger_id,
    };
    let run_id = match key {
        Some(key) => started_once(&state, &graph_id, &client, &starter, input, &key).await?,
        None => {
            launch(
                &state,
                &graph_id,
                &client,
                &starter,
                input,
                Asked::default(),
            )
            .await?
            .id
        }
    };
    let url = format!("/api/runs/{run_id}");
    Ok((
        StatusCode::ACCEPTED,
        [(LOCATION, url.clone())],
        Json(HookDelivered {
            events_url: format!("{url}/events"),
            url,
            run_id,
        }),
    )
        .into_response())
}

/// The secret from `X-Patchbay-Secret`, `Authorization: Bearer`, or the
/// address's `?secret=` (for senders that only take a URL).
fn presented_secret(request: &Request) -> Option<String> {
    let headers = request.headers();
    let from_header = headers
        .get(SECRET_HEADER)
        .and_then(|value| value.to_str().ok())
        .or_else(|| {
            headers
                .get(AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Bearer "))
        });
    from_header
        .or_else(|| {
            request
                .uri()
                .query()?
                .split('&')
                .find_map(|pair| pair.strip_prefix("secret="))
        })
        .map(str::trim)
        .filter(|secret| !secret.is_empty())
        .map(str::to_owned)
}

/// Refuses a delivery to a trigger the saved document no longer has as a
/// webhook, or has paused.
async fn webhook_of(state: &AppState, graph_id: &str, trigger_id: &str) -> Result<(), ApiError> {
    let stored = state
        .store
        .graph(graph_id)
        .await?
        .ok_or(ApiError::GraphNotFound)?;
    let graph = Graph::load(&stored.document)
        .map_err(|error| ApiError::Internal(format!("stored graph {graph_id}: {error}")))?;
    let trigger = graph::triggers::triggers(&graph)
        .unwrap_or_default()
        .into_iter()
        .find(|trigger| trigger.id == trigger_id && trigger.is_webhook())
        .ok_or_else(|| ApiError::TriggerNotFound {
            trigger: trigger_id.to_owned(),
            kind: "webhook",
        })?;
    if trigger.paused {
        return Err(ApiError::TriggerPaused(trigger.id));
    }
    Ok(())
}

/// The body as the run's input: a multipart form's files as files and its
/// fields as text; JSON as sent (it must be JSON); anything else as text.
async fn read_input(state: &AppState, request: Request) -> Result<RunInput, ApiError> {
    let essence = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if essence == "multipart/form-data" {
        let form = Multipart::from_request(request, state)
            .await
            .map_err(|rejection| body_error("", &rejection.body_text()))?;
        return read_form(form).await;
    }
    let bytes = Bytes::from_request(request, state)
        .await
        .map_err(|rejection| too_large_or(state, rejection.status(), &rejection.body_text()))?;
    let text = String::from_utf8(bytes.to_vec()).map_err(|_| {
        body_error(
            "",
            "the body is not UTF-8 text; send files as multipart/form-data",
        )
    })?;
    if (essence == "application/json" || essence.ends_with("+json"))
        && let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(&text)
    {
        return Err(body_error(
            "",
            &format!("the body is sent as JSON but is not JSON: {error}"),
        ));
    }
    Ok(RunInput {
        text,
        files: Vec::new(),
    })
}

/// A form's files, and its fields as the text: the field `text` (or
/// `input`) alone as it is, several fields as a JSON object of them.
async fn read_form(mut form: Multipart) -> Result<RunInput, ApiError> {
    let mut fields = serde_json::Map::new();
    let mut files = Vec::new();
    while let Some(field) = form
        .next_field()
        .await
        .map_err(|error| body_error("", &error.body_text()))?
    {
        let name = field.name().unwrap_or_default().to_owned();
        match field.file_name().map(str::to_owned) {
            Some(file_name) => {
                let media_type = field
                    .content_type()
                    .unwrap_or("application/octet-stream")
                    .to_owned();
                let bytes = field
                    .bytes()
                    .await
                    .map_err(|error| body_error(&name, &error.body_text()))?;
                files.push(InputFile {
                    name: file_name,
                    media_type,
                    bytes: bytes.to_vec(),
                });
            }
            None => {
                let value = field
                    .text()
                    .await
                    .map_err(|error| body_error(&name, &error.body_text()))?;
                fields.insert(name, serde_json::Value::String(value));
            }
        }
    }
    let text = match fields.len() {
        0 => String::new(),
        1 if fields.contains_key("text") || fields.contains_key("input") => fields
            .into_iter()
            .next()
            .and_then(|(_, value)| value.as_str().map(str::to_owned))
            .unwrap_or_default(),
        _ => serde_json::Value::Object(fields).to_string(),
    };
    Ok(RunInput { text, files })
}

fn too_large_or(state: &AppState, status: StatusCode, message: &str) -> ApiError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::RunInputTooLarge {
            max_bytes: state.settings.run_limits.max_input_bytes,
        }
    } else {
        body_error("", message)
    }
}

fn body_error(path: &str, message: &str) -> ApiError {
    ApiError::HookBody {
        path: if path.is_empty() {
            "body".to_owned()
        } else {
            format!("body.{path}")
        },
        message: message.to_owned(),
    }
}
