//! The parts of the editor that no page shows when it opens — a module's or
//! a cable's panel, the run panel with its inspectors, the run, history,
//! share and comparison dialogs, the popups (shortcuts, a module's menu and
//! outputs, a problem, a conflict), the triggers dialog, a comparison's banner, a recorded run's
//! word that the graph has changed since, and the palette
//! (editors only) — each compiled into a chunk of the bundle of its
//! own (`#[lazy]`; scripts/build splits them out) and fetched the first time
//! it is shown, so a view link downloads only what draws the graph. Until a
//! chunk has arrived, its place says it is loading: never an empty panel.
//! The graph's check (validation), the graph's room (reading what others
//! do) and editing (every change to the graph, `super::editing`) are ones
//! too, with no view: fetched once the page is interactive, editing only
//! for a person who may edit, and writing modules as clipboard text (copy
//! and cut). Copying the graph out or in (export, import, fork) is one
//! fetched when a person points at one of those buttons.
//!
//! None of these is rendered on the server: the page is hydrated in one
//! synchronous pass once its own part has arrived (`crate::routes`), which
//! needs everything on its first screen in that part (a recorded run's page
//! opens its run panel once in the browser).

use leptos::prelude::*;
use wire::run::RunFrom;

use super::editing::CarryOut;
use super::palette::Palette;
use super::panel::{CablePanel, DetailPanel};
use super::revisions::{ChangedSinceBanner, CompareBanner, HistoryDialog};
use super::run_comparison::RunComparison;
use super::run_dialog::RunDialog;
use super::run_panel::RunPanel;
use super::run_panel::status_text;
use super::share::ShareDialog;
use super::state::{EditorMode, EditorState, Overlay};
use super::together::view::{PeopleHere, TogetherNotices};
use super::triggers::TriggersDialog;
use crate::routes::{PartMissing, part_missing};
use crate::run::reading;
use wire::RunStatus;

/// The module's and the cable's panels share most of their code (fields,
/// the cables list): one chunk for both, rather than a third for what they
/// share.
// Every part is fallible: a chunk that does not arrive is a message in the
// part's place, not a panic that stops the whole app.
#[lazy(fallible)]
fn side_panel(cable: bool) -> Result<AnyView, PartMissing> {
    Ok(if cable {
        view! { <CablePanel/> }.into_any()
    } else {
        view! { <DetailPanel/> }.into_any()
    })
}

#[lazy(fallible)]
fn palette() -> Result<AnyView, PartMissing> {
    Ok(view! { <Palette/> }.into_any())
}

#[lazy(fallible)]
fn run_panel() -> Result<AnyView, PartMissing> {
    Ok(view! { <RunPanel/> }.into_any())
}

#[lazy(fallible)]
fn run_dialog(from: Option<RunFrom>) -> Result<AnyView, PartMissing> {
    Ok(match from {
        Some(from) => view! { <RunDialog from/> }.into_any(),
        None => view! { <RunDialog/> }.into_any(),
    })
}

#[lazy(fallible)]
fn history_dialog() -> Result<AnyView, PartMissing> {
    Ok(view! { <HistoryDialog/> }.into_any())
}

#[lazy(fallible)]
fn share_dialog() -> Result<AnyView, PartMissing> {
    Ok(view! { <ShareDialog/> }.into_any())
}

/// Writing in a note: only an editor who opens one fetches it.
#[lazy(fallible)]
fn note_writer(id: String) -> Result<AnyView, PartMissing> {
    Ok(view! { <super::note_writer::NoteWriter id/> }.into_any())
}

#[lazy(fallible)]
fn arrange_bar() -> Result<AnyView, PartMissing> {
    Ok(view! { <super::arrange_bar::ArrangeBar/> }.into_any())
}

/// The selection's bar (align, spread, the grid switch).
pub fn lazy_arrange_bar() -> AnyView {
    // Nothing while it comes: it is a few buttons, not a panel.
    loaded_or(arrange_bar(), || ().into_any())
}

/// The writer of note `id`, over it on the canvas.
pub fn lazy_note_writer(id: String) -> AnyView {
    // Nothing while it comes: a placeholder would sit at the canvas's
    // origin, not over the note.
    loaded_or(note_writer(id), || ().into_any())
}

#[lazy(fallible)]
fn triggers_dialog() -> Result<AnyView, PartMissing> {
    Ok(view! { <TriggersDialog/> }.into_any())
}

#[lazy(fallible)]
fn run_comparison(first: String, second: String) -> Result<AnyView, PartMissing> {
    Ok(view! { <RunComparison first second/> }.into_any())
}

