//! What the canvas draws, as signals: one handle per module (position,
//! title, the ports `graph::ports` gives it, selection, error mark) and per
//! cable. A drag changes one module's position signal, so only that module
//! and its cables redraw; an edit refreshes only the modules and cables it
//! touched.

use std::collections::HashMap;
use std::sync::Arc;

use graph::routing::CableOrder;
use graph::{Cable, Graph, Module, ModulePorts, Port, PortType, Position, ports};
use leptos::prelude::*;

/// A port as the canvas shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PortView {
    pub id: String,
    pub label: String,
    pub title: String,
    pub description: String,
    pub accent: &'static str,
    pub port_type: PortType,
}

impl From<&Port> for PortView {
    fn from(port: &Port) -> PortView {
        PortView {
            id: port.id.clone(),
            label: port.label.clone(),
            title: port.title.clone(),
            description: port.description.clone(),
            accent: port.accent.as_str(),
            port_type: port.port_type,
        }
    }
}

/// Where the view is: graph point (0, 0) is drawn at (`x`, `y`) in the pane,
/// and graph units are scaled by `zoom`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub x: f64,
    pub y: f64,
    pub zoom: f64,
}

impl Default for Viewport {
    fn default() -> Viewport {
        Viewport {
            x: 0.0,
            y: 0.0,
            zoom: 1.0,
        }
    }
}

pub const MIN_ZOOM: f64 = 0.1;
pub const MAX_ZOOM: f64 = 2.5;

impl Viewport {
    /// The graph point under a pane point.
    pub fn to_graph(&self, pane_x: f64, pane_y: f64) -> Position {
        Position {
            x: (pane_x - self.x) / self.zoom,
            y: (pane_y - self.y) / self.zoom,
        }
    }

    /// Zoomed by `factor` keeping the graph point under (`pane_x`, `pane_y`) in place.
    pub fn zoomed_at(&self, factor: f64, pane_x: f64, pane_y: f64) -> Viewport {
        let zoom = (self.zoom * factor).clamp(MIN_ZOOM, MAX_ZOOM);
        let anchor = self.to_graph(pane_x, pane_y);
        Viewport {
            x: pane_x - anchor.x * zoom,
            y: pane_y - anchor.y * zoom,
            zoom,
        }
    }
}

/// Where a module is in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModuleRunState {
    /// Nothing has activated it yet in this run (its inputs have not come).
    #[default]
    NotReached,
    /// Ready, waiting for a concurrency slot (PRODUCT §3.1).
    Queued,
    Running,
    /// An approval waits for a person (PRODUCT §3.14).
    Waiting,
    Done,
    /// An approval a person rejected: it ended, and not well.
    Rejected,
    /// An approval nobody decided on in time: its value went to
    /// `timeout_out`.
    TimedOut,
    /// Taken from a recorded run, not run (PRODUCT §3.15).
    Reused,
    Failed,
    Cancelled,
}

impl ModuleRunState {
    pub fn class(self) -> &'static str {
        match self {
            ModuleRunState::NotReached => "run-not-reached",
            ModuleRunState::Queued => "run-queued",
            ModuleRunState::Running => "run-running",
            ModuleRunState::Waiting => "run-waiting",
            ModuleRunState::Done => "run-done",
            ModuleRunState::Rejected => "run-rejected",
            ModuleRunState::TimedOut => "run-timed-out",
            ModuleRunState::Reused => "run-reused",
            ModuleRunState::Failed => "run-failed",
            ModuleRunState::Cancelled => "run-cancelled",
        }
    }
}

/// A module's part in the run shown.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModuleRun {
    pub state: ModuleRunState,
    /// `Re-prompt 2/3…`, `builder · Re-prompt 1/2…`, `Round 2`.
    pub badge: Option<String>,
    /// Unix milliseconds.
    pub started_ms: Option<f64>,
    pub finished_ms: Option<f64>,
    pub tokens: u64,
    /// What its calls cost, and how many had no price.
    pub cost: wire::cost::CostTotal,
    pub error: Option<String>,
    /// A poll waiting for its next poll: when it comes (Unix milliseconds).
    pub waiting_until_ms: Option<f64>,
    /// The tokens and cost of the module's earlier activations: a resumed
    /// activation reports its recovered turns again, so it counts from here.
    pub tokens_before_activation: u64,
    pub cost_before_activation: wire::cost::CostTotal,
    /// The server that ran it stopped, and another took the run up: the
    /// activation starts again and keeps its first start time.
    pub resuming: bool,
    /// What a person decided on an approval, once they have.
    pub decided: Option<wire::approval::Decision>,
    /// The tool calls in flight: each one's call id and tool.
    pub calling: Vec<(String, String)>,
    /// A module with variants: how many there are and have ended.
    pub variant_count: u32,
    pub variants_done: u32,
    /// Each variant heard of, in the order they started, and what it is
    /// doing (`Re-prompt 1/2…`, `✓ done`, `✕ failed`).
    pub variant_lines: Vec<(String, String)>,
}

