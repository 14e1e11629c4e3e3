//! What a pointer gesture on the canvas means: pan, drag the selection,
//! draw or rewire a cable, box selection, or a click. The canvas reads the
//! page into plain data (what was pressed, where the pointer is) and
//! carries out the [`Action`]s this machine answers with; the decisions
//! themselves touch neither the DOM nor a signal, so every threshold and
//! click rule is unit-tested without a browser.

use graph::{Connection, PortType, Position};

use super::geometry::MODULE_OUTER_WIDTH;
use super::model::Viewport;

/// How far the pointer may travel (screen pixels across plus down) in a pan
/// or a drag and the gesture still be a click.
const POINTER_SLACK: f64 = 2.0;

/// How far it may travel while drawing a cable and still be a click on the
/// port (which opens its popup, or puts a picked-up cable back).
const CABLE_SLACK: f64 = 3.0;

/// The module under a press.
#[derive(Clone, Debug, PartialEq)]
pub struct PressedModule {
    pub id: String,
    /// Selected before the press.
    pub selected: bool,
}

/// The cable plugged into a pressed input port: its end can be picked up.
#[derive(Clone, Debug, PartialEq)]
pub struct PluggedCable {
    pub id: String,
    /// (module id, port id) of the output it comes from.
    pub from: (String, String),
    /// The type of that output.
    pub port_type: PortType,
}

/// What was under the pointer when it went down, as the canvas finds it in
/// the page. Ports carry the module they are on: where cables may not be
/// drawn, pressing a port is pressing its module.
#[derive(Clone, Debug, PartialEq)]
pub enum Press {
    /// A control inside the pane (zoom buttons, minimap).
    PaneControl,
    /// An output port: (module id, port id) and its type.
    OutputPort {
        port: (String, String),
        port_type: PortType,
        module: PressedModule,
    },
    /// An input port: (module id, port id) and the cable plugged in there.
    InputPort {
        port: (String, String),
        plugged: Option<PluggedCable>,
        module: PressedModule,
    },
    /// A cable, by id.
    Cable(String),
    Module(PressedModule),
    /// Inside a module the model no longer holds (its box is still leaving
    /// the page).
    RemovedModule,
    Background,
}

/// Where the pointer is: `client` in the page, in pixels; `point` the graph
/// point under it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pointer {
    pub client: (f64, f64),
    pub point: Position,
    /// The input port under the pointer, (module id, port id). Only looked
    /// up while a cable is being drawn ([`GestureMachine::is_connecting`]):
    /// it costs a hit test.
    pub input_port: Option<(String, String)>,
}

/// What the pointer did.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// The primary button went down.
    Down {
        press: Press,
        client: (f64, f64),
        point: Position,
        shift: bool,
    },
    Move(Pointer),
    Up(Pointer),
    Cancel,
}

/// What the decisions depend on besides the pointer, as it is when the
/// pointer acts.
#[derive(Clone, Debug, PartialEq)]
pub struct Context {
    /// Cables may be drawn and rewired.
    pub editable: bool,
    /// Modules may be dragged.
    pub movable: bool,
    /// Space is held: any press pans.
    pub space_held: bool,
    pub viewport: Viewport,
    /// An output chosen in the output popup, (module id, port id): the next
    /// press picks its target.
    pub pending_output: Option<(String, String)>,
}

/// A rectangle drawn by box selection, in graph units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelectionBox {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

impl SelectionBox {
    /// The box with these two opposite corners, in whichever direction it
    /// was drawn.
    pub fn between(corner: Position, opposite: Position) -> SelectionBox {
        SelectionBox {
            left: corner.x.min(opposite.x),
            top: corner.y.min(opposite.y),
            right: corner.x.max(opposite.x),
            bottom: corner.y.max(opposite.y),
        }
    }

    pub fn width(&self) -> f64 {
        self.right - self.left
    }

    pub fn height(&self) -> f64 {
        self.bottom - self.top
    }

    /// Whether a module at `at`, `height` tall and of the common width,
    /// overlaps the box.
    pub fn meets(&self, at: Position, height: f64) -> bool {
        at.x < self.right
            && at.x + MODULE_OUTER_WIDTH > self.left
            && at.y < self.bottom
            && at.y + height > self.top
    }
}

