//! Runs seen from the canvas: start one, follow its events over SSE
//! (`EventSource` reconnects with `Last-Event-ID` by itself; a reload
//! resumes from the run id in the address), and show every module's state —
//! queued, running with its `Re-prompt i/N…` badge, done, failed,
//! cancelled — with elapsed time and tokens.

pub mod module_state;
pub mod reading;

use std::collections::BTreeMap;
use std::time::Duration;

use graph::Graph;
use leptos::prelude::*;
use wire::{ActivationRecord, ActivationStatus, EventRecord, RunEvent, RunRecord, RunStatus};

use crate::canvas::model::{CableRoute, CanvasModel, ModuleRun, ModuleRunState, set_if_changed};

/// What this browser may do with the run shown, from the tokens it holds
/// (known after hydration).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunAccess {
    /// Not known yet (before hydration): nothing to decide with is shown.
    #[default]
    Unknown,
    /// See it (anyone with its link).
    View,
    /// An approver link of the run: decide its approvals, nothing else.
    Approve,
    /// The graph's edit token: decide, make approver links, cancel.
    Edit,
}

/// The run the canvas shows.
#[derive(Clone, Copy)]
pub struct RunView {
    pub run_id: RwSignal<Option<String>>,
    pub status: RwSignal<Option<RunStatus>>,
    pub error: RwSignal<Option<String>>,
    pub record: RwSignal<Option<RunRecord>>,
    /// The event stream dropped while the run is live; the browser is
    /// trying again (a server restarting, a network cut).
    pub reconnecting: RwSignal<bool>,
    /// The run was taken up again after the server running it stopped:
    /// how many finished activations it kept.
    pub resumed: RwSignal<Option<u32>>,
    /// Streamed text by (module, response index), while it streams.
    pub streams: RwSignal<BTreeMap<(String, u32), String>>,
    pub panel_open: RwSignal<bool>,
    pub access: RwSignal<RunAccess>,
    /// The panel lists the graph's runs instead of the run.
    pub history: RwSignal<bool>,
    /// The module the run panel shows.
    pub focus: RwSignal<Option<String>>,
    /// The person chose the module to show; until then the panel shows
    /// the module that runs.
    focus_chosen: StoredValue<bool>,
    /// The graph the run runs (the coding badges read re-prompt counts).
    graph: StoredValue<Option<Graph>>,
    /// The last event applied: a stream opened again replays from the
    /// start, and what was applied already is skipped.
    last_seen: StoredValue<u64>,
    source: StoredValue<Option<send_wrapper::SendWrapper<Subscription>>>,
    refresh_timer: StoredValue<Option<crate::browser::Timer>>,
    ticker: StoredValue<Option<crate::browser::Repeat>>,
}

/// An open event stream and the callbacks it calls.
struct Subscription {
    source: web_sys::EventSource,
    _callbacks: Vec<wasm_bindgen::closure::Closure<dyn FnMut(web_sys::MessageEvent)>>,
    _on_error: wasm_bindgen::closure::Closure<dyn FnMut(web_sys::Event)>,
    _on_open: wasm_bindgen::closure::Closure<dyn FnMut(web_sys::Event)>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.source.close();
    }
}

impl RunView {
    pub fn new() -> RunView {
        RunView {
            run_id: RwSignal::new(None),
            status: RwSignal::new(None),
            error: RwSignal::new(None),
            record: RwSignal::new(None),
            reconnecting: RwSignal::new(false),
            resumed: RwSignal::new(None),
            streams: RwSignal::new(BTreeMap::new()),
            panel_open: RwSignal::new(false),
            access: RwSignal::new(RunAccess::Unknown),
            history: RwSignal::new(false),
            focus: RwSignal::new(None),
            focus_chosen: StoredValue::new(false),
            graph: StoredValue::new(None),
            last_seen: StoredValue::new(0),
            source: StoredValue::new(None),
            refresh_timer: StoredValue::new(None),
            ticker: StoredValue::new(None),
        }
    }

