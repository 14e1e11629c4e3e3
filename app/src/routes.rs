//! The pages that come with a part of the bundle of their own. The home
//! page needs none of the editor or its canvas, and a graph's page none of
//! the home page, so each page's first load is the main module (the router,
//! the not-found page and what every page shares) and that page's part: the
//! home page's, or the part every other page has.
//!
//! Every such page is the editor around a graph (or, for `/bench`, its
//! canvas alone), so they come from one `#[lazy]` function: one split point
//! makes one part to fetch, where a split point per route made scripts/build
//! cut the code they share into a chunk for every combination of routes that
//! reach it (about ninety fetches for a graph's page). A recorded run's page
//! is the exception: its part (reading a run's record) rides on the graph
//! page's, whose code goes into the chunk they share, so a graph's page,
//! by its view link or in the editor, does without it.
//!
//! Leptos' lazy routes would hydrate a page once its part has arrived, but
//! need tachys' `lazy` feature, which adds asynchronous hydration to every
//! type-erased view: 34 KB gzip more for a view link. Instead the browser
//! fetches the page's part before it hydrates at all (`load_part_first`;
//! the server's page preloads it beside the main module), so a route's
//! `Suspend` is ready on its first poll and hydrates in the same single
//! pass. Navigating to such a page within the app shows nothing until the
//! part has arrived, then the page. A part that cannot be fetched is a
//! message in the page's place, never a panic.

use leptos::prelude::*;

use crate::bench::BenchPage;
use crate::home::HomePage;
use crate::pages::{GraphPage, OpenPage, RevisionPage, RunPage};

/// A page that comes with the lazily loaded part.
#[derive(Clone, Copy)]
pub enum Page {
    /// `/g/{id}`: a graph, in the editor or read-only.
    Graph,
    /// `/g/{id}/runs/{run_id}`: a recorded run.
    Run,
    /// `/g/{id}/revisions/{revision}`: a past revision.
    Revision,
    /// `/open#graph=…`: a graph carried in the address.
    Open,
    /// `/bench`: the canvas benchmark, fetched as a graph's page fetches
    /// its canvas.
    Bench,
}

/// The page's part could not be fetched: the network failed, or the server
/// was updated since the page was loaded.
pub struct PartMissing;

#[cfg(feature = "hydrate")]
impl From<leptos::wasm_split::SplitLoaderError> for PartMissing {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        PartMissing
    }
}

/// What to do about a missing part, said where the page or the panel would
/// be.
pub const PART_MISSING: &str = "Part of this page's code could not be fetched: the connection failed, or Patchbay was updated since this tab loaded it. Reload the page to try again.";

/// The pages of the graph page's part: every page with a part but a
/// recorded run's.
#[derive(Clone, Copy)]
enum GraphPart {
    Graph,
    Revision,
    Open,
    Bench,
}

// Fallible: a part that does not arrive is a message, not a panic that
// stops the whole app.
#[lazy(fallible)]
fn page(which: GraphPart) -> Result<AnyView, PartMissing> {
    Ok(match which {
        GraphPart::Graph => view! { <GraphPage/> }.into_any(),
        GraphPart::Revision => view! { <RevisionPage/> }.into_any(),
        GraphPart::Open => view! { <OpenPage/> }.into_any(),
        GraphPart::Bench => view! { <BenchPage/> }.into_any(),
    })
}

// A recorded run's page: reading a run's record (and hydrating it) is code
// a graph's page never needs first.
#[lazy(fallible)]
fn run_page() -> Result<AnyView, PartMissing> {
    Ok(view! { <RunPage/> }.into_any())
}

// The home page's own part: a view link or an editor fetches none of it.
#[lazy(fallible)]
fn home_part() -> Result<AnyView, PartMissing> {
    Ok(view! { <HomePage/> }.into_any())
}

/// The view of the home page's route.
pub fn home_view() -> impl IntoView {
    Suspend::new(async move { home_part().await.unwrap_or_else(part_missing) })
}

