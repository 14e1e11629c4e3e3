//! Reading a graph document from a request body: content type, size limit,
//! JSON, shape and count limits, each with its own clear error. Nothing is
//! parsed before the caller has checked who is asking.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use graph::{Graph, Limits, LoadError, LoadErrorKind};

use crate::error::ApiError;
use crate::state::AppState;

/// A request body that claims to be JSON and fits the size limit (set on the
/// router with `DefaultBodyLimit`).
pub struct JsonBody(pub Bytes);

impl FromRequest<AppState> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<JsonBody, ApiError> {
        if let Some(content_type) = request.headers().get(CONTENT_TYPE) {
            let essence = content_type
                .to_str()
                .unwrap_or_default()
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            if essence != "application/json" {
                return Err(ApiError::UnsupportedMediaType);
            }
        }
        let limit = state.settings.limits.max_document_bytes;
        match Bytes::from_request(request, state).await {
            Ok(bytes) => Ok(JsonBody(bytes)),
            Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::TooLarge { max_bytes: limit })
            }
            Err(rejection) => Err(ApiError::Document(LoadError {
                kind: LoadErrorKind::Syntax,
                path: String::new(),
                message: format!("the request body could not be read: {rejection}"),
            })),
        }
    }
}

impl JsonBody {
    /// Loads the body as a graph document and checks it against `limits`.
    pub fn into_graph(self, limits: &Limits) -> Result<Graph, ApiError> {
        limits
            .check_size(self.0.len())
            .map_err(|_| ApiError::TooLarge {
                max_bytes: limits.max_document_bytes,
            })?;
        let text = std::str::from_utf8(&self.0).map_err(|error| {
            ApiError::Document(LoadError {
                kind: LoadErrorKind::Syntax,
                path: String::new(),
                message: format!("the body is not UTF-8 text: {error}"),
            })
        })?;
        let graph = Graph::load(text)?;
        limits.check(&graph).map_err(ApiError::OverLimit)?;
        Ok(graph)
    }
}