    /// (False once the view is gone: timers and the stream may outlive it.)
    pub fn is_live(&self) -> bool {
        self.status
            .try_with(|status| status.is_some_and(RunStatus::is_live))
            .unwrap_or(false)
    }

    fn stop_following(&self) {
        self.source.set_value(None);
        if let Some(ticker) = self.ticker.try_update_value(Option::take).flatten() {
            ticker.clear();
        }
    }

    /// Shows a run: its record now, and its events as they come (or all of
    /// them again, for a finished run, which then closes).
    pub fn follow(&self, model: CanvasModel, graph: Graph, run_id: &str) {
        self.stop_following();
        self.graph.set_value(Some(graph));
        self.last_seen.set_value(0);
        self.focus_chosen.set_value(false);
        self.run_id.set(Some(run_id.to_owned()));
        self.status.set(Some(RunStatus::Queued));
        self.error.set(None);
        self.record.set(None);
        self.reconnecting.set(false);
        self.resumed.set(None);
        self.streams.set(BTreeMap::new());
        self.panel_open.set(true);
        self.history.set(false);
        clear_states(model);
        remember_in_address(Some(run_id));
        self.subscribe(model);
        let ticker = crate::browser::every(
            move || model.clock.set(js_sys::Date::now()),
            Duration::from_millis(500),
        );
        self.ticker.set_value(ticker);
        self.refresh_soon(0);
    }

    /// Opens the event stream, whose code (reading the run's events and
    /// stepping each module's state) is a part of its own, fetched the
    /// first time a page follows a run: a view link of a graph no one runs
    /// never needs it.
    fn subscribe(&self, model: CanvasModel) {
        let Some(run_id) = self.run_id.get_untracked() else {
            return;
        };
        let view = *self;
        leptos::task::spawn_local(async move {
            if run_stream(view, StreamWork::Open { model, run_id })
                .await
                .is_err()
            {
                view.say_stream_missing();
            }
        });
    }

