//! What the person has selected and looks at: the selection read from the
//! canvas, a finding brought into view, and where a new module goes.

use graph::{Finding, Graph, Position};
use leptos::prelude::*;

use super::EditorState;
use crate::editor::history::Document;

impl EditorState {
    /// Gives the canvas the keyboard focus.
    pub fn focus_canvas(&self) {
        if let Some(pane) = self.pane.get_untracked() {
            let _ = pane.focus();
        }
    }

    /// Reads the canvas selection into the panel's selection.
    pub fn selection_changed(&self) {
        let selected = self.model.selected_ids();
        if self.has_selection.get_untracked() == selected.is_empty() {
            self.has_selection.set(!selected.is_empty());
        }
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

    pub fn select_all(&self) {
        self.model.nodes.with_untracked(|nodes| {
            for node in nodes {
                node.selected.set(true);
            }
        });
        self.selection_changed();
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
}
