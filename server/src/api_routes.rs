//! The API's routes, each once (PRODUCT §6): its method and path, who may
//! call it, what it takes and answers (`wire` types), and the handler. The
//! router serves exactly this list and the OpenAPI document
//! (`openapi.rs`) describes exactly it, so neither can leave a route out.

use axum::extract::DefaultBodyLimit;
use axum::http::Method;
use axum::routing::{MethodRouter, delete, get, post, put};
use schemars::{JsonSchema, Schema, SchemaGenerator};

use crate::state::AppState;
use crate::{
    attachments_api, decisions_api, estimate_api, graphs_api, health_api, hooks_api, invoke_api,
    metrics_api, openai_api, revisions_api, room_api, run_tokens_api, runs_api, summaries_api,
    triggers_api,
};

/// Writes a type's JSON Schema into the document's components.
pub type SchemaOf = fn(&mut SchemaGenerator) -> Schema;

pub fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// What a request or a response carries.
#[derive(Clone, Copy)]
pub enum Content {
    Nothing,
    Json(SchemaOf),
    /// Bytes of the named media type (`*/*`: any).
    Bytes(&'static str),
    /// Server-Sent Events.
    Events,
}

/// Who may call a route (PRODUCT §5, §6.2, §6.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Credential {
    /// Anyone who reaches the server (with the access key when it has one,
    /// for what changes something).
    Anyone,
    /// The graph's edit token.
    EditToken,
    /// The edit token or one of the graph's run tokens.
    EditOrRunToken,
    /// The edit token or an approver link's token of the run.
    EditOrApproverToken,
    /// A webhook trigger's secret.
    TriggerSecret,
    /// The access key, when the server has one.
    AccessKey,
}

/// A header or query parameter besides the path's.
#[derive(Clone, Copy)]
pub struct Parameter {
    pub name: &'static str,
    pub location: &'static str,
    pub required: bool,
    pub description: &'static str,
}

const IF_MATCH: Parameter = Parameter {
    name: "If-Match",
    location: "header",
    required: true,
    description: "The revision the edit started from (`7` or `\"7\"`).",
};
const IDEMPOTENCY_KEY: Parameter = Parameter {
    name: "Idempotency-Key",
    location: "header",
    required: false,
    description: "1–255 visible ASCII characters: a retry within a day answers the first request's run.",
};

pub struct Route {
    pub method: Method,
    pub path: &'static str,
    pub summary: &'static str,
    pub credential: Credential,
    pub parameters: &'static [Parameter],
    pub request: Content,
    /// Each success status and what it carries; errors are the error body.
    pub responses: &'static [(u16, Content)],
    pub serve: MethodRouter<AppState>,
}

macro_rules! json {
    ($type:ty) => {
        Content::Json(schema::<$type>)
    };
}

/// Every route of the API, `/api` and beyond it.
/// Every route of the API, `/api` and beyond it.
pub fn routes(state: &AppState) -> Vec<Route> {
    let run_limit = DefaultBodyLimit::max(crate::router::max_run_request_bytes(state));
    let mut routes = editing_routes();
    routes.extend(starting_routes(run_limit));
    routes.extend(reading_routes());
    routes.extend(server_routes(run_limit));
    routes
}

/// Creating, reading, saving and editing graphs together.
fn editing_routes() -> Vec<Route> {
    use Credential::*;
    vec![
        Route {
            method: Method::POST,
            path: "/api/graphs",
            summary: "Create a graph from a document; the edit token is shown this once",
            credential: AccessKey,
            parameters: &[],
            request: json!(graph::Graph),
            responses: &[(201, json!(wire::graphs::GraphCreated))],
            serve: post(graphs_api::create),
        },
        Route {
            method: Method::POST,
            path: "/api/graphs/summaries",
            summary: "Describe the graphs whose edit tokens the caller holds",
            credential: Anyone,
            parameters: &[],
            request: json!(wire::graphs::SummariesRequest),
            responses: &[(200, json!(wire::graphs::Summaries))],
            serve: post(summaries_api::summaries),
        },
        Route {
            method: Method::GET,
            path: "/api/graphs/{id}",
            summary: "The graph's document, with its revision as the ETag",
            credential: Anyone,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, json!(graph::Graph))],
            serve: get(graphs_api::get),
        },
        Route {
            method: Method::PUT,
            path: "/api/graphs/{id}",
            summary: "Save the document over the revision If-Match names",
            credential: EditToken,
            parameters: &[IF_MATCH],
            request: json!(graph::Graph),
            responses: &[(200, json!(wire::graphs::GraphSaved))],
            serve: put(graphs_api::update),
        },
        Route {
            method: Method::POST,
            path: "/api/graphs/{id}/fork",
            summary: "A copy under a new id and edit token (its triggers paused)",
            credential: AccessKey,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(201, json!(wire::graphs::GraphCreated))],
            serve: post(graphs_api::fork),
        },
        Route {
            method: Method::GET,
            path: "/api/graphs/{id}/room",
            summary: "What people editing the graph do, as it happens",
            credential: Anyone,
            parameters: &[Parameter {
                name: "since",
                location: "query",
                required: false,
                description: "The revision the page has.",
            }],
            request: Content::Nothing,
            responses: &[(200, Content::Events)],
            serve: get(room_api::stream),
        },
        Route {
            method: Method::POST,
            path: "/api/graphs/{id}/presence",
            summary: "Where a person is in the graph",
            credential: Anyone,
            parameters: &[],
            request: json!(wire::room::PresenceUpdate),
            responses: &[(204, Content::Nothing)],
            serve: post(room_api::presence),
        },
        Route {
            method: Method::POST,
            path: "/api/graphs/{id}/changes",
            summary: "Edits made on a revision, applied in the server's order",
            credential: EditToken,
            parameters: &[],
            request: json!(wire::room::ChangeRequest),
            responses: &[(200, json!(wire::room::ChangeAccepted))],
            serve: post(room_api::changes),
        },
        Route {
            method: Method::POST,
            path: "/api/graphs/{id}/attachments",
            summary: "Upload a file for the graph's prompts",
            credential: EditToken,
            parameters: &[Parameter {
                name: "X-Filename",
                location: "header",
                required: false,
                description: "The file's name.",
            }],
            request: Content::Bytes("*/*"),
            responses: &[(201, json!(wire::graphs::AttachmentStored))],
            serve: post(attachments_api::upload),
        },
        Route {
            method: Method::GET,
            path: "/api/attachments/{id}",
            summary: "A file uploaded for a graph",
            credential: Anyone,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, Content::Bytes("*/*"))],
            serve: get(attachments_api::download),
        },
    ]
}

