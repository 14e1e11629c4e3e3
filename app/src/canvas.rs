//! The canvas: modules as boxes with the ports `graph::ports` gives them,
//! cables as SVG curves between port anchors, and every gesture on them —
//! pan (background or space+drag), zoom around the pointer, drag (the whole
//! selection), box selection, wiring and rewiring cables. Every module
//! element carries `data-node-id`, every cable element `data-edge-id`.
//!
//! It is made of parts: the pane (`pane.rs`: the viewport and its
//! gestures, the pointer's in `pointer.rs`, decided by
//! [`gesture::GestureMachine`], the wheel's in `wheel_zoom.rs`), and the
//! layers drawn in it, each following how closely the canvas is drawn
//! (`detail.rs`): the cables (`cable_layer.rs`; zoomed out, their curves
//! on a canvas, `cable_sketches.rs`), the modules (`module_layer.rs`), the
//! sketches when zoomed out (`sketch_layer.rs`) and the overlays
//! (`overlays.rs`, `minimap.rs`). What a gesture means for the document
//! is reported to the owner through [`CanvasEvents`].

pub mod arrange;
mod batched;
mod cable_layer;
mod cable_sketches;
mod cable_view;
mod detail;
mod drawing;
pub mod geometry;
pub mod gesture;
pub mod minimap;
pub mod model;
mod module_box;
mod module_layer;
pub mod note_layer;
mod overlays;
mod pane;
pub mod peers;
mod pointer;
mod sketch_layer;
mod sketches;
mod targets;
pub mod tidy;
mod wheel_zoom;

pub(crate) use sketches::escape;

use graph::Position;
use leptos::prelude::*;

use cable_layer::{Cables, MovingCables};
use cable_sketches::CableSketches;
use detail::Detail;
use model::{CanvasModel, Viewport};
use module_layer::{ModuleLayer, drawn_modules};
pub use note_layer::NoteEvent;
use note_layer::NoteLayer;
use overlays::BoxSelection;
use pane::Pane;
use pointer::GestureMarks;
use sketch_layer::{DraggedSketches, SketchedCables, SketchedModules, Sketches};
use targets::element_of;

/// A finished wiring gesture: from an output port to an input port.
pub use graph::Connection;

/// What the canvas reports; the owner decides what it means.
#[derive(Clone, Copy)]
pub struct CanvasEvents {
    /// Modules were dragged to these positions.
    pub moved: Callback<Vec<(String, Position)>>,
    /// A cable was drawn or rewired.
    pub connect: Callback<Connection>,
    /// A picked-up cable was dropped on nothing: remove it.
    pub drop_cable: Callback<String>,
    /// A module was double-clicked (open its details).
    pub open: Callback<String>,
    /// The selection changed.
    pub selection: Callback<()>,
    /// A port was clicked without dragging (show the output popup).
    pub port_clicked: Callback<(String, String, f64, f64)>,
    /// A module was right-clicked (its menu), where the pointer was.
    pub menu: Callback<(String, f64, f64)>,
    /// A cable being drawn is over this input (or none): whether it fits
    /// is said before the drop.
    pub hover: Callback<Option<Connection>>,
    /// A note was moved, resized, written in, coloured, removed or asked for.
    pub note: Callback<NoteEvent>,
}

impl CanvasEvents {
    /// Events that do nothing (a canvas that is only looked at and moved).
    pub fn ignored() -> CanvasEvents {
        CanvasEvents {
            moved: Callback::new(|_| {}),
            connect: Callback::new(|_| {}),
            drop_cable: Callback::new(|_| {}),
            open: Callback::new(|_| {}),
            selection: Callback::new(|()| {}),
            port_clicked: Callback::new(|_| {}),
            menu: Callback::new(|_| {}),
            hover: Callback::new(|_| {}),
            note: Callback::new(|_| {}),
        }
    }
}

/// The canvas: the pane, and the layers drawn in it.
#[component]
pub fn Canvas(
    model: CanvasModel,
    /// Whether cables may be drawn and rewired.
    #[prop(into)]
    editable: Signal<bool>,
    /// Whether modules may be dragged.
    #[prop(into)]
    movable: Signal<bool>,
    events: CanvasEvents,
    /// The pane element, for whoever fits or centres the view.
    pane: NodeRef<leptos::html::Div>,
) -> impl IntoView {
    let marks = GestureMarks::new();
    // What the layers draw is made here, before the pane's effects (its
    // size, the wheel), and in this order: effects first run in the order
    // they are made, and that order decides the first frames (the modules
    // in the page are first taken with `virtualize` on, the pane not yet
    // measured).
    let detail = Detail::new(model);
    let sketched_modules = SketchedModules::new(model, detail);
    // Large graphs are drawn near the view only, once hydrated (the server
    // drew them whole, and hydration must find what it drew).
    Effect::new(move |_| model.virtualize.set(true));
    let drawn_nodes = drawn_modules(detail);
    let sketched_cables = SketchedCables::new(model, detail);

    // The layers, bottom to top, each a component of one element or list:
    // components are erased (`erase_components`, .cargo/config.toml), and
    // an erased component of several puts a marker of its own in the page.
    view! {
        <Pane model editable movable events pane marks sketched_cables=sketched_cables.cables>
            <CableSketches model cables=sketched_cables.cables/>
            <Cables model detail sketched=sketched_cables preview=marks.cable_preview/>
            <MovingCables model/>
            <NoteLayer model editable/>
            <ModuleLayer model nodes=drawn_nodes/>
            <Sketches sketches=sketched_modules/>
            <DraggedSketches sketches=sketched_modules/>
            <BoxSelection area=marks.selection_box/>
            <peers::Peers model/>
        </Pane>
    }
}

/// Whether a key event happened in a text field (where keys type, not act).
pub fn typing(event: &web_sys::KeyboardEvent) -> bool {
    element_of(event.target()).is_some_and(|target| {
        let tag = target.tag_name().to_ascii_uppercase();
        tag == "INPUT"
            || tag == "TEXTAREA"
            || tag == "SELECT"
            || target.get_attribute("contenteditable").is_some()
    })
}

/// Zooms by `factor` around the pane's centre.
pub fn zoom_centre(model: CanvasModel, factor: f64) {
    let (width, height) = model.pane_size.get_untracked();
    model
        .viewport
        .update(|view| *view = view.zoomed_at(factor, width / 2.0, height / 2.0));
}

/// Zooms and centres the view so that every module shows.
pub fn fit_view(model: CanvasModel) {
    let Some((left, top, right, bottom)) = model.bounds() else {
        return;
    };
    let (width, height) = model.pane_size.get_untracked();
    let margin = 40.0;
    let zoom = ((width - 2.0 * margin) / (right - left).max(1.0))
        .min((height - 2.0 * margin) / (bottom - top).max(1.0))
        .clamp(model::MIN_ZOOM, 1.0);
    model.viewport.set(Viewport {
        x: (width - (right - left) * zoom) / 2.0 - left * zoom,
        y: (height - (bottom - top) * zoom) / 2.0 - top * zoom,
        zoom,
    });
}

/// Centres the view on a graph point, keeping the zoom.
pub fn centre_on(model: CanvasModel, point: Position) {
    let (width, height) = model.pane_size.get_untracked();
    model.viewport.update(|view| {
        view.x = width / 2.0 - point.x * view.zoom;
        view.y = height / 2.0 - point.y * view.zoom;
    });
}
