//! Edits of modules: add, move, align and spread, delete, copy and paste, duplicate, and a
//! change to one module's fields (with the cables of moved ports).

use std::collections::HashSet;

use graph::{Graph, Module, ModuleKind, Position};
use leptos::prelude::*;

use super::EditorState;
use crate::canvas::arrange::{self, Arrangement, Placed};
use crate::canvas::geometry;
use crate::editor::clipboard::{self, Fragment};

impl EditorState {
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

    /// Aligns or spreads `modules` (those still there), as one edit named
    /// by what it did; says why when there are too few to do it.
    pub fn arrange(&self, how: Arrangement, modules: &[String]) {
        let placed = self.placed(modules);
        if placed.len() < how.needs() {
            self.notify(format!(
                "{}: select {} or more modules first (Shift+click, or Shift+drag a box).",
                how.label(),
                how.needs()
            ));
            return;
        }
        let moves = arrange::arrange(&placed, how);
        if moves.is_empty() {
            return;
        }
        self.edit(how.label(), None, |edit| {
            for (id, position) in &moves {
                if let Some(module) = edit.module_mut(id) {
                    module.position = *position;
                }
            }
        });
    }

    /// Lays out `modules` (the whole graph when fewer than two) left to
    /// right in layers along their cables, as one edit.
    pub fn tidy(&self, modules: &[String]) {
        let ids: Vec<String> = if modules.len() < 2 {
            self.model
                .nodes
                .with_untracked(|nodes| nodes.iter().map(|node| node.id.to_string()).collect())
        } else {
            modules.to_vec()
        };
        let placed = self.placed(&ids);
        let cables: Vec<(String, String)> = self.with_graph(|graph| {
            graph
                .cables
                .iter()
                .map(|cable| (cable.from.module.clone(), cable.to.module.clone()))
                .collect()
        });
        let moves = crate::canvas::tidy::tidy(&placed, &cables);
        if moves.is_empty() {
            return;
        }
        self.edit("Tidy up", None, |edit| {
            for (id, position) in &moves {
                if let Some(module) = edit.module_mut(id) {
                    module.position = *position;
                }
            }
        });
    }

    /// The boxes of `ids` as the canvas draws them (those still there).
    fn placed(&self, ids: &[String]) -> Vec<Placed> {
        ids.iter()
            .filter_map(|id| {
                let node = self.model.node(id)?;
                Some(Placed {
                    id: id.clone(),
                    position: node.position.get_untracked(),
                    width: untrack(|| node.outer_width()),
                    height: geometry::module_height(
                        node.inputs.with_untracked(Vec::len),
                        node.outputs.with_untracked(Vec::len),
                    ),
                })
            })
            .collect()
    }

    pub fn add_module(&self, kind: ModuleKind, at: Position) {
        let at = if self.model.snap.get_untracked() {
            arrange::snapped(at)
        } else {
            at
        };
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
        self.delete(
            self.model.selected_ids(),
            self.model.selected_edge.get_untracked(),
        );
    }

    /// Deletes these modules (and their cables), or with none this cable.
    pub fn delete(&self, modules: Vec<String>, cable: Option<std::sync::Arc<str>>) {
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
        } else if let Some(cable) = cable {
            self.edit("Delete cable", None, |edit| edit.remove_cable(&cable));
        }
    }

    /// These modules as clipboard text.
    fn copy(&self, modules: &HashSet<String>) -> Option<String> {
        (!modules.is_empty())
            .then(|| self.with_graph(|graph| clipboard::copy(graph, modules).to_text()))
    }

    /// Pastes clipboard text at `at`; returns false if it is not a fragment.
    pub fn paste(&self, text: &str, at: Position) -> bool {
        let Some(fragment) = Fragment::parse(text) else {
            return false;
        };
        if fragment.is_empty() {
            return false;
        }
        let mut pasted = Vec::new();
        // Random, as a new note's id is (`add_note`).
        let seed = (js_sys::Math::random() * 16_777_216.0) as u32;
        self.edit("Paste", None, |edit| {
            let placed = fragment.place(edit.graph(), at, seed);
            pasted = placed
                .modules
                .iter()
                .map(|module| module.id.clone())
                .collect();
            for module in placed.modules {
                edit.add_module(module);
            }
            for cable in placed.cables {
                edit.add_cable(cable);
            }
            for note in placed.notes {
                edit.set_item("notes", note.to_value());
            }
        });
        let ids: Vec<&str> = pasted.iter().map(String::as_str).collect();
        self.model.select_only(&ids);
        self.selection_changed();
        true
    }

    /// Copies these modules (and the cables between them) beside them.
    pub fn duplicate(&self, modules: Vec<String>) {
        let selected: HashSet<String> = modules.into_iter().collect();
        let Some(text) = self.copy(&selected) else {
            return;
        };
        let at = self.with_graph(|graph| {
            // The copy goes 40 px right of and below the selection's corner.
            let corner = graph
                .modules
                .iter()
                .filter(|module| selected.contains(&module.id))
                .fold((f64::INFINITY, f64::INFINITY), |(left, top), module| {
                    (left.min(module.position.x), top.min(module.position.y))
                });
            Position {
                x: corner.0 + 40.0,
                y: corner.1 + 40.0,
            }
        });
        self.paste(&text, at);
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
    fn new_labels_do_not_repeat() {
        let graph = starter_graph();
        assert_eq!(unique_label(&graph, "Draft"), "Draft 2");
        assert_eq!(unique_label(&graph, "Judge"), "Judge");
    }
}
