//! The parts of the editor that no page shows when it opens — a module's
//! detail panel, the run panel with its inspectors, the run, history, share
//! and comparison dialogs — each compiled into a chunk of the bundle of its
//! own (`#[lazy]`; scripts/build splits them out) and fetched the first time
//! it is shown, so a view link downloads only what draws the graph. Until a
//! chunk has arrived, its place says it is loading: never an empty panel.
//!
//! None of these is rendered on the server: the page is hydrated in one
//! synchronous pass, which needs everything on its first screen in the main
//! module (a recorded run's page opens its run panel once in the browser).

use leptos::prelude::*;
use wire::run::RunFrom;

use super::panel::DetailPanel;
use super::revisions::HistoryDialog;
use super::run_comparison::RunComparison;
use super::run_dialog::RunDialog;
use super::run_panel::RunPanel;
use super::share::ShareDialog;
use super::state::EditorState;

#[lazy]
fn detail_panel() -> AnyView {
    view! { <DetailPanel/> }.into_any()
}

#[lazy]
fn run_panel() -> AnyView {
    view! { <RunPanel/> }.into_any()
}

#[lazy]
fn run_dialog(from: Option<RunFrom>) -> AnyView {
    match from {
        Some(from) => view! { <RunDialog from/> }.into_any(),
        None => view! { <RunDialog/> }.into_any(),
    }
}

#[lazy]
fn history_dialog() -> AnyView {
    view! { <HistoryDialog/> }.into_any()
}

#[lazy]
fn share_dialog() -> AnyView {
    view! { <ShareDialog/> }.into_any()
}

#[lazy]
fn run_comparison(first: String, second: String) -> AnyView {
    view! { <RunComparison first second/> }.into_any()
}

/// A part whose chunk is worth fetching before it is asked for.
#[derive(Clone, Copy)]
pub enum Part {
    DetailPanel,
    RunPanel,
    RunDialog,
    HistoryDialog,
    ShareDialog,
}

thread_local! {
    static PRELOADED: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// Starts fetching a part's chunk when a person is about to need it — the
/// pointer or the focus on the canvas, on ▶ Run, on History — so that it has
/// arrived by the time they click; once per page. Nothing is fetched before
/// that: a first load is the main module alone.
pub fn preload(part: Part) {
    let bit = 1 << part as u8;
    if PRELOADED.with(|preloaded| {
        let before = preloaded.get();
        preloaded.set(before | bit);
        before & bit != 0
    }) {
        return;
    }
    let _ = match part {
        Part::DetailPanel => lazy_preload!(detail_panel),
        Part::RunPanel => lazy_preload!(run_panel),
        Part::RunDialog => lazy_preload!(run_dialog),
        Part::HistoryDialog => lazy_preload!(history_dialog),
        Part::ShareDialog => lazy_preload!(share_dialog),
    };
}

/// A part from its chunk, with `placeholder` (a class and a line of text,
/// styled like the part it stands for) until the chunk has arrived.
fn loaded(
    part: impl Future<Output = AnyView> + Send + 'static,
    class: &'static str,
    label: &'static str,
) -> AnyView {
    view! {
        <Suspense fallback=move || view! {
            <div class=format!("lazy-part {class}") role="status" aria-label=label aria-busy="true">
                <p class="hint">"Loading…"</p>
            </div>
        }>
            {Suspend::new(part)}
        </Suspense>
    }
    .into_any()
}

/// The selected module's detail panel, while a module is selected.
#[component]
pub fn LazyDetailPanel() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let open = Memo::new(move |_| editor.selected.with(Option::is_some));
    move || {
        open.get()
            .then(|| loaded(detail_panel(), "detail-panel", "Module details"))
    }
}

/// The run panel, while it is open.
#[component]
pub fn LazyRunPanel() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let open = editor.run.panel_open;
    move || open.get().then(|| loaded(run_panel(), "run-panel", "Run"))
}

pub fn lazy_run_dialog(from: Option<RunFrom>) -> AnyView {
    // A run opens the run panel.
    preload(Part::RunPanel);
    loaded(run_dialog(from), "modal lazy-dialog", "Run")
}

pub fn lazy_history_dialog() -> AnyView {
    loaded(history_dialog(), "modal lazy-dialog", "History")
}

pub fn lazy_share_dialog() -> AnyView {
    loaded(share_dialog(), "modal lazy-dialog", "Share")
}

pub fn lazy_run_comparison(first: String, second: String) -> AnyView {
    loaded(
        run_comparison(first, second),
        "modal lazy-dialog",
        "Compare runs",
    )
}
