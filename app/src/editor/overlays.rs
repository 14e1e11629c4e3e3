//! What opens over the editor: the output popup (DOC23 §5), the target
//! chooser for wiring from the keyboard, the conflict dialog, the shortcut
//! list, and short notices.

use std::time::Duration;

use graph::{Direction, Port, ports};
use leptos::prelude::*;

use super::editing::Command;
use super::lazy_parts::{
    Popup, lazy_history_dialog, lazy_note_writer, lazy_popup, lazy_run_comparison, lazy_run_dialog,
    lazy_share_dialog, lazy_triggers_dialog,
};
use super::modal::Modal;
use super::module_menu::ModuleMenu;
use super::save::SaveStatus;
use super::state::{EditorState, Overlay};
use crate::canvas::Connection;

/// Every shortcut, as the help dialog lists them.
pub const SHORTCUTS: [(&str, &str); 28] = [
    ("?", "Show this list"),
    (
        "Ctrl+Enter",
        "Run the graph (in the run dialog: start the run)",
    ),
    ("/", "Search the palette to add a module"),
    ("Ctrl+Z", "Undo"),
    ("Ctrl+Shift+Z, Ctrl+Y", "Redo"),
    ("Delete, Backspace", "Delete the selection"),
    ("Ctrl+A", "Select every module"),
    (
        "Ctrl+C, Ctrl+X, Ctrl+V",
        "Copy, cut, paste (between graphs too)",
    ),
    ("Ctrl+D", "Duplicate the selection"),
    ("[ and ]", "Select the previous / next module"),
    (
        "Arrow keys",
        "Move the selection (Shift: 1 px); with nothing selected, pan",
    ),
    (
        "Alt+Shift+← → ↑ ↓",
        "Align the selected modules' left, right, top or bottom edges",
    ),
    (
        "Alt+Shift+C, Alt+Shift+M",
        "Align their centres, their middles",
    ),
    (
        "Alt+Shift+H, Alt+Shift+V",
        "Spread them evenly across, down",
    ),
    (
        "Alt+Shift+T",
        "Tidy up: lay out the selection (or, with less than two selected, the graph) left to right",
    ),
    ("Enter", "Edit the selected module's details"),
    ("O", "Outputs of the selected module, to start a cable"),
    (
        "Shift+F10, Menu key",
        "The selected module's menu (Run from here, …); right click too",
    ),
    ("F", "Fit the graph in view"),
    ("0", "Zoom to 100%"),
    ("+ and −", "Zoom in / out"),
    ("Space + drag", "Pan"),
    ("Shift + drag", "Select with a box"),
    ("Shift + click", "Add to / remove from the selection"),
    ("V", "Show or hide validation"),
    ("Ctrl+S", "Save now"),
    ("Alt+↑ / Alt+↓", "Move a re-prompt up / down (in its text)"),
    (
        "Escape",
        "Close, cancel, clear the selection, then close the validation and run panels",
    ),
];

#[component]
fn Help() -> impl IntoView {
    view! {
        <Modal title="Keyboard shortcuts".to_owned() class="help">
                <table>
                    <tbody>
                        {SHORTCUTS
                            .iter()
                            .map(|(keys, action)| view! { <tr><th scope="row"><kbd>{*keys}</kbd></th><td>{*action}</td></tr> })
                            .collect_view()}
                    </tbody>
                </table>
        </Modal>
    }
}

/// The outputs of a module with label, description and colour; choosing one
/// starts a cable from it.
#[component]
fn Outputs(module: String, x: f64, y: f64) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let outputs: Vec<Port> = editor.with_graph(|graph| {
        graph
            .module(&module)
            .map(|module| ports(module).outputs)
            .unwrap_or_default()
    });
    let label = editor.module_label(&module);
    let style = format!("left: {}px; top: {}px", x.max(8.0), y.max(8.0));
    view! {
        <div class="popup-backdrop" on:click=move |_| editor.overlay.set(Overlay::None)>
            <div class="output-popup" role="dialog" aria-label=format!("Outputs of {label}") style=style on:click=|event| event.stop_propagation()>
                <h3>{format!("Outputs of “{label}”")}</h3>
                <ul>
                    {outputs
                        .into_iter()
                        .enumerate()
                        .map(|(index, port)| {
                            let module = module.clone();
                            let port_id = port.id.clone();
                            let port_type = port.port_type;
                            view! {
                                <li>
                                    <button
                                        type="button"
                                        class=format!("output-choice accent-{}", port.accent.as_str())
                                        data-port-id=port.id.clone()
                                        autofocus=index == 0
                                        on:click=move |event: web_sys::MouseEvent| {
                                            editor.model.pending_from.set(Some((module.clone(), port_id.clone(), port_type)));
                                            // From the keyboard (no pointer), choose the target from a list.
                                            if event.detail() == 0 {
                                                editor.overlay.set(Overlay::Targets { module: module.clone(), port: port_id.clone() });
                                            } else {
                                                editor.overlay.set(Overlay::None);
                                                editor.notify("Click an input port to connect (Escape cancels).");
                                            }
                                        }
                                    >
                                        <span class="swatch"></span>
                                        <span class="output-title">{port.title.clone()}</span>
                                        <span class="output-description">{port.description.clone()}</span>
                                    </button>
                                </li>
                            }
                        })
                        .collect_view()}
                </ul>
            </div>
        </div>
    }
}

