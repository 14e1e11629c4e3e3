//! The Patchbay web app (Leptos): the page shell, the routes, the graph page
//! and its canvas. Rendered on the server (`ssr`) and hydrated in the
//! browser (`hydrate`); server-only and browser-only code sit behind those
//! features. The graph model itself lives in the `graph` crate.

// Leptos views are deeply nested types; the detail panels exceed the default.
#![recursion_limit = "512"]

pub mod api;
pub mod approver_token;
pub mod bench;
pub mod browser;
pub mod canvas;
pub mod data;
pub mod edit_token;
pub mod editor;
pub mod home;
pub mod icons;
pub mod link;
pub mod pages;
pub mod routes;
pub mod run;

pub use graph;

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{SsrMode, path};

use pages::NotFound;
use routes::{Page, home_view, page_view};

/// The HTML document around the app.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <title>"Patchbay"</title>
                <link rel="stylesheet" href="/pkg/app.css"/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                <HydrationScripts options/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    view! {
        <Router>
            <Routes fallback=|| view! { <NotFound message="This page does not exist."/> }>
                // Async: the status (404 for an unknown graph) is known before
                // the first byte is sent.
                <Route path=path!("/") view=home_view/>
                // Every page but the home page comes with a part of the
                // bundle of its own (routes.rs).
                <Route path=path!("/g/:id") view=|| page_view(Page::Graph) ssr=SsrMode::Async/>
                <Route path=path!("/g/:id/runs/:run_id") view=|| page_view(Page::Run) ssr=SsrMode::Async/>
                <Route path=path!("/g/:id/revisions/:revision") view=|| page_view(Page::Revision)/>
                <Route path=path!("/open") view=|| page_view(Page::Open)/>
                <Route path=path!("/bench") view=|| page_view(Page::Bench)/>
            </Routes>
        </Router>
    }
}

/// Entry point of the browser bundle.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    // A bug shows its message in the console rather than a bare "unreachable".
    console_error_panic_hook::set_once();
    // The page's part first, then the page in one pass (routes.rs).
    let path = web_sys::window()
        .and_then(|window| window.location().pathname().ok())
        .unwrap_or_default();
    // Leptos' executor starts within hydrate_body: this task is the
    // browser's own.
    wasm_bindgen_futures::spawn_local(async move {
        match routes::load_part_first(&path).await {
            Ok(()) => leptos::mount::hydrate_body(App),
            Err(routes::PartMissing) => routes::say_part_missing(),
        }
    });
}