impl ModuleRun {
    /// What it is doing: its step, and the tools it is calling
    /// (`Re-prompt 2/3 · lookup…`).
    fn doing(&self) -> String {
        let mut tools: Vec<&str> = self.calling.iter().map(|(_, tool)| tool.as_str()).collect();
        tools.dedup();
        if tools.is_empty() {
            return self.badge.clone().unwrap_or_else(|| "Running".to_owned());
        }
        let calling = format!("{}…", tools.join(", "));
        match &self.badge {
            Some(step) => format!("{} · {calling}", step.trim_end_matches('…')),
            None => calling,
        }
    }

    /// Says what variant `name` is doing now.
    pub fn set_variant_line(&mut self, name: &str, doing: String) {
        match self
            .variant_lines
            .iter_mut()
            .find(|(known, _)| known == name)
        {
            Some(line) => line.1 = doing,
            None => self.variant_lines.push((name.to_owned(), doing)),
        }
    }
}

/// A duration for people: `3.2 s`, `12 s`, `2 min 5 s`.
pub fn duration_text(milliseconds: f64) -> String {
    let seconds = (milliseconds / 1000.0).max(0.0);
    if seconds < 10.0 {
        format!("{seconds:.1} s")
    } else if seconds < 60.0 {
        format!("{seconds:.0} s")
    } else {
        let whole = seconds.round() as u64;
        format!("{} min {} s", whole / 60, whole % 60)
    }
}

impl ModuleRun {
    /// The badge over the module: what it is doing, for how long, its
    /// tokens and what they cost.
    pub fn badge_text(&self, now_ms: f64) -> String {
        let mut tokens = if self.tokens > 0 {
            format!(" · {} tok", self.tokens)
        } else {
            String::new()
        };
        let cost = self.cost;
        if cost.unpriced > 0 {
            tokens.push_str(" · no price");
        } else if cost.priced > 0 && cost.known == 0.0 {
            tokens.push_str(" · free");
        } else if cost.priced > 0 {
            tokens.push_str(&format!(" · {}", wire::cost::dollars(cost.known)));
        }
        let took = |end: Option<f64>| match (self.started_ms, end) {
            (Some(start), Some(end)) => format!(" {}", duration_text(end - start)),
            _ => String::new(),
        };
        match self.state {
            ModuleRunState::NotReached => "not reached".to_owned(),
            ModuleRunState::Queued => "queued".to_owned(),
            ModuleRunState::Running => match self.waiting_until_ms {
                // A poll between polls counts down to the next.
                Some(until) => format!(
                    "◌ {} · next in {}",
                    self.badge.as_deref().unwrap_or("Polling"),
                    duration_text((until - now_ms).max(0.0))
                ),
                None => format!(
                    "● {}{}{tokens}",
                    self.doing(),
                    took(Some(now_ms)).replacen(' ', " · ", 1)
                ),
            },
            ModuleRunState::Waiting => {
                format!("✋ {}", self.badge.as_deref().unwrap_or("Waiting for you"))
            }
            // An approval says how it was decided: "✓ Approved 3.2 s".
            ModuleRunState::Done => match &self.badge {
                Some(decided) => format!("✓ {decided}{}", took(self.finished_ms)),
                None => format!("✓{}{tokens}", took(self.finished_ms)),
            },
            ModuleRunState::Rejected => format!("⊘ Rejected{}", took(self.finished_ms)),
            ModuleRunState::TimedOut => "⏱ Nobody decided in time".to_owned(),
            // What it cost was the recorded run's, not this one's.
            ModuleRunState::Reused => "↺ reused".to_owned(),
            // What it spent before it stopped still counts.
            ModuleRunState::Failed => {
                format!("✕ {}{tokens}", self.badge.as_deref().unwrap_or("failed"))
            }
            ModuleRunState::Cancelled => {
                format!("■ {}{tokens}", self.badge.as_deref().unwrap_or("cancelled"))
            }
        }
    }
}

