//! The one error type of the HTTP API, turned into
//! `{ "error": { "code", "message", "details" } }` with its status here and
//! nowhere else.

use axum::http::header::{CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use graph::limits::LimitExceeded;
use graph::{Finding, LoadError, LoadErrorKind};
use serde_json::{Value, json};
use wire::error::{ErrorBody, ErrorDetail};

use crate::store::StoreError;

#[derive(Debug)]
pub enum ApiError {
    /// The document could not be read (bad JSON, wrong types, …).
    Document(LoadError),
    TooLarge {
        max_bytes: usize,
    },
    OverLimit(LimitExceeded),
    UnsupportedMediaType,
    GraphNotFound,
    /// The graph has no such revision (never saved, or not a number).
    RevisionNotFound(String),
    /// `GET /api/graphs/{id}/revisions` with a query it cannot read.
    RevisionsQuery {
        path: String,
        message: String,
    },
    RouteNotFound,
    MethodNotAllowed,
    /// What needed the token: "saving", "starting a run", …
    EditTokenRequired(&'static str),
    /// What needed a token where a run token is enough too: "invoking
    /// the graph", … (the same code as `EditTokenRequired`).
    StarterTokenRequired(&'static str),
    EditTokenInvalid,
    /// The server has an access key and the request did not carry it.
    AccessKeyRequired,
    AccessKeyInvalid,
    RevisionRequired,
    RevisionMalformed(String),
    RevisionConflict {
        current: i64,
    },
    RunNotFound,
    AttachmentNotFound,
    /// A file no model can be sent (with its name and type).
    AttachmentUnsupported {
        name: String,
        media_type: String,
    },
    /// The run request body is not `{"input": {"text", "files"}}`.
    RunInput {
        path: String,
        message: String,
    },
    /// The graph has validation errors, so it cannot run.
    GraphInvalid(Vec<Finding>),
    /// A module runs shell commands and this server runs none: which one,
    /// and the words that name it and what in it needs them.
    CommandsDisabled {
        module: String,
        message: String,
    },
    /// The graph would start processes (this module) and they cannot be
    /// confined here (why).
    SandboxUnavailable {
        module: String,
        message: String,
    },
    /// A run from a module cannot reuse the run it names (PRODUCT §3.15):
    /// the module it is about, and why.
    RunFromInvalid {
        module: Option<String>,
        message: String,
    },
    /// The run's input is larger than the server takes.
    RunInputTooLarge {
        max_bytes: usize,
    },
    /// This client started too many runs lately.
    RateLimited {
        per_minute: u32,
        retry_after_seconds: u64,
    },
    /// The run is not in progress (it has this status).
    RunFinished(String),
    /// The summaries request is not `{"graphs": [{"id", "edit_token"}]}`.
    SummariesRequest {
        path: String,
        message: String,
    },
    /// The summaries request names more graphs than one request may.
    TooManyGraphs {
        max: usize,
    },
    /// Deciding on an approval without a token.
    DecisionTokenRequired,
    /// A token that is neither the graph's edit token nor an approver
    /// token of this run.
    DecisionTokenInvalid,
    /// The decision body is not `{"decision", "feedback"?, "value"?}`.
    DecisionRequest {
        path: String,
        message: String,
    },
    /// The module has no activation waiting for a decision.
    DecisionNotWaiting {
        module: String,
    },
    /// Someone decided on that activation first.
    DecisionAlreadyTaken {
        module: String,
    },
    /// Nobody decided in time: the approval's timeout was taken first.
    DecisionTimedOut {
        module: String,
    },
    /// A room's request whose body is not what it takes (PRODUCT §3.16).
    RoomRequest {
        path: String,
        message: String,
    },
    /// A room's request naming a connection it does not prove (no stream
    /// of this graph gave it that secret).
    RoomConnectionInvalid,
    /// A connection sent more changes or presence updates than a person
    /// makes.
    RoomRateLimited {
        retry_after_millis: u64,
    },
    /// A run token request whose body is not `{"name"}`, or too long a name.
    RunTokenRequest {
        path: String,
        message: String,
    },
    /// The graph has no run token with that id.
    RunTokenNotFound,
    /// An invoke request whose body is not `{"input", "wait_seconds"}`.
    InvokeRequest {
        path: String,
        message: String,
    },
    /// A graph called as a model (PRODUCT §6.4) whose run ended without
    /// an answer: failed, cancelled or stopped.
    RunEnded {
        run_id: String,
        status: String,
        error: String,
    },
    /// A graph called as a model whose run outlasted the wait.
    RunStillGoing {
        run_id: String,
    },
    /// A webhook delivery without its trigger's secret.
    HookSecretRequired,
    /// A webhook delivery whose secret is not its trigger's.
    HookSecretInvalid,
    /// The graph has no trigger with that id (or not of the kind needed).
    TriggerNotFound {
        trigger: String,
        kind: &'static str,
    },
    TriggerPaused(String),
    /// A webhook delivery whose body cannot be a run's input.
    HookBody {
        path: String,
        message: String,
    },
    /// `POST /api/schedules/next` whose body is not `{"cron", "timezone"}`,
    /// or whose cron or time zone cannot be read.
    ScheduleRequest {
        path: String,
        message: String,
    },
    /// A failure of ours, not the client's. The detail goes to the log only.
    Internal(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Document(error) => match error.kind {
                LoadErrorKind::Syntax => StatusCode::BAD_REQUEST,
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            },
            ApiError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::OverLimit(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::GraphNotFound | ApiError::RouteNotFound | ApiError::RevisionNotFound(_) => {
                StatusCode::NOT_FOUND
            }
            ApiError::RevisionsQuery { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::EditTokenRequired(_)
            | ApiError::StarterTokenRequired(_)
            | ApiError::EditTokenInvalid => StatusCode::FORBIDDEN,
            ApiError::AccessKeyRequired => StatusCode::UNAUTHORIZED,
            ApiError::AccessKeyInvalid => StatusCode::FORBIDDEN,
            ApiError::SandboxUnavailable { .. } | ApiError::RunFromInvalid { .. } => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::RunInputTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::RevisionRequired => StatusCode::PRECONDITION_REQUIRED,
            ApiError::RevisionMalformed(_) => StatusCode::BAD_REQUEST,
            ApiError::RevisionConflict { .. } => StatusCode::CONFLICT,
            ApiError::RunNotFound | ApiError::AttachmentNotFound => StatusCode::NOT_FOUND,
            ApiError::AttachmentUnsupported { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::RunInput { .. }
            | ApiError::GraphInvalid(_)
            | ApiError::CommandsDisabled { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::RunFinished(_) => StatusCode::CONFLICT,
            ApiError::SummariesRequest { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::TooManyGraphs { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::DecisionTokenRequired | ApiError::DecisionTokenInvalid => {
                StatusCode::FORBIDDEN
            }
            ApiError::DecisionRequest { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::DecisionNotWaiting { .. }
            | ApiError::DecisionAlreadyTaken { .. }
            | ApiError::DecisionTimedOut { .. } => StatusCode::CONFLICT,
            ApiError::RoomRequest { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::RoomConnectionInvalid => StatusCode::FORBIDDEN,
            ApiError::RoomRateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::RunTokenRequest { .. } | ApiError::InvokeRequest { .. } => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::RunTokenNotFound => StatusCode::NOT_FOUND,
            ApiError::HookSecretRequired => StatusCode::UNAUTHORIZED,
            ApiError::HookSecretInvalid => StatusCode::FORBIDDEN,
            ApiError::TriggerNotFound { .. } => StatusCode::NOT_FOUND,
            ApiError::TriggerPaused(_) => StatusCode::CONFLICT,
            ApiError::HookBody { .. } | ApiError::ScheduleRequest { .. } => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::RunEnded { .. } => StatusCode::BAD_GATEWAY,
            ApiError::RunStillGoing { .. } => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Document(error) => error.code(),
            ApiError::TooLarge { .. } => "document.too_large",
            ApiError::OverLimit(_) => "document.over_limit",
            ApiError::UnsupportedMediaType => "request.unsupported_media_type",
            ApiError::GraphNotFound => "graph.not_found",
            ApiError::RevisionNotFound(_) => "graph.revision_not_found",
            ApiError::RevisionsQuery { .. } => "graph.revisions_query_invalid",
            ApiError::RouteNotFound => "request.not_found",
            ApiError::MethodNotAllowed => "request.method_not_allowed",
            ApiError::EditTokenRequired(_) | ApiError::StarterTokenRequired(_) => {
                "graph.edit_token_required"
            }
            ApiError::EditTokenInvalid => "graph.edit_token_invalid",
            ApiError::AccessKeyRequired => "access.key_required",
            ApiError::AccessKeyInvalid => "access.key_invalid",
            ApiError::SandboxUnavailable { .. } => "run.sandbox_unavailable",
            ApiError::RunFromInvalid { .. } => "run.from_invalid",
            ApiError::RunTokenRequest { .. } => "run_token.invalid_request",
            ApiError::RunTokenNotFound => "run_token.not_found",
            ApiError::InvokeRequest { .. } => "invoke.invalid_request",
            ApiError::HookSecretRequired => "hook.secret_required",
            ApiError::HookSecretInvalid => "hook.secret_invalid",
            ApiError::TriggerNotFound { .. } => "trigger.not_found",
            ApiError::TriggerPaused(_) => "trigger.paused",
            ApiError::HookBody { .. } => "hook.invalid_body",
            ApiError::ScheduleRequest { .. } => "schedule.invalid_request",
            ApiError::RunEnded { .. } => "invoke.run_ended_without_answer",
            ApiError::RunStillGoing { .. } => "invoke.run_still_going",
            ApiError::RunInputTooLarge { .. } => "run.input_too_large",
            ApiError::RateLimited { .. } => "run.rate_limited",
            ApiError::RevisionRequired => "graph.revision_required",
            ApiError::RevisionMalformed(_) => "graph.revision_malformed",
            ApiError::RevisionConflict { .. } => "graph.revision_conflict",
            ApiError::RunNotFound => "run.not_found",
            ApiError::AttachmentNotFound => "attachment.not_found",
            ApiError::AttachmentUnsupported { .. } => "attachment.unsupported",
            ApiError::RunInput { .. } => "run.invalid_input",
            ApiError::GraphInvalid(_) => "run.graph_invalid",
            ApiError::CommandsDisabled { .. } => "run.commands_disabled",
            ApiError::RunFinished(_) => "run.not_running",
            ApiError::SummariesRequest { .. } => "summaries.invalid_request",
            ApiError::TooManyGraphs { .. } => "summaries.too_many_graphs",
            ApiError::DecisionTokenRequired => "decision.token_required",
            ApiError::DecisionTokenInvalid => "decision.token_invalid",
            ApiError::DecisionRequest { .. } => "decision.invalid_request",
            ApiError::DecisionNotWaiting { .. } => "decision.not_waiting",
            ApiError::DecisionAlreadyTaken { .. } => "decision.already_taken",
            ApiError::DecisionTimedOut { .. } => "decision.timed_out",
            ApiError::RoomRequest { .. } => "room.invalid_request",
            ApiError::RoomConnectionInvalid => "room.connection_invalid",
            ApiError::RoomRateLimited { .. } => "room.rate_limited",
            ApiError::Internal(_) => "internal",
        }
    }

    pub fn message(&self) -> String {
        match self {
            ApiError::Document(error) => error.to_string(),
            ApiError::TooLarge { max_bytes } => {
                format!("the request body is larger than the limit of {max_bytes} bytes")
            }
            ApiError::OverLimit(exceeded) => exceeded.message.clone(),
            ApiError::UnsupportedMediaType => {
                "send the body as JSON, with Content-Type: application/json".to_owned()
            }
            ApiError::GraphNotFound => "there is no graph with this id".to_owned(),
            ApiError::RevisionNotFound(revision) => {
                format!("the graph has no revision {revision}")
            }
            ApiError::RevisionsQuery { path, message } => format!("{path}: {message}"),
            ApiError::RouteNotFound => "there is no such API endpoint".to_owned(),
            ApiError::MethodNotAllowed => "this endpoint does not take that method".to_owned(),
            ApiError::EditTokenRequired(action) => format!(
                "{action} needs the graph's edit token (Authorization: Bearer <token>); with a view link, fork the graph and use the copy"
            ),
            ApiError::StarterTokenRequired(action) => format!(
                "{action} needs the graph's edit token or one of its run tokens (Authorization: Bearer <token>); with a view link, fork the graph and use the copy"
            ),
            ApiError::AccessKeyRequired => "this server needs its access key to change anything: open the link with ?key=… its operator gave you, or send X-Patchbay-Access-Key".to_owned(),
            ApiError::AccessKeyInvalid => "the access key is not this server's".to_owned(),
            ApiError::SandboxUnavailable { message, .. } => message.clone(),
            ApiError::RunFromInvalid { message, .. } => {
                format!("this run cannot start from a recorded one: {message}")
            }
            ApiError::RunInputTooLarge { max_bytes } => format!(
                "the run's input (text and files) is larger than the limit of {max_bytes} bytes"
            ),
            ApiError::RateLimited {
                per_minute,
                retry_after_seconds,
            } => format!(
                "too many runs started from this address (at most {per_minute} a minute); try again in {retry_after_seconds} s"
            ),
            ApiError::EditTokenInvalid => "the edit token does not match this graph".to_owned(),
            ApiError::RevisionRequired => {
                "saving needs If-Match: <revision>, the revision the edit started from".to_owned()
            }
            ApiError::RevisionMalformed(value) => {
                format!("If-Match must be a revision number, not \"{value}\"")
            }
            ApiError::RevisionConflict { current } => format!(
                "the graph was saved by someone else since; it is now at revision {current}"
            ),
            ApiError::RunNotFound => "there is no run with this id".to_owned(),
            ApiError::RunTokenRequest { path, message }
            | ApiError::InvokeRequest { path, message } => format!("{path}: {message}"),
            ApiError::RunTokenNotFound => "this graph has no run token with this id".to_owned(),
            ApiError::HookSecretRequired => "a webhook delivery needs its trigger's secret: X-Patchbay-Secret: <secret>, Authorization: Bearer <secret>, or ?secret=<secret>".to_owned(),
            ApiError::HookSecretInvalid => "the secret is not this webhook's (it may have been rotated)".to_owned(),
            ApiError::TriggerNotFound { trigger, kind } => {
                format!("the graph has no {kind} trigger \"{trigger}\"")
            }
            ApiError::TriggerPaused(trigger) => format!(
                "trigger \"{trigger}\" is paused; its graph's editors can resume it in the Triggers dialog"
            ),
            ApiError::HookBody { path, message } | ApiError::ScheduleRequest { path, message } => {
                format!("{path}: {message}")
            }
            ApiError::RunEnded {
                run_id,
                status,
                error,
            } => format!("run {run_id} ended {status} without an answer: {error}"),
            ApiError::RunStillGoing { run_id } => format!(
                "run {run_id} goes on past the wait; follow it at /api/runs/{run_id}/events"
            ),
            ApiError::AttachmentNotFound => "there is no attachment with this id".to_owned(),
            ApiError::AttachmentUnsupported { name, media_type } => format!(
                "\"{name}\" ({media_type}) cannot be sent to a model: {}",
                graph::reprompt::ACCEPTED_KINDS
            ),
            ApiError::RunInput { message, .. } => {
                format!("the run request must be {{\"input\": {{\"text\", \"files\"}}, \"budget_usd\", \"from\": {{\"run\", \"module\"}}}}: {message}")
            }
            ApiError::GraphInvalid(findings) => {
                let errors = findings
                    .iter()
                    .filter(|finding| finding.severity == graph::Severity::Error)
                    .count();
                format!("the graph has {errors} validation error(s); fix them to run it")
            }
            ApiError::CommandsDisabled { message, .. } => message.clone(),
            ApiError::RunFinished(status) => format!("the run is not in progress (it is {status})"),
            ApiError::SummariesRequest { message, .. } => format!(
                "the request must be {{\"graphs\": [{{\"id\", \"edit_token\"}}]}}: {message}"
            ),
            ApiError::TooManyGraphs { max } => {
                format!("ask about at most {max} graphs at a time")
            }
            ApiError::DecisionTokenRequired => "deciding needs the graph's edit token or an approver link of this run (Authorization: Bearer <token>)".to_owned(),
            ApiError::DecisionTokenInvalid => {
                "the token is neither the graph's edit token nor an approver link of this run"
                    .to_owned()
            }
            ApiError::DecisionRequest { message, .. } => format!(
                "a decision is {{\"decision\": \"approve\" | \"reject\" | \"revise\", \"feedback\"?, \"value\"?}}: {message}"
            ),
            ApiError::DecisionNotWaiting { module } => {
                format!("module {module} is not waiting for a decision")
            }
            ApiError::DecisionAlreadyTaken { module } => {
                format!("someone decided on module {module} first")
            }
            ApiError::DecisionTimedOut { module } => format!(
                "nobody decided on module {module} in time: its timeout came first, and its value went to timeout_out"
            ),
            ApiError::RoomRequest { path, message } => format!("{path}: {message}"),
            ApiError::RoomConnectionInvalid => "the connection and its secret are not one this graph's room gave: open the graph's event stream (GET /api/graphs/{id}/room) and use its hello".to_owned(),
            ApiError::RoomRateLimited { retry_after_millis } => format!(
                "too many changes or presence updates from this connection; try again in {retry_after_millis} ms"
            ),
            ApiError::Internal(_) => "the server failed; the error is in its log".to_owned(),
        }
    }

    pub fn details(&self) -> Option<Value> {
        match self {
            ApiError::Document(error) if !error.path.is_empty() => {
                Some(json!({ "path": error.path }))
            }
            ApiError::TooLarge { max_bytes } => Some(json!({ "max_bytes": max_bytes })),
            ApiError::RevisionsQuery { path, .. } => Some(json!({ "path": path })),
            ApiError::OverLimit(exceeded) => Some(json!({ "limit": exceeded.limit })),
            ApiError::RevisionConflict { current } => Some(json!({ "current_revision": current })),
            ApiError::RunInput { path, .. } => Some(json!({ "path": path })),
            ApiError::GraphInvalid(findings) => Some(json!({ "findings": findings })),
            ApiError::CommandsDisabled { module, .. } => Some(json!({ "module_id": module })),
            ApiError::SandboxUnavailable { module, .. } => Some(json!({ "module_id": module })),
            ApiError::RunInputTooLarge { max_bytes } => Some(json!({ "max_bytes": max_bytes })),
            ApiError::RunFromInvalid {
                module: Some(module),
                ..
            } => Some(json!({ "module_id": module, "path": "from" })),
            ApiError::RunFromInvalid { module: None, .. } => Some(json!({ "path": "from" })),
            ApiError::RateLimited {
                per_minute,
                retry_after_seconds,
            } => Some(json!({
                "per_minute": per_minute,
                "retry_after_seconds": retry_after_seconds,
            })),
            ApiError::RunFinished(status) => Some(json!({ "status": status })),
            ApiError::AttachmentUnsupported { media_type, .. } => {
                Some(json!({ "media_type": media_type }))
            }
            ApiError::SummariesRequest { path, .. } => Some(json!({ "path": path })),
            ApiError::TooManyGraphs { max } => Some(json!({ "max_graphs": max })),
            ApiError::DecisionRequest { path, .. }
            | ApiError::RoomRequest { path, .. }
            | ApiError::RunTokenRequest { path, .. }
            | ApiError::InvokeRequest { path, .. }
            | ApiError::HookBody { path, .. }
            | ApiError::ScheduleRequest { path, .. } => Some(json!({ "path": path })),
            ApiError::TriggerNotFound { trigger, .. } | ApiError::TriggerPaused(trigger) => {
                Some(json!({ "trigger_id": trigger }))
            }
            ApiError::RunEnded { run_id, .. } | ApiError::RunStillGoing { run_id } => {
                Some(json!({ "run_id": run_id, "url": format!("/api/runs/{run_id}") }))
            }
            ApiError::RoomRateLimited { retry_after_millis } => {
                Some(json!({ "retry_after_millis": retry_after_millis }))
            }
            ApiError::DecisionNotWaiting { module }
            | ApiError::DecisionAlreadyTaken { module }
            | ApiError::DecisionTimedOut { module } => Some(json!({ "module_id": module })),
            _ => None,
        }
    }

    /// The JSON body of this error.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code().to_owned(),
                message: self.message(),
                details: self.details(),
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(detail) = &self {
            tracing::error!(%detail, "request failed");
        }
        let mut response = (
            self.status(),
            [(CONTENT_TYPE, "application/json")],
            serde_json::to_string(&self.body()).unwrap_or_default(),
        )
            .into_response();
        if let ApiError::RateLimited {
            retry_after_seconds,
            ..
        } = self
        {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(retry_after_seconds));
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        ApiError::Internal(error.to_string())
    }
}

impl From<LoadError> for ApiError {
    fn from(error: LoadError) -> ApiError {
        ApiError::Document(error)
    }
}

impl ApiError {
    /// One error of each kind the API answers, for the OpenAPI document's
    /// list of codes (`openapi.rs`); a test holds it to every code `code`
    /// can give.
    pub fn samples() -> Vec<ApiError> {
        let text = || String::from("sample");
        let path_and_message = || (text(), text());
        let mut samples: Vec<ApiError> = [
            LoadErrorKind::Syntax,
            LoadErrorKind::Shape,
            LoadErrorKind::Format,
            LoadErrorKind::Identity,
        ]
        .into_iter()
        .map(|kind| {
            ApiError::Document(LoadError {
                kind,
                path: text(),
                message: text(),
            })
        })
        .collect();
        let (path, message) = path_and_message();
        samples.extend([
            ApiError::TooLarge { max_bytes: 0 },
            ApiError::OverLimit(LimitExceeded {
                limit: "modules",
                message: text(),
            }),
            ApiError::UnsupportedMediaType,
            ApiError::GraphNotFound,
            ApiError::RevisionNotFound(text()),
            ApiError::RevisionsQuery {
                path: path.clone(),
                message: message.clone(),
            },
            ApiError::RouteNotFound,
            ApiError::MethodNotAllowed,
            ApiError::EditTokenRequired(""),
            ApiError::StarterTokenRequired(""),
            ApiError::EditTokenInvalid,
            ApiError::AccessKeyRequired,
            ApiError::AccessKeyInvalid,
            ApiError::RevisionRequired,
            ApiError::RevisionMalformed(text()),
            ApiError::RevisionConflict { current: 0 },
            ApiError::RunNotFound,
            ApiError::AttachmentNotFound,
            ApiError::AttachmentUnsupported {
                name: text(),
                media_type: text(),
            },
            ApiError::RunInput {
                path: path.clone(),
                message: message.clone(),
            },
            ApiError::GraphInvalid(Vec::new()),
            ApiError::CommandsDisabled {
                module: text(),
                message: message.clone(),
            },
            ApiError::SandboxUnavailable {
                module: text(),
                message: message.clone(),
            },
            ApiError::RunFromInvalid {
                module: None,
                message: message.clone(),
            },
            ApiError::RunInputTooLarge { max_bytes: 0 },
            ApiError::RateLimited {
                per_minute: 0,
                retry_after_seconds: 0,
            },
            ApiError::RunFinished(text()),
            ApiError::SummariesRequest {
                path: path.clone(),
                message: message.clone(),
            },
            ApiError::TooManyGraphs { max: 0 },
            ApiError::DecisionTokenRequired,
            ApiError::DecisionTokenInvalid,
            ApiError::DecisionRequest {
                path: path.clone(),
                message: message.clone(),
            },
            ApiError::DecisionNotWaiting { module: text() },
            ApiError::DecisionAlreadyTaken { module: text() },
            ApiError::DecisionTimedOut { module: text() },
            ApiError::RoomRequest {
                path: path.clone(),
                message: message.clone(),
            },
            ApiError::RoomConnectionInvalid,
            ApiError::RoomRateLimited {
                retry_after_millis: 0,
            },
            ApiError::RunTokenRequest {
                path: path.clone(),
                message: message.clone(),
            },
            ApiError::RunTokenNotFound,
            ApiError::InvokeRequest {
                path: path.clone(),
                message: message.clone(),
            },
            ApiError::RunEnded {
                run_id: text(),
                status: text(),
                error: text(),
            },
            ApiError::RunStillGoing { run_id: text() },
            ApiError::HookSecretRequired,
            ApiError::HookSecretInvalid,
            ApiError::TriggerNotFound {
                trigger: text(),
                kind: "webhook",
            },
            ApiError::TriggerPaused(text()),
            ApiError::HookBody {
                path: path.clone(),
                message: message.clone(),
            },
            ApiError::ScheduleRequest { path, message },
            ApiError::Internal(text()),
        ]);
        samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code `code` spells (read from this file's source) is the code
    /// of a sample, so the OpenAPI document lists them all.
    #[test]
    fn the_samples_give_every_code() {
        let source = include_str!("error.rs");
        let start = source.find("pub fn code(&self)").unwrap();
        let end = start + source[start..].find("pub fn message(&self)").unwrap();
        let mut spelled: Vec<&str> = source[start..end]
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|word| word.contains('.') || *word == "internal")
            .collect();
        spelled.extend([
            "document.malformed_json",
            "document.invalid",
            "document.unsupported_format",
            "document.duplicate_id",
        ]);
        spelled.sort_unstable();
        spelled.dedup();
        let mut sampled: Vec<&str> = ApiError::samples().iter().map(ApiError::code).collect();
        sampled.sort_unstable();
        sampled.dedup();
        assert_eq!(sampled, spelled);
        for sample in ApiError::samples() {
            assert_ne!(sample.message(), "", "{}", sample.code());
        }
    }
}
