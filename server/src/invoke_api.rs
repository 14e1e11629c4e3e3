//! A graph called as an API (PRODUCT §6.3): `POST /api/graphs/{id}/invoke`
//! with a run token (or the edit token) starts a run and answers what its
//! output modules received once it ends within the wait; a run still going
//! is `202` with where to follow it, and a run waiting for a person gives
//! a link to decide with rather than hanging. With `Accept:
//! text/event-stream` the answer is the run's events as they happen.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header::{ACCEPT, LOCATION};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use graph::ModuleKind;
use wire::PortValue;
use wire::invoke::{Invoke, Invoked, InvokedOutput};
use wire::run::RunRecord;
use wire::status::RunStatus;

use crate::body::JsonBody;
use crate::capability::{Starter, require_starter};
use crate::error::ApiError;
use crate::rate_limit::ClientAddress;
use crate::runs_api::{Asked, launch, run_document};
use crate::state::AppState;

/// How long a request waits for its run unless it says.
const DEFAULT_WAIT_SECONDS: u32 = 30;
/// The longest a request may wait: proxies give up around here.
const MOST_WAIT_SECONDS: u32 = 300;
/// How often the run's status is read while nothing is heard of it.
const LOOK_EVERY: Duration = Duration::from_millis(100);

pub async fn invoke(
    State(state): State<AppState>,
    Path(id): Path<String>,
    client: ClientAddress,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Result<Response, ApiError> {
    let starter = require_starter(&state.store, &id, &headers, "invoking the graph").await?;
    let request = read(&crate::runs_api::run_body(&state, body)?.0)?;
    let wait_seconds = request.wait_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
    if wait_seconds > MOST_WAIT_SECONDS {
        return Err(ApiError::InvokeRequest {
            path: "wait_seconds".to_owned(),
            message: format!(
                "a request waits at most {MOST_WAIT_SECONDS} seconds; follow the run's events for longer"
            ),
        });
    }
    let input = request.input.into_run_input();
    let run_id = match idempotency_key(&headers)? {
        Some(key) => started_once(&state, &id, &client, &starter, input, &key).await?,
        None => {
            launch(&state, &id, &client, &starter, input, Asked::default())
                .await?
                .id
        }
    };
    if wants_events(&headers) {
        let stream = crate::runs_api::events(State(state), Path(run_id), HeaderMap::new()).await?;
        return Ok(stream.into_response());
    }
    let record = settled(&state, &run_id, Duration::from_secs(wait_seconds.into())).await?;
    let answer = answered(&state, &id, &run_id, &record).await?;
    let status = if answer.status.is_finished() {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, [(LOCATION, answer.url.clone())], Json(answer)).into_response())
}

/// The `Idempotency-Key` header, if sent: at most 255 visible characters.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .filter(|key| {
            !key.is_empty() && key.len() <= 255 && key.bytes().all(|byte| byte.is_ascii_graphic())
        })
        .map(|key| Some(key.to_owned()))
        .ok_or_else(|| ApiError::InvokeRequest {
            path: "Idempotency-Key".to_owned(),
            message: "an idempotency key is 1 to 255 visible ASCII characters".to_owned(),
        })
}

