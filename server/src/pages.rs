//! Server side of the pages: `/` starts a new graph from the starter
//! example, and the graph page reads graphs from the store while rendering.

use std::sync::Arc;

use app::data::server::{GraphFuture, GraphSource, GraphSourceHandle};
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, LOCATION};
use axum::response::{IntoResponse, Response};
use graph::Graph;
use graph::starter::starter_graph;

use crate::capability::is_graph_id;
use crate::error::ApiError;
use crate::graphs_api::create_graph;
use crate::state::AppState;
use crate::store::Store;

/// `/`: a new graph from the starter example, then to its page. The edit
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
}

pub fn graph_source(store: Store) -> GraphSourceHandle {
    GraphSourceHandle(Arc::new(StoreGraphSource(store)))
}
