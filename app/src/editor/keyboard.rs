//! Keyboard shortcuts (the help dialog lists them): every main action of
//! the editor works without a pointer. Keys typed into a field type; only
//! undo/redo, save and Escape act there too.

use graph::Position;
use leptos::prelude::*;

use super::editing::Command;
use super::state::{EditorMode, EditorState, Overlay};
use crate::canvas::arrange::Arrangement;
use crate::canvas::note_layer::NoteKey;
use crate::canvas::{self, typing};

/// Whether the key went to a button or a link, which Enter presses.
fn on_control(event: &web_sys::KeyboardEvent) -> bool {
    event
        .target()
        .and_then(|target| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(target).ok())
        .is_some_and(|element| {
            matches!(
                element.tag_name().to_ascii_uppercase().as_str(),
                "BUTTON" | "A" | "SUMMARY"
            )
        })
}

/// Selects the module before or after the selected one, in document order.
fn step_selection(editor: EditorState, forward: bool) {
    let ids: Vec<String> = editor.with_graph(|graph| {
        graph
            .modules
            .iter()
            .map(|module| module.id.clone())
            .collect()
    });
    if ids.is_empty() {
        return;
    }
    let current = editor
        .selected
        .get_untracked()
        .and_then(|id| ids.iter().position(|candidate| *candidate == id));
    let next = match (current, forward) {
        (None, true) => 0,
        (None, false) => ids.len() - 1,
        (Some(index), true) => (index + 1) % ids.len(),
        (Some(index), false) => (index + ids.len() - 1) % ids.len(),
    };
    editor.select(&ids[next]);
    if let Some(node) = editor.model.node(&ids[next]) {
        let at = node.position.get_untracked();
        canvas::centre_on(
            editor.model,
            Position {
                x: at.x + 91.0,
                y: at.y + 47.0,
            },
        );
    }
}

fn nudge(editor: EditorState, dx: f64, dy: f64, snap: bool) {
    let selected = editor.model.selected_ids();
    if selected.is_empty() {
        editor.model.viewport.update(|view| {
            view.x -= dx * 4.0;
            view.y -= dy * 4.0;
        });
        return;
    }
    editor.command(Command::Nudge {
        modules: selected,
        dx,
        dy,
        snap,
    });
}

