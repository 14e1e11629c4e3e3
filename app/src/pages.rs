//! The pages: a graph at `/g/{id}` (the editor), and the not-found page.

use leptos::either::Either;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::data::{PageError, load_graph};
use crate::editor::Editor;

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
                        Ok(graph) => Either::Left(view! { <Editor graph/> }),
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
