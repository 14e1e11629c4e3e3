//! The graph editor: toolbar, palette, canvas, detail panel, validation,
//! autosave, keyboard and clipboard. The editing logic proper (history,
//! clipboard fragments) is plain Rust in `history` and `clipboard`; the rest
//! connects it to the page.

mod approver_link;
mod arrange_bar;
mod call_decision;
pub mod clipboard;
mod clipboard_events;
mod comparison;
mod decision;
pub mod diff;
mod editing;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod history;
mod keyboard;
mod lazy_parts;
pub mod modal;
mod module_menu;
mod note_writer;
mod overlays;
mod palette;
mod panel;
mod revisions;
mod run_comparison;
mod run_dialog;
mod run_from;
mod run_panel;
mod run_state;
pub mod save;
mod share;
pub mod state;
pub mod together;
pub mod transcript;
pub mod transfer;
mod triggers;
mod validation;

use std::time::Duration;

use graph::{Graph, ModuleKind, Severity, validate};
use leptos::prelude::*;

use crate::api;
use crate::canvas::{Canvas, CanvasEvents};
use crate::run::{RunAccess, run_in_address};
use crate::{approver_token, edit_token};
use editing::Command;
use lazy_parts::{
    LazyCablePanel, LazyChangedSinceBanner, LazyCompareBanner, LazyDetailPanel, LazyPalette,
    LazyPeopleHere, LazyRunPanel, LazyTogetherNotices, Part, Transfer, fork, preload, transfer,
};
use overlays::Overlays;
use palette::KIND_MIME;
use save::SaveStatus;
use state::{EditorMode, EditorState, Overlay};
use transfer::ImportButton;
use validation::{ValidationBadge, ValidationPanel};
use wire::{RunRecord, RunStatus};

/// Asks the server what it offers (`GET /api/providers`): in the check's
/// part (`lazy_parts::load_catalogue`), as only what is lazily loaded reads it.
pub(crate) fn load_catalogue(editor: EditorState) {
    leptos::task::spawn_local(async move {
        if let Ok(catalogue) = api::providers().await {
            editor.catalogue.set(Some(catalogue));
        }
    });
}

/// Runs validation a moment after the last edit, and marks what has errors.
/// The check is a part of its own (`lazy_parts::check`), fetched for the
/// first check, a moment after the page is interactive: a first load does
/// without it.
fn watch_validation(editor: EditorState) {
    let timer = StoredValue::new(None::<crate::browser::Timer>);
    let said_missing = StoredValue::new(false);
    Effect::new(move |_| {
        editor.version.track();
        editor.catalogue.track();
        let run = move || {
            leptos::task::spawn_local(async move {
                if lazy_parts::check(editor).await.is_err() && !said_missing.get_value() {
                    said_missing.set_value(true);
                    editor.notify(format!(
                        "The graph cannot be checked: {}",
                        crate::routes::PART_MISSING
                    ));
                }
            });
        };
        crate::browser::restart_timeout(timer, Duration::from_millis(120), run);
    });
}

/// Checks the graph now (`graph::validate`, the server's check) and marks
/// the modules and cables with problems, and each cable's order.
pub(crate) fn check_now(editor: EditorState) {
    let findings = editor.with_graph(|graph| validate(graph, &editor.validation_context()));
    let errors: std::collections::HashSet<&str> = findings
        .iter()
        .filter(|finding| finding.severity == Severity::Error)
        .filter_map(|finding| finding.module_id.as_deref())
        .collect();
    let bad_cables: std::collections::HashSet<&str> = findings
        .iter()
        .filter_map(|finding| finding.cable_id.as_deref())
        .collect();
    editor.model.nodes.with_untracked(|nodes| {
        for node in nodes {
            crate::canvas::model::set_if_changed(node.flagged, errors.contains(&*node.id));
        }
    });
    let orders = editor.with_graph(graph::routing::cable_orders);
    editor.model.edges.with_untracked(|edges| {
        for edge in edges {
            crate::canvas::model::set_if_changed(edge.flagged, bad_cables.contains(&*edge.id));
            crate::canvas::model::set_if_changed(edge.order, orders.get(&*edge.id).cloned());
        }
    });
    editor.findings.set(findings);
}

