//! How closely the canvas is drawn, which every layer follows: modules and
//! cables in detail from 60 % zoom on, as sketches below; and, for large
//! graphs, only those near the view (`CanvasModel::drawn_nodes`,
//! `region_edges`).

use leptos::prelude::*;

use super::model::{CanvasModel, EdgeHandle, NodeHandle};

/// Below this zoom modules are drawn as sketches.
const SKETCH_BELOW_ZOOM: f64 = 0.6;

/// What the layers draw, in detail or sketched.
#[derive(Clone, Copy)]
pub struct Detail {
    /// Zoomed in enough for modules and cables in detail.
    pub detailed: Memo<bool>,
    /// The modules near the view.
    pub near_nodes: Memo<Vec<NodeHandle>>,
    /// The cables near the view but those of modules being dragged.
    pub still_edges: Memo<Vec<EdgeHandle>>,
}

impl Detail {
    pub fn new(model: CanvasModel) -> Detail {
        let detailed =
            Memo::new(move |_| model.drawn_view.with(|view| view.zoom >= SKETCH_BELOW_ZOOM));
        let near_nodes = Memo::new(move |_| model.drawn_nodes());
        let region_edges = Memo::new(move |_| model.region_edges());
        // Cables of dragged modules move to their own layer: a short list to
        // filter when a drag starts, not every cable of the graph.
        let still_edges = Memo::new(move |_| {
            region_edges.with(|edges| {
                edges
                    .iter()
                    .filter(|edge| !model.moving(edge))
                    .cloned()
                    .collect::<Vec<_>>()
            })
        });
        Detail {
            detailed,
            near_nodes,
            still_edges,
        }
    }

    /// `items` when drawn in detail, else nothing.
    pub fn in_detail<T: Clone + Send + Sync + 'static>(self, items: Memo<Vec<T>>) -> Vec<T> {
        if self.detailed.get() {
            items.get()
        } else {
            Vec::new()
        }
    }
}
