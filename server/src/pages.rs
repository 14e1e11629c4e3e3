//! Server side of the pages: `/new` starts a new graph from the starter
//! graph or one of the examples, and the pages read graphs and runs from the
//! store while rendering. (The home page at `/` is the app's.)

use std::sync::Arc;

use app::data::server::{GraphFuture, GraphSource, GraphSourceHandle, RunFuture};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, LOCATION};
use axum::response::{IntoResponse, Response};
use graph::Graph;
use graph::starter::{example, starter_graph};

use crate::capability::is_graph_id;
use crate::error::ApiError;
use crate::graphs_api::create_graph;
use crate::runs_api::run_document;
use crate::state::AppState;
use crate::store::Store;

/// `/new`: a new graph, then to its page: the starter graph, or with
/// `?example=<id>` that example (an id no example has is a 404 page). The
/// edit token rides in the fragment, which browsers keep across the
/// redirect and never send to a server.
pub async fn new_graph(
    State(state): State<AppState>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let asked = match &query {
        Ok(Query(pairs)) => pairs
            .iter()
            .find(|(name, _)| name == "example")
            .map(|(_, id)| Some(id.as_str())),
        // An address no example can be read from.
        Err(_) => Some(None),
    };
    let graph = match asked {
        None => starter_graph(),
        Some(id) => match id.and_then(example) {
            Some(example) => example.graph,
            None => return Ok(no_such_example()),
        },
    };
    let created = create_graph(&state, graph, None).await?;
    let location = format!("/g/{}#edit={}", created.id, created.edit_token);
    Ok((
        StatusCode::SEE_OTHER,
        [(LOCATION, location), (CACHE_CONTROL, "no-store".to_owned())],
    )
        .into_response())
}

/// The 404 page of `/new?example=` with an id no example has (never
/// repeated back: it came from the address).
fn no_such_example() -> Response {
    crate::access::page(
        StatusCode::NOT_FOUND,
        "No such example",
        "This address asks for an example Patchbay does not have. <a href=\"/\">See the examples</a> or <a href=\"/new\">start a new graph</a>.",
    )
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
                Ok(None) => Ok(None),
                Ok(Some(record)) => serde_json::to_string(&record).map(Some).map_err(|error| {
                    tracing::error!(%error, run = %id, "a run record does not serialize");
                    "the run could not be read".to_owned()
                }),
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