/// In the browser, after hydration: who may edit, what the server offers,
/// and any draft an earlier visit left.
fn start(editor: EditorState) {
    // Once: what it reads is not a dependency. Tracked, the live run's status
    // that `follow` sets re-ran it, which followed again, for ever (a recorded
    // run's page opened while the run was going hung the tab).
    Effect::new(move |_| {
        untrack(move || {
            match editor.mode {
                EditorMode::Stored => {
                    let arrival = edit_token::capture(&editor.graph_id());
                    let editable = arrival.can_edit;
                    editor.can_edit.set(editable);
                    editor.run.access.set(if editable {
                        RunAccess::Edit
                    } else {
                        RunAccess::View
                    });
                    if arrival.run && editable {
                        editor.overlay.set(Overlay::Run);
                    }
                    editor.save.status.set(if editable {
                        SaveStatus::Saved
                    } else {
                        SaveStatus::ViewOnly
                    });
                    // The room first, from the document as the server has it;
                    // a draft restored then is this browser's edits on it,
                    // once the editing part has arrived.
                    together::join(editor);
                    if editable {
                        editor.command(Command::RestoreDraft);
                    }
                    // A reload in the middle of a run picks it up again (a
                    // run that waits for its editors is shown once the room
                    // is open, `together::show_waiting_run`).
                    if let Some(run_id) = run_in_address() {
                        let notify = Callback::new(move |message: String| editor.notify(message));
                        editor.run.resume(editor.model, run_id, notify);
                    }
                }
                EditorMode::Local => {
                    editor.can_edit.set(true);
                    editor.save.status.set(SaveStatus::Local);
                    editor.editing.fetch(editor);
                }
                EditorMode::Revision => editor.save.status.set(SaveStatus::ViewOnly),
                EditorMode::Recorded => {
                    editor.save.status.set(SaveStatus::ViewOnly);
                    editor.run.access.set(recorded_run_access(editor));
                    editor.run.panel_open.set(true);
                    // Still going: follow it from here.
                    if editor.run.is_live()
                        && let Some(run_id) = editor.run.run_id.get_untracked()
                    {
                        editor.run.follow(editor.model, editor.graph(), &run_id);
                    }
                }
            }
            lazy_parts::load_catalogue(editor);
            editor.copier.fetch();
            // What coding agents offer is learned when they run, so a run that
            // ends may have taught the server more.
            Effect::new(move |was_live: Option<bool>| {
                let live = editor.run.is_live();
                if was_live == Some(true) && !live {
                    lazy_parts::load_catalogue(editor);
                }
                live
            });
            let keys = window_event_listener(leptos::ev::keydown, move |event| {
                keyboard::handle(editor, &event)
            });
            let copy = window_event_listener(leptos::ev::copy, move |event| {
                clipboard_events::copy(editor, &event, false)
            });
            let cut = window_event_listener(leptos::ev::cut, move |event| {
                clipboard_events::copy(editor, &event, true)
            });
            let paste = window_event_listener(leptos::ev::paste, move |event| {
                clipboard_events::paste(editor, &event)
            });
            let leave = window_event_listener(leptos::ev::beforeunload, move |event| {
                if matches!(
                    editor.save.status.get_untracked(),
                    SaveStatus::Pending | SaveStatus::Saving | SaveStatus::Offline
                ) {
                    editor.save_now();
                    event.prevent_default();
                }
            });
            let online = window_event_listener(leptos::ev::online, move |_| editor.save_now());
            editor.model.snap.set(arrange_bar::remembered_snap());
            on_cleanup(move || {
                keys.remove();
                copy.remove();
                cut.remove();
                paste.remove();
                leave.remove();
                online.remove();
            });
        })
    });
}

/// What the page of a recorded run may do: everything for the graph's
/// editor, decide for an approver link (taken from the address), else look.
fn recorded_run_access(editor: EditorState) -> RunAccess {
    let Some(run_id) = editor.run.run_id.get_untracked() else {
        return RunAccess::View;
    };
    let approver = approver_token::capture(&run_id);
    let edits = editor
        .run
        .graph_id()
        .is_some_and(|graph_id| edit_token::stored(&graph_id).is_some());
    if edits {
        RunAccess::Edit
    } else if approver {
        RunAccess::Approve
    } else {
        RunAccess::View
    }
}