#[derive(Clone, PartialEq)]
pub struct NodeHandle {
    pub id: Arc<str>,
    pub position: RwSignal<Position>,
    pub title: RwSignal<String>,
    pub subtitle: RwSignal<String>,
    /// CSS class suffix of the kind (`agent_task`, `unknown` …).
    pub kind: RwSignal<String>,
    pub inputs: RwSignal<Vec<PortView>>,
    pub outputs: RwSignal<Vec<PortView>>,
    pub selected: RwSignal<bool>,
    /// Has a validation error.
    pub flagged: RwSignal<bool>,
    /// A short note in the header (`↻ 2`: its re-prompts; `⋁ any`: it
    /// runs on the first input to arrive).
    pub note: RwSignal<String>,
    /// Its state in the run shown, if any.
    pub run: RwSignal<Option<ModuleRun>>,
}

impl NodeHandle {
    /// The module's content width, from what it shows (tracked).
    pub fn width(&self) -> f64 {
        self.inputs.with(|inputs| {
            self.outputs.with(|outputs| {
                self.title.with(|title| {
                    self.subtitle.with(|kind| {
                        self.note.with(|note| {
                            super::geometry::module_width(
                                title,
                                kind,
                                note,
                                inputs.iter().map(|port| port.label.as_str()),
                                outputs.iter().map(|port| port.label.as_str()),
                            )
                        })
                    })
                })
            })
        })
    }

    /// Outer width, borders included (where output ports sit).
    pub fn outer_width(&self) -> f64 {
        self.width() + 2.0 * super::geometry::BORDER
    }
}

#[derive(Clone, PartialEq)]
pub struct EdgeHandle {
    pub id: Arc<str>,
    pub from: RwSignal<(String, String)>,
    pub to: RwSignal<(String, String)>,
    pub selected: RwSignal<bool>,
    pub flagged: RwSignal<bool>,
    /// Its number and condition, when its port's cables have conditions.
    pub order: RwSignal<Option<CableOrder>>,
    /// Which way the run shown went at its port.
    pub route: RwSignal<CableRoute>,
}

/// A cable in the run shown, when its port's cables have conditions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CableRoute {
    /// Not decided (yet), or no conditions.
    #[default]
    Open,
    /// The run's value took this cable.
    Taken,
    /// Another cable of its port took the value, or none did.
    Passed,
}

/// What a module looks like on the canvas, whatever drew it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeLook {
    pub title: String,
    pub subtitle: String,
    pub kind: String,
    pub note: String,
    pub inputs: Vec<PortView>,
    pub outputs: Vec<PortView>,
}

fn views(ports: &[Port]) -> Vec<PortView> {
    ports.iter().map(PortView::from).collect()
}

/// The look of a graph module: its label, its kind, its ports from `ports()`.
pub fn module_look(module: &Module) -> NodeLook {
    let ModulePorts { inputs, outputs } = ports(module);
    let re_prompts: usize = module
        .config
        .re_prompt_lists()
        .iter()
        .map(|list| list.re_prompts.len())
        .sum();
    NodeLook {
        title: module.display_label().to_owned(),
        subtitle: module.kind().map_or_else(
            || format!("? {}", module.config.kind_name()),
            |kind| kind.title().to_owned(),
        ),
        kind: module
            .kind()
            .map_or("unknown", |kind| kind.as_str().trim_start_matches("step."))
            .to_owned(),
        note: {
            let mut notes = Vec::new();
            if re_prompts > 0 {
                notes.push(format!("↻ {re_prompts}"));
            }
            // A module that runs on the first input to arrive says so.
            if module.config.join() == graph::join::Join::Any {
                notes.push("⋁ any".to_owned());
            }
            // So does one whose work is checked before it completes.
            let checks = module
                .config
                .validation()
                .map_or(0, |validation| validation.validators.len());
            if checks > 0 {
                let plural = if checks == 1 { "" } else { "s" };
                notes.push(format!("{checks} check{plural}"));
            }
            notes.join(" · ")
        },
        inputs: views(&inputs),
        outputs: views(&outputs),
    }
}

