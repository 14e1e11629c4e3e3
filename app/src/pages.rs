//! The pages: a graph at `/g/{id}`, and the not-found page.

use leptos::either::Either;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::canvas::Canvas;
use crate::data::{PageError, load_graph};

/// Says whether this browser holds the graph's edit token. Unknown until the
/// page has hydrated: the server cannot see the browser's storage.
#[component]
fn AccessBadge(graph_id: String) -> impl IntoView {
    let editable = RwSignal::new(None::<bool>);
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        editable.set(Some(crate::edit_token::capture(&graph_id)));
        #[cfg(not(feature = "hydrate"))]
        let _ = &graph_id;
    });
    move || match editable.get() {
        None => view! { <span class="access-badge"></span> }.into_any(),
        Some(true) => view! { <span class="access-badge editable">"Editing"</span> }.into_any(),
        Some(false) => view! { <span class="access-badge read-only">"View only"</span> }.into_any(),
    }
}

#[component]
pub fn GraphPage() -> impl IntoView {
    let params = use_params_map();
    let graph_id = move || params.read().get("id").unwrap_or_default();
    let graph = Resource::new_blocking(graph_id, load_graph);
    #[cfg(feature = "ssr")]
    let response = use_context::<leptos_axum::ResponseOptions>();
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading graph…"</p> }>
            {move || {
                #[cfg(feature = "ssr")]
                let response = response.clone();
                Suspend::new(async move {
                    match graph.await {
                        Ok(graph) => {
                            let id = graph.id.clone().unwrap_or_default();
                            let name = graph.name.clone();
                            let revision = graph.revision;
                            Either::Left(view! {
                                <div class="editor">
                                    <header class="toolbar">
                                        <a class="brand" href="/" title="New graph">"Patchbay"</a>
                                        <h1 class="graph-name">{name}</h1>
                                        <span class="revision" title="Saved revision">"rev " {revision}</span>
                                        <AccessBadge graph_id=id/>
                                    </header>
                                    <Canvas graph/>
                                </div>
                            })
                        }
                        Err(error) => {
                            #[cfg(feature = "ssr")]
                            if let Some(response) = &response {
                                response.set_status(match error {
                                    PageError::NotFound => http::StatusCode::NOT_FOUND,
                                    PageError::Unavailable(_) => http::StatusCode::SERVICE_UNAVAILABLE,
                                });
                            }
                            Either::Right(match error {
                                PageError::NotFound => view! {
                                    <NotFound message="There is no graph at this address. It may have been mistyped, or the link is incomplete."/>
                                }.into_any(),
                                PageError::Unavailable(message) => view! {
                                    <NotFound message=format!("The graph could not be loaded: {message}")/>
                                }.into_any(),
                            })
                        }
                    }
                })
            }}
        </Suspense>
    }
}

#[component]
pub fn NotFound(#[prop(into)] message: String) -> impl IntoView {
    // The status is set by whoever renders this: the graph page, or the
    // server's fallback for unknown paths (404).
    view! {
        <main class="not-found">
            <h1>"Not found"</h1>
            <p>{message}</p>
            <p><a href="/">"Start a new graph"</a></p>
        </main>
    }
}
