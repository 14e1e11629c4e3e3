//! The pages: a graph at `/g/{id}` (the editor), a recorded run at
//! `/g/{id}/runs/{run_id}` (read-only), a past revision at
//! `/g/{id}/revisions/{revision}` (read-only, for editors), a graph from a
//! self-contained link at `/open#graph=…`, and the not-found page.

use leptos::either::Either;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::data::{PageError, load_graph, load_run};
use crate::editor::Editor;
use crate::editor::state::EditorMode;
use crate::link;

/// Sets the response status of a page rendered on the server. Taken from
/// context while the page's component runs, before any async work.
#[derive(Clone)]
struct PageStatus(#[cfg(feature = "ssr")] Option<leptos_axum::ResponseOptions>);

impl PageStatus {
    fn current() -> PageStatus {
        PageStatus(
            #[cfg(feature = "ssr")]
            use_context::<leptos_axum::ResponseOptions>(),
        )
    }

    fn failed(&self, error: &PageError) {
        #[cfg(feature = "ssr")]
        if let Some(response) = &self.0 {
            response.set_status(match error {
                PageError::NotFound => http::StatusCode::NOT_FOUND,
                PageError::Unavailable(_) => http::StatusCode::SERVICE_UNAVAILABLE,
            });
        }
        #[cfg(not(feature = "ssr"))]
        let _ = error;
    }
}

/// The page for a graph or run that did not load.
fn load_failed(status: &PageStatus, error: PageError, what: &'static str) -> AnyView {
    status.failed(&error);
    match error {
        PageError::NotFound => view! {
            <NotFound message=format!("There is no {what} at this address. It may have been mistyped, or the link is incomplete.")/>
        }
        .into_any(),
        PageError::Unavailable(message) => view! {
            <NotFound message=format!("The {what} could not be loaded: {message}")/>
        }
        .into_any(),
    }
}

#[component]
pub fn GraphPage() -> impl IntoView {
    let params = use_params_map();
    let graph_id = move || params.read().get("id").unwrap_or_default();
    let graph = Resource::new_blocking(graph_id, load_graph);
    let status = PageStatus::current();
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading graph…"</p> }>
            {move || {
                let status = status.clone();
                Suspend::new(async move {
                    match graph.await {
                        Ok(graph) => Either::Left(view! { <Editor graph/> }),
                        Err(error) => Either::Right(load_failed(&status, error, "graph")),
                    }
                })
            }}
        </Suspense>
    }
}

/// A recorded run, read-only, for anyone with the link: the graph as it ran
/// with every module's final state and outputs (followed live if it is
/// still going).
#[component]
pub fn RunPage() -> impl IntoView {
    let params = use_params_map();
    let ids = move || {
        let params = params.read();
        (
            params.get("id").unwrap_or_default(),
            params.get("run_id").unwrap_or_default(),
        )
    };
    let run = Resource::new_blocking(ids, |(graph_id, run_id)| load_run(graph_id, run_id));
    let status = PageStatus::current();
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading run…"</p> }>
            {move || {
                let status = status.clone();
                Suspend::new(async move {
                    match run.await {
                        Ok(record) => {
                            let graph = record.graph.clone();
                            Either::Left(view! { <Editor graph mode=EditorMode::Recorded record/> })
                        }
                        Err(error) => Either::Right(load_failed(&status, error, "run")),
                    }
                })
            }}
        </Suspense>
    }
}

/// A past revision of a graph, read-only, for the graph's editors: the
/// history needs the edit token, which only this browser has, so the page
/// loads the revision once it is in the browser.
#[component]
pub fn RevisionPage() -> impl IntoView {
    let params = use_params_map();
    let loaded = RwSignal::new(None::<Result<graph::Graph, String>>);
    Effect::new(move |_| {
        let (graph_id, revision) = {
            let params = params.read();
            (
                params.get("id").unwrap_or_default(),
                params.get("revision").unwrap_or_default(),
            )
        };
        leptos::task::spawn_local(async move {
            let Ok(number) = revision.parse::<i64>() else {
                loaded.set(Some(Err(format!(
                    "\"{revision}\" is not a revision number."
                ))));
                return;
            };
            let answer = crate::api::revision(&graph_id, number).await;
            loaded.set(Some(match answer {
                Ok(text) => graph::Graph::load(&text).map_err(|error| error.to_string()),
                Err(error) if error.status() == Some(403) => Err(
                    "Only the graph's editors see its history: open the graph with its edit link in this browser first.".to_owned(),
                ),
                Err(error) if error.status() == Some(404) => Err(format!(
                    "This graph has no revision {number}: it may never have existed, or an older revision was thinned out of the history."
                )),
                Err(error) => Err(format!(
                    "The revision could not be loaded: {}.",
                    error.message_or("the server refused")
                )),
            }));
        });
    });
    move || match loaded.get() {
        None => view! { <p class="loading">"Loading the revision…"</p> }.into_any(),
        Some(Ok(graph)) => view! { <Editor graph mode=EditorMode::Revision/> }.into_any(),
        Some(Err(message)) => view! {
            <NotFound title="This revision cannot be shown" message/>
        }
        .into_any(),
    }
}

/// A graph carried in the address (`/open#graph=…`). The fragment never
/// reaches the server, so the page decodes it in the browser, with code of
/// its own (`decode_link`): a graph's page by its view link or in the editor
/// never fetches it.
#[component]
pub fn OpenPage() -> impl IntoView {
    let opened = RwSignal::new(None::<Result<graph::Graph, String>>);
    Effect::new(move |_| {
        let hash = web_sys::window()
            .and_then(|window| window.location().hash().ok())
            .unwrap_or_default();
        let Some(text) = link::from_fragment(&hash).map(str::to_owned) else {
            opened.set(Some(Err("This address holds no graph: a self-contained link ends in #graph=… followed by the graph.".to_owned())));
            return;
        };
        leptos::task::spawn_local(async move {
            let decoded = decode_link(text)
                .await
                .unwrap_or_else(|_| Err(crate::routes::PART_MISSING.to_owned()));
            opened.set(Some(decoded));
        });
    });
    move || match opened.get() {
        None => view! { <p class="loading">"Opening the graph in this link…"</p> }.into_any(),
        Some(Ok(graph)) => view! { <Editor graph mode=EditorMode::Local/> }.into_any(),
        Some(Err(message)) => {
            view! { <NotFound title="This link cannot be opened" message/> }.into_any()
        }
    }
}

/// Decodes a self-contained link's graph (base64, inflate, the graph's
/// loader).
#[lazy(fallible)]
fn decode_link(text: String) -> Result<Result<graph::Graph, String>, crate::routes::PartMissing> {
    Ok(link::decode(&text).map_err(|error| error.to_string()))
}

#[component]
pub fn NotFound(
    #[prop(into)] message: String,
    #[prop(into, default = "Not found".to_owned())] title: String,
) -> impl IntoView {
    // The status is set by whoever renders this: the graph page, or the
    // server's fallback for unknown paths (404).
    view! {
        <main class="not-found">
            <h1>{title}</h1>
            <p>{message}</p>
            <p><a href="/">"Your graphs"</a>" · "<a href="/new" rel="external">"Start a new graph"</a></p>
        </main>
    }
}
