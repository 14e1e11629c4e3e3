//! Edits of notes (PRODUCT §1.6): what a gesture on a note means for the
//! document, each an undoable step others see.

use graph::Position;
use graph::notes::{NEW_NOTE_SIZE, Note};
use leptos::prelude::*;

use super::EditorState;
use crate::canvas::NoteEvent;

impl EditorState {
    pub fn note_event(&self, event: NoteEvent) {
        match event {
            NoteEvent::Changed {
                note,
                label,
                coalesce,
            } => {
                self.edit(label, coalesce.as_deref(), |edit| {
                    edit.set_item("notes", note.to_value());
                });
            }
            NoteEvent::Removed(id) => {
                self.edit("Delete note", None, |edit| edit.remove_item("notes", &id));
            }
            NoteEvent::Add(at) => self.add_note(at),
        }
    }

    /// A new empty note with its top-left corner at `at`, open for writing.
    pub fn add_note(&self, at: Position) {
        // Random, not counted: two people adding a note at once must not
        // both make "note-3" and keep only one of them.
        let id = format!(
            "note-{:06x}",
            (js_sys::Math::random() * 16_777_216.0) as u32
        );
        let note = Note {
            id: id.clone(),
            text: String::new(),
            position: Position {
                x: at.x.round(),
                y: at.y.round(),
            },
            size: NEW_NOTE_SIZE,
            colour: graph::frame::Colour::default(),
        };
        if self.edit("Add note", None, |edit| {
            edit.set_item("notes", note.to_value());
        }) {
            self.model.editing_note.set(Some(id));
        }
    }
}