/// What editing together shows, once someone else is here: fetched then,
/// never by a browser alone with the graph.
#[lazy(fallible)]
fn together_part(notices: bool) -> Result<AnyView, PartMissing> {
    Ok(if notices {
        view! { <TogetherNotices/> }.into_any()
    } else {
        view! { <PeopleHere/> }.into_any()
    })
}

/// The graph's check (`graph::validate`) and what it marks on the canvas,
/// and what it checks against (the server's catalogue of providers): run a
/// moment after the page is interactive and after each edit, so the first
/// load does without their code.
#[lazy(fallible)]
fn check_graph(editor: EditorState, catalogue: bool) -> Result<(), PartMissing> {
    if catalogue {
        super::load_catalogue(editor);
    } else {
        super::check_now(editor);
    }
    Ok(())
}

/// Checks the graph (fetching the check's chunk the first time).
pub async fn check(editor: EditorState) -> Result<(), PartMissing> {
    check_graph(editor, false).await
}

/// Asks the server what it offers (`GET /api/providers`), in the check's
/// part.
pub fn load_catalogue(editor: EditorState) {
    leptos::task::spawn_local(async move {
        // A part that cannot be fetched is said by the check.
        let _ = check_graph(editor, true).await;
    });
}

/// The graph's room: its stream, and what reads the room's events (others'
/// edits, presence, runs they start). Entered once the page is interactive.
#[lazy(fallible)]
fn room_part(editor: EditorState, entering: bool) -> Result<(), PartMissing> {
    super::together::open_room(editor, entering);
    Ok(())
}

/// Opens the graph's room's stream (fetching its part the first time).
pub async fn room(editor: EditorState, entering: bool) -> Result<(), PartMissing> {
    room_part(editor, entering).await
}

/// The small things that open over the canvas when a person asks — the
/// shortcut list, a module's outputs or menu, the inputs a port fits, a
/// problem — and the conflict dialog: one chunk for them all.
#[lazy(fallible)]
fn popups(popup: Popup) -> Result<AnyView, PartMissing> {
    Ok(match popup {
        Popup::Over(overlay) => super::overlays::popup(overlay),
        Popup::Conflict(current) => super::overlays::conflict(current),
    })
}

/// What the popups' part shows.
pub enum Popup {
    Over(Overlay),
    /// Someone else saved the graph, now at this revision.
    Conflict(u64),
}

pub fn lazy_popup(popup: Popup) -> AnyView {
    loaded(popups(popup), "modal lazy-dialog", "Loading")
}

/// Over the canvas while it is compared with a revision (History): what
/// changed since, and its highlighting.
#[lazy(fallible)]
fn compare_banner() -> Result<AnyView, PartMissing> {
    Ok(view! { <CompareBanner/> }.into_any())
}

/// The banner of a comparison with a revision, while there is one.
#[component]
pub fn LazyCompareBanner() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let comparing = Memo::new(move |_| editor.compare.with(Option::is_some));
    move || {
        comparing.get().then(|| {
            loaded(
                compare_banner(),
                "notice compare-banner",
                "Compared with a revision",
            )
        })
    }
}

/// On a recorded run's page, whether the graph has changed since the run.
#[lazy(fallible)]
fn changed_since_banner() -> Result<AnyView, PartMissing> {
    Ok(view! { <ChangedSinceBanner/> }.into_any())
}

/// What a recorded run's page says when the graph has been saved since:
/// learned by a fetch once the page is in the browser, so its code comes
/// then, and until it says something it shows nothing.
#[component]
pub fn LazyChangedSinceBanner() -> impl IntoView {
    let in_browser = RwSignal::new(false);
    Effect::new(move |_| in_browser.set(true));
    move || {
        in_browser
            .get()
            .then(|| loaded_or(changed_since_banner(), || ().into_any()))
    }
}

/// Changing the graph (`super::editing`): fetched once the page knows this
/// person may edit, or at their first edit; a view link never fetches it.
#[lazy(fallible)]
fn editing_part() -> Result<CarryOut, PartMissing> {
    Ok(super::editing::carry_out)
}

/// What carries out the page's edits (fetching its part the first time).
pub async fn editing() -> Result<CarryOut, PartMissing> {
    editing_part().await
}

/// Writes modules as clipboard text (`super::clipboard::text_of`).
pub type CopyText = fn(&graph::Graph, &std::collections::HashSet<String>) -> String;

