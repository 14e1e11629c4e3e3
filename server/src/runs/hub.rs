//! Runs in progress in this process: where their events are broadcast to
//! SSE clients, how they are cancelled (a person's decision) and how they
//! are stopped (the server stopping, or another process taking a run over:
//! the run is left to be resumed), and the decisions people take on its
//! approvals. A run leaves the hub when it ends or
//! stops; from then on its events come from the database alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use engine::EventRecord;
use engine::resume::PendingDecision;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

/// Events a slow SSE client may fall behind before it re-reads the log.
const BUFFER: usize = 1024;

/// An event as SSE clients get it, written out once however many follow.
#[derive(Debug)]
pub struct LiveEvent {
    pub seq: u64,
    pub name: &'static str,
    /// The `data:` of the SSE event (JSON).
    pub data: String,
    /// The run's last event.
    pub terminal: bool,
}

impl LiveEvent {
    pub fn of(record: &EventRecord) -> LiveEvent {
        LiveEvent {
            seq: record.seq,
            name: record.event.name(),
            data: record.data().to_string(),
            terminal: record.event.is_terminal(),
        }
    }
}

/// Where a run's stored events are announced to its SSE clients.
pub type LiveEvents = broadcast::Sender<Arc<LiveEvent>>;

struct LiveRun {
    events: LiveEvents,
    cancel: CancellationToken,
    stop: CancellationToken,
    decisions: mpsc::UnboundedSender<PendingDecision>,
}

/// What steers a run registered in the hub.
pub struct Registered {
    pub events: LiveEvents,
    pub cancel: CancellationToken,
    pub stop: CancellationToken,
    /// Decisions people take on its approvals.
    pub decisions: mpsc::UnboundedReceiver<PendingDecision>,
}

#[derive(Clone, Default)]
pub struct RunHub {
    runs: Arc<Mutex<HashMap<String, LiveRun>>>,
}

impl RunHub {
    /// Registers a run about to start.
    pub fn register(&self, run_id: &str) -> Registered {
        let (events, _) = broadcast::channel(BUFFER);
        let cancel = CancellationToken::new();
        let stop = CancellationToken::new();
        let (decided, decisions) = mpsc::unbounded_channel();
        if let Ok(mut runs) = self.runs.lock() {
            runs.insert(
                run_id.to_owned(),
                LiveRun {
                    events: events.clone(),
                    cancel: cancel.clone(),
                    stop: stop.clone(),
                    decisions: decided,
                },
            );
        }
        Registered {
            events,
            cancel,
            stop,
            decisions,
        }
    }

    /// Hands a decision to a run in progress here; false if it is not.
    /// The run acts on a decision once: one it has acted on is ignored.
    pub fn decide(&self, run_id: &str, decision: PendingDecision) -> bool {
        self.runs
            .lock()
            .ok()
            .and_then(|runs| {
                runs.get(run_id)
                    .map(|run| run.decisions.send(decision).is_ok())
            })
            .unwrap_or(false)
    }

    /// Live events of a run in progress here; `None` once it has ended.
    pub fn subscribe(&self, run_id: &str) -> Option<broadcast::Receiver<Arc<LiveEvent>>> {
        self.runs
            .lock()
            .ok()?
            .get(run_id)
            .map(|run| run.events.subscribe())
    }

    /// Asks a run in progress to stop; false if it is not in progress here.
    pub fn cancel(&self, run_id: &str) -> bool {
        match self
            .runs
            .lock()
            .ok()
            .and_then(|runs| runs.get(run_id).map(|run| run.cancel.clone()))
        {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }

    pub fn finish(&self, run_id: &str) {
        if let Ok(mut runs) = self.runs.lock() {
            runs.remove(run_id);
        }
    }

    /// Stops a run in progress here, to be resumed (by another process,
    /// which holds it now).
    pub fn stop(&self, run_id: &str) {
        if let Ok(runs) = self.runs.lock()
            && let Some(run) = runs.get(run_id)
        {
            run.stop.cancel();
        }
    }

    /// Stops every run (the server stopping): they are resumed later.
    pub fn stop_all(&self) {
        if let Ok(runs) = self.runs.lock() {
            for run in runs.values() {
                run.stop.cancel();
            }
        }
    }

    /// The runs in progress here.
    pub fn live_ids(&self) -> Vec<String> {
        self.runs
            .lock()
            .map(|runs| runs.keys().cloned().collect())
            .unwrap_or_default()
    }

    pub fn live_count(&self) -> usize {
        self.runs.lock().map_or(0, |runs| runs.len())
    }
}
