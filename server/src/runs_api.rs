//! The runs API (PRODUCT §6) and the event stream (§3.6): start a run of a
//! stored graph, read a run with every activation, list a graph's runs,
//! cancel, follow the events over SSE, and list the providers.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use engine::RunInput;
use graph::{Graph, has_errors, validate};
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use wire::providers::{AcpProfileInfo, Catalogue};
use wire::run::{
    Cancelling, ModuleRecord, RunList, RunStarted, RunSummary, StartRun, WithStartedBy,
};
use wire::{ActivationRecord, EventRecord, RunEvent, RunRecord, RunStatus};

type EventStream = ReceiverStream<Result<Event, Infallible>>;

use crate::body::JsonBody;
use crate::capability::{Starter, require_edit_token, require_starter};
use crate::error::ApiError;
use crate::rate_limit::ClientAddress;
use crate::runs::hub::LiveEvent;
use crate::runs::{is_run_id, start_run};
use crate::state::AppState;
use crate::store::{Store, StoredEvent, StoredRun};

/// `POST /api/graphs/{id}/runs` with `{"input": {"text", "files"}}` (or no
/// body), with the graph's edit token: a view link runs a fork instead.
pub async fn start(
    State(state): State<AppState>,
    Path(id): Path<String>,
    client: ClientAddress,
    headers: HeaderMap,
    body: Result<JsonBody, ApiError>,
) -> Result<Response, ApiError> {
    let starter = require_starter(&state.store, &id, &headers, "starting a run").await?;
    let body = run_body(&state, body)?;
    let (input, budget_usd, from) = if body.0.iter().all(u8::is_ascii_whitespace) {
        (RunInput::default(), None, None)
    } else {
        let request: StartRun =
            serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(&body.0))
                .map_err(|error| ApiError::RunInput {
                    path: error.path().to_string(),
                    message: error.into_inner().to_string(),
                })?;
        if let Some(budget) = request.budget_usd
            && !(budget.is_finite() && budget > 0.0)
        {
            return Err(ApiError::RunInput {
                path: "budget_usd".to_owned(),
                message: "a budget is an amount of US dollars more than 0".to_owned(),
            });
        }
        (request.input, request.budget_usd, request.from)
    };
    if matches!(starter, Starter::Token(_)) && from.is_some() {
        return Err(ApiError::RunFromInvalid {
            module: None,
            message: "a run token starts runs from the beginning: a run from a module reads an earlier run, which only the graph's editors may".to_owned(),
        });
    }
    let asked = Asked {
        budget_usd,
        from,
        run_id: None,
    };
    let started = launch(&state, &id, &client, &starter, input, asked).await?;
    Ok((
        StatusCode::CREATED,
        [(axum::http::header::LOCATION, started.url.clone())],
        Json(started),
    )
        .into_response())
}

/// A run request's body; one past the limit says the run input's limit.
pub(crate) fn run_body(
    state: &AppState,
    body: Result<JsonBody, ApiError>,
) -> Result<JsonBody, ApiError> {
    let max_bytes = state.settings.run_limits.max_input_bytes;
    body.map_err(|error| match error {
        ApiError::TooLarge { .. } => ApiError::RunInputTooLarge { max_bytes },
        other => other,
    })
}

/// What a request asks of a run besides its input.
#[derive(Default)]
pub(crate) struct Asked {
    pub budget_usd: Option<f64>,
    pub from: Option<wire::run::RunFrom>,
    /// The run's id, when the request claimed one first (an idempotency
    /// key); a new one otherwise.
    pub run_id: Option<String>,
}

