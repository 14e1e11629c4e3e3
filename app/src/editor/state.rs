//! The editor's state: the document with its history, the canvas model, and
//! the signals the panels read. Every edit goes through [`EditorState::edit`],
//! which records it for undo, refreshes exactly what it touched on the
//! canvas, and tells validation and autosave. What the edits are lives
//! beside it: `modules` (add, delete, paste, change), `cables` (draw and
//! rewire), `view` (selection and where things go in view).

mod cables;
mod modules;
mod notes;
mod view;

use graph::{Finding, Graph, MigrationNote, ValidationContext};
use leptos::prelude::*;

use super::history::{Change, Document, Edit};
use super::save::SaveState;
use crate::canvas::model::CanvasModel;
use crate::run::RunView;

pub use wire::providers::Catalogue;

/// A dialog or popup over the editor.
#[derive(Clone, Debug, PartialEq)]
pub enum Overlay {
    None,
    Help,
    /// The outputs of a module, to start a cable from (DOC23 §5).
    Outputs {
        module: String,
        x: f64,
        y: f64,
    },
    /// A module's menu (a right click on it), where the pointer was.
    ModuleMenu {
        module: String,
        x: f64,
        y: f64,
    },
    /// The inputs a chosen output may be wired to (keyboard wiring).
    Targets {
        module: String,
        port: String,
    },
    /// The run's input, before it starts.
    Run,
    /// A run from a module, reusing a recorded run (PRODUCT §3.15).
    RunFrom(wire::run::RunFrom),
    /// The graph's links.
    Share,
    /// The graph's schedules and webhooks (PRODUCT §6.5).
    Triggers,
    /// The graph's revisions: compare one, restore one.
    History,
    /// Two runs of the graph side by side, the older first.
    CompareRuns {
        first: String,
        second: String,
    },
    /// Something that did not work, explained (a broken import file).
    Problem {
        title: String,
        message: String,
    },
}

/// Where the graph on the page comes from, which decides what the page may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditorMode {
    /// A graph the server stores (`/g/{id}`): edited with the edit token,
    /// viewed and run without.
    Stored,
    /// A graph carried by a self-contained link: edited in the page only,
    /// until it is saved to the server.
    Local,
    /// A recorded run (`/g/{id}/runs/{run_id}`): the graph as it ran, read-only.
    Recorded,
    /// A past revision (`/g/{id}/revisions/{revision}`), for its editors:
    /// read-only, restored from the graph's History.
    Revision,
}

/// Milliseconds since the epoch (the browser's clock in the browser).
pub fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |elapsed| elapsed.as_secs_f64() * 1000.0)
    }
}

#[derive(Clone, Copy)]
pub struct EditorState {
    pub graph_id: StoredValue<String>,
    pub document: StoredValue<Document>,
    pub model: CanvasModel,
    pub pane: NodeRef<leptos::html::Div>,
    /// Bumped on every change of the document.
    pub version: RwSignal<u64>,
    pub name: RwSignal<String>,
    pub migrations: RwSignal<Vec<MigrationNote>>,
    /// This browser holds the edit token (known after hydration).
    pub can_edit: RwSignal<bool>,
    pub can_undo: RwSignal<bool>,
    pub can_redo: RwSignal<bool>,
    /// The one selected module, whose details the panel shows.
    pub selected: RwSignal<Option<String>>,
    /// Whether any module is selected (the selection's bar shows then).
    pub has_selection: RwSignal<bool>,
    pub findings: RwSignal<Vec<Finding>>,
    pub catalogue: RwSignal<Option<Catalogue>>,
    pub toast: RwSignal<Option<(u64, String)>>,
    /// Why the input a cable being drawn is over does not fit, and where
    /// the pointer is (client coordinates): said before the drop.
    pub connection_hint: RwSignal<Option<(String, f64, f64)>>,
    pub overlay: RwSignal<Overlay>,
    pub show_validation: RwSignal<bool>,
    pub save: SaveState,
    pub mode: EditorMode,
    /// The run the canvas shows, if any.
    pub run: RunView,
    /// A past revision the canvas is compared with (History).
    pub compare: RwSignal<Option<super::revisions::Compared>>,
    /// Editing together: the room, who is here, others' changes.
    pub together: super::together::Together,
    /// The editing part: what carries out the page's edits once it arrives.
    pub editing: super::editing::Editing,
    /// What writes modules as clipboard text, once its part has arrived.
    pub copier: super::clipboard_events::Copier,
}

