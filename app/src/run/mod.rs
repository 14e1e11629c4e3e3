//! Runs seen from the canvas: start one, follow its events over SSE
//! (`EventSource` reconnects with `Last-Event-ID` by itself; a reload
//! resumes from the run id in the address), and show every module's state —
//! queued, running with its `Re-prompt i/N…` badge, done, failed,
//! cancelled — with elapsed time and tokens.

pub mod dialog;
pub mod panel;
pub mod record;

use std::collections::BTreeMap;
use std::time::Duration;

use graph::config::RePromptOwner;
use graph::{Graph, ModuleConfig};
use leptos::prelude::*;
use serde_json::Value;

use crate::browser;
use crate::canvas::model::{CanvasModel, ModuleRun, ModuleRunState, set_if_changed};
use record::RunRecord;

/// The run the canvas shows.
#[derive(Clone, Copy)]
pub struct RunView {
    pub run_id: RwSignal<Option<String>>,
    /// `running`, `completed`, `failed`, `cancelled`, `interrupted`.
    pub status: RwSignal<Option<String>>,
    pub error: RwSignal<Option<String>>,
    pub record: RwSignal<Option<RunRecord>>,
    /// Streamed text by (module, response index), while it streams.
    pub streams: RwSignal<BTreeMap<(String, u32), String>>,
    pub panel_open: RwSignal<bool>,
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
    refresh_timer: StoredValue<Option<TimeoutHandle>>,
    ticker: StoredValue<Option<IntervalHandle>>,
}

/// An open event stream and the callbacks it calls.
struct Subscription {
    source: web_sys::EventSource,
    _callbacks: Vec<wasm_bindgen::closure::Closure<dyn FnMut(web_sys::MessageEvent)>>,
    _on_error: wasm_bindgen::closure::Closure<dyn FnMut(web_sys::Event)>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.source.close();
    }
}

/// Every event name of PRODUCT §3.6: `EventSource` delivers named events
/// only to listeners for that name.
const EVENT_NAMES: [&str; 14] = [
    "run.started",
    "run.completed",
    "run.failed",
    "run.cancelled",
    "module.activated",
    "module.completed",
    "module.failed",
    "module.output_delta",
    "task.agent_task.reprompt_dispatched",
    "task.agent_task.reprompt_response",
    "task.coding.agent_reprompt_dispatched",
    "task.coding.agent_reprompt_response",
    "task.coding.agent_started",
    "task.coding.agent_finished",
];