#[component]
fn Toolbar() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    view! {
        <header class="toolbar">
            // A full page load, so that leaving saves pending edits first.
            <a class="brand" href="/" rel="external" title="Your graphs and the examples">"Patchbay"</a>
            <input
                class="graph-name"
                aria-label="Graph name"
                // The attribute for the page the server draws (a property
                // is not markup); the property keeps it as the name changes.
                value=editor.name.get_untracked()
                prop:value=move || editor.name.get()
                disabled=move || !editor.can_edit.get()
                on:input=move |event| {
                    editor.command(Command::Rename(event_target_value(&event)));
                }
            />
            // A stored graph's badge already says "View only" (issue 43): the
            // status says it only where no badge does, as on a recorded run.
            <Show when=move || editor.mode != EditorMode::Stored || editor.save.status.get() != SaveStatus::ViewOnly>
                <span class=move || format!("save-status {}", editor.save.status.get().class()) role="status">{move || editor.save.status.get().text()}</span>
            </Show>
            <div class="toolbar-group">
                <button type="button" title="Undo (Ctrl+Z)" aria-label="Undo" disabled=move || !editor.can_undo.get() on:click=move |_| editor.command(Command::Undo)>"↶"</button>
                <button type="button" title="Redo (Ctrl+Shift+Z)" aria-label="Redo" disabled=move || !editor.can_redo.get() on:click=move |_| editor.command(Command::Redo)>"↷"</button>
            </div>
            <ValidationBadge/>
            <RunControls/>
            <div class="toolbar-group">
                <button
                    type="button"
                    title="Links to this graph"
                    on:pointerover=|_| preload(Part::ShareDialog)
                    on:focus=|_| preload(Part::ShareDialog)
                    on:click=move |_| editor.overlay.set(Overlay::Share)
                >
                    "Share"
                </button>
                <Show when=move || editor.mode == EditorMode::Stored && editor.can_edit.get()>
                    <button
                        type="button"
                        title="Schedules and webhooks that start this graph's runs"
                        on:pointerover=|_| preload(Part::TriggersDialog)
                        on:focus=|_| preload(Part::TriggersDialog)
                        on:click=move |_| editor.overlay.set(Overlay::Triggers)
                    >
                        "Triggers"
                    </button>
                </Show>
                <button
                    type="button"
                    title="Download the graph as a JSON file"
                    on:pointerover=|_| preload(Part::Transfer)
                    on:focus=|_| preload(Part::Transfer)
                    on:click=move |_| transfer(editor, Transfer::Export)
                >
                    "Export"
                </button>
                <ImportButton/>
            </div>
            <LazyPeopleHere/>
            <button type="button" class="help-button" title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts" on:pointerover=|_| preload(Part::Popups) on:focus=|_| preload(Part::Popups) on:click=move |_| editor.overlay.set(Overlay::Help)>"?"</button>
            {match editor.mode {
                EditorMode::Stored => view! {
                    <span class="access-badge" class:editable=move || editor.can_edit.get() class:read-only=move || !editor.can_edit.get()>
                        {move || if editor.can_edit.get() { "Editing" } else { "View only" }}
                    </span>
                    <Show when=move || !editor.can_edit.get()>
                        <button type="button" title="Make a copy you own and can edit" on:pointerover=|_| preload(Part::Transfer) on:focus=|_| preload(Part::Transfer) on:click=move |_| fork(editor, false)>"Fork to edit"</button>
                    </Show>
                }
                .into_any(),
                EditorMode::Local => view! {
                    <span class="access-badge local" title="This graph came in a self-contained link; the server does not have it">"From a link"</span>
                    <button type="button" class="primary" title="Store it on the server as a new graph you own" on:pointerover=|_| preload(Part::Transfer) on:focus=|_| preload(Part::Transfer) on:click=move |_| fork(editor, false)>"Save to server"</button>
                }
                .into_any(),
                EditorMode::Revision => {
                    let graph_id = editor.graph_id();
                    let number = editor.with_graph(|graph| graph.revision);
                    view! {
                        <span class="access-badge read-only" title="A past revision of the graph, read-only; restore it from the graph's History">
                            {format!("Revision {number}")}
                        </span>
                        <a class="button-link" href=format!("/g/{graph_id}")>"Back to the graph"</a>
                    }
                    .into_any()
                }
                EditorMode::Recorded => {
                    let graph_link = editor
                        .run
                        .record
                        .with_untracked(|record| record.as_ref().and_then(|record| record.graph_id.clone()))
                        .map(|id| format!("/g/{id}"));
                    view! {
                        <span class="access-badge read-only" title=move || recorded_badge(editor.run.access.get(), editor.run.status.get()).1>
                            {move || recorded_badge(editor.run.access.get(), editor.run.status.get()).0}
                        </span>
                        {graph_link.map(|href| view! { <a class="button-link" href=href>"Open the graph"</a> })}
                        <button type="button" title="Make a copy of this version you own and can edit" on:pointerover=|_| preload(Part::Transfer) on:focus=|_| preload(Part::Transfer) on:click=move |_| fork(editor, false)>"Fork to edit"</button>
                    }
                    .into_any()
                }
            }}
        </header>
    }
}