/// What the canvas is to do, in the order given.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Take the keyboard focus for the pane.
    FocusPane,
    /// Capture the pointer for the pane, so the gesture follows it anywhere.
    CapturePointer,
    /// Prevent the event's default (focus moving, text being selected).
    PreventDefault,
    /// The output chosen in the popup has been used or given up.
    ForgetPendingOutput,
    /// Select these modules and nothing else (no cable either).
    SelectOnly(Vec<String>),
    /// Select this module if it was not, or deselect it.
    ToggleModule(String),
    /// Select this cable (or none) instead of the one selected.
    SelectCable(Option<String>),
    /// Tell the owner the selection changed.
    SelectionChanged,
    /// The selected modules start being dragged from where they are.
    StartDrag,
    /// Move the dragged modules by this much from where the drag started,
    /// in graph units.
    MoveDragged {
        dx: f64,
        dy: f64,
    },
    /// The drag ended; if the modules moved, report where to.
    FinishDrag {
        moved: bool,
    },
    /// The drag, if any, was cut short: the modules stay where they are,
    /// unreported.
    AbandonDrag,
    SetViewport(Viewport),
    /// Draw the cable being drawn from this output, (module id, port id),
    /// to this graph point.
    ShowCablePreview {
        from: (String, String),
        to: Position,
    },
    HideCablePreview,
    /// A cable of this type is being drawn (the inputs it fits show it), or
    /// none is.
    ShowConnectingType(Option<PortType>),
    /// The cable being drawn is over this input, or no longer over one.
    HoverChanged(Option<Connection>),
    Connect(Connection),
    /// Remove this cable.
    DropCable(String),
    /// This output port was clicked: open its popup where the pointer is.
    PortClicked {
        port: (String, String),
        client: (f64, f64),
    },
    ShowSelectionBox(SelectionBox),
    HideSelectionBox,
    /// Select the modules the box meets; unless `additive`, deselect the others.
    SelectInsideBox {
        area: SelectionBox,
        additive: bool,
    },
}

/// A gesture in progress.
#[derive(Clone, Debug, Default, PartialEq)]
enum Gesture {
    #[default]
    Idle,
    Panning {
        start: (f64, f64),
        view: Viewport,
        moved: bool,
    },
    Dragging {
        start: (f64, f64),
        moved: bool,
        /// Clicked an already selected module without shift: on a click
        /// without movement, it becomes the only selection.
        narrow_to: Option<String>,
    },
    Connecting {
        from: (String, String),
        rewire: Option<String>,
        start: (f64, f64),
        moved: bool,
    },
    Boxing {
        start: Position,
        additive: bool,
    },
}

/// The gesture in progress and the input a cable being drawn is over.
#[derive(Clone, Debug, Default)]
pub struct GestureMachine {
    gesture: Gesture,
    hovered: Option<(String, String)>,
}

/// Screen pixels across plus down from `start` to `end`.
fn travel(start: (f64, f64), end: (f64, f64)) -> f64 {
    (end.0 - start.0).abs() + (end.1 - start.1).abs()
}

impl GestureMachine {
    /// Whether a cable is being drawn (the input under the pointer matters).
    pub fn is_connecting(&self) -> bool {
        matches!(self.gesture, Gesture::Connecting { .. })
    }

    /// The next gesture after `input`, and what the canvas is to do.
    pub fn step(&mut self, input: Input, context: &Context) -> Vec<Action> {
        match input {
            Input::Down {
                press,
                client,
                point,
                shift,
            } => self.press(press, client, point, shift, context),
            Input::Move(pointer) => self.follow(pointer, context),
            Input::Up(pointer) => self.release(pointer),
            Input::Cancel => {
                self.gesture = Gesture::Idle;
                self.hovered = None;
                vec![
                    Action::HoverChanged(None),
                    Action::AbandonDrag,
                    Action::HideCablePreview,
                    Action::ShowConnectingType(None),
                    Action::HideSelectionBox,
                ]
            }
        }
    }