impl EditorState {
    pub fn new(graph: Graph, mode: EditorMode) -> EditorState {
        let model = CanvasModel::new();
        model.load_graph(&graph);
        EditorState {
            graph_id: StoredValue::new(graph.id.clone().unwrap_or_default()),
            name: RwSignal::new(graph.name.clone()),
            migrations: RwSignal::new(graph.migrations.clone()),
            save: SaveState::new(graph.revision),
            document: StoredValue::new(Document::new(graph)),
            model,
            pane: NodeRef::new(),
            version: RwSignal::new(0),
            can_edit: RwSignal::new(false),
            can_undo: RwSignal::new(false),
            can_redo: RwSignal::new(false),
            selected: RwSignal::new(None),
            has_selection: RwSignal::new(false),
            findings: RwSignal::new(Vec::new()),
            catalogue: RwSignal::new(None),
            toast: RwSignal::new(None),
            connection_hint: RwSignal::new(None),
            overlay: RwSignal::new(Overlay::None),
            show_validation: RwSignal::new(false),
            mode,
            run: RunView::new(),
            compare: RwSignal::new(None),
            together: super::together::Together::new(),
            editing: super::editing::Editing::default(),
            copier: super::clipboard_events::Copier::default(),
        }
    }

    pub fn graph_id(&self) -> String {
        self.graph_id.get_value()
    }

    /// A module's label as the graph has it now (empty when it is gone).
    pub fn module_label(&self, id: &str) -> String {
        self.with_graph(|graph| {
            graph
                .module(id)
                .map(|module| module.display_label().to_owned())
                .unwrap_or_default()
        })
    }

    /// A copy of the document as it is now.
    pub fn graph(&self) -> Graph {
        self.document.with_value(|document| document.graph.clone())
    }

    pub fn with_graph<T>(&self, read: impl FnOnce(&Graph) -> T) -> T {
        self.document.with_value(|document| read(&document.graph))
    }

    pub fn validation_context(&self) -> ValidationContext {
        self.catalogue.with_untracked(|catalogue| match catalogue {
            Some(catalogue) => ValidationContext {
                providers: Some(
                    catalogue
                        .providers
                        .iter()
                        .map(|provider| provider.id.clone())
                        .collect(),
                ),
                acp_profiles: Some(
                    catalogue
                        .acp_profiles
                        .iter()
                        .map(|profile| profile.id.clone())
                        .collect(),
                ),
                workspace_roots: Some(catalogue.workspace_roots.clone()),
                webhooks: Some(catalogue.webhooks.clone()),
                commands_enabled: Some(catalogue.commands_enabled),
                sandbox_available: catalogue.sandbox_available,
                tool_servers: Some(catalogue.tool_specs()),
                providers_without_tools: Some(
                    catalogue
                        .providers
                        .iter()
                        .filter(|provider| !provider.tool_calling)
                        .map(|provider| provider.id.clone())
                        .collect(),
                ),
            },
            None => ValidationContext::default(),
        })
    }

    pub fn notify(&self, message: impl Into<String>) {
        let serial = self
            .toast
            .with_untracked(|toast| toast.as_ref().map_or(0, |(serial, _)| serial + 1));
        self.toast.set(Some((serial, message.into())));
    }