/// Starting runs: by the editors, run tokens and triggers.
fn starting_routes(run_limit: DefaultBodyLimit) -> Vec<Route> {
    use Credential::*;
    vec![
        Route {
            method: Method::POST,
            path: "/api/graphs/{id}/runs",
            summary: "Run the graph's current revision",
            credential: EditOrRunToken,
            parameters: &[],
            request: json!(wire::run::StartRun),
            responses: &[(201, json!(wire::run::RunStarted))],
            serve: post(runs_api::start).layer(run_limit),
        },
        Route {
            method: Method::GET,
            path: "/api/graphs/{id}/runs",
            summary: "The graph's runs, newest first, each with how it started",
            credential: EditToken,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(
                200,
                json!(wire::run::RunList<wire::run::WithStartedBy<wire::RunSummary>>),
            )],
            serve: get(runs_api::list),
        },
        Route {
            method: Method::POST,
            path: "/api/graphs/{id}/invoke",
            summary: "Start a run and answer its outputs when it ends within the wait",
            credential: EditOrRunToken,
            parameters: &[IDEMPOTENCY_KEY],
            request: json!(wire::invoke::Invoke),
            responses: &[
                (200, json!(wire::invoke::Invoked)),
                (202, json!(wire::invoke::Invoked)),
            ],
            serve: post(invoke_api::invoke).layer(run_limit),
        },
        Route {
            method: Method::POST,
            path: "/api/graphs/{id}/run-tokens",
            summary: "Make a run token (shown this once)",
            credential: EditToken,
            parameters: &[],
            request: json!(wire::run_tokens::NewRunToken),
            responses: &[(201, json!(wire::run_tokens::RunTokenMade))],
            serve: post(run_tokens_api::make),
        },
        Route {
            method: Method::GET,
            path: "/api/graphs/{id}/run-tokens",
            summary: "The graph's run tokens, never a token itself",
            credential: EditToken,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, json!(wire::run_tokens::RunTokenList))],
            serve: get(run_tokens_api::list),
        },
        Route {
            method: Method::DELETE,
            path: "/api/graphs/{id}/run-tokens/{token_id}",
            summary: "Revoke a run token",
            credential: EditToken,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(204, Content::Nothing)],
            serve: delete(run_tokens_api::revoke),
        },
        Route {
            method: Method::GET,
            path: "/api/graphs/{id}/triggers",
            summary: "The graph's triggers with next times and webhook addresses",
            credential: EditToken,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, json!(wire::triggers::TriggerList))],
            serve: get(triggers_api::list),
        },
        Route {
            method: Method::POST,
            path: "/api/graphs/{id}/triggers/{trigger_id}/secret",
            summary: "Make or rotate a webhook trigger's secret (shown this once)",
            credential: EditToken,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(201, json!(wire::triggers::TriggerSecretMade))],
            serve: post(triggers_api::make_secret),
        },
        Route {
            method: Method::POST,
            path: "/api/schedules/next",
            summary: "When a schedule would fall next",
            credential: Anyone,
            parameters: &[],
            request: json!(wire::triggers::NextTimesRequest),
            responses: &[(200, json!(wire::triggers::NextTimes))],
            serve: post(triggers_api::next_times),
        },
    ]
}

