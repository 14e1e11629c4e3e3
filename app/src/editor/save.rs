//! Autosave: a debounced `PUT` with `If-Match: <revision>` after every edit,
//! one at a time. Edits made while the server is unreachable stay in the page
//! and in a local draft, and are saved when it answers again. A stale
//! revision (409) never overwrites: the person chooses to load theirs or to
//! save theirs as a fork.

use std::time::Duration;

use graph::Graph;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::state::{EditorMode, EditorState};
use crate::api::{self, ApiError};
use crate::browser;
use crate::edit_token;

/// What the save indicator says.
#[derive(Clone, Debug, PartialEq)]
pub enum SaveStatus {
    Saved,
    /// Edits wait for the debounce.
    Pending,
    Saving,
    /// The server did not answer; saving again soon.
    Offline,
    /// Someone saved first; the graph is at this revision.
    Conflict(u64),
    /// The server refused the document; the message says why.
    Refused(String),
    ViewOnly,
    /// The graph came in a self-contained link: it lives in this page only.
    Local,
}

impl SaveStatus {
    pub fn text(&self) -> String {
        match self {
            SaveStatus::Saved => "Saved".to_owned(),
            SaveStatus::Pending => "Unsaved changes".to_owned(),
            SaveStatus::Saving => "Saving…".to_owned(),
            SaveStatus::Offline => "Offline — will save when the server is back".to_owned(),
            SaveStatus::Conflict(_) => "Conflict — choose what to keep".to_owned(),
            SaveStatus::Refused(message) => format!("Not saved: {message}"),
            SaveStatus::ViewOnly => "View only".to_owned(),
            SaveStatus::Local => "Not on the server — in this page only".to_owned(),
        }
    }

    pub fn class(&self) -> &'static str {
        match self {
            SaveStatus::Saved => "saved",
            SaveStatus::Pending | SaveStatus::Saving => "saving",
            SaveStatus::Offline => "offline",
            SaveStatus::Conflict(_) | SaveStatus::Refused(_) => "problem",
            SaveStatus::ViewOnly => "view-only",
            SaveStatus::Local => "local",
        }
    }
}

const DEBOUNCE: Duration = Duration::from_millis(700);

#[derive(Clone, Copy)]
pub struct SaveState {
    pub status: RwSignal<SaveStatus>,
    /// The revision the server has (the room's, as this page has it).
    pub revision: StoredValue<u64>,
    timer: StoredValue<Option<crate::browser::Timer>>,
}

/// A draft kept in local storage until the server has it.
#[derive(Serialize, Deserialize)]
struct Draft {
    base_revision: u64,
    document: Graph,
}

fn draft_key(graph_id: &str) -> String {
    format!("patchbay.draft.{graph_id}")
}

impl SaveState {
    pub fn new(revision: u64) -> SaveState {
        SaveState {
            status: RwSignal::new(SaveStatus::ViewOnly),
            revision: StoredValue::new(revision),
            timer: StoredValue::new(None),
        }
    }

    /// An edit happened: keep a draft, and save after a pause.
    pub fn changed(&self, editor: EditorState) {
        if editor.mode != EditorMode::Stored {
            // Nothing to save to: the link's graph stays in the page.
            return;
        }
        if matches!(self.status.get_untracked(), SaveStatus::Conflict(_)) {
            // Until the person chooses, nothing is sent.
            store_draft(editor);
            return;
        }
        if !matches!(
            self.status.get_untracked(),
            SaveStatus::Offline | SaveStatus::Saving
        ) {
            self.status.set(SaveStatus::Pending);
        }
        store_draft(editor);
        super::together::changed(editor, DEBOUNCE);
    }

    fn schedule(&self, editor: EditorState, after: Duration) {
        browser::restart_timeout(self.timer, after, move || save_now(editor));
    }
}

fn store_draft(editor: EditorState) {
    let draft = Draft {
        base_revision: editor.save.revision.get_value(),
        document: editor.graph(),
    };
    if let (Some(storage), Ok(text)) = (browser::local_storage(), serde_json::to_string(&draft)) {
        // A full quota only loses the draft; the page still has the edits.
        let _ = storage.set_item(&draft_key(&editor.graph_id()), &text);
    }
}

