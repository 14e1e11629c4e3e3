//! Server side of the pages: `/` sends a visitor on (a self-contained link
//! to `/open`, anyone else to `/new`), `/new` starts a new graph from the
//! starter example, and the pages read graphs and runs from the store while
//! rendering.

use std::sync::Arc;

use app::data::server::{GraphFuture, GraphSource, GraphSourceHandle, RunFuture};
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, LOCATION};
use axum::response::{Html, IntoResponse, Response};
use graph::Graph;
use graph::starter::starter_graph;

use crate::capability::is_graph_id;
use crate::error::ApiError;
use crate::graphs_api::create_graph;
use crate::runs_api::run_document;
use crate::state::AppState;
use crate::store::Store;

/// `/`. A self-contained link (`/#graph=…`) carries the graph in the
/// fragment, which never reaches the server, so the page decides in the
/// browser; without script it offers a new graph.
const ROOT_PAGE: &str = r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Patchbay</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<script nonce="NONCE">
location.replace(location.hash.indexOf("#graph=") === 0 ? "/open" + location.hash : "/new");
</script>
</head><body>
<noscript><p>Patchbay needs JavaScript. <a href="/new">Start a new graph</a></p></noscript>
</body></html>
"##;

pub async fn root() -> Response {
    let nonce = crate::capability::new_nonce();
    let policy = crate::headers::page_policy(&nonce);
    (
        [
            (CACHE_CONTROL, "no-store".to_owned()),
            (CONTENT_SECURITY_POLICY, policy),
        ],
        Html(ROOT_PAGE.replace("NONCE", &nonce)),
    )
        .into_response()
}

/// `/new`: a new graph from the starter example, then to its page. The edit
/// token rides in the fragment, which browsers keep across the redirect and
/// never send to a server.
pub async fn new_graph(State(state): State<AppState>) -> Result<Response, ApiError> {
    let created = create_graph(&state, starter_graph(), None).await?;
    let location = format!("/g/{}#edit={}", created.id, created.edit_token);
    Ok((
        StatusCode::SEE_OTHER,
        [(LOCATION, location), (CACHE_CONTROL, "no-store".to_owned())],
    )
        .into_response())
}

struct StoreGraphSource(Store);

impl GraphSource for StoreGraphSource {
    fn graph(&self, id: String) -> GraphFuture {
        let store = self.0.clone();
        Box::pin(async move {
            if !is_graph_id(&id) {
                return Ok(None);
            }
            let Some(stored) = store.graph(&id).await.map_err(|error| {
                tracing::error!(%error, graph = %id, "reading a graph for its page failed");
                "the graph store failed".to_owned()
            })?
            else {
                return Ok(None);
            };
            Graph::load(&stored.document).map(Some).map_err(|error| {
                tracing::error!(%error, graph = %id, "a stored graph does not load");
                "the stored graph could not be read".to_owned()
            })
        })
    }

    fn run(&self, id: String) -> RunFuture {
        let store = self.0.clone();
        Box::pin(async move {
            match run_document(&store, &id).await {
                Ok(document) => Ok(document.map(|document| document.to_string())),
                Err(error) => {
                    tracing::error!(error = %error.message(), run = %id, "reading a run for its page failed");
                    Err("the run store failed".to_owned())
                }
            }
        })
    }
}

pub fn graph_source(store: Store) -> GraphSourceHandle {
    GraphSourceHandle(Arc::new(StoreGraphSource(store)))
}
