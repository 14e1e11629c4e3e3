//! Changing the graph: every edit the page itself asks for (the toolbar,
//! the canvas, the keyboard, the clipboard, a banner) is a [`Command`],
//! carried out by the editing part — the edit history, the edits of
//! modules and cables, drafts, saving and sending to the graph's room.
//! That part is a chunk of the bundle of its own (`lazy_parts::editing`):
//! a view link never fetches it, and an editor fetches it once the page is
//! interactive, so neither first load carries it. Commands asked for
//! before it has arrived wait, in order, and are carried out when it does.
//!
//! The lazily loaded panels and dialogs (the palette, a module's panel,
//! History) edit through `EditorState::edit` directly: they are parts of
//! their own, and what they share with this one is a chunk they share.

use graph::{Graph, ModuleKind, Position};
use leptos::prelude::*;

use super::save;
use super::state::EditorState;
use crate::canvas::Connection;
use crate::routes::PartMissing;

/// An edit asked for by the page, to be carried out by the editing part.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Rename(String),
    Undo,
    Redo,
    /// The migration notes read ("Got it").
    DismissMigrations,
    /// Modules dropped where a drag left them.
    Move(Vec<(String, Position)>),
    /// The selected modules moved by the arrow keys, onto the grid when
    /// `snap`.
    Nudge {
        modules: Vec<String>,
        dx: f64,
        dy: f64,
        snap: bool,
    },
    /// The modules laid out in layers (`canvas::tidy`); none named: the
    /// whole graph.
    Tidy(Vec<String>),
    /// The modules aligned or spread (`canvas::arrange`).
    Arrange {
        how: crate::canvas::arrange::Arrangement,
        modules: Vec<String>,
    },
    Connect(Connection),
    RemoveCable(String),
    AddModule(ModuleKind, Position),
    /// Modules deleted with their cables, or with none a cable.
    Delete {
        modules: Vec<String>,
        cable: Option<std::sync::Arc<str>>,
    },
    Paste {
        text: String,
        at: Position,
    },
    Duplicate(Vec<String>),
    /// A note moved, resized, written in, coloured, removed or added.
    Note(crate::canvas::NoteEvent),
    /// Ctrl+S, or the connection back: send what the server does not have.
    SaveNow,
    /// A draft an earlier visit left, taken up once the page is interactive.
    RestoreDraft,
    /// After a conflict: drop this browser's edits, load the server's.
    LoadTheirs,
    /// A past revision made the graph again (History, a comparison).
    RestoreRevision {
        revision: i64,
        graph: Box<Graph>,
    },
}

// A command says what it acts on as it is asked for: carried out later, the
// selection may have changed by then.
impl Command {
    /// Deleting what is selected now.
    pub fn delete_selection(editor: &EditorState) -> Command {
        Command::Delete {
            modules: editor.model.selected_ids(),
            cable: editor.model.selected_edge.get_untracked(),
        }
    }

    /// Duplicating the modules selected now.
    pub fn duplicate_selection(editor: &EditorState) -> Command {
        Command::Duplicate(editor.model.selected_ids())
    }

    /// Whether a person who may only look is told so: what they did would
    /// change the graph. Undo, redo and saving do nothing quietly, as their
    /// buttons and keys do on a graph with no edits.
    fn is_visible_edit(&self) -> bool {
        !matches!(
            self,
            Command::Undo | Command::Redo | Command::SaveNow | Command::RestoreDraft
        )
    }
}

/// What carries out a command, once the editing part has arrived.
pub type CarryOut = fn(EditorState, Command);

/// Whether the editing part has arrived, and the commands waiting for it:
/// a plain value, fed what happens; `Editing` carries out what it says.
#[derive(Debug, Default)]
struct Arrival {
    arrived: bool,
    fetching: bool,
    waiting: Vec<Command>,
    /// A part that could not be fetched is said once, not at every key.
    said_missing: bool,
}