/// The view of a route to a page with the part.
pub fn page_view(which: Page) -> impl IntoView {
    // The page's stylesheet comes with it, as its code does: the home page
    // fetches neither. A link in the body still holds back painting what
    // follows it until it has loaded.
    view! {
        <link rel="stylesheet" href="/pkg/editor.css"/>
        {Suspend::new(async move {
            let part = match which {
                Page::Graph => page(GraphPart::Graph).await,
                Page::Run => run_page().await,
                Page::Revision => page(GraphPart::Revision).await,
                Page::Open => page(GraphPart::Open).await,
                Page::Bench => page(GraphPart::Bench).await,
            };
            part.unwrap_or_else(part_missing)
        })}
    }
}

/// Where a part that could not be fetched would be (a page's or a panel's).
pub fn part_missing(_: PartMissing) -> AnyView {
    view! { <p class="part-missing" role="alert">{PART_MISSING}</p> }.into_any()
}

/// Whether the page at this path comes with the part every page but the
/// home page has (the routes in `crate::App` that use [`page_view`]).
pub fn has_part(path: &str) -> bool {
    path.starts_with("/g/") || path == "/open" || path == "/bench"
}

/// Whether the page at this path is a recorded run's
/// (`/g/{id}/runs/{run_id}`), which comes with a part of its own.
pub fn is_run_page(path: &str) -> bool {
    let mut segments = path.trim_end_matches('/').split('/').skip(1);
    matches!(
        (segments.next(), segments.next(), segments.next(), segments.next(), segments.next()),
        (Some("g"), Some(id), Some("runs"), Some(run), None) if !id.is_empty() && !run.is_empty()
    )
}

/// Fetches the page's part (the home page's, or the part every other page
/// has) before the page is hydrated. `Err` when it could not be fetched:
/// the page is then left as the server drew it (hydrating it would fail),
/// and says why.
#[cfg(feature = "hydrate")]
pub async fn load_part_first(path: &str) -> Result<(), PartMissing> {
    if path == "/" {
        __preload_home_part().await?;
    } else if is_run_page(path) {
        __preload_run_page().await?;
    } else if has_part(path) {
        __preload_page().await?;
    }
    Ok(())
}

/// Says on the server's page, above everything, that its code is missing:
/// without it nothing on the page responds.
#[cfg(feature = "hydrate")]
pub fn say_part_missing() {
    let Some(document) = web_sys::window().and_then(|window| window.document()) else {
        return;
    };
    let (Some(body), Ok(notice)) = (document.body(), document.create_element("p")) else {
        return;
    };
    notice.set_class_name("part-missing");
    let _ = notice.set_attribute("role", "alert");
    notice.set_text_content(Some(PART_MISSING));
    let _ = body.prepend_with_node_1(&notice);
}

#[cfg(test)]
mod tests {
    use super::{has_part, is_run_page};

    #[test]
    fn every_page_but_the_home_page_has_the_part() {
        for path in [
            "/g/abc",
            "/g/abc/runs/r1",
            "/g/abc/revisions/3",
            "/open",
            "/bench",
        ] {
            assert!(has_part(path), "{path}");
        }
        for path in ["/", "/nowhere", "/graphs", "/opener"] {
            assert!(!has_part(path), "{path}");
        }
    }

    #[test]
    fn a_recorded_run_page_is_told_from_the_graph_pages() {
        for path in ["/g/abc/runs/r1", "/g/abc/runs/r1/"] {
            assert!(is_run_page(path), "{path}");
        }
        for path in [
            "/g/abc",
            "/g/abc/runs",
            "/g/abc/runs/",
            "/g/abc/revisions/3",
            "/g//runs/r1",
            "/g/abc/runs/r1/more",
            "/open",
        ] {
            assert!(!is_run_page(path), "{path}");
        }
    }
}