/// The canvas's modules and cables, and the view onto them.
#[derive(Clone, Copy)]
pub struct CanvasModel {
    pub nodes: RwSignal<Vec<NodeHandle>>,
    pub edges: RwSignal<Vec<EdgeHandle>>,
    /// The notes (PRODUCT §1.6), as the document has them: read in the
    /// browser only where they are edited or change (`note_layer`).
    pub notes: RwSignal<Vec<graph::notes::Note>>,
    /// The notes' markup, as the layer shows it.
    pub notes_markup: RwSignal<String>,
    /// The notes' layer, written again in place as they change.
    pub notes_layer: NodeRef<leptos::html::Div>,
    /// The document's `notes` last drawn, and whether with the corners to
    /// resize them by.
    pub notes_drawn: StoredValue<(Option<serde_json::Value>, bool)>,
    /// What handles gestures and keys on notes, once their part is here
    /// and they can be edited.
    pub note_handlers: StoredValue<Option<super::note_layer::NoteHandlers>>,
    /// The note open for writing, if any.
    pub editing_note: RwSignal<Option<String>>,
    /// Whether modules snap to the grid as they are dragged, moved by the
    /// keys or added: this browser's choice (`arrange::GRID`).
    pub snap: RwSignal<bool>,
    pub by_id: RwSignal<HashMap<Arc<str>, NodeHandle>>,
    pub viewport: RwSignal<Viewport>,
    /// The view that decides what is in the page. It follows `viewport`,
    /// except during a wheel zoom: then the drawn content is scaled as it is
    /// and only caught up once the zoom settles.
    pub drawn_view: RwSignal<Viewport>,
    /// The selected cable, if any.
    pub selected_edge: RwSignal<Option<Arc<str>>>,
    /// An output chosen in the output popup: the next input port clicked
    /// gets a cable from it.
    pub pending_from: RwSignal<Option<(String, String, PortType)>>,
    /// Where the pointer last was over the pane (client coordinates).
    pub pointer: StoredValue<Option<(f64, f64)>>,
    /// The pane's size in pixels, measured on mount and on resize.
    pub pane_size: RwSignal<(f64, f64)>,
    /// Now, in Unix milliseconds, ticking while a run is shown live.
    pub clock: RwSignal<f64>,
    /// Render only what is near the view (large graphs, once hydrated).
    pub virtualize: RwSignal<bool>,
    /// Ids of the modules being dragged: they and their cables are drawn on
    /// layers of their own while they move.
    pub dragging: RwSignal<Vec<Arc<str>>>,
    /// Bumped when modules have moved other than under the pointer (an edit,
    /// undo, the end of a drag). What is drawn near the view follows this,
    /// not every position: a module under the pointer moves every frame and
    /// is drawn anyway (it is selected), so the drawn set need not be
    /// worked out again per frame.
    pub layout: RwSignal<u64>,
    /// `drawn_region`, worked out once per change of the drawn view: what
    /// reads it is worked out again only when the region changes, not on
    /// every frame of a pan (going over every module and cable each frame
    /// took 14 ms at 5000 modules).
    region: Memo<(f64, f64, f64, f64)>,
    /// Where handles are created. A signal belongs to the reactive owner
    /// current when it is made; a module added from a dialog's button must
    /// not vanish when the dialog closes.
    owner: StoredValue<Owner>,
}

impl CanvasModel {
    pub fn new() -> CanvasModel {
        let drawn_view = RwSignal::new(Viewport::default());
        let pane_size = RwSignal::new((1280.0, 800.0));
        CanvasModel {
            nodes: RwSignal::new(Vec::new()),
            edges: RwSignal::new(Vec::new()),
            notes: RwSignal::new(Vec::new()),
            notes_markup: RwSignal::new(String::new()),
            notes_layer: NodeRef::new(),
            notes_drawn: StoredValue::new((None, false)),
            note_handlers: StoredValue::new(None),
            editing_note: RwSignal::new(None),
            snap: RwSignal::new(false),
            by_id: RwSignal::new(HashMap::new()),
            viewport: RwSignal::new(Viewport::default()),
            drawn_view,
            selected_edge: RwSignal::new(None),
            pending_from: RwSignal::new(None),
            pointer: StoredValue::new(None),
            pane_size,
            region: Memo::new(move |_| region_around(drawn_view.get(), pane_size.get())),
            // Now, on the server too: a badge it draws (a poll's countdown,
            // a running module's time) reads as the browser's will.
            clock: RwSignal::new(crate::editor::state::now_ms()),
            virtualize: RwSignal::new(false),
            dragging: RwSignal::new(Vec::new()),
            layout: RwSignal::new(0),
            owner: StoredValue::new(Owner::current().unwrap_or_default()),
        }
    }

    pub fn node_handle(&self, id: &str, position: Position, look: NodeLook) -> NodeHandle {
        self.owner.with_value(|owner| {
            owner.with(|| NodeHandle {
                id: Arc::from(id),
                position: RwSignal::new(position),
                title: RwSignal::new(look.title),
                subtitle: RwSignal::new(look.subtitle),
                kind: RwSignal::new(look.kind),
                inputs: RwSignal::new(look.inputs),
                outputs: RwSignal::new(look.outputs),
                selected: RwSignal::new(false),
                flagged: RwSignal::new(false),
                note: RwSignal::new(look.note),
                run: RwSignal::new(None),
            })
        })
    }