    /// Opens the event stream of `run_id`, if it is still the run shown.
    /// The browser reconnects by itself after a network drop, sending
    /// `Last-Event-ID`; if it gives up (the server was away too long), this
    /// opens it again after a pause, and the events seen already are
    /// skipped.
    fn open_stream(&self, model: CanvasModel, run_id: String) {
        // Another run was shown, or none, while the part was fetched.
        if self.run_id.get_untracked().as_deref() != Some(run_id.as_str()) {
            return;
        }
        let Ok(source) = web_sys::EventSource::new(&crate::api::events_address(&run_id)) else {
            self.error.set(Some(
                "The browser could not open the run's event stream.".to_owned(),
            ));
            return;
        };
        let view = *self;
        let mut callbacks = Vec::new();
        // `EventSource` delivers named events only to listeners for that name.
        for name in RunEvent::names() {
            let callback = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                move |message: web_sys::MessageEvent| {
                    let seq: u64 = message.last_event_id().parse().unwrap_or(0);
                    if seq != 0 && seq <= view.last_seen.get_value() {
                        return;
                    }
                    view.last_seen.set_value(seq);
                    set_if_changed(view.reconnecting, false);
                    let data = message.data().as_string().unwrap_or_default();
                    // An event this page cannot read is skipped; the record
                    // read at the end shows the run as it is.
                    if let Ok(record) = EventRecord::from_sse(seq, name, &data) {
                        view.apply(model, &record);
                    }
                },
            );
            let _ = source.add_event_listener_with_callback(
                name,
                wasm_bindgen::JsCast::unchecked_ref(callback.as_ref()),
            );
            callbacks.push(callback);
        }
        let watched = source.clone();
        let on_error = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new(
            move |_event: web_sys::Event| {
                if view.is_live() {
                    set_if_changed(view.reconnecting, true);
                }
                // CLOSED: the browser stopped retrying.
                if watched.ready_state() == 2 && view.is_live() {
                    crate::browser::run_after(
                        move || {
                            if view.is_live() {
                                view.subscribe(model);
                            }
                        },
                        Duration::from_secs(3),
                    );
                }
            },
        );
        source.set_onerror(Some(wasm_bindgen::JsCast::unchecked_ref(on_error.as_ref())));
        let on_open = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new(
            move |_event: web_sys::Event| set_if_changed(view.reconnecting, false),
        );
        source.set_onopen(Some(wasm_bindgen::JsCast::unchecked_ref(on_open.as_ref())));
        self.source
            .set_value(Some(send_wrapper::SendWrapper::new(Subscription {
                source,
                _callbacks: callbacks,
                _on_error: on_error,
                _on_open: on_open,
            })));
    }

    /// Shows a finished run's end state from its record alone.
    pub fn show_record(&self, model: CanvasModel, record: RunRecord) {
        self.stop_following();
        self.graph.set_value(Some(record.graph.clone()));
        self.streams.set(BTreeMap::new());
        self.history.set(false);
        // An approval waiting for a person is what the page is opened for.
        let waiting = record
            .graph
            .modules
            .iter()
            .find(|module| {
                record
                    .last(&module.id)
                    .is_some_and(ActivationRecord::waits_for_a_person)
            })
            .map(|module| module.id.clone());
        if waiting.is_some() {
            self.focus.set(waiting);
        } else if self
            .focus
            .get_untracked()
            .is_none_or(|focus| record.last(&focus).is_none())
        {
            // The last module that produced something: usually the result.
            let last = record
                .graph
                .modules
                .iter()
                .filter(|module| {
                    record.last(&module.id).is_some_and(|activation| {
                        reading::merged(activation, &|id| record.label_of(id)).is_some()
                    })
                })
                .max_by_key(|module| {
                    record
                        .last(&module.id)
                        .map(|activation| activation.started_at)
                })
                .map(|module| module.id.clone());
            self.focus.set(last);
        }
        self.run_id.set(Some(record.id.clone()));
        self.status.set(Some(record.status));
        self.error.set(record.error.clone());
        apply_record(model, &record);
        self.record.set(Some(record));
        self.panel_open.set(true);
    }

    /// Reads the run's record again in a moment (several events in a row
    /// make one request).
    fn refresh_soon(&self, after_ms: u64) {
        let view = *self;
        crate::browser::restart_timeout(
            self.refresh_timer,
            Duration::from_millis(after_ms),
            move || view.refresh(),
        );
    }

    /// Reads the run's record again now (a decision was taken).
    pub fn reload(&self) {
        self.refresh_soon(0);
    }

    /// Puts an activation the server answered with (a decision taken here)
    /// in the record at once, before the event stream says so.
    pub fn keep_activation(&self, activation: wire::ActivationRecord) {
        let _ = self.record.try_update(|record| {
            let kept = record
                .as_mut()
                .and_then(|record| record.modules.get_mut(&activation.module_id))
                .and_then(|module| {
                    module
                        .activations
                        .iter_mut()
                        .find(|kept| kept.activation == activation.activation)
                });
            if let Some(kept) = kept {
                *kept = activation;
            }
        });
        self.refresh_soon(150);
    }

    /// The graph the run belongs to, if it is stored.
    pub fn graph_id(&self) -> Option<String> {
        self.record
            .with_untracked(|record| record.as_ref().and_then(|record| record.graph_id.clone()))
            .or_else(|| {
                self.graph
                    .with_value(|graph| graph.as_ref().and_then(|graph| graph.id.clone()))
            })
            .filter(|id| !id.is_empty())
    }

    /// Shows the run in the address: followed live if it is still going,
    /// its end state if it is over. `notify` tells the person what went
    /// wrong.
    pub fn resume(&self, model: CanvasModel, run_id: String, notify: Callback<String>) {
        let view = *self;
        leptos::task::spawn_local(async move {
            let work = StreamWork::Show {
                model,
                run_id,
                notify,
            };
            if run_stream(view, work).await.is_err() {
                notify.run(format!(
                    "The run in the address cannot be shown. {}",
                    crate::routes::PART_MISSING
                ));
            }
        });
    }

    fn show_run(&self, model: CanvasModel, run_id: String, notify: Callback<String>) {
        let view = *self;
        leptos::task::spawn_local(async move {
            match crate::api::run(&run_id).await {
                Ok(record) if record.is_finished() => view.show_record(model, record),
                Ok(record) => view.follow(model, record.graph, &run_id),
                Err(crate::api::ApiError::Unreadable(error)) => {
                    notify.run(format!("The run could not be read: {error}"))
                }
                Err(missing) if missing.status() == Some(404) => {
                    notify.run("The run in the address does not exist.".to_owned())
                }
                Err(_) => notify.run("The run in the address could not be loaded.".to_owned()),
            }
        });
    }

    /// Reads the run's record, with code in the stream's part: a page
    /// that never shows a run never reads one.
    fn refresh(&self) {
        let view = *self;
        leptos::task::spawn_local(async move {
            if run_stream(view, StreamWork::ReadRecord).await.is_err() {
                view.say_stream_missing();
            }
        });
    }

    /// The stream's part could not be fetched: neither the events nor the
    /// record can be read, which the run panel says (once, whichever
    /// noticed first).
    fn say_stream_missing(&self) {
        let _ = self.error.try_set(Some(format!(
            "The run's progress cannot be shown as it happens. {}",
            crate::routes::PART_MISSING
        )));
    }

    fn read_record(&self) {
        let Some(run_id) = self.run_id.try_get_untracked().flatten() else {
            return;
        };
        let view = *self;
        leptos::task::spawn_local(async move {
            if let Ok(record) = crate::api::run(&run_id).await
                && view.run_id.try_get_untracked().flatten().as_deref() == Some(record.id.as_str())
            {
                // Waiting for a person and going on again have no event of
                // their own: the record says which. A run that ended stays
                // ended (an older answer may still arrive).
                if view.is_live() && record.status.is_live() {
                    set_if_changed(view.status, Some(record.status));
                }
                view.record.set(Some(record));
            }
        });
    }

    /// One event: each module's state steps (`module_state::step`), and
    /// the view follows — streamed text, the module shown, the run's status.
    fn apply(&self, model: CanvasModel, record: &EventRecord) {
        let event = &record.event;
        self.graph.with_value(|graph| {
            model.nodes.with_untracked(|nodes| {
                for node in nodes {
                    if event.module_id().is_some_and(|about| about != &*node.id) {
                        continue;
                    }
                    let before = node.run.get_untracked();
                    let after =
                        module_state::step(&node.id, before.as_ref(), record, graph.as_ref());
                    set_if_changed(node.run, after);
                }
            });
        });
        match event {
            RunEvent::RunStarted { .. } => {
                self.status.set(Some(RunStatus::Running));
                clear_routes(model);
            }
            // Taken up again by a server after the one running it stopped:
            // the run goes on, and what was in flight starts again.
            RunEvent::RunResumed { replayed, .. } => {
                self.status.set(Some(RunStatus::Running));
                self.resumed.set(Some(*replayed));
            }
            RunEvent::CableTaken {
                module_id,
                port,
                cable_id,
                ..
            } => show_route(model, module_id, port, Some(cable_id)),
            RunEvent::CableNoneTaken {
                module_id, port, ..
            } => show_route(model, module_id, port, None),
            RunEvent::ModuleActivated { module_id, .. } => {
                self.streams
                    .update(|streams| streams.retain(|(id, _), _| id != module_id));
                if !self.focus_chosen.get_value() {
                    self.focus.set(Some(module_id.clone()));
                }
            }
            RunEvent::ModuleOutputDelta {
                module_id,
                response_index,
                text,
            } => {
                self.streams.update(|streams| {
                    streams
                        .entry((module_id.clone(), *response_index))
                        .or_default()
                        .push_str(text)
                });
            }
            // A person is asked: the panel shows the question, unless
            // they chose another module to look at.
            RunEvent::ModuleWaiting { module_id, .. } => {
                if !self.focus_chosen.get_value() {
                    self.focus.set(Some(module_id.clone()));
                }
                self.refresh_soon(150);
            }
            RunEvent::ModuleCompleted { .. }
            | RunEvent::ModuleToolCall { .. }
            | RunEvent::ModuleToolResult { .. }
            | RunEvent::ModuleReused { .. }
            | RunEvent::ModuleFailed { .. }
            | RunEvent::ModuleRetrying { .. }
            | RunEvent::ModuleGaveUp { .. }
            | RunEvent::ModuleDecided { .. }
            | RunEvent::CableIgnored { .. } => {
                self.refresh_soon(150);
            }
            RunEvent::RunCompleted { status }
            | RunEvent::RunFailed { status, .. }
            | RunEvent::RunCancelled { status }
            | RunEvent::RunInterrupted { status, .. } => {
                self.error.set(match event {
                    RunEvent::RunFailed { error, .. } | RunEvent::RunInterrupted { error, .. } => {
                        Some(error.clone())
                    }
                    _ => None,
                });
                self.status.set(Some(*status));
                self.reconnecting.set(false);
                // Not from inside the stream's own callback: closing it
                // frees that callback.
                let view = *self;
                let run_id = self.run_id.get_untracked();
                crate::browser::run_after(
                    move || {
                        if view.run_id.try_get_untracked().flatten() == run_id {
                            view.stop_following();
                        }
                    },
                    Duration::ZERO,
                );
                self.refresh_soon(0);
            }
            RunEvent::ModuleQueued { .. }
            | RunEvent::RepromptDispatched { .. }
            | RunEvent::ModuleUsage { .. }
            | RunEvent::VariantStarted { .. }
            | RunEvent::VariantFinished { .. }
            | RunEvent::RepromptResponse { .. }
            | RunEvent::CodingRepromptDispatched { .. }
            | RunEvent::CodingRepromptResponse { .. }
            | RunEvent::CodingAgentStarted { .. }
            | RunEvent::CodingAgentFinished { .. }
            | RunEvent::ModuleIntent { .. }
            | RunEvent::ModulePolled { .. }
            | RunEvent::ModuleValidating { .. }
            | RunEvent::ModuleValidated { .. }
            | RunEvent::ModuleFixDispatched { .. } => {}
        }
    }

    /// Shows this module in the panel, and keeps it there.
    pub fn choose(&self, module: String) {
        self.focus_chosen.set_value(true);
        self.focus.set(Some(module));
    }

    /// Asks the server to stop the run; only the graph's editor may. Says
    /// why when the server did not take it (the caller tells the person).
    pub async fn cancel(self, graph_id: String) -> Result<(), String> {
        let Some(run_id) = self.run_id.get_untracked() else {
            return Ok(());
        };
        match crate::api::cancel_run(&graph_id, &run_id).await {
            Ok(()) => Ok(()),
            Err(crate::api::ApiError::Unreachable(message)) => Err(format!(
                "The run could not be cancelled ({message}); try again."
            )),
            Err(refused) => Err(format!(
                "The run could not be cancelled: {}.",
                refused.message_or("the server refused")
            )),
        }
    }

    /// Forgets the run shown (the canvas goes back to plain editing).
    pub fn close(&self, model: CanvasModel) {
        self.stop_following();
        self.run_id.set(None);
        self.status.set(None);
        self.record.set(None);
        self.reconnecting.set(false);
        self.resumed.set(None);
        self.panel_open.set(false);
        clear_states(model);
        remember_in_address(None);
    }
}