impl RunView {
    pub fn new() -> RunView {
        RunView {
            run_id: RwSignal::new(None),
            status: RwSignal::new(None),
            error: RwSignal::new(None),
            record: RwSignal::new(None),
            streams: RwSignal::new(BTreeMap::new()),
            panel_open: RwSignal::new(false),
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

    pub fn is_live(&self) -> bool {
        self.status.with(|status| {
            status.as_deref() == Some("running") || status.as_deref() == Some("queued")
        })
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
        self.status.set(Some("queued".to_owned()));
        self.error.set(None);
        self.record.set(None);
        self.streams.set(BTreeMap::new());
        self.panel_open.set(true);
        self.history.set(false);
        clear_states(model);
        remember_in_address(Some(run_id));
        self.subscribe(model);
        let ticker = set_interval_with_handle(
            move || model.clock.set(js_sys::Date::now()),
            Duration::from_millis(500),
        )
        .ok();
        self.ticker.set_value(ticker);
        self.refresh_soon(0);
    }

    /// Opens the event stream. The browser reconnects by itself after a
    /// network drop, sending `Last-Event-ID`; if it gives up (the server
    /// was away too long), this opens it again after a pause, and the
    /// events seen already are skipped.
    fn subscribe(&self, model: CanvasModel) {
        let Some(run_id) = self.run_id.get_untracked() else {
            return;
        };
        let Ok(source) = web_sys::EventSource::new(&format!("/api/runs/{run_id}/events")) else {
            self.error.set(Some(
                "The browser could not open the run's event stream.".to_owned(),
            ));
            return;
        };
        let view = *self;
        let mut callbacks = Vec::new();
        for name in EVENT_NAMES {
            let callback = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                move |message: web_sys::MessageEvent| {
                    let seq: u64 = message.last_event_id().parse().unwrap_or(0);
                    if seq != 0 && seq <= view.last_seen.get_value() {
                        return;
                    }
                    view.last_seen.set_value(seq);
                    let data: Value = message
                        .data()
                        .as_string()
                        .and_then(|text| serde_json::from_str(&text).ok())
                        .unwrap_or(Value::Null);
                    view.apply(model, name, &data);
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
                // CLOSED: the browser stopped retrying.
                if watched.ready_state() == 2 && view.is_live() {
                    set_timeout(
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
        self.source
            .set_value(Some(send_wrapper::SendWrapper::new(Subscription {
                source,
                _callbacks: callbacks,
                _on_error: on_error,
            })));
    }

    /// Shows a finished run's end state from its record alone.
    pub fn show_record(&self, model: CanvasModel, record: RunRecord) {
        self.stop_following();
        self.graph.set_value(Some(record.graph.clone()));
        self.streams.set(BTreeMap::new());
        self.history.set(false);
        if self
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
                        activation.merged(&|id| record.label_of(id)).is_some()
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
        self.status.set(Some(record.status.clone()));
        self.error.set(record.error.clone());
        apply_record(model, &record);
        self.record.set(Some(record));
        self.panel_open.set(true);
    }

    /// Reads the run's record again in a moment (several events in a row
    /// make one request).
    fn refresh_soon(&self, after_ms: u64) {
        if let Some(previous) = self.refresh_timer.try_update_value(Option::take).flatten() {
            previous.clear();
        }
        let view = *self;
        let handle =
            set_timeout_with_handle(move || view.refresh(), Duration::from_millis(after_ms)).ok();
        self.refresh_timer.set_value(handle);
    }

    fn refresh(&self) {
        let Some(run_id) = self.run_id.get_untracked() else {
            return;
        };
        let view = *self;
        leptos::task::spawn_local(async move {
            if let Ok((200, body)) =
                browser::fetch("GET", &format!("/api/runs/{run_id}"), None, &[]).await
                && let Ok(record) = serde_json::from_str::<RunRecord>(&body)
                && view.run_id.get_untracked().as_deref() == Some(record.id.as_str())
            {
                view.record.set(Some(record));
            }
        });
    }

    fn apply(&self, model: CanvasModel, name: &str, data: &Value) {
        let module = data
            .get("module_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let ts = data.get("ts").and_then(Value::as_f64);
        let number = |key: &str| data.get(key).and_then(Value::as_u64).unwrap_or(0);
        let update = |change: &dyn Fn(&mut ModuleRun)| {
            if let Some(node) = model.node(&module) {
                let mut run = node.run.get_untracked().unwrap_or_default();
                change(&mut run);
                set_if_changed(node.run, Some(run));
            }
        };
        match name {
            "run.started" => {
                self.status.set(Some("running".to_owned()));
                model.nodes.with_untracked(|nodes| {
                    for node in nodes {
                        node.run.set(Some(ModuleRun {
                            state: ModuleRunState::Queued,
                            ..ModuleRun::default()
                        }));
                    }
                });
            }
            "module.activated" => {
                let activation = number("activation");
                update(&|run| {
                    *run = ModuleRun {
                        state: ModuleRunState::Running,
                        badge: (activation > 1).then(|| format!("Round {activation}")),
                        started_ms: ts,
                        tokens: run.tokens,
                        ..ModuleRun::default()
                    };
                });
                self.streams
                    .update(|streams| streams.retain(|(id, _), _| *id != module));
                if !self.focus_chosen.get_value() {
                    self.focus.set(Some(module.clone()));
                }
            }
            "task.agent_task.reprompt_dispatched" => {
                let badge = format!(
                    "Re-prompt {}/{}…",
                    number("reprompt_index"),
                    number("reprompt_count")
                );
                update(&|run| run.badge = Some(badge.clone()));
            }
            "task.coding.agent_reprompt_dispatched" => {
                let role = data
                    .get("agent_role")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let index = number("reprompt_index");
                let count = self.graph.with_value(|graph| {
                    graph
                        .as_ref()
                        .and_then(|graph| coding_re_prompt_count(graph, &module, &role))
                });
                let badge = match count {
                    Some(count) => format!("{role} · Re-prompt {index}/{count}…"),
                    None => format!("{role} · Re-prompt {index}…"),
                };
                update(&|run| run.badge = Some(badge.clone()));
            }
            "task.coding.agent_started" => {
                let role = data
                    .get("agent_role")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let round = number("round");
                let badge = if round > 1 {
                    format!("{role} · round {round}…")
                } else {
                    format!("{role} · working…")
                };
                update(&|run| run.badge = Some(badge.clone()));
            }
            "task.agent_task.reprompt_response" => {
                let tokens = number("token_count");
                update(&|run| run.tokens += tokens);
            }
            "module.output_delta" => {
                let index = u32::try_from(number("response_index")).unwrap_or(0);
                let text = data
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                self.streams.update(|streams| {
                    streams
                        .entry((module.clone(), index))
                        .or_default()
                        .push_str(&text)
                });
            }
            "module.completed" => {
                update(&|run| {
                    run.state = ModuleRunState::Done;
                    run.badge = None;
                    run.finished_ms = ts;
                });
                self.refresh_soon(150);
            }
            "module.failed" => {
                let error = data
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                update(&|run| {
                    run.state = ModuleRunState::Failed;
                    run.badge = None;
                    run.finished_ms = ts;
                    run.error = Some(error.clone());
                });
                self.refresh_soon(150);
            }
            "run.completed" | "run.failed" | "run.cancelled" => {
                let status = data
                    .get("status")
                    .and_then(Value::as_str)
                    .unwrap_or("completed")
                    .to_owned();
                self.error
                    .set(data.get("error").and_then(Value::as_str).map(str::to_owned));
                // Whatever was still going stopped with the run; what never
                // started shows nothing.
                let stopped = if name == "run.cancelled" {
                    ModuleRunState::Cancelled
                } else {
                    ModuleRunState::Failed
                };
                model.nodes.with_untracked(|nodes| {
                    for node in nodes {
                        match node.run.get_untracked() {
                            Some(run) if run.state == ModuleRunState::Running => {
                                node.run.set(Some(ModuleRun {
                                    state: stopped,
                                    badge: None,
                                    finished_ms: ts,
                                    ..run
                                }));
                            }
                            Some(run) if run.state == ModuleRunState::Queued => node.run.set(None),
                            _ => {}
                        }
                    }
                });
                self.status.set(Some(status));
                // Not from inside the stream's own callback: closing it
                // frees that callback.
                let view = *self;
                let run_id = self.run_id.get_untracked();
                set_timeout(
                    move || {
                        if view.run_id.get_untracked() == run_id {
                            view.stop_following();
                        }
                    },
                    Duration::ZERO,
                );
                self.refresh_soon(0);
            }
            _ => {}
        }
    }

    /// Shows this module in the panel, and keeps it there.
    pub fn choose(&self, module: String) {
        self.focus_chosen.set_value(true);
        self.focus.set(Some(module));
    }

    /// Asks the server to stop the run; only the graph's editor may.
    pub fn cancel(&self, graph_id: &str) {
        let Some(run_id) = self.run_id.get_untracked() else {
            return;
        };
        let mut headers = vec![("Content-Type", "application/json".to_owned())];
        headers.extend(crate::edit_token::authorization(graph_id));
        leptos::task::spawn_local(async move {
            let _ = browser::fetch(
                "POST",
                &format!("/api/runs/{run_id}/cancel"),
                Some("{}"),
                &headers,
            )
            .await;
        });
    }

    /// Forgets the run shown (the canvas goes back to plain editing).
    pub fn close(&self, model: CanvasModel) {
        self.stop_following();
        self.run_id.set(None);
        self.status.set(None);
        self.record.set(None);
        self.panel_open.set(false);
        clear_states(model);
        remember_in_address(None);
    }
}

impl Default for RunView {
    fn default() -> RunView {
        RunView::new()
    }
}

/// The number of re-prompts of the agent with this role in a coding module.
fn coding_re_prompt_count(graph: &Graph, module: &str, role: &str) -> Option<usize> {
    match &graph.module(module)?.config {
        ModuleConfig::Coding(coding) => {
            let index = coding.agents.iter().position(|agent| agent.role == role)?;
            graph
                .module(module)?
                .config
                .re_prompts(RePromptOwner::Agent(index))
                .map(Vec::len)
        }
        _ => None,
    }
}

fn clear_states(model: CanvasModel) {
    model.nodes.with_untracked(|nodes| {
        for node in nodes {
            set_if_changed(node.run, None);
        }
    });
}

/// Each module's final state from a run record.
pub fn apply_record(model: CanvasModel, record: &RunRecord) {
    model.nodes.with_untracked(|nodes| {
        for node in nodes {
            let state = record.last(&node.id).map(|activation| {
                let state = match activation.status.as_str() {
                    "completed" => ModuleRunState::Done,
                    "failed" => ModuleRunState::Failed,
                    "cancelled" => ModuleRunState::Cancelled,
                    "running" => ModuleRunState::Running,
                    _ => ModuleRunState::Queued,
                };
                ModuleRun {
                    state,
                    badge: None,
                    started_ms: Some(activation.started_at as f64),
                    finished_ms: activation.finished_at.map(|at| at as f64),
                    tokens: activation.tokens(),
                    error: activation.error.clone(),
                }
            });
            set_if_changed(node.run, state);
        }
    });
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