    pub fn edge_handle(
        &self,
        id: &str,
        from: (String, String),
        to: (String, String),
    ) -> EdgeHandle {
        self.owner.with_value(|owner| {
            owner.with(|| EdgeHandle {
                id: Arc::from(id),
                from: RwSignal::new(from),
                to: RwSignal::new(to),
                selected: RwSignal::new(false),
                flagged: RwSignal::new(false),
                order: RwSignal::new(None),
                route: RwSignal::new(CableRoute::Open),
            })
        })
    }

    pub fn edge_from_cable(&self, cable: &Cable) -> EdgeHandle {
        self.edge_handle(
            &cable.id,
            (cable.from.module.clone(), cable.from.port.clone()),
            (cable.to.module.clone(), cable.to.port.clone()),
        )
    }

    /// Replaces everything with these nodes and edges.
    pub fn load(&self, nodes: Vec<NodeHandle>, edges: Vec<EdgeHandle>) {
        let by_id: HashMap<Arc<str>, NodeHandle> = nodes
            .iter()
            .map(|node| (Arc::clone(&node.id), node.clone()))
            .collect();
        self.by_id.set(by_id);
        self.nodes.set(nodes);
        self.edges.set(edges);
        self.selected_edge.set(None);
    }

    /// Replaces everything with a graph's modules and cables.
    pub fn load_graph(&self, graph: &Graph) {
        let nodes = graph
            .modules
            .iter()
            .map(|module| self.node_handle(&module.id, module.position, module_look(module)))
            .collect();
        let edges = graph
            .cables
            .iter()
            .map(|cable| self.edge_from_cable(cable))
            .collect();
        self.load(nodes, edges);
        // In the browser the page as the server drew it shows them until
        // they change or can be edited (`note_layer`).
        let notes = graph.extra.get("notes").cloned();
        #[cfg(feature = "hydrate")]
        self.notes_drawn.set_value((notes, false));
        #[cfg(not(feature = "hydrate"))]
        super::note_layer::draw(*self, notes, false);
    }

    /// Brings the notes in line with `graph`.
    pub fn refresh_notes(&self, graph: &Graph) {
        let notes = graph.extra.get("notes");
        if self
            .notes_drawn
            .with_value(|(drawn, _)| drawn.as_ref() == notes)
        {
            return;
        }
        let editable = self.notes_drawn.with_value(|(_, editable)| *editable);
        super::note_layer::draw(*self, notes.cloned(), editable);
    }

    /// After notes were read: the one being written in is still there.
    pub fn notes_read(&self) {
        if let Some(editing) = self.editing_note.get_untracked()
            && self
                .notes
                .with_untracked(|notes| !notes.iter().any(|note| note.id == editing))
        {
            self.editing_note.set(None);
        }
    }

    pub fn node(&self, id: &str) -> Option<NodeHandle> {
        self.by_id.with_untracked(|nodes| nodes.get(id).cloned())
    }

