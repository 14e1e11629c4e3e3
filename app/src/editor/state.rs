//! The editor's state: the document with its history, the canvas model, and
//! the signals the panels read. Every edit goes through [`EditorState::edit`],
//! which records it for undo, refreshes exactly what it touched on the
//! canvas, and tells validation and autosave.

use std::collections::HashSet;

use graph::{
    Cable, Endpoint, Finding, Graph, MigrationNote, Module, ModuleKind, Position, ValidationContext,
};
use leptos::prelude::*;

use super::clipboard::{self, Fragment};
use super::history::{Change, Document, Edit};
use super::save::SaveState;
use crate::canvas::model::CanvasModel;
use crate::run::RunView;
use graph::{Connection, check_connection};

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
    /// The inputs a chosen output may be wired to (keyboard wiring).
    Targets {
        module: String,
        port: String,
    },
    /// The run's input, before it starts.
    Run,
    /// The graph's links.
    Share,
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
            findings: RwSignal::new(Vec::new()),
            catalogue: RwSignal::new(None),
            toast: RwSignal::new(None),
            connection_hint: RwSignal::new(None),
            overlay: RwSignal::new(Overlay::None),
            show_validation: RwSignal::new(false),
            mode,
            run: RunView::new(),
        }
    }

    pub fn graph_id(&self) -> String {
        self.graph_id.get_value()
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
        self.name.set(graph.name.clone());
        self.migrations.set(graph.migrations.clone());
        self.document
            .update_value(|document| document.replace(graph));
        self.can_undo.set(false);
        self.can_redo.set(false);
        self.selected.set(None);
        self.version.update(|version| *version += 1);
    }

    /// Gives the canvas the keyboard focus.
    pub fn focus_canvas(&self) {
        if let Some(pane) = self.pane.get_untracked() {
            let _ = pane.focus();
        }
    }

    /// Reads the canvas selection into the panel's selection.
    pub fn selection_changed(&self) {
        let selected = self.model.selected_ids();
        self.selected.set(match selected.as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        });
        self.document.update_value(Document::seal);
    }

    pub fn select(&self, id: &str) {
        self.model.select_only(&[id]);
        self.selection_changed();
    }

    pub fn moved(&self, positions: Vec<(String, Position)>) {
        self.edit("Move", None, |edit| {
            for (id, position) in &positions {
                if let Some(module) = edit.module_mut(id) {
                    module.position = *position;
                }
            }
        });
        // A move not recorded (view only) goes back where it was.
        self.with_graph(|graph| {
            self.model
                .refresh(graph, positions.iter().map(|(id, _)| id.as_str()), [])
        });
    }

    /// Where a new module goes: the centre of the view, moved right until
    /// it does not cover another module.
    pub fn view_centre(&self) -> Position {
        let (width, height) = self.model.pane_size.get_untracked();
        let centre = self
            .model
            .viewport
            .get_untracked()
            .to_graph(width / 2.0, height / 2.0);
        let start = Position {
            x: (centre.x - 91.0).round(),
            y: (centre.y - 47.0).round(),
        };
        self.with_graph(|graph| free_spot(graph, start))
    }

    /// The graph point under the pointer, or the view's centre.
    pub fn pointer_or_centre(&self) -> Position {
        match (self.model.pointer.get_value(), self.pane.get_untracked()) {
            (Some((x, y)), Some(pane)) => {
                let rect = pane.get_bounding_client_rect();
                let inside =
                    x >= rect.left() && x <= rect.right() && y >= rect.top() && y <= rect.bottom();
                if inside {
                    self.model
                        .viewport
                        .get_untracked()
                        .to_graph(x - rect.left(), y - rect.top())
                } else {
                    self.view_centre()
                }
            }
            _ => self.view_centre(),
        }
    }

    pub fn add_module(&self, kind: ModuleKind, at: Position) {
        let mut added = None;
        self.edit(&format!("Add {}", kind.title()), None, |edit| {
            let id = edit.graph().next_module_id();
            let mut module = Module::new(id.clone(), kind, at);
            module.label = unique_label(edit.graph(), kind.title());
            edit.add_module(module);
            added = Some(id);
        });
        if let Some(id) = added {
            self.select(&id);
        }
    }

    /// Deletes the selected modules (and their cables), or the selected cable.
    pub fn delete_selection(&self) {
        let modules = self.model.selected_ids();
        if !modules.is_empty() {
            let label = if modules.len() == 1 {
                "Delete module".to_owned()
            } else {
                format!("Delete {} modules", modules.len())
            };
            self.edit(&label, None, |edit| {
                for id in &modules {
                    edit.remove_module(id);
                }
            });
            self.selection_changed();
        } else if let Some(cable) = self.model.selected_edge.get_untracked() {
            self.edit("Delete cable", None, |edit| edit.remove_cable(&cable));
        }
    }

    pub fn select_all(&self) {
        self.model.nodes.with_untracked(|nodes| {
            for node in nodes {
                node.selected.set(true);
            }
        });
        self.selection_changed();
    }

    /// The selection as clipboard text.
    pub fn copy_selection(&self) -> Option<String> {
        let selected: HashSet<String> = self.model.selected_ids().into_iter().collect();
        (!selected.is_empty())
            .then(|| self.with_graph(|graph| clipboard::copy(graph, &selected).to_text()))
    }

    /// Pastes clipboard text at `at`; returns false if it is not a fragment.
    pub fn paste(&self, text: &str, at: Position) -> bool {
        let Some(fragment) = Fragment::parse(text) else {
            return false;
        };
        if fragment.modules.is_empty() {
            return false;
        }
        let mut pasted = Vec::new();
        self.edit("Paste", None, |edit| {
            let (modules, cables) = fragment.place(edit.graph(), at);
            pasted = modules.iter().map(|module| module.id.clone()).collect();
            for module in modules {
                edit.add_module(module);
            }
            for cable in cables {
                edit.add_cable(cable);
            }
        });
        let ids: Vec<&str> = pasted.iter().map(String::as_str).collect();
        self.model.select_only(&ids);
        self.selection_changed();
        true
    }

    pub fn duplicate(&self) {
        let Some(text) = self.copy_selection() else {
            return;
        };
        let at = self.with_graph(|graph| {
            let selected: HashSet<String> = self.model.selected_ids().into_iter().collect();
            let left = graph
                .modules
                .iter()
                .filter(|module| selected.contains(&module.id))
                .map(|module| module.position.x)
                .fold(f64::INFINITY, f64::min);
            let top = graph
                .modules
                .iter()
                .filter(|module| selected.contains(&module.id))
                .map(|module| module.position.y)
                .fold(f64::INFINITY, f64::min);
            Position {
                x: left + 40.0,
                y: top + 40.0,
            }
        });
        self.paste(&text, at);
    }

    /// Draws (or rewires) a cable, refusing ports that do not fit with a
    /// short reason.
    /// A cable being drawn is over `over` (or no input): says why it does
    /// not fit, if it does not.
    pub fn hover_connection(&self, over: Option<Connection>) {
        let reason = over.and_then(|connection| {
            self.with_graph(|graph| check_connection(graph, &connection))
                .err()
        });
        let at = self.model.pointer.get_value().unwrap_or_default();
        self.connection_hint
            .set(reason.map(|reason| (reason, at.0, at.1)));
    }

    pub fn connect(&self, connection: Connection) {
        let checked = self.with_graph(|graph| check_connection(graph, &connection));
        let replaced = match checked {
            Ok(replaced) => replaced,
            Err(reason) => {
                self.notify(reason);
                return;
            }
        };
        let Connection { from, to, rewire } = connection;
        self.edit(
            if rewire.is_some() {
                "Rewire cable"
            } else {
                "Connect"
            },
            None,
            |edit| {
                if let Some(old) = replaced {
                    edit.remove_cable(&old);
                }
                match rewire {
                    Some(id) => {
                        if let Some(cable) = edit.cable_mut(&id) {
                            cable.from = Endpoint::new(from.0, from.1);
                            cable.to = Endpoint::new(to.0, to.1);
                        }
                    }
                    None => {
                        let id = edit.graph().next_cable_id();
                        edit.add_cable(Cable {
                            id,
                            from: Endpoint::new(from.0, from.1),
                            to: Endpoint::new(to.0, to.1),
                            extra: Default::default(),
                        });
                    }
                }
            },
        );
    }

    /// Changes one module; typing in one field (`field`) is one undo step.
    pub fn update_module(
        &self,
        id: &str,
        label: &str,
        field: Option<&str>,
        change: impl FnOnce(&mut Module),
    ) {
        let coalesce = field.map(|field| format!("{id}.{field}"));
        self.edit(label, coalesce.as_deref(), |edit| {
            if let Some(module) = edit.module_mut(id) {
                change(module);
            }
        });
    }

    /// Changes one module's lists of re-prompts or named outputs; the
    /// cables leaving a moved port move with it in the same undo step
    /// (`graph::port_moves`).
    pub fn update_module_moving_ports(
        &self,
        id: &str,
        label: &str,
        field: Option<&str>,
        change: impl FnOnce(&mut Module) -> graph::port_moves::PortMoves,
    ) {
        let coalesce = field.map(|field| format!("{id}.{field}"));
        self.edit(label, coalesce.as_deref(), |edit| {
            let Some(module) = edit.module_mut(id) else {
                return;
            };
            let moves = change(module);
            for (cable, port) in moves.cables(edit.graph(), id) {
                if let Some(cable) = edit.cable_mut(&cable) {
                    cable.from.port = port;
                }
            }
        });
    }

    /// Selects what a finding is about and brings it into view.
    pub fn focus_finding(&self, finding: &Finding) {
        if let Some(module) = &finding.module_id {
            self.select(module);
            if let Some(node) = self.model.node(module) {
                let at = node.position.get_untracked();
                crate::canvas::centre_on(
                    self.model,
                    Position {
                        x: at.x + 91.0,
                        y: at.y + 47.0,
                    },
                );
            }
        } else if let Some(cable) = &finding.cable_id {
            self.model.select_only(&[]);
            self.model.select_edge(Some(cable));
            self.selection_changed();
            let ends = self.with_graph(|graph| {
                graph
                    .cables
                    .iter()
                    .find(|candidate| &candidate.id == cable)
                    .map(|cable| (cable.from.module.clone(), cable.to.module.clone()))
            });
            if let Some((from, to)) = ends {
                let point = |id: &str| {
                    self.model
                        .node(id)
                        .map(|node| node.position.get_untracked())
                };
                let centre = match (point(&from), point(&to)) {
                    (Some(a), Some(b)) => Position {
                        x: (a.x + b.x) / 2.0 + 91.0,
                        y: (a.y + b.y) / 2.0 + 47.0,
                    },
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => return,
                };
                crate::canvas::centre_on(self.model, centre);
            }
        }
    }
}

