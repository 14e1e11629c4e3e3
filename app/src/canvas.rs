//! The canvas: modules as boxes with the ports `graph::ports` gives them,
//! cables as SVG curves between port anchors, and every gesture on them —
//! pan (background or space+drag), zoom around the pointer, drag (the whole
//! selection), box selection, wiring and rewiring cables. Every module
//! element carries `data-node-id`, every cable element `data-edge-id`.
//!
//! Pointer handling is delegated to the pane, one listener for thousands of
//! modules (`pointer.rs`): it reads what was pressed from the page
//! (`targets.rs`), lets [`gesture::GestureMachine`] decide what the pointer
//! does, and carries that out; the wheel zooms (`wheel_zoom.rs`). What a
//! gesture means for the document is reported to the owner through
//! [`CanvasEvents`].

mod batched;
mod cable_sketches;
mod cable_view;
mod drawing;
pub mod geometry;
pub mod gesture;
pub mod minimap;
pub mod model;
mod module_box;
mod pointer;
mod sketches;
mod targets;
mod wheel_zoom;

use std::sync::Arc;

use graph::Position;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use batched::batched;
use cable_sketches::{CableSketches, SketchedCable};
use cable_view::CableView;
use model::{CanvasModel, EdgeHandle, NodeHandle, Viewport};
use module_box::ModuleBox;
use pointer::{GestureMarks, PaneOrigin, PointerGestures};
use sketches::SketchChunk;
use targets::{element_of, module_of};
use wheel_zoom::WheelZoom;

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
    /// A cable being drawn is over this input (or none): whether it fits
    /// is said before the drop.
    pub hover: Callback<Option<Connection>>,
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
            hover: Callback::new(|_| {}),
        }
    }
}

/// Below this zoom modules are drawn as sketches.
const SKETCH_BELOW_ZOOM: f64 = 0.6;