/// Starts fetching the run stream's part before a run is followed (the
/// pointer is on ▶ Run or Runs), so that a run's first events are shown as
/// they come.
#[cfg(feature = "hydrate")]
pub fn fetch_stream_ahead() {
    leptos::task::spawn_local(async {
        // A failure is the stream's to say, when it is opened.
        let _ = __preload_run_stream().await;
    });
}

/// What the run stream's part is asked to do.
enum StreamWork {
    /// Open the run's event stream (`RunView::open_stream`).
    Open { model: CanvasModel, run_id: String },
    /// Read the run's record again (`RunView::read_record`).
    ReadRecord,
    /// Show the run in the address (`RunView::show_run`).
    Show {
        model: CanvasModel,
        run_id: String,
        notify: Callback<String>,
    },
}

/// The run's event stream and what reads it, and the reading of a run's
/// record.
#[lazy(fallible)]
fn run_stream(view: RunView, work: StreamWork) -> Result<(), crate::routes::PartMissing> {
    match work {
        StreamWork::Open { model, run_id } => view.open_stream(model, run_id),
        StreamWork::ReadRecord => view.read_record(),
        StreamWork::Show {
            model,
            run_id,
            notify,
        } => view.show_run(model, run_id, notify),
    }
    Ok(())
}

impl Default for RunView {
    fn default() -> RunView {
        RunView::new()
    }
}