    /// Brings the canvas in line with `graph` for the modules and cables
    /// named (an edit, undo or redo touched them).
    pub fn refresh<'a>(
        &self,
        graph: &Graph,
        modules: impl IntoIterator<Item = &'a str>,
        cables: impl IntoIterator<Item = &'a str>,
    ) {
        let mut added_or_removed = false;
        let mut moved = false;
        for id in modules {
            match (graph.module(id), self.node(id)) {
                (Some(module), Some(handle)) => {
                    let look = module_look(module);
                    moved |= handle.position.with_untracked(|at| *at != module.position);
                    set_if_changed(handle.position, module.position);
                    set_if_changed(handle.title, look.title);
                    set_if_changed(handle.subtitle, look.subtitle);
                    set_if_changed(handle.kind, look.kind);
                    set_if_changed(handle.note, look.note);
                    set_if_changed(handle.inputs, look.inputs);
                    set_if_changed(handle.outputs, look.outputs);
                }
                (Some(module), None) => {
                    let handle = self.node_handle(&module.id, module.position, module_look(module));
                    self.by_id.update(|nodes| {
                        nodes.insert(Arc::clone(&handle.id), handle.clone());
                    });
                    self.nodes.update(|nodes| nodes.push(handle));
                    added_or_removed = true;
                }
                (None, Some(_)) => {
                    self.by_id.update(|nodes| {
                        nodes.remove(id);
                    });
                    self.nodes
                        .update(|nodes| nodes.retain(|node| &*node.id != id));
                    added_or_removed = true;
                }
                (None, None) => {}
            }
        }
        if added_or_removed {
            // Keep the drawing order the document's order.
            let order: HashMap<&str, usize> = graph
                .modules
                .iter()
                .enumerate()
                .map(|(index, module)| (module.id.as_str(), index))
                .collect();
            self.nodes.update(|nodes| {
                graph::order::by_rank(nodes, |node| {
                    order.get(&*node.id).copied().unwrap_or(usize::MAX)
                })
            });
        }
        if moved {
            self.layout.update(|version| *version += 1);
        }
        for id in cables {
            let existing = self
                .edges
                .with_untracked(|edges| edges.iter().find(|edge| &*edge.id == id).cloned());
            match (graph.cables.iter().find(|cable| cable.id == id), existing) {
                (Some(cable), Some(handle)) => {
                    set_if_changed(
                        handle.from,
                        (cable.from.module.clone(), cable.from.port.clone()),
                    );
                    set_if_changed(handle.to, (cable.to.module.clone(), cable.to.port.clone()));
                }
                (Some(cable), None) => {
                    let handle = self.edge_from_cable(cable);
                    self.edges.update(|edges| edges.push(handle));
                }
                (None, Some(_)) => {
                    self.edges
                        .update(|edges| edges.retain(|edge| &*edge.id != id));
                    if self.selected_edge.get_untracked().as_deref() == Some(id) {
                        self.selected_edge.set(None);
                    }
                }
                (None, None) => {}
            }
        }
    }

    /// Ids of the selected modules, in drawing order.
    pub fn selected_ids(&self) -> Vec<String> {
        self.nodes.with_untracked(|nodes| {
            nodes
                .iter()
                .filter(|node| node.selected.get_untracked())
                .map(|node| node.id.to_string())
                .collect()
        })
    }

    pub fn select_only(&self, ids: &[&str]) {
        self.nodes.with_untracked(|nodes| {
            for node in nodes {
                set_if_changed(node.selected, ids.contains(&&*node.id));
            }
        });
        self.select_edge(None);
    }

    pub fn select_edge(&self, id: Option<&str>) {
        let previous = self.selected_edge.get_untracked();
        if previous.as_deref() == id {
            return;
        }
        self.edges.with_untracked(|edges| {
            for edge in edges {
                if previous.as_deref() == Some(&*edge.id) {
                    edge.selected.set(false);
                }
                if id == Some(&*edge.id) {
                    edge.selected.set(true);
                }
            }
        });
        self.selected_edge.set(id.map(Arc::from));
    }

    /// The bounds of every module, in graph units: (left, top, right, bottom).
    pub fn bounds(&self) -> Option<(f64, f64, f64, f64)> {
        self.nodes.with_untracked(|nodes| {
            nodes.iter().fold(None, |bounds, node| {
                let position = node.position.get_untracked();
                let height = super::geometry::module_height(
                    node.inputs.with_untracked(Vec::len),
                    node.outputs.with_untracked(Vec::len),
                );
                let (right, bottom) = (
                    position.x + untrack(|| node.outer_width()),
                    position.y + height,
                );
                Some(match bounds {
                    None => (position.x, position.y, right, bottom),
                    Some((left, top, old_right, old_bottom)) => (
                        f64::min(left, position.x),
                        f64::min(top, position.y),
                        f64::max(old_right, right),
                        f64::max(old_bottom, bottom),
                    ),
                })
            })
        })
    }
}

/// Graphs with at least this many modules are drawn near the view only.
pub const VIRTUALIZE_FROM: usize = 300;

/// How far beyond the view (in graph units) modules are still drawn, so a
/// pan shows drawn content before anything needs mounting.
const MARGIN: f64 = 400.0;

impl CanvasModel {
    /// The region drawn, in graph units (`region_around` the drawn view).
    pub fn drawn_region(&self) -> (f64, f64, f64, f64) {
        self.region.get()
    }

    fn virtualizing(&self) -> bool {
        self.virtualize.get() && self.nodes.with(|nodes| nodes.len() >= VIRTUALIZE_FROM)
    }

    /// The modules to put in the page: all of them for small graphs, those
    /// near the view (and the selected ones) for large ones.
    pub fn drawn_nodes(&self) -> Vec<NodeHandle> {
        if !self.virtualizing() {
            return self.nodes.get();
        }
        let (left, top, right, bottom) = self.drawn_region();
        self.layout.track();
        self.nodes.with(|nodes| {
            nodes
                .iter()
                .filter(|node| {
                    let at = node.position.get_untracked();
                    node.selected.get()
                        || (at.x < right
                            && at.x + super::geometry::MAX_OUTER_WIDTH > left
                            && at.y < bottom
                            && at.y + 400.0 > top)
                })
                .cloned()
                .collect()
        })
    }

    /// Whether a cable is attached to a module being dragged.
    pub fn moving(&self, edge: &EdgeHandle) -> bool {
        self.dragging.with(|dragging| {
            !dragging.is_empty()
                && (edge
                    .from
                    .with_untracked(|from| dragging.iter().any(|id| **id == *from.0))
                    || edge
                        .to
                        .with_untracked(|to| dragging.iter().any(|id| **id == *to.0)))
        })
    }

