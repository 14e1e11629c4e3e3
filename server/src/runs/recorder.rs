//! The engine's run record written to the database; each batch of events is
//! broadcast to SSE clients once it is stored, so a client never sees an
//! event the log does not have.

use std::sync::Arc;

use engine::EventRecord;
use engine::recorder::{RecordError, Recorder};
use wire::activation::ActivationRecord;
use wire::event::RunStatus;

use super::hub::{LiveEvent, LiveEvents};
use super::notify::{Notifier, Waiting};
use crate::store::{Store, StoreError, StoredActivation, StoredEvent};
use wire::RunEvent;

pub struct StoreRecorder {
    pub store: Store,
    pub events: LiveEvents,
    /// The process that holds the run: on PostgreSQL, nothing of the run
    /// (events, activation records, state, status, wait) is stored unless
    /// it still does.
    pub owner: String,
    /// Who is told when an approval of the run waits.
    pub notices: Option<Notices>,
}

/// What notices of a run's waiting approvals need, and the metrics its
/// events are counted in.
pub struct Notices {
    pub notifier: Arc<Notifier>,
    pub graph: Arc<graph::Graph>,
    pub graph_id: Option<String>,
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
    /// The run's trace, when traces are sent.
    pub tracing: Option<crate::telemetry::RunTracing>,
}

impl Notices {
    /// Sends the notices of the approvals that now wait, once their events
    /// are stored (a resumed run does not log them again, so they are not
    /// sent again).
    fn send(&self, events: &[EventRecord]) {
        for record in events {
            if let RunEvent::ModuleWaiting {
                module_id,
                activation,
                asked,
                deadline_at,
                ..
            } = &record.event
            {
                self.notifier.waiting(
                    &self.graph,
                    Waiting {
                        run_id: &record.run_id,
                        graph_id: self.graph_id.as_deref(),
                        module_id,
                        activation: *activation,
                        asked,
                        deadline_at: *deadline_at,
                    },
                );
            }
        }
    }
}

fn record_error(error: impl std::fmt::Display) -> RecordError {
    RecordError(error.to_string())
}

/// Stores an activation's record (as JSON), with how it ended if it has;
/// with a `fence`, only while that process holds the run.
pub async fn save_record(
    store: &Store,
    run_id: &str,
    record: &ActivationRecord,
    ending: Option<&str>,
    fence: Option<&str>,
) -> Result<(), StoreError> {
    let json = record_json(record)?;
    store
        .save_activation(run_id, stored(record, &json, ending), fence)
        .await
}

fn record_json(record: &ActivationRecord) -> Result<String, StoreError> {
    serde_json::to_string(record)
        .map_err(|error| StoreError::Configuration(format!("a record cannot be written: {error}")))
}

fn stored<'a>(
    record: &'a ActivationRecord,
    json: &'a str,
    ending: Option<&'a str>,
) -> StoredActivation<'a> {
    StoredActivation {
        module_id: &record.module_id,
        activation: i64::from(record.activation),
        status: record.status.as_str(),
        record: json,
        started_at: record.started_at,
        finished_at: record.finished_at,
        ending,
    }
}

impl Recorder for StoreRecorder {
    async fn append_events(&self, events: &[EventRecord]) -> Result<(), RecordError> {
        let Some(first) = events.first() else {
            return Ok(());
        };
        let stored: Vec<StoredEvent> = events
            .iter()
            .map(|record| StoredEvent {
                seq: i64::try_from(record.seq).unwrap_or(i64::MAX),
                name: record.event.name().to_owned(),
                payload: record.event.payload_text(),
                ts: record.ts,
            })
            .collect();
        self.store
            .append_events(&first.run_id, stored, Some(&self.owner))
            .await
            .map_err(record_error)?;
        if let Some(notices) = &self.notices {
            notices.send(events);
            if let Some(metrics) = &notices.metrics {
                metrics.observe(&notices.graph, events);
            }
            if let Some(tracing) = &notices.tracing {
                tracing.observe(&notices.graph, events);
            }
        }
        // Written out for SSE only when someone follows the run.
        if self.events.receiver_count() > 0 {
            for record in events {
                let _ = self.events.send(Arc::new(LiveEvent::of(record)));
            }
        }
        Ok(())
    }

    async fn save_activation(
        &self,
        run_id: &str,
        record: &ActivationRecord,
        ending: Option<&str>,
    ) -> Result<(), RecordError> {
        save_record(&self.store, run_id, record, ending, Some(&self.owner))
            .await
            .map_err(record_error)
    }

    async fn keep_activation(&self, run_id: &str, record: ActivationRecord) {
        let queued = match record_json(&record) {
            Ok(json) => {
                self.store
                    .queue_activation(run_id, stored(&record, &json, None), Some(&self.owner))
                    .await
            }
            Err(error) => Err(error),
        };
        if let Err(error) = queued {
            tracing::error!(run = %run_id, %error, "activation could not be recorded");
        }
    }

    async fn set_status(
        &self,
        run_id: &str,
        status: RunStatus,
        error: Option<&str>,
    ) -> Result<(), RecordError> {
        self.store
            .set_run_status(run_id, status.as_str(), error, Some(&self.owner))
            .await
            .map_err(record_error)
    }

    async fn record_wait(
        &self,
        run_id: &str,
        waited_ms: i64,
        waiting_since: Option<i64>,
    ) -> Result<(), RecordError> {
        self.store
            .record_wait(run_id, waited_ms, waiting_since, Some(&self.owner))
            .await
            .map_err(record_error)
    }

    async fn claim_timeout(
        &self,
        run_id: &str,
        module_id: &str,
        activation: u32,
    ) -> Result<Option<wire::approval::DecisionRecord>, RecordError> {
        let first = self
            .store
            .claim_timeout(run_id, module_id, i64::from(activation))
            .await
            .map_err(record_error)?;
        // `None` from `pending`: the timeout's own row, claimed before (by
        // this process before a restart, or by one that lost the run).
        Ok(first
            .as_ref()
            .and_then(super::decisions::pending)
            .and_then(|pending| match pending.decided {
                engine::resume::Decided::Approval(decision) => Some(decision),
                engine::resume::Decided::Call { .. } => None,
            }))
    }

    async fn claim_call_timeout(
        &self,
        run_id: &str,
        module_id: &str,
        activation: u32,
        call_id: &str,
    ) -> Result<Option<wire::approval::CallDecision>, RecordError> {
        let first = self
            .store
            .claim_call_timeout(run_id, module_id, i64::from(activation), call_id)
            .await
            .map_err(record_error)?;
        Ok(first.as_ref().and_then(super::decisions::call_decision))
    }

    /// Queued, not waited for: the stored state is what the API shows of a
    /// run, and a resume rebuilds the state from the activations' endings,
    /// not from it. Its write is committed in order with the activation's
    /// record that follows, which is waited for; waiting for both cost
    /// every activation a second commit (`patchbay bench`: 1.0 ms an
    /// activation on SQLite, 0.55 ms without it).
    async fn save_state(
        &self,
        run_id: &str,
        changes: &[(String, String)],
    ) -> Result<(), RecordError> {
        self.store
            .queue_state(run_id, changes, Some(&self.owner))
            .await
            .map_err(record_error)
    }
}
