//! The cables in the page: curves between ports in detail (zoomed out,
//! their conditions as sketched by [`SketchedCables`], the curves being
//! on a canvas of their own, `cable_sketches.rs`), the cable being drawn,
//! and the cables of modules being dragged on a layer of their own.

use std::sync::Arc;

use leptos::prelude::*;

use super::cable_view::CableView;
use super::detail::Detail;
use super::model::CanvasModel;
use super::sketch_layer::SketchedCables;

/// The cables that stay still: in detail near the view, or zoomed out
/// their conditions; and the cable being drawn, over them.
#[component]
pub fn Cables(
    model: CanvasModel,
    detail: Detail,
    sketched: SketchedCables,
    /// The path of the cable being drawn.
    preview: RwSignal<Option<String>>,
) -> impl IntoView {
    let drawn_edges = Memo::new(move |_| detail.in_detail(detail.still_edges));
    view! {
        <svg class="cables" aria-hidden="true">
            <For each=move || drawn_edges.get() key=|edge| Arc::clone(&edge.id) let:edge>
                <CableView model edge/>
            </For>
            <g inner_html=move || sketched.conditions.get()></g>
            <path class="cable-preview" d=move || preview.get().unwrap_or_default()></path>
        </svg>
    }
}

/// Cables of modules being dragged: redrawn every frame on a layer of
/// their own, so nothing else is repainted.
#[component]
pub fn MovingCables(model: CanvasModel) -> impl IntoView {
    view! {
        <svg class="cables cables-moving" aria-hidden="true">
            <For each=move || model.moving_edges() key=|edge| Arc::clone(&edge.id) let:edge>
                <CableView model edge/>
            </For>
        </svg>
    }
}
