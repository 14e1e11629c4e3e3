//! The canvas zoomed out: modules near the view as sketches (a plain box),
//! put in the page a chunk per frame nearest the view first, and the
//! cables to sketch, a frame behind the modules (drawn where the detailed
//! cables are: their curves by `cable_sketches.rs`, their conditions by
//! the cable layer).

use std::sync::Arc;

use leptos::prelude::*;

use super::batched::batched;
use super::cable_sketches::{self, SketchedCable};
use super::detail::Detail;
use super::model::{self, CanvasModel, EdgeHandle, NodeHandle};
use super::sketches::{self, SketchChunk};

/// The module sketches in the page: those being dragged apart, as their
/// markup changes at every move and the rest's then does not.
#[derive(Clone, Copy)]
pub struct SketchedModules {
    /// The still modules' sketches, in chunks put in the page a chunk per
    /// frame.
    drawn_chunks: RwSignal<Vec<SketchChunk>>,
    /// The markup of the dragged modules' sketches.
    dragged: Memo<String>,
}

impl SketchedModules {
    pub fn new(model: CanvasModel, detail: Detail) -> SketchedModules {
        let Detail {
            detailed,
            near_nodes,
            ..
        } = detail;
        let is_dragged =
            move |node: &NodeHandle| model.dragging.with(|dragging| dragging.contains(&node.id));
        let wanted = Memo::new(move |_| {
            if detailed.get() {
                return Vec::new();
            }
            let (left, top, right, bottom) = model.drawn_region();
            near_nodes.with(|nodes| {
                let still: Vec<&NodeHandle> =
                    nodes.iter().filter(|node| !is_dragged(node)).collect();
                sketches::module_chunks(&still, ((left + right) / 2.0, (top + bottom) / 2.0))
            })
        });
        let drawn_chunks = batched(wanted, 1, 1, |chunk: &SketchChunk| Arc::clone(&chunk.key));
        let dragged = Memo::new(move |_| {
            let mut markup = String::new();
            if !detailed.get() {
                near_nodes.with(|nodes| {
                    for node in nodes.iter().filter(|node| is_dragged(node)) {
                        sketches::write_module(node, &mut markup);
                    }
                });
            }
            markup
        });
        SketchedModules {
            drawn_chunks,
            dragged,
        }
    }
}

/// The cables zoomed out: their curves, drawn on a canvas (and found there
/// under the pointer), and their conditions, as markup.
#[derive(Clone, Copy)]
pub struct SketchedCables {
    pub cables: Memo<Vec<SketchedCable>>,
    pub conditions: Memo<String>,
}

impl SketchedCables {
    pub fn new(model: CanvasModel, detail: Detail) -> SketchedCables {
        let Detail {
            detailed,
            still_edges,
            ..
        } = detail;
        // The cables to sketch follow a frame behind (the next frame's, as a
        // zoom settles in a timer, before the frame it is drawn in): that
        // frame has the modules to take out and sketch.
        let sketch_edges = RwSignal::new(Vec::<EdgeHandle>::new());
        Effect::new(move |_| {
            if detailed.get() {
                model::set_if_changed(sketch_edges, Vec::new());
                return;
            }
            let edges = still_edges.get();
            crate::browser::next_frame(move || {
                crate::browser::next_frame(move || {
                    // Unless zoomed in meanwhile.
                    if !detailed.get_untracked() {
                        model::set_if_changed(sketch_edges, edges);
                    }
                });
            });
        });
        let cables = Memo::new(move |_| {
            sketch_edges.with(|edges| {
                edges
                    .iter()
                    .filter_map(|edge| cable_sketches::sketch_of(&model, edge))
                    .collect::<Vec<SketchedCable>>()
            })
        });
        let conditions = Memo::new(move |_| {
            let mut markup = String::new();
            sketch_edges.with(|edges| {
                for edge in edges {
                    sketches::write_condition(&model, edge, &mut markup);
                }
            });
            markup
        });
        SketchedCables { cables, conditions }
    }
}

/// The still modules' sketches, over the detailed modules.
#[component]
pub fn Sketches(sketches: SketchedModules) -> impl IntoView {
    let drawn_chunks = sketches.drawn_chunks;
    view! {
        <For each=move || drawn_chunks.get() key=|chunk| Arc::clone(&chunk.key) let:chunk>
            <div
                class="sketches"
                inner_html=move || {
                    drawn_chunks.with(|chunks| {
                        chunks
                            .iter()
                            .find(|drawn| drawn.key == chunk.key)
                            .map(|drawn| drawn.markup.clone())
                            .unwrap_or_default()
                    })
                }
            ></div>
        </For>
    }
}

/// The dragged modules' sketches, over the still ones.
#[component]
pub fn DraggedSketches(sketches: SketchedModules) -> impl IntoView {
    let dragged = sketches.dragged;
    view! { <div class="sketches" inner_html=move || dragged.get()></div> }
}