/// What to do with a command asked for.
#[derive(Debug, PartialEq)]
enum Next {
    CarryOut(Command),
    /// It waits; the part is to be fetched.
    Fetch,
    /// It waits for the part already on its way.
    Wait,
}

impl Arrival {
    fn ask(&mut self, command: Command) -> Next {
        if self.arrived {
            return Next::CarryOut(command);
        }
        self.waiting.push(command);
        if self.start_fetching() {
            Next::Fetch
        } else {
            Next::Wait
        }
    }

    /// Whether to start fetching the part: not when it is here or coming.
    fn start_fetching(&mut self) -> bool {
        let start = !self.arrived && !self.fetching;
        self.fetching |= start;
        start
    }

    /// The part has arrived: the commands that waited, in the order asked.
    fn arrived(&mut self) -> Vec<Command> {
        self.arrived = true;
        self.fetching = false;
        std::mem::take(&mut self.waiting)
    }

    /// The part could not be fetched: the commands keep waiting, and the
    /// next one asked tries again. Whether to say so (the first time).
    fn missing(&mut self) -> bool {
        self.fetching = false;
        !std::mem::replace(&mut self.said_missing, true)
    }
}

/// The editing part as a page sees it.
#[derive(Clone, Copy)]
pub struct Editing {
    carry_out: StoredValue<Option<CarryOut>>,
    arrival: StoredValue<Arrival>,
}

impl Default for Editing {
    fn default() -> Self {
        Editing {
            carry_out: StoredValue::new(None),
            arrival: StoredValue::new(Arrival::default()),
        }
    }
}

impl Editing {
    fn request(self, editor: EditorState, command: Command) {
        let next = self
            .arrival
            .try_update_value(|arrival| arrival.ask(command))
            .unwrap_or(Next::Wait);
        match (next, self.carry_out.get_value()) {
            (Next::CarryOut(command), Some(carry_out)) => carry_out(editor, command),
            (Next::Fetch, _) => self.fetched(editor),
            _ => {}
        }
    }

    /// Starts fetching the part (once), for a person who may edit.
    pub fn fetch(self, editor: EditorState) {
        if self
            .arrival
            .try_update_value(Arrival::start_fetching)
            .unwrap_or(false)
        {
            self.fetched(editor);
        }
    }

    fn fetched(self, editor: EditorState) {
        leptos::task::spawn_local(async move {
            match super::lazy_parts::editing().await {
                Ok(carry_out) => {
                    self.carry_out.set_value(Some(carry_out));
                    let waiting = self
                        .arrival
                        .try_update_value(Arrival::arrived)
                        .unwrap_or_default();
                    for command in waiting {
                        carry_out(editor, command);
                    }
                }
                Err(PartMissing) => {
                    if self.arrival.try_update_value(Arrival::missing) == Some(true) {
                        editor.notify(format!(
                            "The graph cannot be edited: {}",
                            crate::routes::PART_MISSING
                        ));
                    }
                }
            }
        });
    }

    /// Carries out `command` only if the part has arrived: with no part,
    /// nothing was edited, so there is nothing to send (leaving the page,
    /// the connection back).
    fn if_arrived(self, editor: EditorState, command: Command) {
        if let Some(carry_out) = self.carry_out.get_value() {
            carry_out(editor, command);
        }
    }
}

impl EditorState {
    /// Asks for an edit. A person who may only look is told they cannot.
    pub fn command(&self, command: Command) {
        if !self.can_edit.get_untracked() {
            // A move not made goes back where it was.
            if let Command::Move(positions) = &command {
                self.with_graph(|graph| {
                    let moved = positions.iter().map(|(id, _)| id.as_str());
                    self.model.refresh(graph, moved, [])
                });
            }
            if command.is_visible_edit() {
                self.notify("This graph is view only: fork it to edit.");
            }
            return;
        }
        self.editing.request(*self, command);
    }

    /// Sends the edits the server does not have yet, if any were made.
    pub fn save_now(&self) {
        self.editing.if_arrived(*self, Command::SaveNow);
    }
}

