//! Writing in a note (PRODUCT §1.6): its Markdown in a field over the note
//! (each keystroke an edit others see), its colours, and removing it. A
//! part of its own (`lazy_parts::note_writer`): only an editor who opens a
//! note fetches it. Focus leaving it closes it; so do Escape and
//! Ctrl+Enter, which give the focus back to the note.

use graph::frame::Colour;
use graph::notes::Note;
use leptos::prelude::*;

use super::editing::Command;
use super::state::EditorState;
use crate::canvas::NoteEvent;
use crate::canvas::note_layer::focus_note;

/// The smallest a note is while written in, whatever its own size.
const WRITING_WIDTH: f64 = 300.0;
const WRITING_HEIGHT: f64 = 200.0;

#[component]
pub fn NoteWriter(id: String) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let model = editor.model;
    let note = {
        let id = id.clone();
        Memo::new(move |_| {
            model
                .notes
                .with(|notes| notes.iter().find(|note| note.id == id).cloned())
        })
    };
    // The note may be read a moment after this part arrives (the notes'
    // own part): the writer is drawn once it is there.
    let present = Memo::new(move |_| note.with(Option::is_some));
    move || present.get().then(|| writer(id.clone(), note, editor))
}

/// The writer of a note that is there.
fn writer(id: String, note: Memo<Option<Note>>, editor: EditorState) -> AnyView {
    let model = editor.model;
    let first = note.get_untracked().unwrap_or_else(|| Note {
        id: id.clone(),
        text: String::new(),
        position: graph::Position::default(),
        size: graph::notes::NEW_NOTE_SIZE,
        colour: Colour::default(),
    });
    let field = NodeRef::<leptos::html::Textarea>::new();
    // Once it is in the page: a part's view is mounted some frames after
    // it is made.
    Effect::new(move |_| {
        if field.get().is_some() {
            focus_when_shown(field, 120);
        }
    });
    let send = move |note: Note, label: &'static str, coalesce: Option<String>| {
        editor.command(Command::Note(NoteEvent::Changed {
            note,
            label,
            coalesce,
        }));
    };
    let close = {
        let id = id.clone();
        move |give_focus_back: bool| {
            model.editing_note.set(None);
            if give_focus_back {
                focus_note(&id);
            }
        }
    };
    let typed = move |event: web_sys::Event| {
        let Some(current) = note.get_untracked() else {
            return;
        };
        let coalesce = Some(format!("note:{}:text", current.id));
        let text = event_target_value(&event);
        send(Note { text, ..current }, "Write in note", coalesce);
    };
    let key = {
        let close = close.clone();
        move |event: web_sys::KeyboardEvent| {
            // Keys typed here are the note's, not the canvas's.
            event.stop_propagation();
            let ends = event.key() == "Escape"
                || (event.key() == "Enter" && (event.ctrl_key() || event.meta_key()));
            if ends {
                event.prevent_default();
                close(true);
            }
        }
    };
    // Focus going elsewhere than inside the writer closes it.
    let left = {
        let close = close.clone();
        move |event: web_sys::FocusEvent| {
            let inside = event
                .related_target()
                .and_then(|target| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(target).ok())
                .and_then(|target| target.closest(".note-writer").ok().flatten())
                .is_some();
            if !inside {
                close(false);
            }
        }
    };
    let colours = Colour::ALL.map(|colour| {
        let chosen =
            move || note.with(|note| note.as_ref().is_some_and(|note| note.colour == colour));
        let pick = move |_| {
            if let Some(current) = note.get_untracked() {
                send(Note { colour, ..current }, "Colour note", None);
            }
        };
        view! {
            <button
                type="button"
                class=format!("note-colour note-{}", colour.as_str())
                aria-label=format!("{} note", colour.title())
                aria-pressed=move || chosen().to_string()
                on:click=pick
            ></button>
        }
    });
    let remove = {
        let id = id.clone();
        let close = close.clone();
        move |_| {
            close(false);
            editor.command(Command::Note(NoteEvent::Removed(id.clone())));
            editor.focus_canvas();
        }
    };
    let done = move |_| close(true);
    // Over the note, where the pane shows it, scaled with the view.
    let style = move || {
        let view = model.viewport.get();
        let (left, top) = editor.pane.get().map_or((0.0, 0.0), |pane| {
            let rect = pane.get_bounding_client_rect();
            (rect.left(), rect.top())
        });
        note.with(|note| {
            note.as_ref().map_or_else(String::new, |note| {
                format!(
                    "left:{}px;top:{}px;width:{}px;height:{}px;transform:scale({})",
                    left + view.x + note.position.x * view.zoom,
                    top + view.y + note.position.y * view.zoom,
                    note.size.width.max(WRITING_WIDTH),
                    note.size.height.max(WRITING_HEIGHT),
                    view.zoom
                )
            })
        })
    };
    let class = move || {
        let colour = note.with(|note| note.as_ref().map(|note| note.colour).unwrap_or_default());
        format!("note-writer note-{}", colour.as_str())
    };
    view! {
        <div class=class style=style on:focusout=left on:pointerdown=|event: web_sys::PointerEvent| event.stop_propagation() on:dblclick=|event: web_sys::MouseEvent| event.stop_propagation()>
            <textarea
                class="note-field"
                node_ref=field
                aria-label="Note (Markdown)"
                placeholder="Write in Markdown: # heading, - list, **strong**, [link](https://…)"
                prop:value=first.text
                on:input=typed
                on:keydown=key
            ></textarea>
            <div class="note-bar" role="toolbar" aria-label="Note">
                {colours}
                <button type="button" class="note-remove" on:click=remove>"Delete"</button>
                <button type="button" class="note-done" on:click=done>"Done"</button>
            </div>
        </div>
    }
    .into_any()
}

/// Focuses the field once it is in the page, looking again each frame
/// (`frames` times at most).
fn focus_when_shown(field: NodeRef<leptos::html::Textarea>, frames: u32) {
    crate::browser::next_frame(move || {
        let Some(element) = field.get_untracked() else {
            return;
        };
        if element.is_connected() {
            let _ = element.focus();
        } else if frames > 0 {
            focus_when_shown(field, frames - 1);
        }
    });
}