/// A graph's history and runs: reading, cancelling, deciding.
fn reading_routes() -> Vec<Route> {
    use Credential::*;
    vec![
        Route {
            method: Method::GET,
            path: "/api/graphs/{id}/estimate",
            summary: "Each module's average cost over the graph's last runs",
            credential: EditToken,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, json!(wire::cost::Estimate))],
            serve: get(estimate_api::estimate),
        },
        Route {
            method: Method::GET,
            path: "/api/graphs/{id}/revisions",
            summary: "The graph's history, newest first",
            credential: EditToken,
            parameters: &[
                Parameter {
                    name: "limit",
                    location: "query",
                    required: false,
                    description: "1–200 revisions (50).",
                },
                Parameter {
                    name: "before",
                    location: "query",
                    required: false,
                    description: "The revision to page on from.",
                },
            ],
            request: Content::Nothing,
            responses: &[(200, json!(wire::graphs::RevisionList))],
            serve: get(revisions_api::list),
        },
        Route {
            method: Method::GET,
            path: "/api/graphs/{id}/revisions/{revision}",
            summary: "One revision's document",
            credential: EditToken,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, json!(graph::Graph))],
            serve: get(revisions_api::get),
        },
        Route {
            method: Method::GET,
            path: "/api/runs/{id}",
            summary: "A run: its input, snapshot, and every activation of every module",
            credential: Anyone,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, json!(wire::run::WithStartedBy<wire::run::RunRecord>))],
            serve: get(runs_api::get),
        },
        Route {
            method: Method::POST,
            path: "/api/runs/{id}/cancel",
            summary: "Cancel a run in progress",
            credential: EditToken,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(202, json!(wire::run::Cancelling))],
            serve: post(runs_api::cancel),
        },
        Route {
            method: Method::POST,
            path: "/api/runs/{id}/modules/{module_id}/decision",
            summary: "Decide a waiting approval, or a tool call waiting for a person",
            credential: EditOrApproverToken,
            parameters: &[],
            request: json!(wire::approval::DecisionRequest),
            responses: &[(200, json!(wire::ActivationRecord))],
            serve: post(decisions_api::decide),
        },
        Route {
            method: Method::POST,
            path: "/api/runs/{id}/approver-links",
            summary: "A new approver link of the run",
            credential: EditToken,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(201, json!(wire::approval::ApproverLink))],
            serve: post(decisions_api::approver_link),
        },
        Route {
            method: Method::GET,
            path: "/api/runs/{id}/events",
            summary: "The run's events as they happen (Last-Event-ID to resume)",
            credential: Anyone,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, Content::Events)],
            serve: get(runs_api::events),
        },
    ]
}

/// The server's own: what it offers, its health, this document, webhooks, the OpenAI-compatible endpoint and metrics.
fn server_routes(run_limit: DefaultBodyLimit) -> Vec<Route> {
    use Credential::*;
    vec![
        Route {
            method: Method::GET,
            path: "/api/providers",
            summary: "The providers, coding agents and MCP servers this server offers",
            credential: Anyone,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, json!(wire::providers::Catalogue))],
            serve: get(runs_api::providers),
        },
        Route {
            method: Method::POST,
            path: "/api/validate",
            summary: "The findings of a posted document",
            credential: Anyone,
            parameters: &[],
            request: json!(graph::Graph),
            responses: &[(200, json!(wire::graphs::ValidationReport))],
            serve: post(graphs_api::validate_document),
        },
        Route {
            method: Method::GET,
            path: "/api/health",
            summary: "Whether the database answers with every migration",
            credential: Anyone,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, json!(wire::health::Health))],
            serve: get(health_api::health),
        },
        Route {
            method: Method::GET,
            path: "/api/openapi.json",
            summary: "This document",
            credential: Anyone,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, Content::Json(crate::openapi::any_object))],
            serve: get(crate::openapi::document),
        },
        Route {
            method: Method::POST,
            path: "/hooks/{trigger_id}",
            summary: "A webhook delivery: the body is a new run's input",
            credential: TriggerSecret,
            parameters: &[IDEMPOTENCY_KEY],
            request: Content::Bytes("*/*"),
            responses: &[(202, json!(wire::triggers::HookDelivered))],
            serve: post(hooks_api::deliver).layer(run_limit),
        },
        Route {
            method: Method::POST,
            path: "/v1/chat/completions",
            summary: "The graph `graph:<id>` as an OpenAI-compatible model",
            credential: EditOrRunToken,
            parameters: &[],
            request: Content::Json(crate::openapi::any_object),
            responses: &[(200, Content::Json(crate::openapi::any_object))],
            serve: post(openai_api::chat_completions).layer(run_limit),
        },
        Route {
            method: Method::GET,
            path: "/metrics",
            summary: "Prometheus metrics",
            credential: AccessKey,
            parameters: &[],
            request: Content::Nothing,
            responses: &[(200, Content::Bytes("text/plain"))],
            serve: get(metrics_api::metrics),
        },
    ]
}