/// The badge of a run's page and what it means: a run still going is
/// followed live, one that ended is its record.
fn recorded_badge(access: RunAccess, status: Option<RunStatus>) -> (&'static str, &'static str) {
    match access {
        RunAccess::Approve => (
            "Approver link",
            "An approver link: it decides this run's approvals and nothing else; the graph is read-only",
        ),
        RunAccess::Unknown | RunAccess::View | RunAccess::Edit
            if status.is_some_and(|status| !status.is_finished()) =>
        {
            (
                "Live run",
                "A run still going, followed live: the graph as it runs, read-only",
            )
        }
        RunAccess::Unknown | RunAccess::View | RunAccess::Edit => (
            "Recorded run",
            "A recorded run: the graph as it ran, read-only",
        ),
    }
}

/// ▶ Run (Ctrl+Enter) and the run history.
#[component]
fn RunControls() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let run = editor.run;
    match editor.mode {
        EditorMode::Stored => view! {
            <div class="toolbar-group">
                <Show
                    when=move || editor.can_edit.get()
                    fallback=move || view! {
                        // A view link runs a copy of its own: only the
                        // graph's editors run (and stop) the graph itself.
                        <button
                            type="button"
                            class="primary run-button"
                            title="Make a copy you own, then run it (Ctrl+Enter)"
                            on:pointerover=|_| preload(Part::Transfer)
                            on:focus=|_| preload(Part::Transfer)
                            on:click=move |_| fork(editor, true)
                        >
                            "▶ Fork and run"
                        </button>
                    }
                >
                    <button
                        type="button"
                        class="primary run-button"
                        title="Run the graph (Ctrl+Enter)"
                        disabled=move || run.is_live()
                        on:pointerover=|_| preload(Part::RunDialog)
                        on:focus=|_| preload(Part::RunDialog)
                        on:click=move |_| editor.overlay.set(Overlay::Run)
                    >
                        {move || if run.is_live() { "Running…" } else { "▶ Run" }}
                    </button>
                    <button type="button" title="This graph's runs" on:pointerover=|_| preload(Part::RunPanel) on:focus=|_| preload(Part::RunPanel) on:click=move |_| {
                        run.panel_open.set(true);
                        run.history.set(true);
                    }>"Runs"</button>
                    <button
                        type="button"
                        title="This graph's saved revisions: compare one with now, restore one"
                        on:pointerover=|_| preload(Part::HistoryDialog)
                        on:focus=|_| preload(Part::HistoryDialog)
                        on:click=move |_| editor.overlay.set(Overlay::History)
                    >
                        "History"
                    </button>
                </Show>
            </div>
        }
        .into_any(),
        EditorMode::Local => view! {
            <button type="button" class="run-button" disabled=true title="Save it to the server to run it">"▶ Run"</button>
        }
        .into_any(),
        EditorMode::Revision => ().into_any(),
        EditorMode::Recorded => view! {
            <button type="button" title="Show the run's details" on:click=move |_| run.panel_open.set(true)>"Run details"</button>
        }
        .into_any(),
    }
}

#[component]
fn MigrationBanner() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    move || {
        let notes = editor.migrations.get();
        (!notes.is_empty()).then(|| {
            view! {
                <div class="notice migrated" role="status">
                    <strong>"This graph was written for DOC23 R3.1 and has been migrated: "</strong>
                    {notes.iter().map(|note| format!("{} ({})", note.message, note.module_id)).collect::<Vec<_>>().join(" ")}
                    <button type="button" disabled=move || !editor.can_edit.get() on:click=move |_| {
                        editor.command(Command::DismissMigrations);
                    }>"Got it"</button>
                </div>
            }
        })
    }
}

