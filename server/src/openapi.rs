//! The API described (PRODUCT §6.6): `GET /api/openapi.json`, an OpenAPI
//! 3.1 document built from the routes the router serves (`api_routes.rs`)
//! and the JSON Schemas of the `wire` types they take and answer — never
//! written by hand. Every error answer is the error body, whose `code` is
//! one of the codes `ApiError` has (`error.rs`).

use std::sync::OnceLock;

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use schemars::generate::{Contract, SchemaSettings};
use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value, json};

use crate::api_routes::{Content, Credential, Parameter, Route, routes};
use crate::error::ApiError;
use crate::state::AppState;

/// A JSON object the document does not describe further.
pub fn any_object(_generator: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object" })
}

/// `GET /api/openapi.json`: built once per process.
pub async fn document(State(state): State<AppState>) -> Response {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    let text = DOCUMENT.get_or_init(|| describe(&routes(&state)).to_string());
    ([(CONTENT_TYPE, "application/json")], text.clone()).into_response()
}

/// The OpenAPI document of `routes`.
pub fn describe(routes: &[Route]) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    // What the server writes: a field it leaves out when empty is optional.
    settings.contract = Contract::Serialize;
    let mut generator = SchemaGenerator::new(settings);
    let mut paths = Map::new();
    for route in routes {
        let operation = operation(route, &mut generator);
        let entry = paths
            .entry(route.path.to_owned())
            .or_insert_with(|| json!({}));
        if let Some(entry) = entry.as_object_mut() {
            entry.insert(route.method.as_str().to_ascii_lowercase(), operation);
        }
    }
    let mut schemas = generator.take_definitions(true);
    schemas.insert("ErrorBody".to_owned(), error_body());
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Patchbay",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Build AI agent task graphs and run them (docs/spec/PRODUCT.md §6). Errors are `{\"error\": {code, message, details}}`; bad input never gets a 500.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "The graph's edit token, one of its run tokens, an approver link's token or a webhook's secret, as each route says.",
                },
                "triggerSecret": { "type": "apiKey", "in": "header", "name": "X-Patchbay-Secret" },
                "accessKey": { "type": "apiKey", "in": "header", "name": "X-Patchbay-Access-Key" },
            },
        },
    })
}

fn operation(route: &Route, generator: &mut SchemaGenerator) -> Value {
    let mut responses = Map::new();
    for (status, content) in route.responses {
        responses.insert(status.to_string(), response(*content, generator));
    }
    responses.insert(
        "default".to_owned(),
        json!({
            "description": "Refused: the error body says why, with a stable code",
            "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ErrorBody" } } },
        }),
    );
    let mut operation = json!({
        "operationId": operation_id(route),
        "summary": route.summary,
        "description": credential_text(route.credential),
        "parameters": parameters(route),
        "responses": responses,
        "security": security(route.credential),
    });
    if let Some(body) = request_body(route.request, generator) {
        operation["requestBody"] = body;
    }
    operation
}

/// `post_api_graphs_id_runs`: unique, as a route's method and path are.
fn operation_id(route: &Route) -> String {
    let path: String = route
        .path
        .chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() {
                character
            } else {
                '_'
            }
        })
        .collect();
    let words: Vec<&str> = path.split('_').filter(|word| !word.is_empty()).collect();
    format!(
        "{}_{}",
        route.method.as_str().to_ascii_lowercase(),
        words.join("_")
    )
}

fn parameters(route: &Route) -> Vec<Value> {
    let in_path = route
        .path
        .split('/')
        .filter_map(|part| part.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| {
            json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } })
        });
    let more = route.parameters.iter().map(|Parameter { name, location, required, description }| {
        json!({ "name": name, "in": location, "required": required, "description": description, "schema": { "type": "string" } })
    });
    in_path.chain(more).collect()
}

fn request_body(content: Content, generator: &mut SchemaGenerator) -> Option<Value> {
    let (media_type, schema) = match content {
        Content::Nothing => return None,
        Content::Json(schema_of) => ("application/json", schema_of(generator).to_value()),
        Content::Bytes(media_type) => (media_type, json!({})),
        Content::Events => ("text/event-stream", event_schema()),
    };
    Some(json!({ "required": true, "content": { media_type: { "schema": schema } } }))
}

fn response(content: Content, generator: &mut SchemaGenerator) -> Value {
    match content {
        Content::Nothing => json!({ "description": "Done; no body" }),
        Content::Json(schema_of) => json!({
            "description": "The answer",
            "content": { "application/json": { "schema": schema_of(generator).to_value() } },
        }),
        Content::Bytes(media_type) => json!({
            "description": "The bytes",
            "content": { media_type: { "schema": {} } },
        }),
        Content::Events => json!({
            "description": "Server-Sent Events, as they happen",
            "content": { "text/event-stream": { "schema": event_schema() } },
        }),
    }
}

/// One Server-Sent Event: its name, its number and its JSON text.
fn event_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "event": { "type": "string" },
            "id": { "type": "string" },
            "data": { "type": "string" },
        },
    })
}

fn credential_text(credential: Credential) -> &'static str {
    match credential {
        Credential::Anyone => {
            "Anyone who reaches the server may call it (with the access key, when the server has one, if it changes something)."
        }
        Credential::EditToken => "Needs the graph's edit token (Authorization: Bearer).",
        Credential::EditOrRunToken => {
            "Needs the graph's edit token or one of its run tokens (Authorization: Bearer); no access key."
        }
        Credential::EditOrApproverToken => {
            "Needs the graph's edit token or an approver link's token of the run (Authorization: Bearer); no access key."
        }
        Credential::TriggerSecret => {
            "Needs the webhook trigger's secret (X-Patchbay-Secret, a bearer token, or ?secret=); no access key."
        }
        Credential::AccessKey => {
            "Needs the server's access key when it has one (X-Patchbay-Access-Key)."
        }
    }
}

fn security(credential: Credential) -> Value {
    match credential {
        Credential::Anyone => json!([{}]),
        Credential::EditToken | Credential::EditOrRunToken | Credential::EditOrApproverToken => {
            json!([{ "bearer": [] }])
        }
        Credential::TriggerSecret => json!([{ "triggerSecret": [] }, { "bearer": [] }]),
        Credential::AccessKey => json!([{}, { "accessKey": [] }]),
    }
}

/// The error body, its code one of those the server answers.
fn error_body() -> Value {
    let mut codes: Vec<&'static str> = ApiError::samples().iter().map(ApiError::code).collect();
    codes.sort_unstable();
    codes.dedup();
    json!({
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {
                    "code": { "type": "string", "enum": codes },
                    "message": { "type": "string" },
                    "details": {},
                },
            },
        },
    })
}