pub fn clear_draft(editor: EditorState) {
    if let Some(storage) = browser::local_storage() {
        let _ = storage.remove_item(&draft_key(&editor.graph_id()));
    }
}

/// Drops the draft of a graph this browser no longer edits.
pub fn discard_draft(graph_id: &str) {
    if let Some(storage) = browser::local_storage() {
        let _ = storage.remove_item(&draft_key(graph_id));
    }
}

/// Restores a draft left by an earlier visit (a reload while offline). A
/// draft made on the current revision is taken up and saved; one made on an
/// older revision is a conflict, for the person to resolve.
pub fn restore_draft(editor: EditorState) {
    let Some(storage) = browser::local_storage() else {
        return;
    };
    let Some(text) = storage
        .get_item(&draft_key(&editor.graph_id()))
        .ok()
        .flatten()
    else {
        return;
    };
    let Ok(draft) = serde_json::from_str::<Draft>(&text) else {
        let _ = storage.remove_item(&draft_key(&editor.graph_id()));
        return;
    };
    if draft.document == editor.graph() {
        clear_draft(editor);
        return;
    }
    let revision = editor.save.revision.get_value();
    editor.replace(draft.document);
    if draft.base_revision == revision {
        editor.notify("Restored edits that had not been saved.");
        editor.save.status.set(SaveStatus::Pending);
        editor.save.schedule(editor, Duration::from_millis(10));
    } else {
        editor.save.status.set(SaveStatus::Conflict(revision));
    }
}

/// Sends the edits the server does not have yet, as a change to the graph's
/// room (editing together, `together.rs`), unless one is on its way (then
/// they go when it is back).
pub fn save_now(editor: EditorState) {
    let save = editor.save;
    if editor.mode != EditorMode::Stored {
        return;
    }
    if matches!(
        save.status.get_untracked(),
        SaveStatus::Conflict(_) | SaveStatus::ViewOnly
    ) {
        return;
    }
    if edit_token::authorization(&editor.graph_id()).is_none() {
        save.status.set(SaveStatus::ViewOnly);
        return;
    }
    super::together::send(editor);
}

/// After a conflict: drop our edits and load the server's revision.
pub fn load_theirs(editor: EditorState) {
    let graph_id = editor.graph_id();
    leptos::task::spawn_local(async move {
        match api::graph_text(&graph_id).await {
            Ok(body) => match Graph::load(&body) {
                Ok(graph) => {
                    editor.save.revision.set_value(graph.revision);
                    editor.replace(graph);
                    editor.save.status.set(SaveStatus::Saved);
                    clear_draft(editor);
                    editor.notify("Loaded the latest saved version.");
                }
                Err(error) => {
                    editor.notify(format!("The saved version could not be read: {error}"))
                }
            },
            _ => editor.notify("The server could not be reached; try again."),
        }
    });
}

/// After a conflict, to take a view-only graph further, or to keep a graph
/// that came in a self-contained link: save this document as a new graph
/// this browser owns, and go there; with `then_run`, straight to its run
/// dialog ("Fork and run").
pub fn save_as_fork(editor: EditorState, then_run: bool) {
    let mut document = editor.graph();
    // A copy of a graph on the server is a fork, and says so; a graph that
    // came in a self-contained link has no original here.
    if document.id.is_some() {
        document.name = graph::names::fork_name(&document.name);
    }
    document.id = None;
    document.revision = 0;
    let Ok(body) = document.to_json() else { return };
    leptos::task::spawn_local(async move {
        match api::create_graph(&body).await {
            Ok(created) => {
                clear_draft(editor);
                if then_run {
                    browser::navigate(&format!(
                        "{}{}",
                        created.edit_url,
                        edit_token::RUN_ON_ARRIVAL
                    ));
                } else {
                    browser::navigate(&created.edit_url);
                }
            }
            Err(ApiError::Unreachable(_)) => {
                editor.notify("The server could not be reached; try again.")
            }
            Err(refused) => editor.notify(format!(
                "Could not save a copy: {}",
                refused.message_or("the server refused it")
            )),
        }
    });
}