    /// The cables attached to dragged modules, drawn on their own layer.
    pub fn moving_edges(&self) -> Vec<EdgeHandle> {
        if self.dragging.with(Vec::is_empty) {
            return Vec::new();
        }
        self.edges.with(|edges| {
            edges
                .iter()
                .filter(|edge| self.moving(edge))
                .cloned()
                .collect()
        })
    }

    /// The cables near the view: those whose span meets the drawn region
    /// (all of them for small graphs). Dragging does not change it.
    pub fn region_edges(&self) -> Vec<EdgeHandle> {
        if !self.virtualizing() {
            return self.edges.get();
        }
        let (left, top, right, bottom) = self.drawn_region();
        self.layout.track();
        let nodes = self.by_id.read();
        self.edges.with(|edges| {
            edges
                .iter()
                .filter(|edge| {
                    let ends = edge
                        .from
                        .with(|from| {
                            nodes
                                .get(from.0.as_str())
                                .map(|node| node.position.get_untracked())
                        })
                        .zip(edge.to.with(|to| {
                            nodes
                                .get(to.0.as_str())
                                .map(|node| node.position.get_untracked())
                        }));
                    match ends {
                        Some((a, b)) => {
                            a.x.min(b.x) < right
                                && a.x.max(b.x) + super::geometry::MAX_OUTER_WIDTH > left
                                && a.y.min(b.y) < bottom
                                && a.y.max(b.y) + 400.0 > top
                        }
                        None => true,
                    }
                })
                .cloned()
                .collect()
        })
    }
}

/// The region drawn for `view` on a pane of `size`, in graph units: the
/// view and a margin around it, widened to a coarse grid so that the set of
/// drawn modules changes seldom, in batches, rather than a few modules on
/// every frame of a pan.
fn region_around(view: Viewport, (width, height): (f64, f64)) -> (f64, f64, f64, f64) {
    const GRID: f64 = 512.0;
    let top_left = view.to_graph(0.0, 0.0);
    let bottom_right = view.to_graph(width, height);
    (
        ((top_left.x - MARGIN) / GRID).floor() * GRID,
        ((top_left.y - MARGIN) / GRID).floor() * GRID,
        ((bottom_right.x + MARGIN) / GRID).ceil() * GRID,
        ((bottom_right.y + MARGIN) / GRID).ceil() * GRID,
    )
}

impl Default for CanvasModel {
    fn default() -> CanvasModel {
        CanvasModel::new()
    }
}