/// The inputs of other modules a chosen output fits, for wiring without a pointer.
#[component]
fn Targets(module: String, port: String) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let filter = RwSignal::new(String::new());
    let candidates: Vec<(String, String, String)> = editor.with_graph(|graph| {
        let Some(source) = graph.module(&module) else {
            return Vec::new();
        };
        let Some(output) = ports(source).output(&port).cloned() else {
            return Vec::new();
        };
        graph
            .modules
            .iter()
            .filter(|target| target.id != module)
            .flat_map(|target| {
                ports(target)
                    .inputs
                    .into_iter()
                    .filter(|input| {
                        input.direction == Direction::Input
                            && output.port_type.connects_to(input.port_type)
                    })
                    .map(|input| {
                        (
                            target.id.clone(),
                            input.id.clone(),
                            format!("{} · {}", target.display_label(), input.label),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    });
    let stored = StoredValue::new(candidates);
    let connect = move |target: String, input: String| {
        editor.model.pending_from.set(None);
        editor.overlay.set(Overlay::None);
        editor.command(Command::Connect(Connection {
            from: (module.clone(), port.clone()),
            to: (target, input),
            rewire: None,
        }));
    };
    view! {
        <div class="modal-backdrop" on:click=move |_| {
            editor.model.pending_from.set(None);
            editor.overlay.set(Overlay::None);
        }>
            <div class="modal targets" role="dialog" aria-modal="true" aria-label="Connect to" on:click=|event| event.stop_propagation()>
                <h2>"Connect to…"</h2>
                <input type="search" placeholder="Filter inputs" aria-label="Filter inputs" autofocus=true prop:value=move || filter.get() on:input=move |event| filter.set(event_target_value(&event))/>
                <ul>
                    {move || {
                        let query = crate::browser::lowercase(&filter.get());
                        stored.with_value(|candidates| {
                            candidates
                                .iter()
                                .filter(|(_, _, text)| crate::browser::lowercase(text).contains(&query))
                                .map(|(target, input, text)| {
                                    let (target, input) = (target.clone(), input.clone());
                                    let connect = connect.clone();
                                    view! { <li><button type="button" on:click=move |_| connect(target.clone(), input.clone())>{text.clone()}</button></li> }
                                })
                                .collect_view()
                        })
                    }}
                </ul>
            </div>
        </div>
    }
}

/// Something that did not work, said plainly, until the person closes it.
#[component]
fn Problem(title: String, message: String) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    view! {
        <Modal title class="problem" alert=true>
            <p class="problem-message">{message}</p>
            <div class="actions">
                <button type="button" autofocus=true on:click=move |_| editor.overlay.set(Overlay::None)>"Close"</button>
            </div>
        </Modal>
    }
}

/// The conflict dialog: someone else saved the graph, now at `current`.
pub fn conflict(current: u64) -> AnyView {
    view! { <Conflict current/> }.into_any()
}

#[component]
fn Conflict(current: u64) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    view! {
        <div class="modal-backdrop">
            <div class="modal conflict" role="alertdialog" aria-modal="true" aria-label="Someone else saved this graph">
                <h2>"Someone else saved this graph"</h2>
                <p>{format!("It is now at revision {current}. Your edits are still here, and nothing has been overwritten. Choose what to keep:")}</p>
                <div class="actions">
                    <button type="button" class="danger" on:click=move |_| editor.command(Command::LoadTheirs)>"Load theirs (discard my edits)"</button>
                    <button type="button" class="primary" autofocus=true on:click=move |_| super::lazy_parts::fork(editor, false)>"Save mine as a fork"</button>
                </div>
            </div>
        </div>
    }
}

/// The small things that open over the canvas: the shortcut list, a
/// module's outputs or menu, the targets of a port, a problem (in the
/// popups' part, `lazy_parts::popups`).
pub fn popup(overlay: Overlay) -> AnyView {
    match overlay {
        Overlay::Help => view! { <Help/> }.into_any(),
        Overlay::Outputs { module, x, y } => view! { <Outputs module x y/> }.into_any(),
        Overlay::Targets { module, port } => view! { <Targets module port/> }.into_any(),
        Overlay::ModuleMenu { module, x, y } => view! { <ModuleMenu module x y/> }.into_any(),
        Overlay::Problem { title, message } => view! { <Problem title message/> }.into_any(),
        // The dialogs are loaded from chunks of their own (lazy_parts).
        _ => ().into_any(),
    }
}

#[component]
pub fn Overlays() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    // Notices go away by themselves.
    Effect::new(move |_| {
        if let Some((serial, _)) = editor.toast.get() {
            crate::browser::run_after(
                move || {
                    if editor
                        .toast
                        .try_with_untracked(|toast| toast.as_ref().map(|(current, _)| *current))
                        .flatten()
                        == Some(serial)
                    {
                        editor.toast.set(None);
                    }
                },
                Duration::from_millis(4000),
            );
        }
    });
    view! {
        {move || match editor.overlay.get() {
            // With nothing else open, the note being written in.
            Overlay::None => editor.model.editing_note.get().map(lazy_note_writer),
            Overlay::Run => Some(lazy_run_dialog(None)),
            Overlay::RunFrom(from) => Some(lazy_run_dialog(Some(from))),
            Overlay::Share => Some(lazy_share_dialog()),
            Overlay::Triggers => Some(lazy_triggers_dialog()),
            Overlay::History => Some(lazy_history_dialog()),
            Overlay::CompareRuns { first, second } => Some(lazy_run_comparison(first, second)),
            popup => Some(lazy_popup(Popup::Over(popup))),
        }}
        {move || match editor.save.status.get() {
            SaveStatus::Conflict(current) => Some(lazy_popup(Popup::Conflict(current))),
            _ => None,
        }}
        <div class="toast-area" role="status" aria-live="polite">
            {move || editor.toast.get().map(|(_, message)| view! { <div class="toast">{message}</div> })}
        </div>
    }
}
