//! The pages that come with a part of the bundle of their own. The home
//! page needs none of the editor or its canvas, and a graph's page none of
//! the home page, so each page's first load is the main module (the router,
//! the not-found page and what every page shares) and that page's part.
//!
//! A graph's page (`/g/{id}`, by its view link or in the editor) has a part
//! of its own, the editor and its canvas. The other pages that are the
//! editor around a graph ride on it, their code in a part beside it that
//! the graph's page never fetches: a recorded run's (reading a run's
//! record), and one for a revision, `/open` and `/bench`. What they share
//! with the graph's page is in the chunk the graph's page fetches, and the
//! splitter keeps their parts from making a chunk for every combination of
//! routes (scripts/build, `--first`): a split point per route once made
//! about ninety fetches for a graph's page.
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

// A graph's page, by its view link or in the editor: what a person
// opening a shared link waits for, so nothing else is in it.
#[lazy(fallible)]
fn page() -> Result<AnyView, PartMissing> {
    Ok(view! { <GraphPage/> }.into_any())
}

/// The pages that are the editor around a graph but not a stored graph's
/// page: their code rides on the graph page's, in a part of their own.
#[derive(Clone, Copy)]
enum OtherPage {
    Revision,
    Open,
    Bench,
}

#[lazy(fallible)]
fn other_page(which: OtherPage) -> Result<AnyView, PartMissing> {
    Ok(match which {
        OtherPage::Revision => view! { <RevisionPage/> }.into_any(),
        OtherPage::Open => view! { <OpenPage/> }.into_any(),
        OtherPage::Bench => view! { <BenchPage/> }.into_any(),
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
                Page::Graph => page().await,
                Page::Run => run_page().await,
                Page::Revision => other_page(OtherPage::Revision).await,
                Page::Open => other_page(OtherPage::Open).await,
                Page::Bench => other_page(OtherPage::Bench).await,
            };
            part.unwrap_or_else(part_missing)
        })}
    }
}

/// Where a part that could not be fetched would be (a page's or a panel's).
pub fn part_missing(_: PartMissing) -> AnyView {
    view! { <p class="part-missing" role="alert">{PART_MISSING}</p> }.into_any()
}

/// The part a page's code is in, by its path (the routes in `crate::App`):
/// `None` for a page that is the main module alone (not found).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PartOf {
    Home,
    /// `/g/{id}`.
    Graph,
    /// `/g/{id}/runs/{run_id}`.
    Run,
    /// A revision, `/open` and `/bench`.
    Other,
}

pub fn part_of(path: &str) -> Option<PartOf> {
    let mut segments = path.trim_end_matches('/').split('/').skip(1);
    let segments: [Option<&str>; 5] = std::array::from_fn(|_| segments.next());
    match segments {
        [None | Some(""), None, ..] => Some(PartOf::Home),
        [Some("g"), Some(id), None, ..] if !id.is_empty() => Some(PartOf::Graph),
        [Some("g"), Some(id), Some("runs"), Some(run), None]
            if !id.is_empty() && !run.is_empty() =>
        {
            Some(PartOf::Run)
        }
        [Some("g"), Some(id), Some("revisions"), Some(revision), None]
            if !id.is_empty() && !revision.is_empty() =>
        {
            Some(PartOf::Other)
        }
        [Some("open" | "bench"), None, ..] => Some(PartOf::Other),
        _ => None,
    }
}

/// Fetches the page's part before the page is hydrated. `Err` when it
/// could not be fetched: the page is then left as the server drew it
/// (hydrating it would fail), and says why.
#[cfg(feature = "hydrate")]
pub async fn load_part_first(path: &str) -> Result<(), PartMissing> {
    match part_of(path) {
        Some(PartOf::Home) => __preload_home_part().await?,
        Some(PartOf::Graph) => __preload_page().await?,
        Some(PartOf::Run) => __preload_run_page().await?,
        Some(PartOf::Other) => __preload_other_page().await?,
        None => {}
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
    use super::{PartOf, part_of};

    #[test]
    fn each_page_is_told_by_its_path() {
        for (path, part) in [
            ("/", Some(PartOf::Home)),
            ("", Some(PartOf::Home)),
            ("/g/abc", Some(PartOf::Graph)),
            ("/g/abc/", Some(PartOf::Graph)),
            ("/g/abc/runs/r1", Some(PartOf::Run)),
            ("/g/abc/runs/r1/", Some(PartOf::Run)),
            ("/g/abc/revisions/3", Some(PartOf::Other)),
            ("/open", Some(PartOf::Other)),
            ("/bench", Some(PartOf::Other)),
            ("/nowhere", None),
            ("/graphs", None),
            ("/opener", None),
            ("/g/abc/runs", None),
            ("/g/abc/runs/", None),
            ("/g//runs/r1", None),
            ("/g/abc/runs/r1/more", None),
            ("/g/abc/revisions", None),
            ("/g/", None),
            ("/open/more", None),
        ] {
            assert_eq!(part_of(path), part, "{path}");
        }
    }
}