pub fn handle(editor: EditorState, event: &web_sys::KeyboardEvent) {
    // A focused note's own keys.
    if editor.can_edit.get_untracked()
        && let Some(notes) = editor.model.note_handlers.get_value()
        && let Some(key) = (notes.key)(editor.model, event)
    {
        event.prevent_default();
        match key {
            NoteKey::Open(id) => editor.model.editing_note.set(Some(id)),
            NoteKey::Edit(note) => editor.command(Command::Note(note)),
        }
        return;
    }
    let command = event.ctrl_key() || event.meta_key();
    let key = event.key();
    let in_field = typing(event);
    let overlay_open = editor
        .overlay
        .with_untracked(|overlay| *overlay != Overlay::None);
    let handled = match (command, event.shift_key(), key.as_str()) {
        (true, false, "z" | "Z") => {
            editor.command(Command::Undo);
            true
        }
        (true, true, "z" | "Z") | (true, _, "y" | "Y") => {
            editor.command(Command::Redo);
            true
        }
        (true, _, "s" | "S") => {
            editor.save_now();
            true
        }
        (_, _, "Escape") => {
            if overlay_open {
                editor.overlay.set(Overlay::None);
                editor.model.pending_from.set(None);
                // Back where the keys act, not at the top of the page.
                editor.focus_canvas();
            } else if editor.model.pending_from.get_untracked().is_some() {
                editor.model.pending_from.set(None);
            } else if in_field {
                crate::browser::focus(".pane");
            } else if !editor.model.selected_ids().is_empty() {
                editor.model.select_only(&[]);
                editor.selection_changed();
            } else if editor.show_validation.get_untracked() {
                // Then the docked panels, the last opened first.
                editor.show_validation.set(false);
            } else if editor.run.panel_open.get_untracked() {
                editor.run.panel_open.set(false);
            }
            true
        }
        _ if in_field || overlay_open => false,
        (true, _, "a" | "A") => {
            editor.select_all();
            true
        }
        (true, _, "Enter") => {
            if editor.mode == EditorMode::Stored && !editor.run.is_live() {
                if editor.can_edit.get_untracked() {
                    editor.overlay.set(Overlay::Run);
                } else {
                    super::lazy_parts::fork(editor, true);
                }
            }
            true
        }
        (true, _, "d" | "D") => {
            editor.command(Command::duplicate_selection(&editor));
            true
        }
        (false, _, "Delete" | "Backspace") => {
            editor.command(Command::delete_selection(&editor));
            true
        }
        (false, _, "?") => {
            editor.overlay.set(Overlay::Help);
            true
        }
        (false, _, "/") => {
            crate::browser::focus("#palette-search");
            true
        }
        (false, _, "f" | "F") => {
            canvas::fit_view(editor.model);
            true
        }
        (false, _, "0") => {
            let zoom = editor.model.viewport.get_untracked().zoom;
            canvas::zoom_centre(editor.model, 1.0 / zoom);
            true
        }
        (false, _, "+" | "=") => {
            canvas::zoom_centre(editor.model, 1.25);
            true
        }
        (false, _, "-" | "_") => {
            canvas::zoom_centre(editor.model, 0.8);
            true
        }
        // Other Alt+Shift keys go on to the arms below.
        (false, true, _) if event.alt_key() && arrange(editor, event) => true,
        (false, _, "v" | "V") => {
            editor.show_validation.update(|shown| *shown = !*shown);
            true
        }
        (false, _, "]") => {
            step_selection(editor, true);
            true
        }
        (false, _, "[") => {
            step_selection(editor, false);
            true
        }
        // Enter on a button or a link presses it (a panel's, the list of a
        // module's cables); elsewhere it opens the selected module's details.
        (false, _, "Enter") if !on_control(event) => {
            crate::browser::focus("#module-label");
            editor.selected.get_untracked().is_some()
        }
        (false, _, "ContextMenu") | (false, true, "F10") => {
            over_selected(editor, |module, x, y| Overlay::ModuleMenu { module, x, y })
        }
        (false, _, "o" | "O") => {
            over_selected(editor, |module, x, y| Overlay::Outputs { module, x, y })
        }
        (false, shift, arrow @ ("ArrowLeft" | "ArrowRight" | "ArrowUp" | "ArrowDown")) => {
            let step = if shift { 1.0 } else { 20.0 };
            let (dx, dy) = match arrow {
                "ArrowLeft" => (-step, 0.0),
                "ArrowRight" => (step, 0.0),
                "ArrowUp" => (0.0, -step),
                _ => (0.0, step),
            };
            // Shift moves by a pixel, off the grid.
            nudge(editor, dx, dy, !shift && editor.model.snap.get_untracked());
            true
        }
        _ => false,
    };
    if handled {
        event.prevent_default();
    }
}

/// Alt+Shift: Tidy up (T), or align or spread the selection; false for
/// any other key.
fn arrange(editor: EditorState, event: &web_sys::KeyboardEvent) -> bool {
    let code = event.code();
    let modules = editor.model.selected_ids();
    if code == "KeyT" {
        editor.command(Command::Tidy(modules));
    } else if let Some(how) = Arrangement::of_key(&code) {
        editor.command(Command::Arrange { how, modules });
    } else {
        return false;
    }
    true
}

/// Opens a popup about the selected module (its outputs, its menu) over
/// the canvas, where a pointer would have been; false with none selected.
fn over_selected(editor: EditorState, popup: impl FnOnce(String, f64, f64) -> Overlay) -> bool {
    match editor.selected.get_untracked() {
        Some(module) => {
            let (width, height) = editor.model.pane_size.get_untracked();
            editor.overlay.set(popup(module, width / 2.0, height / 3.0));
            true
        }
        None => false,
    }
}