/// Starts a run of stored graph `id` for `starter`, as `POST …/runs` and
/// `POST …/invoke` do: the input within its limit, the graph valid and
/// runnable here, the run counted against its limits.
pub(crate) async fn launch(
    state: &AppState,
    id: &str,
    client: &ClientAddress,
    starter: &Starter,
    input: RunInput,
    asked: Asked,
) -> Result<RunStarted, ApiError> {
    let Asked {
        budget_usd,
        from,
        run_id,
    } = asked;
    let max_bytes = state.settings.run_limits.max_input_bytes;
    let input_bytes = input.text.len()
        + input
            .files
            .iter()
            .map(|file| file.bytes.len() + file.name.len())
            .sum::<usize>();
    if input_bytes > max_bytes {
        return Err(ApiError::RunInputTooLarge { max_bytes });
    }
    let stored = state
        .store
        .graph(id)
        .await?
        .ok_or(ApiError::GraphNotFound)?;
    let graph = Graph::load(&stored.document)
        .map_err(|error| ApiError::Internal(format!("stored graph {id}: {error}")))?;
    refuse_what_this_server_cannot_run(state, &graph)?;
    let findings = validate(&graph, &state.validation_context());
    if has_errors(&findings) {
        return Err(ApiError::GraphInvalid(findings));
    }
    let (input, from) = match from {
        Some(from) => {
            let (input, reuse) = reusing(state, id, &graph, &from, input).await?;
            (input, Some((from, reuse)))
        }
        None => (input, None),
    };
    // Counted last: a refused request does not use up the client's runs.
    count_run(state, client, starter)?;
    // The history keeps the revision a run ran, which editing together
    // (a revision kept every so often) may not have kept.
    state
        .store
        .keep_revision(id, stored.revision, &stored.document)
        .await?;
    let run_id = start_run(
        state,
        graph,
        crate::runs::RunOf {
            run_id: run_id.unwrap_or_else(crate::runs::new_run_id),
            graph_id: id,
            revision: stored.revision,
        },
        input,
        budget_usd,
        from,
        &starter.started_by(),
    )
    .await?;
    crate::room_api::run_started(state, id, &run_id).await;
    Ok(RunStarted {
        url: format!("/api/runs/{run_id}"),
        events_url: format!("/api/runs/{run_id}/events"),
        id: run_id,
        graph_id: id.to_owned(),
        graph_revision: stored.revision,
        status: RunStatus::Queued,
        findings,
    })
}

/// Counts a run against its client's limit, and its run token's.
pub(crate) fn count_run(
    state: &AppState,
    client: &ClientAddress,
    starter: &Starter,
) -> Result<(), ApiError> {
    if matches!(starter, Starter::Token(_) | Starter::Webhook { .. }) {
        state.run_rate.check_token(&starter.scope())?;
    }
    state.run_rate.check(client)
}

/// The operator's switches, which validation shows as findings too
/// (`graph::validate::capabilities`): commands, and confining processes.
pub(crate) fn refuse_what_this_server_cannot_run(
    state: &AppState,
    graph: &Graph,
) -> Result<(), ApiError> {
    use graph::validate::capabilities;
    for module in &graph.modules {
        if !state.commands_enabled()
            && let Some(what) = capabilities::commands_in(module)
        {
            return Err(ApiError::CommandsDisabled {
                module: module.id.clone(),
                message: capabilities::commands_disabled(module, &what),
            });
        }
        if let Err(unavailable) = &state.engine.settings.sandbox
            && let Some(what) = capabilities::processes_in(module)
        {
            return Err(ApiError::SandboxUnavailable {
                module: module.id.clone(),
                message: format!(
                    "{}: {unavailable}",
                    capabilities::sandbox_unavailable(module, &what)
                ),
            });
        }
    }
    Ok(())
}

/// A run from a module (PRODUCT §3.15): what it reuses of the run it
/// names, and its input — the recorded run's unless another is given, and
/// then only when no input module is reused with the old one.
async fn reusing(
    state: &AppState,
    graph_id: &str,
    graph: &Graph,
    from: &wire::run::RunFrom,
    input: RunInput,
) -> Result<(RunInput, engine::reuse::Reuse), ApiError> {
    let reusing = crate::runs::reuse::read(&state.store, graph_id, graph, from)
        .await?
        .map_err(|refused| ApiError::RunFromInvalid {
            module: refused.module,
            message: refused.message,
        })?;
    if input == RunInput::default() || input == reusing.input {
        return Ok((reusing.input, reusing.reuse));
    }
    let reused_input = graph.modules.iter().find(|module| {
        module.kind() == Some(graph::ModuleKind::Input) && reusing.plan.reused.contains(&module.id)
    });
    match reused_input {
        Some(module) => {
            let label = module.display_label();
            Err(ApiError::RunFromInvalid {
                module: Some(module.id.clone()),
                message: format!(
                    "the input differs from run {}'s, and \"{label}\" would be reused with the old one: run from \"{label}\" to use a new input",
                    from.run
                ),
            })
        }
        None => Ok((input, reusing.reuse)),
    }
}

async fn stored_run(state: &AppState, id: &str) -> Result<StoredRun, ApiError> {
    if !is_run_id(id) {
        return Err(ApiError::RunNotFound);
    }
    state.store.run(id).await?.ok_or(ApiError::RunNotFound)
}