    fn press(
        &mut self,
        press: Press,
        client: (f64, f64),
        point: Position,
        shift: bool,
        context: &Context,
    ) -> Vec<Action> {
        // Controls inside the pane (zoom buttons, minimap) handle themselves.
        if press == Press::PaneControl {
            return Vec::new();
        }
        // The gesture below prevents the default, which would move focus:
        // take it from whatever field had it, so the keys that follow act
        // on what was clicked.
        let mut actions = vec![Action::FocusPane];
        // An output chosen in the popup: this click picks its target.
        if let Some(from) = &context.pending_output {
            actions.push(Action::ForgetPendingOutput);
            if let Press::InputPort { port, .. } = &press {
                actions.push(Action::Connect(Connection {
                    from: from.clone(),
                    to: port.clone(),
                    rewire: None,
                }));
                actions.push(Action::PreventDefault);
                return actions;
            }
        }
        let started = if context.space_held {
            Some(Gesture::Panning {
                start: client,
                view: context.viewport,
                moved: false,
            })
        } else {
            Self::begin(press, client, point, shift, context, &mut actions)
        };
        // None: the press starts nothing and leaves what was going on as it was.
        if let Some(gesture) = started {
            if gesture != Gesture::Idle {
                actions.push(Action::CapturePointer);
                actions.push(Action::PreventDefault);
            }
            self.gesture = gesture;
        }
        actions
    }

    /// The gesture a press on `press` begins (space not held).
    fn begin(
        press: Press,
        client: (f64, f64),
        point: Position,
        shift: bool,
        context: &Context,
        actions: &mut Vec<Action>,
    ) -> Option<Gesture> {
        let press = match press {
            Press::OutputPort { module, .. } | Press::InputPort { module, .. }
                if !context.editable =>
            {
                Press::Module(module)
            }
            press => press,
        };
        match press {
            Press::PaneControl | Press::RemovedModule => None,
            Press::OutputPort {
                port, port_type, ..
            } => {
                actions.push(Action::ShowConnectingType(Some(port_type)));
                Some(Gesture::Connecting {
                    from: port,
                    rewire: None,
                    start: client,
                    moved: false,
                })
            }
            // Pick up the end of a cable plugged in here, to rewire or drop it.
            Press::InputPort { plugged, .. } => match plugged {
                Some(cable) => {
                    actions.push(Action::ShowConnectingType(Some(cable.port_type)));
                    Some(Gesture::Connecting {
                        from: cable.from,
                        rewire: Some(cable.id),
                        start: client,
                        moved: false,
                    })
                }
                None => Some(Gesture::Idle),
            },
            Press::Cable(id) => {
                actions.push(Action::SelectOnly(Vec::new()));
                actions.push(Action::SelectCable(Some(id)));
                actions.push(Action::SelectionChanged);
                Some(Gesture::Idle)
            }
            Press::Module(module) => {
                let mut narrow_to = None;
                if shift {
                    actions.push(Action::ToggleModule(module.id));
                    actions.push(Action::SelectCable(None));
                } else if module.selected {
                    narrow_to = Some(module.id);
                } else {
                    actions.push(Action::SelectOnly(vec![module.id]));
                }
                actions.push(Action::SelectionChanged);
                if !context.movable {
                    return None;
                }
                actions.push(Action::StartDrag);
                Some(Gesture::Dragging {
                    start: client,
                    moved: false,
                    narrow_to,
                })
            }
            Press::Background if shift => {
                actions.push(Action::ShowSelectionBox(SelectionBox::between(
                    point, point,
                )));
                Some(Gesture::Boxing {
                    start: point,
                    additive: true,
                })
            }
            Press::Background => Some(Gesture::Panning {
                start: client,
                view: context.viewport,
                moved: false,
            }),
        }
    }