/// Writing modules as clipboard text, for copy and cut: the document's
/// serializer, which no first screen runs. The copy event wants its text
/// at once, so the part is fetched once the page is interactive and the
/// page keeps its function (`super::clipboard_events`).
#[lazy(fallible)]
fn clipboard_part() -> Result<CopyText, PartMissing> {
    Ok(super::clipboard::text_of)
}

/// What writes modules as clipboard text (fetching its part the first time).
pub async fn clipboard_writer() -> Result<CopyText, PartMissing> {
    clipboard_part().await
}

/// Copying the graph out or in: exporting it as a file, importing a file,
/// forking it. What they share is writing the whole document as JSON, which
/// nothing on a first screen does, so it is a part fetched at the click
/// (or when the pointer arrives on the button).
#[lazy(fallible)]
fn transfer_part(editor: EditorState, what: Transfer) -> Result<(), PartMissing> {
    match what {
        Transfer::Export => super::transfer::export(editor),
        Transfer::Import(file) => super::transfer::import(editor, file),
        Transfer::Fork { then_run } => super::save::save_as_fork(editor, then_run),
    }
    Ok(())
}

/// What the transfer part is asked to do.
pub enum Transfer {
    /// Download the document as a file.
    Export,
    /// Store the chosen file as a new graph, and open it.
    Import(web_sys::File),
    /// Store a copy as a new graph this browser owns, and open it (with
    /// `then_run`, at its run dialog).
    Fork { then_run: bool },
}

/// Exports, imports or forks (fetching the part the first time); a part
/// that cannot be fetched is said, and nothing is done.
pub fn transfer(editor: EditorState, what: Transfer) {
    leptos::task::spawn_local(async move {
        if transfer_part(editor, what).await.is_err() {
            editor.notify(format!(
                "That could not be done. {}",
                crate::routes::PART_MISSING
            ));
        }
    });
}

/// Forks the graph (`Transfer::Fork`).
pub fn fork(editor: EditorState, then_run: bool) {
    transfer(editor, Transfer::Fork { then_run });
}

/// A part whose chunk is worth fetching before it is asked for.
#[derive(Clone, Copy)]
pub enum Part {
    DetailPanel,
    RunPanel,
    RunDialog,
    HistoryDialog,
    ShareDialog,
    TriggersDialog,
    Popups,
    CompareBanner,
    Transfer,
}

thread_local! {
    static PRELOADED: std::cell::Cell<u16> = const { std::cell::Cell::new(0) };
}