fn status(run: &StoredRun) -> Result<RunStatus, ApiError> {
    RunStatus::parse(&run.status).ok_or_else(|| {
        ApiError::Internal(format!(
            "run {} has an unknown status {}",
            run.id, run.status
        ))
    })
}

fn summary(run: &StoredRun) -> Result<RunSummary, ApiError> {
    Ok(RunSummary {
        id: run.id.clone(),
        graph_id: run.graph_id.clone(),
        graph_revision: run.graph_revision,
        status: status(run)?,
        error: run.error.clone(),
        created_at: run.created_at,
        started_at: run.started_at,
        finished_at: run.finished_at,
        from: run.from.clone(),
    })
}

/// A run as the API and the run page show it: the run, its input and
/// snapshot, and per module every activation (merged bundle, each response,
/// named outputs, receipt, transcript). `None` if there is no such run.
pub async fn run_document(store: &Store, id: &str) -> Result<Option<RunRecord>, ApiError> {
    Ok(described_run(store, id)
        .await?
        .map(|described| described.run))
}

/// The run as `run_document` gives it, with how it started.
async fn described_run(
    store: &Store,
    id: &str,
) -> Result<Option<WithStartedBy<RunRecord>>, ApiError> {
    if !is_run_id(id) {
        return Ok(None);
    }
    let Some(run) = store.run(id).await? else {
        return Ok(None);
    };
    let mut modules: BTreeMap<String, ModuleRecord> = BTreeMap::new();
    for record in store.activations(id).await? {
        let record: ActivationRecord = serde_json::from_str(&record)
            .map_err(|error| ApiError::Internal(format!("activation record of {id}: {error}")))?;
        modules
            .entry(record.module_id.clone())
            .or_default()
            .activations
            .push(record);
    }
    let stored = |what: &str, error: serde_json::Error| {
        ApiError::Internal(format!("the {what} of run {id}: {error}"))
    };
    let record = RunRecord {
        id: run.id.clone(),
        graph_id: run.graph_id.clone(),
        graph_revision: run.graph_revision,
        status: status(&run)?,
        error: run.error.clone(),
        created_at: run.created_at,
        started_at: run.started_at,
        finished_at: run.finished_at,
        input: serde_json::from_str(&run.input).map_err(|error| stored("input", error))?,
        graph: serde_json::from_str(&run.snapshot).map_err(|error| stored("graph", error))?,
        modules,
        state: store.state(id).await?,
        last_event_id: store.last_event_seq(id).await?,
        budget_usd: run.budget_usd,
        from: run.from.clone(),
    };
    Ok(Some(WithStartedBy {
        run: record,
        started_by: run.started_by,
    }))
}

/// `GET /api/runs/{id}`.
pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let body = described_run(&state.store, &id)
        .await?
        .ok_or(ApiError::RunNotFound)?;
    Ok(Json(body).into_response())
}