    fn follow(&mut self, pointer: Pointer, context: &Context) -> Vec<Action> {
        let Pointer {
            client,
            point,
            input_port: over,
        } = pointer;
        let GestureMachine { gesture, hovered } = self;
        match gesture {
            Gesture::Idle => Vec::new(),
            Gesture::Panning { start, view, moved } => {
                *moved = *moved || travel(*start, client) > POINTER_SLACK;
                vec![Action::SetViewport(Viewport {
                    x: view.x + client.0 - start.0,
                    y: view.y + client.1 - start.1,
                    zoom: view.zoom,
                })]
            }
            Gesture::Dragging { start, moved, .. } => {
                let zoom = context.viewport.zoom;
                let (dx, dy) = ((client.0 - start.0) / zoom, (client.1 - start.1) / zoom);
                *moved = *moved || dx.abs() + dy.abs() > POINTER_SLACK / zoom;
                vec![Action::MoveDragged { dx, dy }]
            }
            Gesture::Connecting {
                from, start, moved, ..
            } => {
                *moved = *moved || travel(*start, client) > CABLE_SLACK;
                let mut actions = vec![Action::ShowCablePreview {
                    from: from.clone(),
                    to: point,
                }];
                // Whether the input under the pointer fits, before the drop.
                if *hovered != over {
                    hovered.clone_from(&over);
                    actions.push(Action::HoverChanged(over.map(|to| Connection {
                        from: from.clone(),
                        to,
                        rewire: None,
                    })));
                }
                actions
            }
            Gesture::Boxing { start, .. } => {
                vec![Action::ShowSelectionBox(SelectionBox::between(
                    *start, point,
                ))]
            }
        }
    }

