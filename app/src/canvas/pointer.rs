//! The pointer on the pane, the thin shell around
//! [`GestureMachine`](super::gesture::GestureMachine): it reads each pointer
//! event into plain data (what was pressed, where the pointer is), lets the
//! machine decide, and carries out the [`Action`]s it answers with on the
//! model, the page and the owner's [`CanvasEvents`].

use std::sync::Arc;

use graph::{PortType, Position};
use leptos::prelude::*;

use super::CanvasEvents;
use super::cable_sketches::{self, SketchedCable};
use super::cable_view::preview_path;
use super::geometry;
use super::gesture::{Action, Context, GestureMachine, Input, Pointer, Press, SelectionBox};
use super::model::{CanvasModel, NodeHandle};
use super::targets::{element_of, input_port_at, press_at};

/// How near (screen pixels) a press must be to a sketched cable to press it.
const CABLE_REACH: f64 = 5.0;

/// What a gesture in progress shows in the layers: the cable being drawn
/// and the selection box.
#[derive(Clone, Copy)]
pub struct GestureMarks {
    /// The path of the cable being drawn.
    pub cable_preview: RwSignal<Option<String>>,
    pub selection_box: RwSignal<Option<SelectionBox>>,
}

impl GestureMarks {
    pub fn new() -> GestureMarks {
        GestureMarks {
            cable_preview: RwSignal::new(None),
            selection_box: RwSignal::new(None),
        }
    }
}

/// The pane's top-left corner in the page, read once per gesture: reading
/// layout on every move would force a style and layout pass per frame.
#[derive(Clone, Copy)]
pub struct PaneOrigin {
    pub pane: NodeRef<leptos::html::Div>,
    corner: StoredValue<(f64, f64)>,
}

impl PaneOrigin {
    pub fn new(pane: NodeRef<leptos::html::Div>) -> PaneOrigin {
        PaneOrigin {
            pane,
            corner: StoredValue::new((0.0, 0.0)),
        }
    }

    pub fn measure(self) {
        if let Some(element) = self.pane.get_untracked() {
            let rect = element.get_bounding_client_rect();
            self.corner.set_value((rect.left(), rect.top()));
        }
    }

    /// The pane point under a point of the page, as last measured.
    pub fn pane_point(self, client_x: f64, client_y: f64) -> (f64, f64) {
        let (left, top) = self.corner.get_value();
        (client_x - left, client_y - top)
    }
}

/// The pointer's gestures on one pane.
#[derive(Clone, Copy)]
pub struct PointerGestures {
    model: CanvasModel,
    editable: Signal<bool>,
    movable: Signal<bool>,
    events: CanvasEvents,
    origin: PaneOrigin,
    marks: GestureMarks,
    /// The zoomed-out cables, drawn on a canvas: pressed by their curves.
    sketched_cables: Memo<Vec<SketchedCable>>,
    machine: StoredValue<GestureMachine>,
    /// The modules being dragged and where each was when the drag started,
    /// taken once at its start: a move then touches them alone, with no
    /// lookup among thousands of modules.
    dragged: StoredValue<Vec<(NodeHandle, Position)>>,
    /// The type of the cable being drawn, if one is.
    pub connecting: RwSignal<Option<PortType>>,
    /// Space is held: dragging anywhere pans.
    pub space_held: RwSignal<bool>,
}

impl PointerGestures {
    pub fn new(
        model: CanvasModel,
        editable: Signal<bool>,
        movable: Signal<bool>,
        events: CanvasEvents,
        origin: PaneOrigin,
        marks: GestureMarks,
        sketched_cables: Memo<Vec<SketchedCable>>,
    ) -> PointerGestures {
        PointerGestures {
            model,
            editable,
            movable,
            events,
            origin,
            marks,
            sketched_cables,
            machine: StoredValue::new(GestureMachine::default()),
            dragged: StoredValue::new(Vec::new()),
            connecting: RwSignal::new(None),
            space_held: RwSignal::new(false),
        }
    }

    fn graph_point(self, client_x: f64, client_y: f64) -> Position {
        let (x, y) = self.origin.pane_point(client_x, client_y);
        self.model.viewport.get_untracked().to_graph(x, y)
    }

    fn step(self, input: Input) -> Vec<Action> {
        let context = Context {
            editable: self.editable.get_untracked(),
            movable: self.movable.get_untracked(),
            space_held: self.space_held.get_untracked(),
            viewport: self.model.viewport.get_untracked(),
            pending_output: self.model.pending_from.with_untracked(|pending| {
                pending
                    .as_ref()
                    .map(|(module, port, _)| (module.clone(), port.clone()))
            }),
        };
        self.machine
            .try_update_value(|machine| machine.step(input, &context))
            .unwrap_or_default()
    }