/// `GET /api/graphs/{id}/runs`: newest first, for the graph's editors
/// (each run's id is a link to read it).
pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    require_edit_token(&state.store, &id, &headers, "listing its runs").await?;
    let runs = state.store.runs_for_graph(&id, 100).await?;
    let runs = runs
        .into_iter()
        .map(|run| {
            Ok(WithStartedBy {
                run: summary(&run)?,
                started_by: run.started_by,
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(Json(RunList { runs }).into_response())
}

/// `POST /api/runs/{id}/cancel`, with the edit token of the run's graph.
pub async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let run = stored_run(&state, &id).await?;
    // A run of no stored graph (none today) has nobody who may stop it here.
    let graph_id = run.graph_id.clone().ok_or(ApiError::EditTokenInvalid)?;
    require_edit_token(&state.store, &graph_id, &headers, "cancelling a run")
        .await
        .map_err(|error| match error {
            // The run exists; its graph's absence is not the caller's business.
            ApiError::GraphNotFound => ApiError::EditTokenInvalid,
            other => other,
        })?;
    // Run here, or by another process, which hears of it within a second.
    if state.hub.cancel(&id) || state.store.request_cancel(&id).await? {
        return Ok((
            StatusCode::ACCEPTED,
            Json(Cancelling {
                id,
                status: wire::CancelStatus::Cancelling,
            }),
        )
            .into_response());
    }
    Err(ApiError::RunFinished(run.status))
}

fn sse_event(event: &LiveEvent) -> Event {
    Event::default()
        .id(event.seq.to_string())
        .event(event.name)
        .data(&event.data)
}

fn from_stored(run_id: &str, stored: StoredEvent) -> Option<Arc<LiveEvent>> {
    let payload = serde_json::from_str(&stored.payload).ok()?;
    Some(Arc::new(LiveEvent::of(&EventRecord {
        run_id: run_id.to_owned(),
        seq: u64::try_from(stored.seq).ok()?,
        ts: stored.ts,
        event: RunEvent::from_parts(&stored.name, payload).ok()?,
    })))
}

/// `GET /api/runs/{id}/events`: the log after `Last-Event-ID` (or from the
/// start), then live events; a finished run replays and closes.
pub async fn events(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Sse<axum::response::sse::KeepAliveStream<EventStream>>, ApiError> {
    stored_run(&state, &id).await?;
    let after: u64 = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    // Subscribe before reading the log: an event stored in between is in
    // both, and the sequence numbers drop the second copy.
    let live = state.hub.subscribe(&id);
    let mut woken = state.followers.follow(&id);
    let shutdown = state.shutdown.clone();
    let (sender, receiver) = mpsc::channel(64);
    let store = state.store.clone();
    tokio::spawn(async move {
        let mut last = after;
        let replay = |last: u64| {
            let store = store.clone();
            let id = id.clone();
            async move {
                store
                    .events_after(&id, i64::try_from(last).unwrap_or(i64::MAX))
                    .await
                    .map(|events| {
                        events
                            .into_iter()
                            .filter_map(|event| from_stored(&id, event))
                            .collect::<Vec<_>>()
                    })
            }
        };
        // Sends what is new; says whether the stream is over.
        let send = |record: Arc<LiveEvent>, last: &mut u64| {
            let sender = sender.clone();
            let fresh = record.seq > *last;
            if fresh {
                *last = record.seq;
            }
            async move {
                if !fresh {
                    return false;
                }
                sender.send(Ok(sse_event(&record))).await.is_err() || record.terminal
            }
        };
        let Ok(backlog) = replay(last).await else {
            return;
        };
        for record in backlog {
            if send(record, &mut last).await {
                return;
            }
        }
        if let Some(mut live) = live {
            loop {
                match live.recv().await {
                    Ok(record) => {
                        if send(record, &mut last).await {
                            return;
                        }
                    }
                    // Fell behind: the log has what was missed.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let Ok(missed) = replay(last).await else {
                            return;
                        };
                        for record in missed {
                            if send(record, &mut last).await {
                                return;
                            }
                        }
                    }
                    // The run ended or stopped here: the log has the rest,
                    // and another process may go on with it.
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        }
        // Run by another process, or waiting to be taken over: the log,
        // read again when a process says it has stored events of the run
        // (and every second anyway), until the run ends.
        let mut notified = true;
        loop {
            let Ok(new) = replay(last).await else { return };
            let nothing_new = new.is_empty();
            for record in new {
                if send(record, &mut last).await {
                    return;
                }
            }
            // A run that has ended has its terminal event stored already:
            // a client past it (Last-Event-ID at the end) has all there is.
            if nothing_new
                && store
                    .run(&id)
                    .await
                    .ok()
                    .flatten()
                    .is_none_or(|run| run.ended_at().is_some())
            {
                return;
            }
            tokio::select! {
                changed = woken.changed(), if notified => notified = changed.is_ok(),
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
                () = shutdown.cancelled() => return,
                () = sender.closed() => return,
            }
        }
    });
    Ok(Sse::new(ReceiverStream::new(receiver))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// `GET /api/providers`: providers, ACP profiles and MCP servers with their
/// tools, never a secret (a command line, an environment, a header); and
/// what the operator allows graphs (the folders coding modules may start
/// from, whether commands run), which validation and the editor show.
pub async fn providers(State(state): State<AppState>) -> Json<Catalogue> {
    Json(Catalogue {
        providers: state.engine.providers.infos(),
        acp_profiles: state
            .acp_profiles
            .iter()
            .map(|profile| AcpProfileInfo {
                offers: state
                    .engine
                    .settings
                    .coding
                    .as_ref()
                    .and_then(|coding| coding.offers(&profile.id)),
                ..profile.clone()
            })
            .collect(),
        workspace_roots: state.workspace_roots(),
        commands_enabled: state.commands_enabled(),
        sandbox_available: Some(state.engine.settings.sandbox.is_ok()),
        webhooks: state.runner.notifier.ids(),
        tool_servers: state.engine.settings.tool_servers.catalogue(),
    })
}
