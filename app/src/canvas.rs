//! The canvas: modules as boxes with the ports `graph::ports` gives them,
//! cables as SVG curves between port anchors, and every gesture on them —
//! pan (background or space+drag), zoom around the pointer, drag (the whole
//! selection), box selection, wiring and rewiring cables. Every module
//! element carries `data-node-id`, every cable element `data-edge-id`.
//!
//! Pointer handling is delegated to the pane, one listener for thousands of
//! modules: it reads what was pressed from the page, lets
//! [`gesture::GestureMachine`] decide what the pointer does, and carries
//! that out. What a gesture means for the document is reported to the owner
//! through [`CanvasEvents`].

mod batched;
mod cable_sketches;
mod cable_view;
mod drawing;
pub mod geometry;
pub mod gesture;
pub mod minimap;
pub mod model;
mod module_box;
mod sketches;

pub(crate) use sketches::escape;

use std::sync::Arc;
use std::time::Duration;

use graph::{PortType, Position};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use batched::batched;
use cable_sketches::{CableSketches, SketchedCable};
use cable_view::{CableView, preview_path};
use gesture::{
    Action, Context, GestureMachine, Input, PluggedCable, Pointer, Press, PressedModule,
    SelectionBox,
};
use model::{CanvasModel, EdgeHandle, NodeHandle, Viewport};
use module_box::ModuleBox;
use sketches::SketchChunk;

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

fn element_of(target: Option<web_sys::EventTarget>) -> Option<web_sys::Element> {
    target?.dyn_into::<web_sys::Element>().ok()
}

fn closest(element: &web_sys::Element, selector: &str) -> Option<web_sys::Element> {
    element.closest(selector).ok().flatten()
}

/// (module id, port id, port type) of a port element.
fn port_of(element: &web_sys::Element) -> Option<(String, String, PortType)> {
    let module = closest(element, "[data-node-id]")?.get_attribute("data-node-id")?;
    let port = element.get_attribute("data-port-id")?;
    let port_type = match element.get_attribute("data-port-type").as_deref() {
        Some("signal") => PortType::Signal,
        Some("receipt") => PortType::Receipt,
        _ => PortType::Bundle,
    };
    Some((module, port, port_type))
}

/// What the press on `target` is on, as the gesture machine takes it.
fn press_at(target: &web_sys::Element, model: CanvasModel) -> Press {
    if closest(target, "[data-pane-control]").is_some() {
        return Press::PaneControl;
    }
    let Some(id) =
        closest(target, "[data-node-id]").and_then(|module| module.get_attribute("data-node-id"))
    else {
        return match closest(target, "[data-edge-id]")
            .and_then(|cable| cable.get_attribute("data-edge-id"))
        {
            Some(cable) => Press::Cable(cable),
            None => Press::Background,
        };
    };
    let Some(node) = model.node(&id) else {
        return Press::RemovedModule;
    };
    let module = PressedModule {
        id,
        selected: node.selected.get_untracked(),
    };
    if let Some((module_id, port, port_type)) =
        closest(target, ".port-out").and_then(|element| port_of(&element))
    {
        Press::OutputPort {
            port: (module_id, port),
            port_type,
            module,
        }
    } else if let Some((module_id, port, _)) =
        closest(target, ".port-in").and_then(|element| port_of(&element))
    {
        let plugged = plugged_into(model, &module_id, &port);
        Press::InputPort {
            port: (module_id, port),
            plugged,
            module,
        }
    } else {
        Press::Module(module)
    }
}

/// The cable plugged into input `port` of `module`, with its output's type.
fn plugged_into(model: CanvasModel, module: &str, port: &str) -> Option<PluggedCable> {
    let edge = model.edges.with_untracked(|edges| {
        edges
            .iter()
            .rev()
            .find(|edge| edge.to.with_untracked(|to| to.0 == module && to.1 == port))
            .cloned()
    })?;
    let from = edge.from.get_untracked();
    let port_type = model
        .node(&from.0)
        .and_then(|node| {
            node.outputs.with_untracked(|ports| {
                ports
                    .iter()
                    .find(|candidate| candidate.id == from.1)
                    .map(|found| found.port_type)
            })
        })
        .unwrap_or(PortType::Bundle);
    Some(PluggedCable {
        id: edge.id.to_string(),
        from,
        port_type,
    })
}