fn clear_states(model: CanvasModel) {
    model.nodes.with_untracked(|nodes| {
        for node in nodes {
            set_if_changed(node.run, None);
        }
    });
    clear_routes(model);
}

fn clear_routes(model: CanvasModel) {
    model.edges.with_untracked(|edges| {
        for edge in edges {
            set_if_changed(edge.route, CableRoute::Open);
        }
    });
}

/// Each module's final state from a run record.
pub fn apply_record(model: CanvasModel, record: &RunRecord) {
    model.nodes.with_untracked(|nodes| {
        for node in nodes {
            let state = record
                .last(&node.id)
                .map(|activation| recorded_module(record, &node.id, activation));
            set_if_changed(node.run, state);
        }
    });
    clear_routes(model);
    for module in &record.graph.modules {
        if let Some(activation) = record.last(&module.id) {
            for route in &activation.routes {
                show_route(model, &module.id, &route.port, route.cable_id.as_deref());
            }
        }
    }
}

/// A module as its record shows it: the same state and badge its live view
/// came to from the events (issue 43: live and recorded agree).
fn recorded_module(record: &RunRecord, module: &str, activation: &ActivationRecord) -> ModuleRun {
    let (state, badge) = match activation.status {
        // An attempt that gave up says so, as its badge did live.
        _ if activation.gave_up.is_some() => (ModuleRunState::Failed, Some("gave up")),
        // An approval ends as it was decided, or by its timeout.
        ActivationStatus::Completed => {
            match activation.decision.as_ref().map(|decided| decided.decision) {
                Some(wire::approval::Decision::Reject) => {
                    (ModuleRunState::Rejected, Some("Rejected"))
                }
                Some(decision) => (
                    ModuleRunState::Done,
                    Some(module_state::decided_words(decision)),
                ),
                None if activation.waiting.is_some() => (ModuleRunState::TimedOut, None),
                None => (ModuleRunState::Done, None),
            }
        }
        ActivationStatus::Reused => (ModuleRunState::Reused, None),
        ActivationStatus::Failed => (ModuleRunState::Failed, None),
        ActivationStatus::Interrupted => (ModuleRunState::Cancelled, Some("interrupted")),
        ActivationStatus::Cancelled
            if activation.error.as_deref() == Some(wire::activation::NEVER_STARTED) =>
        {
            (ModuleRunState::Cancelled, Some("never started"))
        }
        // The run's budget stopped what was in flight.
        ActivationStatus::Cancelled
            if record
                .error
                .as_deref()
                .is_some_and(|error| error.starts_with(wire::cost::BUDGET_EXCEEDED)) =>
        {
            (ModuleRunState::Cancelled, Some("budget spent"))
        }
        ActivationStatus::Cancelled => (ModuleRunState::Cancelled, None),
        ActivationStatus::Running => (ModuleRunState::Running, None),
        // A poll between polls counts down to the next, as `module.polled`
        // says it live; an approval waits for a person.
        ActivationStatus::Waiting if activation.waiting.is_none() => {
            (ModuleRunState::Running, Some("Polling"))
        }
        ActivationStatus::Waiting => (ModuleRunState::Waiting, Some("Waiting for you")),
        ActivationStatus::Queued => (ModuleRunState::Queued, None),
    };
    ModuleRun {
        state,
        badge: badge.map(str::to_owned),
        started_ms: Some(activation.started_at as f64),
        finished_ms: activation.finished_at.map(|at| at as f64),
        // The module's every activation, as the live badge counts them;
        // the panel's receipt has each one's.
        tokens: record.modules.get(module).map_or(0, |module| {
            module
                .activations
                .iter()
                .map(ActivationRecord::tokens)
                .sum()
        }),
        // Counting those whose calls were answered, as the live badge counts
        // `module.usage` (one per answer): an attempt whose call failed
        // spent nothing.
        cost: record.module_cost(module),
        error: activation
            .gave_up
            .clone()
            .or_else(|| activation.error.clone()),
        waiting_until_ms: activation
            .next_poll_at
            .filter(|_| activation.status == ActivationStatus::Waiting)
            .map(|at| at as f64),
        decided: activation.decision.as_ref().map(|decided| decided.decision),
        ..ModuleRun::default()
    }
}