    /// Makes one undoable edit. Returns whether anything changed.
    pub fn edit(
        &self,
        label: &str,
        coalesce: Option<&str>,
        apply: impl FnOnce(&mut Edit<'_>),
    ) -> bool {
        if !self.can_edit.get_untracked() {
            self.notify("This graph is view only: fork it to edit.");
            return false;
        }
        let now = now_ms();
        let change = self
            .document
            .try_update_value(|document| document.edit(label, coalesce, now, apply))
            .flatten();
        match change {
            Some(change) => {
                self.after(&change);
                true
            }
            None => false,
        }
    }

    /// Refreshes everything a change touched.
    fn after(&self, change: &Change) {
        self.document.with_value(|document| {
            self.model
                .refresh(&document.graph, change.module_ids(), change.cable_ids());
            if !change.after.items.is_empty() {
                self.model.refresh_notes(&document.graph);
            }
            self.name.set(document.graph.name.clone());
            if change.after.migrations.is_some() || change.before.migrations.is_some() {
                self.migrations.set(document.graph.migrations.clone());
            }
            self.can_undo.set(document.can_undo());
            self.can_redo.set(document.can_redo());
        });
        // A module that is gone cannot stay in the panel.
        if let Some(selected) = self.selected.get_untracked()
            && self.with_graph(|graph| graph.module(&selected).is_none())
        {
            self.selected.set(None);
        }
        self.version.update(|version| *version += 1);
        self.save.changed(*self);
    }

    pub fn undo(&self) {
        if !self.can_edit.get_untracked() {
            return;
        }
        if let Some(change) = self.document.try_update_value(Document::undo).flatten() {
            self.after(&change);
            self.notify(format!("Undid: {}", change.label));
        }
    }

    pub fn redo(&self) {
        if !self.can_edit.get_untracked() {
            return;
        }
        if let Some(change) = self.document.try_update_value(Document::redo).flatten() {
            self.after(&change);
            self.notify(format!("Redid: {}", change.label));
        }
    }

    /// Takes someone else's change (editing together): the document becomes
    /// `graph`, and these modules and cables are drawn again. Not a step of
    /// this person's history: undo takes back their own edits only.
    pub fn take_remote(&self, graph: Graph, modules: &[String], cables: &[String]) {
        self.model.refresh(
            &graph,
            modules.iter().map(String::as_str),
            cables.iter().map(String::as_str),
        );
        self.model.refresh_notes(&graph);
        self.name.set(graph.name.clone());
        if self.with_graph(|old| old.migrations != graph.migrations) {
            self.migrations.set(graph.migrations.clone());
        }
        self.document
            .update_value(|document| document.graph = graph);
        if let Some(selected) = self.selected.get_untracked()
            && self.with_graph(|graph| graph.module(&selected).is_none())
        {
            self.selected.set(None);
        }
        self.version.update(|version| *version += 1);
    }

    /// Puts back a value of this person's that someone else's edit replaced
    /// (one click on the notice): an edit like any other, which undo takes
    /// back.
    pub fn take_back(&self, path: &graph::edits::Path, value: serde_json::Value) {
        let Some(mut document) = self.with_graph(Graph::to_value) else {
            return;
        };
        let current = graph::edits::at(&document, path).cloned();
        graph::edits::apply(
            &mut document,
            &[graph::edits::Edit::Set {
                path: path.clone(),
                before: current,
                after: Some(value),
            }],
        );
        let Ok(wanted) = Graph::from_value(document) else {
            self.notify("Yours could not be taken back: the graph has changed too much since.");
            return;
        };
        self.edit("Take yours back", None, |edit| edit.restore(&wanted));
    }

    /// Replaces the document (their revision after a conflict, a restored
    /// draft): history starts over.
    pub fn replace(&self, graph: Graph) {
        // Every module and cable of either version is brought in line in
        // place: new handles for modules already drawn would leave their
        // boxes where they were while the cables follow the new ones.
        let (modules, cables) = self.document.with_value(|document| {
            let old = &document.graph;
            let mut modules: Vec<String> = old
                .modules
                .iter()
                .chain(&graph.modules)
                .map(|module| module.id.clone())
                .collect();
            let mut cables: Vec<String> = old
                .cables
                .iter()
                .chain(&graph.cables)
                .map(|cable| cable.id.clone())
                .collect();
            for ids in [&mut modules, &mut cables] {
                ids.sort_unstable();
                ids.dedup();
            }
            (modules, cables)
        });
        self.model.refresh(
            &graph,
            modules.iter().map(String::as_str),
            cables.iter().map(String::as_str),
        );
        self.model.refresh_notes(&graph);
        self.name.set(graph.name.clone());
        self.migrations.set(graph.migrations.clone());
        self.document
            .update_value(|document| document.replace(graph));
        self.can_undo.set(false);
        self.can_redo.set(false);
        self.selected.set(None);
        self.version.update(|version| *version += 1);
    }
}