/// Starts the run unless a request with the same key (from the same
/// editors or the same run token) did in the last day: the run's id
/// either way. The claim comes first, in one conditional write, so two
/// requests racing with one key start one run.
pub(crate) async fn started_once(
    state: &AppState,
    graph_id: &str,
    client: &ClientAddress,
    starter: &Starter,
    input: wire::RunInput,
    key: &str,
) -> Result<String, ApiError> {
    let scoped = format!("{}:{key}", starter.scope());
    let run_id = crate::runs::new_run_id();
    let claimed = state
        .store
        .claim_idempotency_key(graph_id, &scoped, &run_id, crate::store::now_millis())
        .await?;
    if claimed != run_id {
        // The request that claimed the key may still be starting its run.
        for _ in 0..200 {
            if state.store.run(&claimed).await?.is_some() {
                return Ok(claimed);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // It was refused, and let the key go.
        return Err(ApiError::RunNotFound);
    }
    let asked = Asked {
        run_id: Some(run_id.clone()),
        ..Asked::default()
    };
    match launch(state, graph_id, client, starter, input, asked).await {
        Ok(started) => Ok(started.id),
        Err(refused) => {
            // Refused runs leave the key free for the next try.
            if let Err(error) = state
                .store
                .release_idempotency_key(graph_id, &scoped, &run_id)
                .await
            {
                tracing::warn!(%error, "an idempotency key of a refused run could not be let go");
            }
            Err(refused)
        }
    }
}

/// The request, or the default one for an empty body.
fn read(body: &[u8]) -> Result<Invoke, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Invoke::default());
    }
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(body)).map_err(
        |error| ApiError::InvokeRequest {
            path: error.path().to_string(),
            message: format!(
                "the request must be {{\"input\": \"text\" or {{\"text\", \"files\"}}, \"wait_seconds\"}}: {}",
                error.into_inner()
            ),
        },
    )
}

fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("text/event-stream"))
}

/// How the run stands: what its outputs received once it has ended, an
/// approver link while it waits for a person.
pub(crate) async fn answered(
    state: &AppState,
    graph_id: &str,
    run_id: &str,
    record: &RunRecord,
) -> Result<Invoked, ApiError> {
    let approver_url = if record.status == RunStatus::Waiting {
        let link = crate::decisions_api::make_approver_link(&state.store, graph_id, run_id).await?;
        Some(link.url)
    } else {
        None
    };
    let outputs = if record.status.is_finished() {
        outputs(record)
    } else {
        Vec::new()
    };
    let text = (!outputs.is_empty()).then(|| {
        outputs
            .iter()
            .map(|output| output.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    });
    Ok(Invoked {
        run_id: run_id.to_owned(),
        status: record.status,
        url: format!("/api/runs/{run_id}"),
        events_url: format!("/api/runs/{run_id}/events"),
        error: record.error.clone(),
        outputs,
        text,
        approver_url,
    })
}

/// The run once it has ended or waits for a person, or as it is when
/// `wait` is over. Its events wake the wait; the status is read from the
/// store, which has it last.
pub(crate) async fn settled(
    state: &AppState,
    run_id: &str,
    wait: Duration,
) -> Result<RunRecord, ApiError> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut live = state.hub.subscribe(run_id);
    loop {
        let stored = state
            .store
            .run(run_id)
            .await?
            .ok_or(ApiError::RunNotFound)?;
        let status = RunStatus::parse(&stored.status);
        let settled =
            status.is_some_and(|status| status.is_finished() || status == RunStatus::Waiting);
        if settled || tokio::time::Instant::now() >= deadline {
            return run_document(&state.store, run_id)
                .await?
                .ok_or(ApiError::RunNotFound);
        }
        let heard = async {
            match live.as_mut() {
                Some(live) => {
                    if live.recv().await.is_err() {
                        // Lagged or over: the store says the rest.
                        tokio::time::sleep(LOOK_EVERY).await;
                    }
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = heard => {}
            () = tokio::time::sleep(LOOK_EVERY) => {}
            () = tokio::time::sleep_until(deadline) => {}
        }
    }
}

/// What each output module received, in the graph's order.
fn outputs(record: &RunRecord) -> Vec<InvokedOutput> {
    record
        .graph
        .modules
        .iter()
        .filter(|module| module.kind() == Some(ModuleKind::Output))
        .filter_map(|module| {
            let activation = record.last(&module.id)?;
            let text = activation
                .outputs
                .values()
                .filter_map(|value| match value {
                    PortValue::Bundle(bundle) => Some(bundle.as_text()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n\n");
            Some(InvokedOutput {
                module_id: module.id.clone(),
                label: module.display_label().to_owned(),
                text,
            })
        })
        .collect()
}