/// The first place at or right of `start` where a module covers no other.
fn free_spot(graph: &Graph, start: Position) -> Position {
    let mut at = start;
    for _ in 0..50 {
        let covered = graph.modules.iter().any(|module| {
            (module.position.x - at.x).abs() < 200.0 && (module.position.y - at.y).abs() < 110.0
        });
        if !covered {
            break;
        }
        at.x += 220.0;
    }
    at
}

/// A label no module has yet: "Agent task", "Agent task 2", …
fn unique_label(graph: &Graph, base: &str) -> String {
    let taken: HashSet<&str> = graph
        .modules
        .iter()
        .map(|module| module.label.as_str())
        .collect();
    if !taken.contains(base) {
        return base.to_owned();
    }
    (2..)
        .map(|number| format!("{base} {number}"))
        .find(|label| !taken.contains(label.as_str()))
        .unwrap_or_else(|| base.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::starter::starter_graph;

    #[test]
    fn new_modules_do_not_land_on_others() {
        let graph = starter_graph();
        // The starter's modules sit at x = 80, 360, 660 on y = 120.
        // 590 still covers the module at 660, 810 too (a module is 182 wide).
        assert_eq!(
            free_spot(&graph, Position { x: 370.0, y: 130.0 }),
            Position {
                x: 1030.0,
                y: 130.0
            }
        );
        assert_eq!(
            free_spot(&graph, Position { x: 370.0, y: 400.0 }),
            Position { x: 370.0, y: 400.0 }
        );
    }

    #[test]
    fn new_labels_do_not_repeat() {
        let graph = starter_graph();
        assert_eq!(unique_label(&graph, "Draft"), "Draft 2");
        assert_eq!(unique_label(&graph, "Judge"), "Judge");
    }
}
