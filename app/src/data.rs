//! How a page gets its graph or run: read from the store while rendering on
//! the server, fetched from the API in the browser. A hydrating page never
//! fetches: Leptos serialises the server's answer into the page.

use graph::Graph;
use serde::{Deserialize, Serialize};

use wire::RunRecord;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PageError {
    NotFound,
    Unavailable(String),
}

#[cfg(feature = "ssr")]
pub mod server {
    //! The server hands pages a [`GraphSource`] through context, so this
    //! crate does not depend on the server's store.

    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;

    use graph::Graph;

    pub type GraphFuture = Pin<Box<dyn Future<Output = Result<Option<Graph>, String>> + Send>>;
    /// A run as `GET /api/runs/{id}` gives it (JSON text).
    pub type RunFuture = Pin<Box<dyn Future<Output = Result<Option<String>, String>> + Send>>;

    pub trait GraphSource: Send + Sync {
        fn graph(&self, id: String) -> GraphFuture;
        fn run(&self, id: String) -> RunFuture;
    }

    #[derive(Clone)]
    pub struct GraphSourceHandle(pub Arc<dyn GraphSource>);
}

/// Starts loading graph `id`. Context is read here, synchronously, while the
/// caller's reactive owner is current.
#[cfg(feature = "ssr")]
pub fn load_graph(
    id: String,
) -> impl std::future::Future<Output = Result<Graph, PageError>> + Send + 'static {
    let source = leptos::prelude::use_context::<server::GraphSourceHandle>();
    async move {
        let Some(source) = source else {
            return Err(PageError::Unavailable("no graph store".to_owned()));
        };
        match source.0.graph(id).await {
            Ok(Some(graph)) => Ok(graph),
            Ok(None) => Err(PageError::NotFound),
            Err(message) => Err(PageError::Unavailable(message)),
        }
    }
}

#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
pub fn load_graph(
    id: String,
) -> impl std::future::Future<Output = Result<Graph, PageError>> + Send + 'static {
    send_wrapper::SendWrapper::new(async move {
        match crate::api::graph_text(&id).await {
            Ok(body) => {
                Graph::load(&body).map_err(|error| PageError::Unavailable(error.to_string()))
            }
            Err(problem) => Err(page_error(problem)),
        }
    })
}

/// A build with neither `ssr` nor `hydrate` (unit tests of this crate) has
/// nowhere to load from.
#[cfg(not(any(feature = "ssr", feature = "hydrate")))]
pub async fn load_graph(id: String) -> Result<Graph, PageError> {
    Err(PageError::Unavailable(format!(
        "graph {id}: this build renders no data"
    )))
}

/// Reads a run's JSON; a run of another graph is not found under this one.
#[cfg(feature = "ssr")]
fn run_of_graph(graph_id: &str, text: &str) -> Result<RunRecord, PageError> {
    let record: RunRecord = serde_json::from_str(text)
        .map_err(|error| PageError::Unavailable(format!("the run could not be read: {error}")))?;
    of_graph(graph_id, record)
}

/// A run of another graph is not found under this one.
#[cfg(any(feature = "ssr", feature = "hydrate"))]
fn of_graph(graph_id: &str, record: RunRecord) -> Result<RunRecord, PageError> {
    if record.graph_id.as_deref() != Some(graph_id) {
        return Err(PageError::NotFound);
    }
    Ok(record)
}

/// What a page says when the API did not give what it asked for.
#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
fn page_error(problem: crate::api::ApiError) -> PageError {
    use crate::api::ApiError;
    match problem {
        ApiError::Refused { status: 404, .. } => PageError::NotFound,
        ApiError::Refused { status, .. } => {
            PageError::Unavailable(format!("the server answered {status}"))
        }
        ApiError::Unreachable(message) => PageError::Unavailable(message),
        ApiError::Unreadable(error) => PageError::Unavailable(error),
    }
}

/// Starts loading run `run_id` of graph `graph_id`.
#[cfg(feature = "ssr")]
pub fn load_run(
    graph_id: String,
    run_id: String,
) -> impl std::future::Future<Output = Result<RunRecord, PageError>> + Send + 'static {
    let source = leptos::prelude::use_context::<server::GraphSourceHandle>();
    async move {
        let Some(source) = source else {
            return Err(PageError::Unavailable("no run store".to_owned()));
        };
        match source.0.run(run_id).await {
            Ok(Some(text)) => run_of_graph(&graph_id, &text),
            Ok(None) => Err(PageError::NotFound),
            Err(message) => Err(PageError::Unavailable(message)),
        }
    }
}

#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
pub fn load_run(
    graph_id: String,
    run_id: String,
) -> impl std::future::Future<Output = Result<RunRecord, PageError>> + Send + 'static {
    send_wrapper::SendWrapper::new(async move {
        match crate::api::run(&run_id).await {
            Ok(record) => of_graph(&graph_id, record),
            Err(crate::api::ApiError::Unreadable(error)) => Err(PageError::Unavailable(format!(
                "the run could not be read: {error}"
            ))),
            Err(problem) => Err(page_error(problem)),
        }
    })
}

#[cfg(not(any(feature = "ssr", feature = "hydrate")))]
pub async fn load_run(graph_id: String, run_id: String) -> Result<RunRecord, PageError> {
    Err(PageError::Unavailable(format!(
        "run {run_id} of {graph_id}: this build renders no data"
    )))
}