/// The pane: everything drawn, and every gesture.
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

    // Large graphs are drawn near the view only, once hydrated (the server
    // drew them whole, and hydration must find what it drew).
    let detailed = Memo::new(move |_| model.drawn_view.with(|view| view.zoom >= SKETCH_BELOW_ZOOM));
    let near_nodes = Memo::new(move |_| model.drawn_nodes());
    let wanted_nodes = Memo::new(move |_| {
        if detailed.get() {
            near_nodes.get()
        } else {
            Vec::new()
        }
    });
    // Zoomed out, modules near the view are sketched (a plain box), as
    // markup: those being dragged apart, as their markup changes at every
    // move and the rest's then does not.
    let is_dragged =
        move |node: &NodeHandle| model.dragging.with(|dragging| dragging.contains(&node.id));
    let sketch_chunks = Memo::new(move |_| {
        if detailed.get() {
            return Vec::new();
        }
        let (left, top, right, bottom) = model.drawn_region();
        near_nodes.with(|nodes| {
            let still: Vec<&NodeHandle> = nodes.iter().filter(|node| !is_dragged(node)).collect();
            sketches::module_chunks(&still, ((left + right) / 2.0, (top + bottom) / 2.0))
        })
    });
    let drawn_sketches = batched(sketch_chunks, 1, |chunk: &SketchChunk| {
        Arc::clone(&chunk.key)
    });
    let dragged_sketches = Memo::new(move |_| {
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
    Effect::new(move |_| model.virtualize.set(true));
    // Modules coming into view are mounted a batch per frame, so panning or
    // zooming over a large graph never spends one long frame mounting
    // hundreds. Sketches come a chunk per frame too; the sketched cables
    // are drawn on a canvas the frame after a zoom settles.
    let drawn_nodes = batched(wanted_nodes, 40, |node: &NodeHandle| Arc::clone(&node.id));
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
    // Zoomed out, cables are sketched too: on a canvas, their conditions
    // as markup.
    let drawn_edges = Memo::new(move |_| {
        if detailed.get() {
            still_edges.get()
        } else {
            Vec::new()
        }
    });
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
    let sketched_cables = Memo::new(move |_| {
        sketch_edges.with(|edges| {
            edges
                .iter()
                .filter_map(|edge| cable_sketches::sketch_of(&model, edge))
                .collect::<Vec<SketchedCable>>()
        })
    });
    let condition_sketches = Memo::new(move |_| {
        let mut markup = String::new();
        sketch_edges.with(|edges| {
            for edge in edges {
                sketches::write_condition(&model, edge, &mut markup);
            }
        });
        markup
    });

    let origin = PaneOrigin::new(pane);
    let pointer = PointerGestures::new(
        model,
        editable,
        movable,
        events,
        origin,
        marks,
        sketched_cables,
    );
    let zoom = WheelZoom::new(model);

    let on_double_click = move |event: web_sys::MouseEvent| {
        if let Some(id) = module_of(&event) {
            events.open.run(id);
        }
    };

    // The pane's size, for the minimap, fitting the view and placing new
    // modules. It changes with the window and as side panels open and close.
    Effect::new(move |_| {
        let Some(element) = pane.get() else { return };
        let measure = move || {
            if let Some(element) = pane.get_untracked() {
                let rect = element.get_bounding_client_rect();
                model::set_if_changed(model.pane_size, (rect.width(), rect.height()));
            }
        };
        measure();
        let callback = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(measure);
        if let Ok(observer) = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()) {
            observer.observe(&element);
            let observer = send_wrapper::SendWrapper::new(observer);
            let callback = send_wrapper::SendWrapper::new(callback);
            on_cleanup(move || {
                observer.disconnect();
                drop(callback);
            });
        }
    });

    // Space held: dragging anywhere pans (not while typing in a field).
    Effect::new(move |_| {
        let down = window_event_listener(leptos::ev::keydown, move |event| {
            if event.code() == "Space" && !typing(&event) {
                pointer.space_held.set(true);
                event.prevent_default();
            }
        });
        let up = window_event_listener(leptos::ev::keyup, move |event| {
            if event.code() == "Space" {
                pointer.space_held.set(false);
            }
        });
        on_cleanup(move || {
            down.remove();
            up.remove();
        });
    });

    let pane_class = move || {
        let mut class = "pane".to_owned();
        let pending = model
            .pending_from
            .with(|pending| pending.as_ref().map(|(_, _, port_type)| *port_type));
        if let Some(port_type) = pointer.connecting.get().or(pending) {
            class.push_str(" connecting connecting-");
            class.push_str(port_type.as_str());
        }
        if pointer.space_held.get() {
            class.push_str(" grab");
        }
        class
    };
    let zoom_by = move |factor: f64| zoom_centre(model, factor);

    view! {
        <div
            class=pane_class
            data-bench-pane=""
            // Focusable, so that a click on the canvas takes focus from a
            // field and the canvas's keys act; and reachable with Tab.
            tabindex="0"
            aria-label="Canvas"
            node_ref=pane
            on:pointerdown=move |event: web_sys::PointerEvent| pointer.down(event)
            on:pointermove=move |event: web_sys::PointerEvent| pointer.moved(event)
            on:pointerup=move |event: web_sys::PointerEvent| pointer.up(event)
            on:pointercancel=move |event: web_sys::PointerEvent| pointer.cancel(event)
            on:wheel=move |event: web_sys::WheelEvent| zoom.wheel(event, origin)
            on:dblclick=on_double_click
        >
            // Pan is a pure 2D translation of the outer element, which
            // Chromium applies on the compositor without re-layerizing the
            // page; zoom scales the inner one.
            <div class="viewport" style:transform=move || model.viewport.with(|view| format!("translate({}px, {}px)", view.x, view.y))>
            <div
                class="viewport-scale"
                class:layered=move || zoom.layered.get()
                style:transform=move || model.viewport.with(|view| format!("scale({})", view.zoom))
            >
                <CableSketches model cables=sketched_cables/>
                <svg class="cables" aria-hidden="true">
                    <For each=move || drawn_edges.get() key=|edge| Arc::clone(&edge.id) let:edge>
                        <CableView model edge/>
                    </For>
                    <g inner_html=move || condition_sketches.get()></g>
                    <path class="cable-preview" d=move || marks.cable_preview.get().unwrap_or_default()></path>
                </svg>
                // Cables of modules being dragged: redrawn every frame on a
                // layer of their own, so nothing else is repainted.
                <svg class="cables cables-moving" aria-hidden="true">
                    <For each=move || model.moving_edges() key=|edge| Arc::clone(&edge.id) let:edge>
                        <CableView model edge/>
                    </For>
                </svg>
                <For each=move || drawn_nodes.get() key=|node| Arc::clone(&node.id) let:node>
                    <ModuleBox node model/>
                </For>
                <For each=move || drawn_sketches.get() key=|chunk| Arc::clone(&chunk.key) let:chunk>
                    <div
                        class="sketches"
                        inner_html=move || {
                            drawn_sketches.with(|chunks| {
                                chunks
                                    .iter()
                                    .find(|drawn| drawn.key == chunk.key)
                                    .map(|drawn| drawn.markup.clone())
                                    .unwrap_or_default()
                            })
                        }
                    ></div>
                </For>
                <div class="sketches" inner_html=move || dragged_sketches.get()></div>
                {move || {
                    marks.selection_box.get().map(|area| {
                        let style = format!(
                            "left: {}px; top: {}px; width: {}px; height: {}px",
                            area.left,
                            area.top,
                            area.width(),
                            area.height()
                        );
                        view! { <div class="selection-box" style=style></div> }
                    })
                }}
            </div>
            </div>
            <div class="pane-controls" data-pane-control="">
                <button type="button" title="Zoom out (−)" aria-label="Zoom out" on:click=move |_| zoom_by(1.0 / 1.25)>"−"</button>
                <span class="zoom-level">{move || format!("{:.0}%", model.viewport.get().zoom * 100.0)}</span>
                <button type="button" title="Zoom in (+)" aria-label="Zoom in" on:click=move |_| zoom_by(1.25)>"+"</button>
                <button type="button" title="Fit view (F)" aria-label="Fit view" on:click=move |_| fit_view(model)>"Fit"</button>
            </div>
            <minimap::Minimap model/>
        </div>
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