/// (module id, port id) of the input port at a point of the page.
fn input_port_at(client: (f64, f64)) -> Option<(String, String)> {
    web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.element_from_point(client.0 as f32, client.1 as f32))
        .and_then(|element| closest(&element, ".port-in"))
        .and_then(|element| port_of(&element))
        .map(|(module, port, _)| (module, port))
}

/// Selects the modules `area` meets; unless `additive`, deselects the others.
fn select_inside(model: CanvasModel, area: SelectionBox, additive: bool) {
    model.nodes.with_untracked(|nodes| {
        for node in nodes {
            let height = geometry::module_height(
                node.inputs.with_untracked(Vec::len),
                node.outputs.with_untracked(Vec::len),
            );
            if area.meets(node.position.get_untracked(), height) {
                node.selected.set(true);
            } else if !additive {
                node.selected.set(false);
            }
        }
    });
}

/// Below this zoom modules are drawn as sketches.
const SKETCH_BELOW_ZOOM: f64 = 0.6;

/// How near (screen pixels) a press must be to a sketched cable to press it.
const CABLE_REACH: f64 = 5.0;

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
    let gesture = StoredValue::new(GestureMachine::default());
    // The modules being dragged and where each was when the drag started,
    // taken once at its start: a move then touches them alone, with no
    // lookup among thousands of modules.
    let dragged = StoredValue::new(Vec::<(NodeHandle, Position)>::new());
    // The pane's top-left corner, read once per gesture: reading layout on
    // every move would force a style and layout pass per frame.
    let pane_origin = StoredValue::new((0.0, 0.0));
    let preview = RwSignal::new(None::<String>);
    let connecting = RwSignal::new(None::<PortType>);
    let boxing = RwSignal::new(None::<SelectionBox>);
    let space_held = RwSignal::new(false);

    let measure_pane = move || {
        if let Some(element) = pane.get_untracked() {
            let rect = element.get_bounding_client_rect();
            pane_origin.set_value((rect.left(), rect.top()));
        }
    };
    let pane_point = move |client_x: f64, client_y: f64| -> (f64, f64) {
        let (left, top) = pane_origin.get_value();
        (client_x - left, client_y - top)
    };
    let graph_point = move |client_x: f64, client_y: f64| -> Position {
        let (x, y) = pane_point(client_x, client_y);
        model.viewport.get_untracked().to_graph(x, y)
    };

    let step = move |input: Input| -> Vec<Action> {
        let context = Context {
            editable: editable.get_untracked(),
            movable: movable.get_untracked(),
            space_held: space_held.get_untracked(),
            viewport: model.viewport.get_untracked(),
            pending_output: model.pending_from.with_untracked(|pending| {
                pending
                    .as_ref()
                    .map(|(module, port, _)| (module.clone(), port.clone()))
            }),
        };
        gesture
            .try_update_value(|machine| machine.step(input, &context))
            .unwrap_or_default()
    };

    let carry_out = move |actions: Vec<Action>, event: &web_sys::PointerEvent| {
        for action in actions {
            match action {
                Action::FocusPane => {
                    if let Some(element) = pane.get_untracked() {
                        let options = web_sys::FocusOptions::new();
                        options.set_prevent_scroll(true);
                        let _ = element.focus_with_options(&options);
                    }
                }
                Action::CapturePointer => {
                    if let Some(element) = pane.get_untracked() {
                        let _ = element.set_pointer_capture(event.pointer_id());
                    }
                }
                Action::PreventDefault => event.prevent_default(),
                Action::ForgetPendingOutput => model.pending_from.set(None),
                Action::SelectOnly(ids) => {
                    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
                    model.select_only(&ids);
                }
                Action::ToggleModule(id) => {
                    if let Some(node) = model.node(&id) {
                        node.selected.update(|selected| *selected = !*selected);
                    }
                }
                Action::SelectCable(id) => model.select_edge(id.as_deref()),
                Action::SelectionChanged => events.selection.run(()),
                Action::StartDrag => {
                    let nodes: Vec<(NodeHandle, Position)> = model.nodes.with_untracked(|nodes| {
                        nodes
                            .iter()
                            .filter(|node| node.selected.get_untracked())
                            .map(|node| (node.clone(), node.position.get_untracked()))
                            .collect()
                    });
                    model
                        .dragging
                        .set(nodes.iter().map(|(node, _)| Arc::clone(&node.id)).collect());
                    dragged.set_value(nodes);
                }
                Action::MoveDragged { dx, dy } => dragged.with_value(|nodes| {
                    for (node, origin) in nodes {
                        node.position.set(Position {
                            x: origin.x + dx,
                            y: origin.y + dy,
                        });
                    }
                }),
                Action::FinishDrag { moved } => {
                    model.dragging.set(Vec::new());
                    let nodes = dragged.try_update_value(std::mem::take).unwrap_or_default();
                    if moved {
                        model.layout.update(|version| *version += 1);
                        let positions = nodes
                            .iter()
                            .map(|(node, _)| (node.id.to_string(), node.position.get_untracked()))
                            .collect();
                        events.moved.run(positions);
                    }
                }
                Action::AbandonDrag => {
                    model.dragging.set(Vec::new());
                    model.layout.update(|version| *version += 1);
                    dragged.set_value(Vec::new());
                }
                Action::SetViewport(view) => model.viewport.set(view),
                Action::ShowCablePreview { from, to } => {
                    if let Some(path) = preview_path(model, &from, to) {
                        preview.set(Some(path));
                    }
                }
                Action::HideCablePreview => preview.set(None),
                Action::ShowConnectingType(port_type) => connecting.set(port_type),
                Action::HoverChanged(over) => events.hover.run(over),
                Action::Connect(connection) => events.connect.run(connection),
                Action::DropCable(id) => events.drop_cable.run(id),
                Action::PortClicked {
                    port: (module, port),
                    client,
                } => events.port_clicked.run((module, port, client.0, client.1)),
                Action::ShowSelectionBox(area) => boxing.set(Some(area)),
                Action::HideSelectionBox => boxing.set(None),
                Action::SelectInsideBox { area, additive } => select_inside(model, area, additive),
            }
        }
    };

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

    let on_pointer_down = move |event: web_sys::PointerEvent| {
        if event.button() != 0 {
            return;
        }
        let Some(target) = element_of(event.target()) else {
            return;
        };
        let client = (f64::from(event.client_x()), f64::from(event.client_y()));
        measure_pane();
        let point = graph_point(client.0, client.1);
        let mut press = press_at(&target, model);
        if press == Press::Background {
            // Zoomed out, cables are drawn on a canvas: found by their
            // curves, within a few pixels.
            let within = CABLE_REACH / model.drawn_view.with_untracked(|view| view.zoom);
            if let Some(cable) = sketched_cables.with_untracked(|cables| {
                cable_sketches::cable_at(cables, (point.x, point.y), within)
            }) {
                press = Press::Cable(cable.to_string());
            }
        }
        let shift = event.shift_key();
        let actions = step(Input::Down {
            press,
            client,
            point,
            shift,
        });
        carry_out(actions, &event);
    };

    let pointer_at = move |event: &web_sys::PointerEvent| {
        let client = (f64::from(event.client_x()), f64::from(event.client_y()));
        // The input port under the pointer matters only to a cable being
        // drawn, and finding it costs a hit test.
        let input_port = if gesture.with_value(GestureMachine::is_connecting) {
            input_port_at(client)
        } else {
            None
        };
        Pointer {
            client,
            point: graph_point(client.0, client.1),
            input_port,
        }
    };
    let on_pointer_move = move |event: web_sys::PointerEvent| {
        let pointer = pointer_at(&event);
        model.pointer.set_value(Some(pointer.client));
        carry_out(step(Input::Move(pointer)), &event);
    };
    let on_pointer_up = move |event: web_sys::PointerEvent| {
        let pointer = pointer_at(&event);
        carry_out(step(Input::Up(pointer)), &event);
    };

    // During a wheel zoom the scaled content is a compositor layer resized
    // as it is (no re-raster per wheel step), and what is in the page stays
    // as it was (nothing mounted per step). Once the zoom settles the layer
    // goes (the content is drawn sharp at its new scale), and what came into
    // view is mounted from the next frame on (both in one frame made a
    // frame of 50 ms at 1000 modules in 5 of 16 zooms; apart, 1 of 16).
    let wheel_zooming = RwSignal::new(false);
    Effect::new(move |_| {
        let view = model.viewport.get();
        if !wheel_zooming.get_untracked() {
            model::set_if_changed(model.drawn_view, view);
        }
    });
    let settle = StoredValue::new(None::<crate::browser::Timer>);
    let zoom_settled = move || {
        crate::browser::restart_timeout(settle, Duration::from_millis(200), move || {
            wheel_zooming.set(false);
            // Callbacks that may come after the canvas is gone: `try_`.
            crate::browser::next_frame(move || {
                if wheel_zooming.try_get_untracked() == Some(false)
                    && let Some(view) = model.viewport.try_get_untracked()
                {
                    model::set_if_changed(model.drawn_view, view);
                }
            });
        });
    };
    // The layer is made again at the new zoom once the view has been still
    // for a moment, so that it is there before the next wheel notch: made
    // at the first notch, its raster held that frame back (33 ms at 5000
    // modules). Any other change of zoom (buttons, keys, fit) drops it too,
    // in the frame the zoom changes, or the old raster would be scaled.
    let layer_zoom = RwSignal::new(model.viewport.get_untracked().zoom);
    let layered = Memo::new(move |_| {
        wheel_zooming.get() || model.viewport.with(|view| view.zoom) == layer_zoom.get()
    });
    let still = StoredValue::new(None::<crate::browser::Timer>);
    Effect::new(move |_| {
        // Pans too: the layer waits for the view to be still.
        model.drawn_view.track();
        crate::browser::restart_timeout(still, Duration::from_millis(400), move || {
            if let Some(view) = model.viewport.try_get_untracked() {
                model::set_if_changed(layer_zoom, view.zoom);
            }
        });
    });

    let on_wheel = move |event: web_sys::WheelEvent| {
        if closest_target(&event, "[data-pane-control]") {
            return;
        }
        event.prevent_default();
        measure_pane();
        let (x, y) = pane_point(f64::from(event.client_x()), f64::from(event.client_y()));
        // Pixels, or lines (about 16 px), as d3-zoom does it.
        let delta = match event.delta_mode() {
            1 => event.delta_y() * 16.0,
            2 => event.delta_y() * 400.0,
            _ => event.delta_y(),
        };
        let factor = 2f64.powf(-delta * 0.002);
        model::set_if_changed(wheel_zooming, true);
        model
            .viewport
            .update(|view| *view = view.zoomed_at(factor, x, y));
        zoom_settled();
    };

    let on_double_click = move |event: web_sys::MouseEvent| {
        if let Some(id) = element_of(event.target())
            .and_then(|target| closest(&target, "[data-node-id]"))
            .and_then(|module| module.get_attribute("data-node-id"))
        {
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
                space_held.set(true);
                event.prevent_default();
            }
        });
        let up = window_event_listener(leptos::ev::keyup, move |event| {
            if event.code() == "Space" {
                space_held.set(false);
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
        if let Some(port_type) = connecting.get().or(pending) {
            class.push_str(" connecting connecting-");
            class.push_str(port_type.as_str());
        }
        if space_held.get() {
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
            on:pointerdown=on_pointer_down
            on:pointermove=on_pointer_move
            on:pointerup=on_pointer_up
            on:pointercancel=move |event: web_sys::PointerEvent| carry_out(step(Input::Cancel), &event)
            on:wheel=on_wheel
            on:dblclick=on_double_click
        >
            // Pan is a pure 2D translation of the outer element, which
            // Chromium applies on the compositor without re-layerizing the
            // page; zoom scales the inner one.
            <div class="viewport" style:transform=move || model.viewport.with(|view| format!("translate({}px, {}px)", view.x, view.y))>
            <div
                class="viewport-scale"
                class:layered=move || layered.get()
                style:transform=move || model.viewport.with(|view| format!("scale({})", view.zoom))
            >
                <CableSketches model cables=sketched_cables/>
                <svg class="cables" aria-hidden="true">
                    <For each=move || drawn_edges.get() key=|edge| Arc::clone(&edge.id) let:edge>
                        <CableView model edge/>
                    </For>
                    <g inner_html=move || condition_sketches.get()></g>
                    <path class="cable-preview" d=move || preview.get().unwrap_or_default()></path>
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
                    boxing.get().map(|area| {
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

fn closest_target(event: &web_sys::Event, selector: &str) -> bool {
    element_of(event.target())
        .and_then(|target| closest(&target, selector))
        .is_some()
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
