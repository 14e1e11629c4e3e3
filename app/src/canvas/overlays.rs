//! What is drawn over the graph rather than part of it: the box of a box
//! selection, and the pane's zoom controls (the minimap is in minimap.rs).

use leptos::prelude::*;

use super::gesture::SelectionBox;
use super::model::CanvasModel;
use super::{fit_view, zoom_centre};

/// The selection box being drawn, in graph units (inside the scaled view).
#[component]
pub fn BoxSelection(area: RwSignal<Option<SelectionBox>>) -> impl IntoView {
    move || {
        area.get().map(|area| {
            let style = format!(
                "left: {}px; top: {}px; width: {}px; height: {}px",
                area.left,
                area.top,
                area.width(),
                area.height()
            );
            view! { <div class="selection-box" style=style></div> }
        })
    }
}

/// Zoom out, the zoom level, zoom in, fit the view.
#[component]
pub fn PaneControls(model: CanvasModel) -> impl IntoView {
    let zoom_by = move |factor: f64| zoom_centre(model, factor);
    view! {
        <div class="pane-controls" data-pane-control="">
            <button type="button" title="Zoom out (−)" aria-label="Zoom out" on:click=move |_| zoom_by(1.0 / 1.25)>"−"</button>
            <span class="zoom-level">{move || format!("{:.0}%", model.viewport.get().zoom * 100.0)}</span>
            <button type="button" title="Zoom in (+)" aria-label="Zoom in" on:click=move |_| zoom_by(1.25)>"+"</button>
            <button type="button" title="Fit view (F)" aria-label="Fit view" on:click=move |_| fit_view(model)>"Fit"</button>
        </div>
    }
}