/// Keeps the run in the address (`?run=…`), so a reload follows it again.
pub fn remember_in_address(run_id: Option<&str>) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let path = window.location().pathname().unwrap_or_default();
    if path.contains("/runs/") {
        return;
    }
    let url = match run_id {
        Some(run_id) => format!("{path}?run={run_id}"),
        None => path,
    };
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}

/// The run id in the address, if any.
pub fn run_in_address() -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix("run="))
        .filter(|id| id.starts_with("r_"))
        .map(str::to_owned)
}

/// Lights the cable a port's value took (`None`: none took it) and dims the
/// port's other cables.
fn show_route(model: CanvasModel, module_id: &str, port: &str, taken: Option<&str>) {
    model.edges.with_untracked(|edges| {
        for edge in edges {
            let from_port = edge
                .from
                .with_untracked(|(module, from)| module == module_id && from == port);
            if from_port {
                let route = if taken == Some(&*edge.id) {
                    CableRoute::Taken
                } else {
                    CableRoute::Passed
                };
                set_if_changed(edge.route, route);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use graph::starter::starter_graph;
    use wire::status::{ActivationStatus, RunStatus};

    use super::recorded_module;
    use crate::canvas::model::ModuleRunState;

    /// The badge the record gives the starter's Draft (m2), changed by `change`.
    fn recorded(
        run_error: Option<&str>,
        change: impl Fn(&mut wire::ActivationRecord),
    ) -> (ModuleRunState, String, Option<f64>) {
        let graph = starter_graph();
        let mut record =
            crate::editor::fixtures::finished_run("r", &graph, |module, activation| {
                if module.id == "m2" {
                    change(activation);
                }
            });
        record.status = RunStatus::Failed;
        record.error = run_error.map(str::to_owned);
        let activation = record.last("m2").unwrap().clone();
        let module = recorded_module(&record, "m2", &activation);
        (
            module.state,
            module.badge_text(activation.started_at as f64),
            module.waiting_until_ms,
        )
    }

    #[test]
    fn a_record_shows_what_the_live_view_said_when_the_run_ended() {
        // Stopped by another module's failure, by the budget, and never
        // started for want of a slot: as `module_state::run_ended` says it.
        let cancelled = |activation: &mut wire::ActivationRecord| {
            activation.status = ActivationStatus::Cancelled;
        };
        let (state, badge, _) = recorded(Some("“Review” failed"), cancelled);
        assert_eq!(
            (state, badge.as_str()),
            (ModuleRunState::Cancelled, "■ cancelled")
        );
        let budget = format!(
            "{}: the run's budget of $0.01 is spent",
            wire::cost::BUDGET_EXCEEDED
        );
        let (_, badge, _) = recorded(Some(&budget), cancelled);
        assert_eq!(badge, "■ budget spent");
        let (_, badge, _) = recorded(None, |activation| {
            activation.status = ActivationStatus::Cancelled;
            activation.error = Some(wire::activation::NEVER_STARTED.to_owned());
        });
        assert_eq!(badge, "■ never started");
    }

    #[test]
    fn a_poll_between_polls_counts_down_from_its_record_as_it_does_live() {
        let (state, badge, until) = recorded(None, |activation| {
            activation.status = ActivationStatus::Waiting;
            activation.next_poll_at = Some(activation.started_at + 3_000);
        });
        assert_eq!(state, ModuleRunState::Running);
        assert_eq!(until, Some(3_001.0));
        assert_eq!(badge, "◌ Polling · next in 3.0 s");
        // An approval that waits is another thing: it waits for a person.
        let (state, badge, _) = recorded(None, |activation| {
            activation.status = ActivationStatus::Waiting;
            activation.waiting = Some(wire::approval::Waiting {
                asked: "Publish?".to_owned(),
                shown: Vec::new(),
                value: String::new(),
                passes_on: None,
                deadline_at: None,
            });
        });
        assert_eq!(state, ModuleRunState::Waiting);
        assert_eq!(badge, "✋ Waiting for you");
    }

    /// An approval that waited and ended `decided` so, as its record and
    /// as its live events show it: (state, badge) each.
    fn approval_ended(
        decided: Option<wire::approval::Decision>,
    ) -> ((ModuleRunState, String), (ModuleRunState, String)) {
        use wire::{EventRecord, RunEvent};
        let waiting = wire::approval::Waiting {
            asked: "Publish?".to_owned(),
            shown: Vec::new(),
            value: String::new(),
            passes_on: None,
            deadline_at: None,
        };
        let (state, badge, _) = recorded(None, |activation| {
            activation.status = ActivationStatus::Completed;
            activation.finished_at = Some(activation.started_at + 2_000);
            activation.waiting = Some(waiting.clone());
            activation.decision = decided.map(|decision| wire::approval::DecisionRecord {
                decision,
                feedback: String::new(),
                value: None,
                by: wire::approval::Decider::Editor,
                at: 3,
            });
        });
        let mut events = vec![RunEvent::ModuleWaiting {
            module_id: "m2".to_owned(),
            activation: 1,
            asked: "Publish?".to_owned(),
            shown: Vec::new(),
            deadline_at: None,
            tools: Vec::new(),
        }];
        if let Some(decision) = decided {
            events.push(RunEvent::ModuleDecided {
                module_id: "m2".to_owned(),
                activation: 1,
                decision,
                by: wire::approval::Decider::Editor,
                feedback: String::new(),
                call_id: None,
            });
        }
        events.push(RunEvent::ModuleCompleted {
            module_id: "m2".to_owned(),
            activation: 1,
        });
        let live = events
            .into_iter()
            .fold(None, |before, event| {
                let record = EventRecord {
                    run_id: "r".to_owned(),
                    seq: 1,
                    // Waiting from 1, ended 2 s later.
                    ts: if matches!(event, RunEvent::ModuleWaiting { .. }) {
                        1
                    } else {
                        2_001
                    },
                    event,
                };
                super::module_state::step("m2", before.as_ref(), &record, None)
            })
            .unwrap();
        ((state, badge), (live.state, live.badge_text(0.0)))
    }

    #[test]
    fn an_approval_says_how_it_was_decided_live_and_recorded_and_a_rejection_is_no_tick() {
        use wire::approval::Decision;
        let (recorded, live) = approval_ended(Some(Decision::Reject));
        assert_eq!(
            recorded,
            (ModuleRunState::Rejected, "⊘ Rejected 2.0 s".to_owned())
        );
        assert_eq!(live, recorded);
        let (recorded, live) = approval_ended(Some(Decision::Approve));
        assert_eq!(
            recorded,
            (ModuleRunState::Done, "✓ Approved 2.0 s".to_owned())
        );
        assert_eq!(live, recorded);
        let (recorded, live) = approval_ended(None);
        assert_eq!(
            recorded,
            (
                ModuleRunState::TimedOut,
                "⏱ Nobody decided in time".to_owned()
            )
        );
        assert_eq!(live, recorded);
    }
}