/// The editor of one graph. `mode` says where it comes from (stored, a
/// self-contained link, a recorded run); a recorded run passes its record,
/// which the canvas shows from the first render.
#[component]
pub fn Editor(
    graph: Graph,
    #[prop(default = EditorMode::Stored)] mode: EditorMode,
    #[prop(optional)] record: Option<RunRecord>,
) -> impl IntoView {
    let editor = EditorState::new(graph, mode);
    if let Some(record) = record {
        editor.run.show_record(editor.model, record);
        // Opened once in the browser (start): the panel's code is a chunk
        // the server's page cannot hydrate from.
        editor.run.panel_open.set(false);
    }
    provide_context(editor);
    together::view::provide_peer_marks(editor);
    start(editor);
    watch_validation(editor);
    // What this person has open, for the others (editing together).
    Effect::new(move |_| {
        editor.selected.track();
        together::say_presence(editor);
    });
    let model = editor.model;
    let events = CanvasEvents {
        moved: Callback::new(move |positions| {
            editor.command(Command::Move(positions));
            // The drop: no longer dragging, for the others.
            together::say_presence(editor);
        }),
        connect: Callback::new(move |connection| editor.command(Command::Connect(connection))),
        drop_cable: Callback::new(move |cable: String| editor.command(Command::RemoveCable(cable))),
        open: Callback::new(move |id: String| {
            editor.select(&id);
            crate::browser::next_frame(|| {
                if let Some(element) = web_sys::window()
                    .and_then(|window| window.document())
                    .and_then(|document| document.get_element_by_id("module-label"))
                    .and_then(|element| {
                        wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(element).ok()
                    })
                {
                    let _ = element.focus();
                }
            });
        }),
        selection: Callback::new(move |()| {
            editor.selection_changed();
            together::say_presence(editor);
        }),
        port_clicked: Callback::new(move |(module, _port, x, y): (String, String, f64, f64)| {
            editor.overlay.set(Overlay::Outputs { module, x, y });
        }),
        menu: Callback::new(move |(module, x, y): (String, f64, f64)| {
            // What the menu does, it does to this module.
            editor.select(&module);
            editor.overlay.set(Overlay::ModuleMenu { module, x, y });
        }),
        hover: Callback::new(move |over| editor.hover_connection(over)),
        note: Callback::new(move |event| editor.command(Command::Note(event))),
    };
    let editable = Signal::derive(move || editor.can_edit.get());
    let on_drop = move |event: web_sys::DragEvent| {
        let Some(kind) = event
            .data_transfer()
            .and_then(|transfer| transfer.get_data(KIND_MIME).ok())
            .and_then(|kind| ModuleKind::parse(&kind))
        else {
            return;
        };
        event.prevent_default();
        let Some(pane) = editor.pane.get_untracked() else {
            return;
        };
        let rect = pane.get_bounding_client_rect();
        let at = model.viewport.get_untracked().to_graph(
            f64::from(event.client_x()) - rect.left(),
            f64::from(event.client_y()) - rect.top(),
        );
        editor.command(Command::AddModule(
            kind,
            graph::Position {
                x: (at.x - 91.0).round(),
                y: (at.y - 12.0).round(),
            },
        ));
    };
    view! {
        <div class="editor">
            <Toolbar/>
            <MigrationBanner/>
            <LazyCompareBanner/>
            {(editor.mode == EditorMode::Recorded).then(|| view! { <LazyChangedSinceBanner/> })}
            <div class="workspace">
                <LazyPalette/>
                <div
                    class="canvas-area"
                    on:pointerover=|_| {
                        preload(Part::DetailPanel);
                        preload(Part::Popups);
                    }
                    on:focusin=|_| {
                        preload(Part::DetailPanel);
                        preload(Part::Popups);
                    }
                    on:dragover=move |event: web_sys::DragEvent| event.prevent_default()
                    on:drop=on_drop
                    on:pointermove=move |event: web_sys::PointerEvent| point_at(editor, Some(&event))
                    on:pointerleave=move |_| point_at(editor, None)
                >
                    <Canvas model editable movable=editable events pane=editor.pane/>
                    {move || (editor.has_selection.get() && editor.can_edit.get()).then(lazy_parts::lazy_arrange_bar)}
                    {move || editor.connection_hint.get().map(|(reason, x, y)| view! {
                        <div
                            class="connection-hint"
                            role="status"
                            style:left=format!("{}px", x + 14.0)
                            style:top=format!("{}px", y + 14.0)
                        >{reason}</div>
                    })}
                    <ValidationPanel/>
                    <LazyRunPanel/>
                </div>
                <LazyDetailPanel/>
                <LazyCablePanel/>
            </div>
            <Overlays/>
            <LazyTogetherNotices/>
        </div>
    }
}

/// Where this person's pointer is on the canvas, for the others (graph
/// coordinates; `None` off the canvas).
fn point_at(editor: EditorState, event: Option<&web_sys::PointerEvent>) {
    let at = event.and_then(|event| {
        let rect = editor.pane.get_untracked()?.get_bounding_client_rect();
        let at = editor.model.viewport.get_untracked().to_graph(
            f64::from(event.client_x()) - rect.left(),
            f64::from(event.client_y()) - rect.top(),
        );
        Some((at.x.round(), at.y.round()))
    });
    // While dragging, the modules move for the others as the pointer does.
    let dragging = editor
        .model
        .dragging
        .with_untracked(|dragging| !dragging.is_empty());
    if editor.together.pointer.get_value() != at || dragging {
        editor.together.pointer.set_value(at);
        together::say_presence(editor);
    }
}
