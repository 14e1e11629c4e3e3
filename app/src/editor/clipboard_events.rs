//! The page's copy, cut and paste: the selected modules and the focused
//! note go to the system clipboard as a graph fragment
//! (`super::clipboard`), and a fragment pasted becomes modules and notes.
//! Fields keep their own copy and paste.
//!
//! Writing modules as text is the whole document's serializer, which no
//! first screen runs: it is a part (`lazy_parts::clipboard_writer`),
//! fetched once the page is interactive. The copy event wants its text at
//! once, so the page keeps the part's function once it has arrived; a copy
//! before that writes the clipboard when it does.

use std::collections::HashSet;

use leptos::prelude::*;

use super::editing::Command;
use super::lazy_parts::{self, CopyText};
use super::state::EditorState;

/// What writes modules as clipboard text, once its part has arrived.
#[derive(Clone, Copy)]
pub struct Copier(StoredValue<Option<CopyText>>);

impl Default for Copier {
    fn default() -> Self {
        Copier(StoredValue::new(None))
    }
}

impl Copier {
    /// Fetches the part (a moment after the page is interactive).
    pub fn fetch(self) {
        leptos::task::spawn_local(async move {
            let _ = self.arrived().await;
        });
    }

    async fn arrived(self) -> Option<CopyText> {
        if let Some(write) = self.0.get_value() {
            return Some(write);
        }
        let write = lazy_parts::clipboard_writer().await.ok()?;
        self.0.set_value(Some(write));
        Some(write)
    }
}

fn in_text_field() -> bool {
    web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.active_element())
        .is_some_and(|element| {
            matches!(
                element.tag_name().to_ascii_uppercase().as_str(),
                "INPUT" | "TEXTAREA" | "SELECT"
            )
        })
}

/// Copy (and cut, which then deletes what it copied).
pub fn copy(editor: EditorState, event: &web_sys::ClipboardEvent, cut: bool) {
    if in_text_field() {
        return;
    }
    let mut selected: Vec<String> = editor.model.selected_ids();
    let note = focused_note();
    selected.extend(note.iter().cloned());
    if selected.is_empty() {
        return;
    }
    let Some(data) = event.clipboard_data() else {
        return;
    };
    event.prevent_default();
    let copier = editor.copier;
    if let Some(write) = copier.0.get_value() {
        let text = text_of(editor, write, &selected);
        let _ = data.set_data("text/plain", &text);
        copied(editor, cut, selected, note);
        return;
    }
    // Its part has not arrived yet: the clipboard is written when it has,
    // while the key press still lets the page write it.
    leptos::task::spawn_local(async move {
        let Some(write) = copier.arrived().await else {
            editor.notify(format!(
                "Nothing was copied. {}",
                crate::routes::PART_MISSING
            ));
            return;
        };
        if write_clipboard(&text_of(editor, write, &selected)).await {
            copied(editor, cut, selected, note);
        } else {
            editor.notify("Nothing was copied: this page may not write the clipboard yet. Press Ctrl+C again.");
        }
    });
}

fn text_of(editor: EditorState, write: CopyText, selected: &[String]) -> String {
    let selected: HashSet<String> = selected.iter().cloned().collect();
    editor.with_graph(|graph| write(graph, &selected))
}

/// The note that has the focus (a note is copied as it is in hand).
fn focused_note() -> Option<String> {
    web_sys::window()?
        .document()?
        .active_element()?
        .closest("[data-note-id]")
        .ok()??
        .get_attribute("data-note-id")
}

/// A cut deletes what it copied (and only once it is copied).
fn copied(editor: EditorState, cut: bool, mut modules: Vec<String>, note: Option<String>) {
    if !cut {
        return;
    }
    if let Some(note) = note {
        modules.retain(|id| *id != note);
        editor.command(Command::Note(crate::canvas::NoteEvent::Removed(note)));
    }
    if !modules.is_empty() {
        editor.command(Command::Delete {
            modules,
            cable: None,
        });
    }
}

async fn write_clipboard(text: &str) -> bool {
    #[cfg(feature = "hydrate")]
    {
        let Some(window) = web_sys::window() else {
            return false;
        };
        // Only a secure page may (and then only near a key press).
        window.is_secure_context()
            && wasm_bindgen_futures::JsFuture::from(window.navigator().clipboard().write_text(text))
                .await
                .is_ok()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = text;
        false
    }
}

/// Paste: a fragment on the clipboard becomes modules where the pointer is.
pub fn paste(editor: EditorState, event: &web_sys::ClipboardEvent) {
    if in_text_field() {
        return;
    }
    let Some(text) = event
        .clipboard_data()
        .and_then(|data| data.get_data("text/plain").ok())
    else {
        return;
    };
    event.prevent_default();
    editor.command(Command::Paste {
        text,
        at: editor.pointer_or_centre(),
    });
}