/// Carries out a command: in the editing part, with everything it needs.
pub fn carry_out(editor: EditorState, command: Command) {
    match command {
        Command::Rename(name) => {
            editor.edit("Rename graph", Some("name"), |edit| edit.set_name(&name));
        }
        Command::Undo => editor.undo(),
        Command::Redo => editor.redo(),
        Command::DismissMigrations => {
            editor.edit("Dismiss migration notes", None, |edit| {
                edit.set_migrations(Vec::new())
            });
        }
        Command::Move(positions) => editor.moved(positions),
        Command::Nudge {
            modules,
            dx,
            dy,
            snap,
        } => {
            editor.edit("Move", Some("nudge"), |edit| {
                for id in &modules {
                    if let Some(module) = edit.module_mut(id) {
                        module.position.x += dx;
                        module.position.y += dy;
                        if snap {
                            module.position = crate::canvas::arrange::snapped(module.position);
                        }
                    }
                }
            });
        }
        Command::Arrange { how, modules } => editor.arrange(how, &modules),
        Command::Tidy(modules) => editor.tidy(&modules),
        Command::Connect(connection) => editor.connect(connection),
        Command::RemoveCable(cable) => {
            editor.edit("Remove cable", None, |edit| edit.remove_cable(&cable));
        }
        Command::AddModule(kind, at) => editor.add_module(kind, at),
        Command::Delete { modules, cable } => editor.delete(modules, cable),
        Command::Paste { text, at } => {
            if !editor.paste(&text, at) {
                editor.notify("The clipboard holds no Patchbay modules.");
            }
        }
        Command::Duplicate(modules) => editor.duplicate(modules),
        Command::Note(event) => editor.note_event(event),
        Command::SaveNow => save::save_now(editor),
        Command::RestoreDraft => save::restore_draft(editor),
        Command::LoadTheirs => save::load_theirs(editor),
        Command::RestoreRevision { revision, graph } => {
            super::revisions::made_again(editor, revision, &graph)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Arrival, Command, Next};

    #[test]
    fn a_person_who_only_looks_is_told_of_edits_not_of_undo_or_saving() {
        assert!(Command::Duplicate(vec!["m2".to_owned()]).is_visible_edit());
        assert!(Command::Rename("x".to_owned()).is_visible_edit());
        for quiet in [
            Command::Undo,
            Command::Redo,
            Command::SaveNow,
            Command::RestoreDraft,
        ] {
            assert!(!quiet.is_visible_edit(), "{quiet:?}");
        }
    }

    #[test]
    fn commands_asked_before_the_part_arrives_wait_and_come_out_in_order() {
        let mut arrival = Arrival::default();
        assert_eq!(arrival.ask(Command::Rename("a".to_owned())), Next::Fetch);
        // One fetch for all of them.
        assert_eq!(arrival.ask(Command::Rename("ab".to_owned())), Next::Wait);
        assert_eq!(
            arrival.ask(Command::Duplicate(vec!["m3".to_owned()])),
            Next::Wait
        );
        assert!(!arrival.start_fetching());
        assert_eq!(
            arrival.arrived(),
            vec![
                Command::Rename("a".to_owned()),
                Command::Rename("ab".to_owned()),
                Command::Duplicate(vec!["m3".to_owned()])
            ]
        );
        // Once here, at once.
        assert_eq!(arrival.ask(Command::Undo), Next::CarryOut(Command::Undo));
        assert!(!arrival.start_fetching());
        assert!(arrival.arrived().is_empty());
    }

    #[test]
    fn a_part_that_cannot_be_fetched_keeps_the_commands_and_is_tried_again() {
        let mut arrival = Arrival::default();
        assert!(arrival.start_fetching(), "fetched ahead, for an editor");
        assert_eq!(arrival.ask(Command::Redo), Next::Wait);
        assert!(arrival.missing(), "said the first time");
        assert_eq!(arrival.ask(Command::Undo), Next::Fetch);
        assert!(!arrival.missing(), "and not again");
        assert_eq!(arrival.arrived(), vec![Command::Redo, Command::Undo]);
    }
}