/// Starts fetching a part's chunk when a person is about to need it — the
/// pointer or the focus on the canvas, on ▶ Run, on History — so that it has
/// arrived by the time they click; once per page. Nothing is fetched before
/// that: a first load is the main module and the page's part alone.
pub fn preload(part: Part) {
    let bit = 1_u16 << part as u16;
    let fetched = PRELOADED.with(|preloaded| {
        let before = preloaded.get();
        preloaded.set(before | bit);
        before & bit != 0
    });
    // Only the browser fetches chunks.
    #[cfg(feature = "hydrate")]
    if !fetched {
        match part {
            Part::DetailPanel => fetch_ahead(__preload_side_panel()),
            Part::RunPanel => {
                fetch_ahead(__preload_run_panel());
                crate::run::fetch_stream_ahead();
            }
            Part::RunDialog => {
                fetch_ahead(__preload_run_dialog());
                crate::run::fetch_stream_ahead();
            }
            Part::HistoryDialog => fetch_ahead(__preload_history_dialog()),
            Part::ShareDialog => fetch_ahead(__preload_share_dialog()),
            Part::TriggersDialog => fetch_ahead(__preload_triggers_dialog()),
            Part::Popups => fetch_ahead(__preload_popups()),
            Part::CompareBanner => fetch_ahead(__preload_compare_banner()),
            Part::Transfer => fetch_ahead(__preload_transfer_part()),
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = fetched;
}

/// Fetches a part's chunk ahead of its use. A failure here is left to the
/// use, which tries again and, failing, says so in the part's place.
#[cfg(feature = "hydrate")]
fn fetch_ahead<E>(fetch: impl Future<Output = Result<(), E>> + 'static) {
    leptos::task::spawn_local(async move {
        let _ = fetch.await;
    });
}

/// A part from its chunk, with a placeholder (a class and a line of text,
/// styled like the part it stands for) until the chunk has arrived.
fn loaded(
    part: impl Future<Output = Result<AnyView, PartMissing>> + Send + 'static,
    class: &'static str,
    label: &'static str,
) -> AnyView {
    loaded_or(part, move || placeholder(class, label))
}

/// A part's future, boxed: the views around it are then made once for
/// every part, not once for each.
type PartFuture = std::pin::Pin<Box<dyn Future<Output = Result<AnyView, PartMissing>> + Send>>;

fn loaded_or(
    part: impl Future<Output = Result<AnyView, PartMissing>> + Send + 'static,
    fallback: impl Fn() -> AnyView + Send + Sync + 'static,
) -> AnyView {
    suspended(Box::pin(part), ViewFnOnce::from(fallback))
}

fn suspended(part: PartFuture, fallback: ViewFnOnce) -> AnyView {
    let part = async move { part.await.unwrap_or_else(part_missing) };
    view! { <Suspense fallback=fallback>{Suspend::new(part)}</Suspense> }.into_any()
}

fn placeholder(class: &'static str, label: &'static str) -> AnyView {
    view! {
        <div class=format!("lazy-part {class}") role="status" aria-label=label aria-busy="true">
            <p class="hint">"Loading…"</p>
        </div>
    }
    .into_any()
}

/// What a recorded run's page shows of the run before its run panel has
/// arrived, rendered on the server too: the run, its status and what the
/// module in focus produced (the run's result, usually), as text.
fn recorded_summary(editor: EditorState) -> AnyView {
    let run = editor.run;
    let focus = run.focus.get_untracked();
    let (id, output) = run.record.with_untracked(|record| {
        let Some(record) = record.as_ref() else {
            return (String::new(), None);
        };
        let output = focus.as_deref().and_then(|module| {
            let text = reading::merged(record.last(module)?, &|id| record.label_of(id))?;
            Some((record.label_of(module), text))
        });
        (record.id.clone(), output)
    });
    view! {
        <section class="run-panel run-summary" aria-label="Run" aria-busy="true">
            <header class="run-header">
                <strong>"Run"</strong>
                <code class="run-id">{id}</code>
                <span class=format!("run-status status-{}", run.status.get_untracked().map_or("", RunStatus::as_str))>
                    {status_text(run.status.get_untracked())}
                </span>
            </header>
            {output.map(|(label, text)| view! {
                <h3>{label}</h3>
                <pre class="run-output">{text}</pre>
            })}
        </section>
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
            .then(|| loaded(side_panel(false), "detail-panel", "Module details"))
    }
}

/// The selected cable's panel, while a cable alone is selected.
#[component]
pub fn LazyCablePanel() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let open = Memo::new(move |_| {
        editor.selected.with(Option::is_none) && editor.model.selected_edge.with(Option::is_some)
    });
    move || {
        open.get()
            .then(|| loaded(side_panel(true), "detail-panel", "Cable details"))
    }
}

/// Who is here, once someone else is (the toolbar's "People here").
#[component]
pub fn LazyPeopleHere() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let together = editor.together;
    let others = Memo::new(move |_| together.people.with(|people| people.len() > 1));
    move || {
        others
            .get()
            .then(|| loaded_or(together_part(false), || ().into_any()))
    }
}

/// What others' changes did to this person's, while there is something to
/// tell.
#[component]
pub fn LazyTogetherNotices() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let together = editor.together;
    let any = Memo::new(move |_| together.notices.with(|notices| !notices.is_empty()));
    move || {
        any.get()
            .then(|| loaded_or(together_part(true), || ().into_any()))
    }
}

/// The palette of module kinds, for those who may edit (a view link never
/// fetches it).
#[component]
pub fn LazyPalette() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let open = editor.can_edit;
    move || {
        open.get()
            .then(|| loaded(palette(), "palette", "Add module"))
    }
}

/// The run panel, while it is open. A recorded run's page has its summary
/// in the panel's place until the panel arrives (on the server's page too).
#[component]
pub fn LazyRunPanel() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let open = editor.run.panel_open;
    let recorded = editor.mode == EditorMode::Recorded;
    // Once opened, closing the panel closes it: the summary is not shown again.
    let opened = StoredValue::new(false);
    move || {
        if open.get() {
            opened.set_value(true);
            let fallback = move || {
                if recorded {
                    recorded_summary(editor)
                } else {
                    placeholder("run-panel", "Run")
                }
            };
            Some(loaded_or(run_panel(), fallback))
        } else if recorded && !opened.get_value() {
            Some(recorded_summary(editor))
        } else {
            None
        }
    }
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

pub fn lazy_triggers_dialog() -> AnyView {
    loaded(triggers_dialog(), "modal lazy-dialog", "Triggers")
}

pub fn lazy_run_comparison(first: String, second: String) -> AnyView {
    loaded(
        run_comparison(first, second),
        "modal lazy-dialog",
        "Compare runs",
    )
}
