//! Runs in progress in this process: where their events are broadcast to
//! SSE clients and how they are cancelled. A run leaves the hub when it ends;
//! from then on its events come from the database alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use engine::EventRecord;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// Events a slow SSE client may fall behind before it re-reads the log.
const BUFFER: usize = 1024;

struct LiveRun {
    events: broadcast::Sender<EventRecord>,
    cancel: CancellationToken,
}

#[derive(Clone, Default)]
pub struct RunHub {
    runs: Arc<Mutex<HashMap<String, LiveRun>>>,
}

impl RunHub {
    /// Registers a run about to start.
    pub fn register(&self, run_id: &str) -> (broadcast::Sender<EventRecord>, CancellationToken) {
        let (events, _) = broadcast::channel(BUFFER);
        let cancel = CancellationToken::new();
        if let Ok(mut runs) = self.runs.lock() {
            runs.insert(
                run_id.to_owned(),
                LiveRun {
                    events: events.clone(),
                    cancel: cancel.clone(),
                },
            );
        }
        (events, cancel)
    }

    /// Live events of a run in progress here; `None` once it has ended.
    pub fn subscribe(&self, run_id: &str) -> Option<broadcast::Receiver<EventRecord>> {
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

    /// Cancels every run (server shutdown).
    pub fn cancel_all(&self) {
        if let Ok(runs) = self.runs.lock() {
            for run in runs.values() {
                run.cancel.cancel();
            }
        }
    }

    pub fn live_count(&self) -> usize {
        self.runs.lock().map_or(0, |runs| runs.len())
    }
}