    pub fn down(self, event: web_sys::PointerEvent) {
        if event.button() != 0 {
            return;
        }
        let Some(target) = element_of(event.target()) else {
            return;
        };
        let client = (f64::from(event.client_x()), f64::from(event.client_y()));
        self.origin.measure();
        let point = self.graph_point(client.0, client.1);
        let mut press = press_at(&target, self.model);
        if press == Press::Background {
            // Zoomed out, cables are drawn on a canvas: found by their
            // curves, within a few pixels.
            let within = CABLE_REACH / self.model.drawn_view.with_untracked(|view| view.zoom);
            if let Some(cable) = self.sketched_cables.with_untracked(|cables| {
                cable_sketches::cable_at(cables, (point.x, point.y), within)
            }) {
                press = Press::Cable(cable.to_string());
            }
        }
        let shift = event.shift_key();
        let actions = self.step(Input::Down {
            press,
            client,
            point,
            shift,
        });
        self.carry_out(actions, &event);
    }

    fn pointer_at(self, event: &web_sys::PointerEvent) -> Pointer {
        let client = (f64::from(event.client_x()), f64::from(event.client_y()));
        // The input port under the pointer matters only to a cable being
        // drawn, and finding it costs a hit test.
        let input_port = if self.machine.with_value(GestureMachine::is_connecting) {
            input_port_at(client)
        } else {
            None
        };
        Pointer {
            client,
            point: self.graph_point(client.0, client.1),
            input_port,
        }
    }

    pub fn moved(self, event: web_sys::PointerEvent) {
        let pointer = self.pointer_at(&event);
        self.model.pointer.set_value(Some(pointer.client));
        self.carry_out(self.step(Input::Move(pointer)), &event);
    }

    pub fn up(self, event: web_sys::PointerEvent) {
        let pointer = self.pointer_at(&event);
        self.carry_out(self.step(Input::Up(pointer)), &event);
    }

    pub fn cancel(self, event: web_sys::PointerEvent) {
        self.carry_out(self.step(Input::Cancel), &event);
    }

    fn carry_out(self, actions: Vec<Action>, event: &web_sys::PointerEvent) {
        let PointerGestures {
            model,
            events,
            origin: PaneOrigin { pane, .. },
            marks,
            ..
        } = self;
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
                Action::StartDrag => self.start_drag(),
                Action::MoveDragged { dx, dy } => self.move_dragged(dx, dy),
                Action::FinishDrag { moved } => self.finish_drag(moved),
                Action::AbandonDrag => {
                    model.dragging.set(Vec::new());
                    model.layout.update(|version| *version += 1);
                    self.dragged.set_value(Vec::new());
                }
                Action::SetViewport(view) => model.viewport.set(view),
                Action::ShowCablePreview { from, to } => {
                    if let Some(path) = preview_path(model, &from, to) {
                        marks.cable_preview.set(Some(path));
                    }
                }
                Action::HideCablePreview => marks.cable_preview.set(None),
                Action::ShowConnectingType(port_type) => self.connecting.set(port_type),
                Action::HoverChanged(over) => events.hover.run(over),
                Action::Connect(connection) => events.connect.run(connection),
                Action::DropCable(id) => events.drop_cable.run(id),
                Action::PortClicked {
                    port: (module, port),
                    client,
                } => events.port_clicked.run((module, port, client.0, client.1)),
                Action::ShowSelectionBox(area) => marks.selection_box.set(Some(area)),
                Action::HideSelectionBox => marks.selection_box.set(None),
                Action::SelectInsideBox { area, additive } => select_inside(model, area, additive),
            }
        }
    }

    fn start_drag(self) {
        let nodes: Vec<(NodeHandle, Position)> = self.model.nodes.with_untracked(|nodes| {
            nodes
                .iter()
                .filter(|node| node.selected.get_untracked())
                .map(|node| (node.clone(), node.position.get_untracked()))
                .collect()
        });
        self.model
            .dragging
            .set(nodes.iter().map(|(node, _)| Arc::clone(&node.id)).collect());
        self.dragged.set_value(nodes);
    }

    fn move_dragged(self, dx: f64, dy: f64) {
        self.dragged.with_value(|nodes| {
            // The first module lands on the grid, the others keep their
            // places around it.
            let (dx, dy) = match nodes.first() {
                Some((_, origin)) if self.model.snap.get_untracked() => {
                    super::arrange::snapped_travel(*origin, dx, dy)
                }
                _ => (dx, dy),
            };
            for (node, origin) in nodes {
                node.position.set(Position {
                    x: origin.x + dx,
                    y: origin.y + dy,
                });
            }
        });
    }

    fn finish_drag(self, moved: bool) {
        self.model.dragging.set(Vec::new());
        let nodes = self
            .dragged
            .try_update_value(std::mem::take)
            .unwrap_or_default();
        if moved {
            self.model.layout.update(|version| *version += 1);
            let positions = nodes
                .iter()
                .map(|(node, _)| (node.id.to_string(), node.position.get_untracked()))
                .collect();
            self.events.moved.run(positions);
        }
    }
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