    fn release(&mut self, pointer: Pointer) -> Vec<Action> {
        let Pointer {
            client,
            point,
            input_port: dropped_on,
        } = pointer;
        let mut actions = Vec::new();
        if self.hovered.take().is_some() {
            actions.push(Action::HoverChanged(None));
        }
        match std::mem::take(&mut self.gesture) {
            Gesture::Idle => {}
            Gesture::Panning { moved, .. } => {
                if !moved {
                    actions.push(Action::SelectOnly(Vec::new()));
                    actions.push(Action::SelectionChanged);
                }
            }
            Gesture::Dragging {
                moved, narrow_to, ..
            } => {
                actions.push(Action::FinishDrag { moved });
                if let Some(id) = narrow_to.filter(|_| !moved) {
                    actions.push(Action::SelectOnly(vec![id]));
                    actions.push(Action::SelectionChanged);
                }
            }
            Gesture::Connecting {
                from,
                rewire,
                moved,
                ..
            } => {
                actions.push(Action::ShowConnectingType(None));
                actions.push(Action::HideCablePreview);
                match (dropped_on, rewire) {
                    (Some(to), rewire) => {
                        actions.push(Action::Connect(Connection { from, to, rewire }));
                    }
                    (None, Some(cable)) if moved => actions.push(Action::DropCable(cable)),
                    (None, None) if !moved => {
                        actions.push(Action::PortClicked { port: from, client })
                    }
                    _ => {}
                }
            }
            Gesture::Boxing { start, additive } => {
                actions.push(Action::HideSelectionBox);
                actions.push(Action::SelectInsideBox {
                    area: SelectionBox::between(start, point),
                    additive,
                });
                actions.push(Action::SelectionChanged);
            }
        }
        actions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> Context {
        Context {
            editable: true,
            movable: true,
            space_held: false,
            viewport: Viewport::default(),
            pending_output: None,
        }
    }

    fn port(module: &str, port: &str) -> (String, String) {
        (module.to_owned(), port.to_owned())
    }

    fn module(id: &str, selected: bool) -> Press {
        Press::Module(PressedModule {
            id: id.to_owned(),
            selected,
        })
    }

    fn output_port() -> Press {
        Press::OutputPort {
            port: port("m1", "out"),
            port_type: PortType::Signal,
            module: PressedModule {
                id: "m1".to_owned(),
                selected: false,
            },
        }
    }

    /// Input `in` of m2, with cable c1 from m1's receipt output plugged in
    /// or nothing.
    fn input_port(plugged: bool) -> Press {
        Press::InputPort {
            port: port("m2", "in"),
            plugged: plugged.then(|| PluggedCable {
                id: "c1".to_owned(),
                from: port("m1", "out"),
                port_type: PortType::Receipt,
            }),
            module: PressedModule {
                id: "m2".to_owned(),
                selected: false,
            },
        }
    }

    fn at(x: f64, y: f64) -> Position {
        Position { x, y }
    }

    /// A press at (100, 100) in the page, over graph point (100, 100); the
    /// graph points of the moves below equal their page points.
    fn down(press: Press, shift: bool) -> Input {
        Input::Down {
            press,
            client: (100.0, 100.0),
            point: at(100.0, 100.0),
            shift,
        }
    }

    fn pointer(x: f64, y: f64, input_port: Option<(String, String)>) -> Pointer {
        Pointer {
            client: (x, y),
            point: at(x, y),
            input_port,
        }
    }

    fn move_to(x: f64, y: f64, over: Option<(String, String)>) -> Input {
        Input::Move(pointer(x, y, over))
    }

    fn up(x: f64, y: f64, dropped_on: Option<(String, String)>) -> Input {
        Input::Up(pointer(x, y, dropped_on))
    }

    /// Press `press`, move to (`x`, `y`) and let go there on nothing: the
    /// actions of each step.
    fn gesture(context: &Context, press: Press, shift: bool, x: f64, y: f64) -> Vec<Vec<Action>> {
        run(
            context,
            vec![down(press, shift), move_to(x, y, None), up(x, y, None)],
        )
    }

    fn run(context: &Context, inputs: Vec<Input>) -> Vec<Vec<Action>> {
        let mut machine = GestureMachine::default();
        inputs
            .into_iter()
            .map(|input| machine.step(input, context))
            .collect()
    }

    /// What a press that begins a gesture does: take the focus, `then`,
    /// and capture the pointer.
    fn begins(then: &[Action]) -> Vec<Action> {
        [
            &[Action::FocusPane],
            then,
            &[Action::CapturePointer, Action::PreventDefault],
        ]
        .concat()
    }

    fn select_only(id: &str) -> Action {
        Action::SelectOnly(vec![id.to_owned()])
    }

    const CLEAR_SELECTION: [Action; 2] = [Action::SelectOnly(Vec::new()), Action::SelectionChanged];

    const PUT_CABLE_AWAY: [Action; 2] =
        [Action::ShowConnectingType(None), Action::HideCablePreview];

    fn zoomed(zoom: f64) -> Context {
        Context {
            viewport: Viewport {
                x: 10.0,
                y: 20.0,
                zoom,
            },
            ..context()
        }
    }

    fn pan_to(x: f64, y: f64, zoom: f64) -> Vec<Action> {
        vec![Action::SetViewport(Viewport { x, y, zoom })]
    }

    #[test]
    fn a_press_on_a_pane_control_does_nothing_and_keeps_the_chosen_output() {
        let context = Context {
            pending_output: Some(port("m1", "out")),
            ..context()
        };
        let steps = gesture(&context, Press::PaneControl, false, 150.0, 150.0);
        assert_eq!(steps, vec![vec![]; 3]);
    }

    #[test]
    fn a_click_on_the_background_without_moving_clears_the_selection() {
        let steps = gesture(&context(), Press::Background, false, 101.0, 101.0);
        assert_eq!(steps[0], begins(&[]));
        assert_eq!(steps[2], CLEAR_SELECTION);
    }

    #[test]
    fn a_pan_below_two_pixels_is_a_click() {
        let steps = gesture(&context(), Press::Background, false, 102.0, 100.0);
        assert_eq!(steps[2], CLEAR_SELECTION);
        let steps = gesture(&context(), Press::Background, false, 102.0, 101.0);
        assert_eq!(steps[2], vec![]);
    }

    #[test]
    fn a_drag_on_the_background_pans_the_view_by_the_pointer_s_travel() {
        let steps = gesture(&zoomed(0.5), Press::Background, false, 102.0, 101.0);
        assert_eq!(steps[1..], [pan_to(12.0, 21.0, 0.5), vec![]]);
    }

    #[test]
    fn with_space_held_any_press_pans_even_on_a_module() {
        let context = Context {
            space_held: true,
            ..zoomed(1.0)
        };
        let steps = gesture(&context, module("m1", false), false, 110.0, 100.0);
        assert_eq!(steps[0], begins(&[]));
        assert_eq!(steps[1..], [pan_to(20.0, 20.0, 1.0), vec![]]);
    }

    #[test]
    fn a_press_on_a_module_selects_only_it_and_drags_the_selection() {
        let steps = gesture(&context(), module("m1", false), false, 110.0, 105.0);
        assert_eq!(
            steps[0],
            begins(&[
                select_only("m1"),
                Action::SelectionChanged,
                Action::StartDrag
            ])
        );
        assert_eq!(steps[1], vec![Action::MoveDragged { dx: 10.0, dy: 5.0 }]);
        assert_eq!(steps[2], vec![Action::FinishDrag { moved: true }]);
    }

    #[test]
    fn a_shift_press_on_a_module_toggles_it_and_deselects_the_cable() {
        let steps = gesture(&context(), module("m1", true), true, 100.0, 100.0);
        let toggled = [
            Action::ToggleModule("m1".to_owned()),
            Action::SelectCable(None),
            Action::SelectionChanged,
            Action::StartDrag,
        ];
        assert_eq!(steps[0], begins(&toggled));
        assert_eq!(steps[2], vec![Action::FinishDrag { moved: false }]);
    }

    #[test]
    fn a_click_on_an_already_selected_module_without_moving_makes_it_the_only_selection() {
        let steps = gesture(&context(), module("m1", true), false, 100.0, 100.0);
        assert_eq!(
            steps[0],
            begins(&[Action::SelectionChanged, Action::StartDrag])
        );
        let narrowed = [
            Action::FinishDrag { moved: false },
            select_only("m1"),
            Action::SelectionChanged,
        ];
        assert_eq!(steps[2], narrowed);
    }

    #[test]
    fn dragging_an_already_selected_module_keeps_the_whole_selection() {
        let steps = gesture(&context(), module("m1", true), false, 140.0, 100.0);
        assert_eq!(steps[2], vec![Action::FinishDrag { moved: true }]);
    }

    #[test]
    fn a_drag_below_two_pixels_is_a_click() {
        let steps = gesture(&context(), module("m1", true), false, 101.0, 101.0);
        assert_eq!(steps[1], vec![Action::MoveDragged { dx: 1.0, dy: 1.0 }]);
        assert_eq!(steps[2][0], Action::FinishDrag { moved: false });
        let steps = gesture(&context(), module("m1", true), false, 102.0, 101.0);
        assert_eq!(steps[2], vec![Action::FinishDrag { moved: true }]);
    }

    #[test]
    fn the_drag_threshold_is_two_screen_pixels_at_any_zoom() {
        let steps = gesture(&zoomed(0.5), module("m1", false), false, 101.0, 101.0);
        assert_eq!(steps[1], vec![Action::MoveDragged { dx: 2.0, dy: 2.0 }]);
        assert_eq!(steps[2], vec![Action::FinishDrag { moved: false }]);
        let steps = gesture(&zoomed(2.0), module("m1", false), false, 102.0, 101.0);
        assert_eq!(steps[2], vec![Action::FinishDrag { moved: true }]);
    }

    #[test]
    fn a_module_that_may_not_move_is_selected_but_not_dragged() {
        let context = Context {
            movable: false,
            ..context()
        };
        let steps = gesture(&context, module("m1", false), false, 150.0, 150.0);
        assert_eq!(
            steps,
            vec![
                vec![
                    Action::FocusPane,
                    select_only("m1"),
                    Action::SelectionChanged
                ],
                vec![],
                vec![],
            ]
        );
    }

    #[test]
    fn a_press_on_a_cable_selects_only_that_cable() {
        let steps = gesture(
            &context(),
            Press::Cable("c1".to_owned()),
            false,
            150.0,
            150.0,
        );
        let selected = vec![
            Action::FocusPane,
            Action::SelectOnly(Vec::new()),
            Action::SelectCable(Some("c1".to_owned())),
            Action::SelectionChanged,
        ];
        assert_eq!(steps, vec![selected, vec![], vec![]]);
    }

    #[test]
    fn shift_on_the_background_draws_a_box_and_adds_what_it_meets_to_the_selection() {
        let steps = run(
            &context(),
            vec![
                down(Press::Background, true),
                move_to(60.0, 300.0, None),
                up(50.0, 320.0, None),
            ],
        );
        let started = SelectionBox::between(at(100.0, 100.0), at(100.0, 100.0));
        assert_eq!(steps[0], begins(&[Action::ShowSelectionBox(started)]));
        let drawn = SelectionBox {
            left: 60.0,
            top: 100.0,
            right: 100.0,
            bottom: 300.0,
        };
        assert_eq!(steps[1], vec![Action::ShowSelectionBox(drawn)]);
        let area = SelectionBox {
            left: 50.0,
            top: 100.0,
            right: 100.0,
            bottom: 320.0,
        };
        let selected = [
            Action::HideSelectionBox,
            Action::SelectInsideBox {
                area,
                additive: true,
            },
            Action::SelectionChanged,
        ];
        assert_eq!(steps[2], selected);
    }

    #[test]
    fn a_selection_box_meets_the_modules_it_overlaps() {
        let area = SelectionBox::between(at(300.0, 200.0), at(100.0, 100.0));
        assert_eq!((area.width(), area.height()), (200.0, 100.0));
        // Reaching into the box from the left; touching its right edge only.
        assert!(area.meets(at(100.0 - MODULE_OUTER_WIDTH + 1.0, 150.0), 40.0));
        assert!(!area.meets(at(300.0, 150.0), 40.0));
        // Ending at its top edge; reaching past it.
        assert!(!area.meets(at(150.0, 50.0), 50.0));
        assert!(area.meets(at(150.0, 50.0), 51.0));
    }

    #[test]
    fn a_drag_from_an_output_port_draws_a_cable_and_connects_where_it_is_dropped() {
        let steps = run(
            &context(),
            vec![
                down(output_port(), false),
                move_to(150.0, 120.0, None),
                up(150.0, 120.0, Some(port("m2", "in"))),
            ],
        );
        assert_eq!(
            steps[0],
            begins(&[Action::ShowConnectingType(Some(PortType::Signal))])
        );
        let preview = Action::ShowCablePreview {
            from: port("m1", "out"),
            to: at(150.0, 120.0),
        };
        assert_eq!(steps[1], vec![preview]);
        let connected = Action::Connect(Connection {
            from: port("m1", "out"),
            to: port("m2", "in"),
            rewire: None,
        });
        assert_eq!(steps[2], [&PUT_CABLE_AWAY[..], &[connected]].concat());
    }

    #[test]
    fn a_click_on_an_output_port_without_moving_opens_its_popup() {
        let steps = gesture(&context(), output_port(), false, 102.0, 101.0);
        let clicked = Action::PortClicked {
            port: port("m1", "out"),
            client: (102.0, 101.0),
        };
        assert_eq!(steps[2], [&PUT_CABLE_AWAY[..], &[clicked]].concat());
    }

    #[test]
    fn a_new_cable_dropped_on_nothing_is_forgotten() {
        let steps = gesture(&context(), output_port(), false, 104.0, 100.0);
        assert_eq!(steps[2], PUT_CABLE_AWAY);
    }

    #[test]
    fn a_press_on_an_input_picks_up_the_cable_plugged_there_to_rewire_it() {
        let steps = run(
            &context(),
            vec![
                down(input_port(true), false),
                move_to(200.0, 200.0, None),
                up(200.0, 200.0, Some(port("m3", "in"))),
            ],
        );
        assert_eq!(
            steps[0],
            begins(&[Action::ShowConnectingType(Some(PortType::Receipt))])
        );
        let rewired = Action::Connect(Connection {
            from: port("m1", "out"),
            to: port("m3", "in"),
            rewire: Some("c1".to_owned()),
        });
        assert_eq!(steps[2], [&PUT_CABLE_AWAY[..], &[rewired]].concat());
    }

    #[test]
    fn a_picked_up_cable_dropped_on_nothing_is_removed() {
        let steps = gesture(&context(), input_port(true), false, 150.0, 150.0);
        let dropped = Action::DropCable("c1".to_owned());
        assert_eq!(steps[2], [&PUT_CABLE_AWAY[..], &[dropped]].concat());
    }

    #[test]
    fn a_picked_up_cable_let_go_within_three_pixels_stays() {
        let steps = gesture(&context(), input_port(true), false, 102.0, 101.0);
        assert_eq!(steps[2], PUT_CABLE_AWAY);
    }

    #[test]
    fn a_press_on_an_empty_input_starts_nothing() {
        let steps = gesture(&context(), input_port(false), false, 150.0, 150.0);
        assert_eq!(steps, vec![vec![Action::FocusPane], vec![], vec![]]);
    }

    #[test]
    fn where_cables_may_not_be_drawn_a_port_is_pressed_as_its_module() {
        let context = Context {
            editable: false,
            ..context()
        };
        for (press, module) in [(output_port(), "m1"), (input_port(true), "m2")] {
            let mut machine = GestureMachine::default();
            let actions = machine.step(down(press, false), &context);
            assert!(!machine.is_connecting());
            assert_eq!(
                actions,
                begins(&[
                    select_only(module),
                    Action::SelectionChanged,
                    Action::StartDrag
                ])
            );
        }
    }

    #[test]
    fn hover_is_reported_only_when_the_input_under_the_pointer_changes() {
        let input = || Some(port("m2", "in"));
        let steps = run(
            &context(),
            vec![
                down(output_port(), false),
                move_to(150.0, 150.0, input()),
                move_to(151.0, 150.0, input()),
                move_to(200.0, 150.0, None),
                move_to(201.0, 150.0, None),
                move_to(150.0, 150.0, input()),
                up(150.0, 150.0, input()),
            ],
        );
        let hovers: Vec<Vec<&Action>> = steps
            .iter()
            .map(|actions| {
                actions
                    .iter()
                    .filter(|action| matches!(action, Action::HoverChanged(_)))
                    .collect()
            })
            .collect();
        let over = Action::HoverChanged(Some(Connection {
            from: port("m1", "out"),
            to: port("m2", "in"),
            rewire: None,
        }));
        let left = Action::HoverChanged(None);
        assert_eq!(
            hovers,
            vec![
                vec![],
                vec![&over],
                vec![],
                vec![&left],
                vec![],
                vec![&over],
                vec![&left],
            ]
        );
    }

    #[test]
    fn an_output_chosen_in_the_popup_connects_to_the_input_pressed_next() {
        let context = Context {
            pending_output: Some(port("m1", "out")),
            ..context()
        };
        let steps = gesture(&context, input_port(true), false, 150.0, 150.0);
        let connected = Action::Connect(Connection {
            from: port("m1", "out"),
            to: port("m2", "in"),
            rewire: None,
        });
        let first = vec![
            Action::FocusPane,
            Action::ForgetPendingOutput,
            connected,
            Action::PreventDefault,
        ];
        assert_eq!(steps, vec![first, vec![], vec![]]);
    }

    #[test]
    fn an_output_chosen_in_the_popup_is_forgotten_when_the_next_press_is_elsewhere() {
        let context = Context {
            pending_output: Some(port("m1", "out")),
            ..context()
        };
        let steps = gesture(&context, Press::Background, false, 100.0, 100.0);
        assert_eq!(steps[0], begins(&[Action::ForgetPendingOutput]));
        assert_eq!(steps[2], CLEAR_SELECTION);
    }

    #[test]
    fn a_press_inside_a_removed_module_only_takes_the_focus() {
        let steps = gesture(&context(), Press::RemovedModule, false, 150.0, 150.0);
        assert_eq!(steps, vec![vec![Action::FocusPane], vec![], vec![]]);
    }

    #[test]
    fn a_cancelled_gesture_puts_everything_away_and_ends() {
        let steps = run(
            &context(),
            vec![
                down(output_port(), false),
                move_to(150.0, 150.0, Some(port("m2", "in"))),
                Input::Cancel,
                up(150.0, 150.0, Some(port("m2", "in"))),
            ],
        );
        let put_away = vec![
            Action::HoverChanged(None),
            Action::AbandonDrag,
            Action::HideCablePreview,
            Action::ShowConnectingType(None),
            Action::HideSelectionBox,
        ];
        assert_eq!(steps[2..], [put_away, vec![]]);
    }
}