/// Sets a signal only when the value differs, so nothing redraws for nothing.
pub fn set_if_changed<T: PartialEq + Send + Sync + 'static>(signal: RwSignal<T>, value: T) {
    // A timer or frame callback may come after the canvas is gone: then
    // there is nothing to set (reading a disposed signal would panic).
    if signal.try_with_untracked(|current| current != &value) == Some(true) {
        signal.set(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(nodes: &[NodeHandle]) -> Vec<String> {
        nodes.iter().map(|node| node.id.to_string()).collect()
    }

    #[test]
    fn a_large_graph_draws_what_the_drawn_view_shows_and_follows_moves_by_layout() {
        // Signals live in an owner's arena (the server build requires one).
        Owner::new().with(large_graph_drawing);
    }

    fn large_graph_drawing() {
        let model = CanvasModel::new();
        let (nodes, edges) = crate::bench::contract_model(&model, 1000);
        model.load(nodes, edges);
        model.virtualize.set(true);
        // As the canvas uses them: memos, worked out again when what they
        // read changes.
        let drawn = Memo::new(move |_| ids(&model.drawn_nodes()));
        let cables = Memo::new(move |_| model.region_edges().len());
        let near = drawn.get();
        assert!(near.len() < 200, "{} drawn", near.len());
        let near_cables = cables.get();
        assert!(near_cables < 1499, "{near_cables} cables drawn");

        // A wheel zoom moves the viewport only: nothing new is drawn yet.
        model
            .viewport
            .set(model.viewport.get_untracked().zoomed_at(0.25, 0.0, 0.0));
        assert_eq!(drawn.get(), near);
        // Once it settles, the drawn view follows and more comes in.
        model.drawn_view.set(model.viewport.get_untracked());
        assert!(drawn.get().len() > near.len());
        assert!(cables.get() > near_cables);
        model.drawn_view.set(Viewport::default());
        assert_eq!(drawn.get(), near);

        // A pan of a few pixels stays in the drawn region: the modules and
        // cables near the view are not gone over again (at 5000 modules that
        // was 14 ms on every frame of a pan).
        let workings = StoredValue::new(0);
        let counted = Memo::new(move |_| {
            workings.update_value(|count| *count += 1);
            (model.drawn_nodes().len(), model.region_edges().len())
        });
        counted.get();
        for step in 1..=4 {
            model.drawn_view.set(Viewport {
                x: -5.0 * f64::from(step),
                ..Viewport::default()
            });
            counted.get();
        }
        assert_eq!(workings.get_value(), 1);
        // Far enough, it changes, and they are.
        model.drawn_view.set(Viewport {
            x: -2000.0,
            ..Viewport::default()
        });
        counted.get();
        assert_eq!(workings.get_value(), 2);
        model.drawn_view.set(Viewport::default());
        assert_eq!(drawn.get(), near);

        // A module under the pointer moves without the drawn set being
        // worked out again; the layout version says when to.
        let module = model.node("0").unwrap();
        module.position.set(Position {
            x: 50_000.0,
            y: 50_000.0,
        });
        assert_eq!(drawn.get(), near);
        model.layout.update(|version| *version += 1);
        assert!(!drawn.get().contains(&"0".to_owned()));
        // Selected modules are drawn wherever they are.
        module.selected.set(true);
        assert!(drawn.get().contains(&"0".to_owned()));
    }

    #[test]
    fn setting_a_signal_of_a_canvas_that_is_gone_does_nothing() {
        // A wheel's settle timer or a frame callback may fire after the
        // canvas is dropped; in the browser bundle a panic would stop the app.
        let owner = Owner::new();
        let signal = owner.with(|| RwSignal::new(1.0_f64));
        set_if_changed(signal, 2.0);
        assert_eq!(signal.get_untracked(), 2.0);
        owner.cleanup();
        set_if_changed(signal, 3.0);
        assert_eq!(signal.try_get_untracked(), None);
    }

    #[test]
    fn zooming_keeps_the_point_under_the_pointer_still() {
        let view = Viewport {
            x: 40.0,
            y: -20.0,
            zoom: 1.0,
        };
        let before = view.to_graph(300.0, 200.0);
        let zoomed = view.zoomed_at(0.5, 300.0, 200.0);
        let after = zoomed.to_graph(300.0, 200.0);
        assert!((before.x - after.x).abs() < 1e-9 && (before.y - after.y).abs() < 1e-9);
        assert_eq!(zoomed.zoom, 0.5);
        assert_eq!(view.zoomed_at(100.0, 0.0, 0.0).zoom, MAX_ZOOM);
    }

    #[test]
    fn run_badges_say_what_a_module_is_doing() {
        let running = ModuleRun {
            state: ModuleRunState::Running,
            badge: Some("Re-prompt 2/3…".to_owned()),
            started_ms: Some(1_000.0),
            tokens: 120,
            ..ModuleRun::default()
        };
        assert_eq!(
            running.badge_text(4_250.0),
            "● Re-prompt 2/3… · 3.2 s · 120 tok"
        );
        let done = ModuleRun {
            state: ModuleRunState::Done,
            finished_ms: Some(13_000.0),
            badge: None,
            ..running.clone()
        };
        assert_eq!(done.badge_text(99_999.0), "✓ 12 s · 120 tok");
        // What it cost: a price, none configured, or nothing at all.
        let costing = |known: f64, priced: u32, unpriced: u32| {
            ModuleRun {
                cost: wire::cost::CostTotal {
                    known,
                    priced,
                    unpriced,
                },
                ..done.clone()
            }
            .badge_text(0.0)
        };
        assert_eq!(costing(0.0123, 2, 0), "✓ 12 s · 120 tok · $0.0123");
        assert_eq!(costing(0.0, 0, 1), "✓ 12 s · 120 tok · no price");
        assert_eq!(costing(0.0, 3, 0), "✓ 12 s · 120 tok · free");
        assert_eq!(ModuleRun::default().badge_text(0.0), "not reached");
    }

    #[test]
    fn an_agent_task_shows_its_re_prompt_count() {
        let graph = graph::starter::starter_graph();
        let look = module_look(graph.module("m2").unwrap());
        assert_eq!(look.note, "↻ 2");
        assert_eq!(look.subtitle, "Agent task");
        assert!(look.inputs.iter().any(|port| port.id == "data_in"));
        // Its checks and a join of any are noted too.
        let checks = graph::starter::example("build-until-the-checks-pass").unwrap();
        assert_eq!(
            module_look(checks.graph.module("build").unwrap()).note,
            "2 checks"
        );
        let mut joined = graph.module("m3").unwrap().clone();
        if let Some(join) = joined.config.join_slot() {
            *join = graph::join::Join::Any;
        }
        assert_eq!(module_look(&joined).note, "⋁ any");
    }
}
