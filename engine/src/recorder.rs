//! Where a run's record goes. The server writes it to its database and
//! tells SSE clients; the command line keeps it in memory. The engine does
//! not know which.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use wire::activation::ActivationRecord;
use wire::approval::{CallDecision, DecisionRecord};
use wire::event::{EventRecord, RunStatus};

#[derive(Debug, thiserror::Error)]
#[error("the run record could not be written: {0}")]
pub struct RecordError(pub String);

pub trait Recorder: Send + Sync + 'static {
    /// Appends events, in order; their sequence numbers follow on from the
    /// last batch.
    fn append_events(
        &self,
        events: &[EventRecord],
    ) -> impl Future<Output = Result<(), RecordError>> + Send;

    /// Inserts or replaces one activation's record. `ending` is how it
    /// ended, as a resume replays it (opaque JSON, `None` while the
    /// activation is in progress); a record saved again without one keeps
    /// the ending it had.
    fn save_activation(
        &self,
        run_id: &str,
        record: &ActivationRecord,
        ending: Option<&str>,
    ) -> impl Future<Output = Result<(), RecordError>> + Send;

    /// Saves the record of an activation in progress, as it starts
    /// (PRODUCT §3.1: `running`) and after each turn it has answered,
    /// without waiting for it to be stored: the activation goes on once it
    /// is queued (waiting only while the queue is full), and a later save
    /// of it (its ending among them) is stored after this one. A crash
    /// before it is stored loses nothing a resume needs: the start is in
    /// the event log (`module.activated`), and a lost checkpoint's turn is
    /// asked again.
    fn keep_activation(
        &self,
        run_id: &str,
        record: ActivationRecord,
    ) -> impl Future<Output = ()> + Send;

    fn set_status(
        &self,
        run_id: &str,
        status: RunStatus,
        error: Option<&str>,
    ) -> impl Future<Output = Result<(), RecordError>> + Send;

    /// Keeps how long the run has waited for people with nothing running,
    /// and since when it waits now (PRODUCT §3.14), for a resume.
    fn record_wait(
        &self,
        _run_id: &str,
        _waited_ms: i64,
        _waiting_since: Option<i64>,
    ) -> impl Future<Output = Result<(), RecordError>> + Send {
        std::future::ready(Ok(()))
    }

    /// Sets keys of the run's state (PRODUCT §3.5), the ones that changed.
    fn save_state(
        &self,
        run_id: &str,
        changes: &[(String, String)],
    ) -> impl Future<Output = Result<(), RecordError>> + Send;

    /// An approval's wait is over: its timeout is taken as the decision on
    /// that activation unless a person's came first (PRODUCT §3.14: the
    /// first decision wins, and a timeout is one), which is returned to be
    /// acted on instead. Where no person can decide meanwhile (the command
    /// line, tests), the timeout always wins.
    fn claim_timeout(
        &self,
        _run_id: &str,
        _module_id: &str,
        _activation: u32,
    ) -> impl Future<Output = Result<Option<DecisionRecord>, RecordError>> + Send {
        std::future::ready(Ok(None))
    }

    /// A tool call's wait for a person is over (PRODUCT §3.17): its
    /// timeout is taken as the decision on it unless a person's came
    /// first, which is returned to be acted on instead.
    fn claim_call_timeout(
        &self,
        _run_id: &str,
        _module_id: &str,
        _activation: u32,
        _call_id: &str,
    ) -> impl Future<Output = Result<Option<CallDecision>, RecordError>> + Send {
        std::future::ready(Ok(None))
    }
}

/// Keeps everything in memory (the command line, tests, benchmarks).
#[derive(Default)]
pub struct MemoryRecorder {
    pub events: Mutex<Vec<EventRecord>>,
    pub activations: Mutex<HashMap<(String, u32), ActivationRecord>>,
    pub status: Mutex<Option<(RunStatus, Option<String>)>>,
    pub state: Mutex<std::collections::BTreeMap<String, String>>,
    /// How each activation ended, as a resume reads it.
    pub endings: Mutex<HashMap<(String, u32), String>>,
}

fn poisoned<T>(_: T) -> RecordError {
    RecordError("a lock was poisoned".to_owned())
}

impl MemoryRecorder {
    pub fn events(&self) -> Vec<EventRecord> {
        self.events
            .lock()
            .map(|events| events.clone())
            .unwrap_or_default()
    }

    pub fn activation(&self, module_id: &str, activation: u32) -> Option<ActivationRecord> {
        self.activations
            .lock()
            .ok()?
            .get(&(module_id.to_owned(), activation))
            .cloned()
    }

    /// The run state as recorded.
    pub fn state(&self) -> std::collections::BTreeMap<String, String> {
        self.state
            .lock()
            .map(|state| state.clone())
            .unwrap_or_default()
    }

    /// What a resume would start from if the run stopped now: every
    /// activation that ended, with its ending, the rest as in progress.
    pub fn resume(&self) -> crate::resume::Resume {
        let endings = self
            .endings
            .lock()
            .map(|endings| endings.clone())
            .unwrap_or_default();
        let mut resume = crate::resume::Resume {
            last_seq: self.events().last().map_or(0, |event| event.seq),
            ..crate::resume::Resume::default()
        };
        for record in self.activations() {
            match endings.get(&(record.module_id.clone(), record.activation)) {
                Some(ending) => resume.ended.push((record, ending.clone())),
                None => resume.in_progress.push(record),
            }
        }
        resume
    }

    /// Every activation record, by module id and activation number.
    pub fn activations(&self) -> Vec<ActivationRecord> {
        let mut records: Vec<ActivationRecord> = self
            .activations
            .lock()
            .map(|records| records.values().cloned().collect())
            .unwrap_or_default();
        records.sort_by(|left, right| {
            (left.started_at, &left.module_id, left.activation).cmp(&(
                right.started_at,
                &right.module_id,
                right.activation,
            ))
        });
        records
    }
}

impl Recorder for MemoryRecorder {
    async fn append_events(&self, events: &[EventRecord]) -> Result<(), RecordError> {
        self.events
            .lock()
            .map_err(poisoned)?
            .extend_from_slice(events);
        Ok(())
    }

    async fn save_activation(
        &self,
        _run_id: &str,
        record: &ActivationRecord,
        ending: Option<&str>,
    ) -> Result<(), RecordError> {
        if let Some(ending) = ending {
            self.endings.lock().map_err(poisoned)?.insert(
                (record.module_id.clone(), record.activation),
                ending.to_owned(),
            );
        }
        self.activations.lock().map_err(poisoned)?.insert(
            (record.module_id.clone(), record.activation),
            record.clone(),
        );
        Ok(())
    }

    async fn keep_activation(&self, _run_id: &str, record: ActivationRecord) {
        if let Ok(mut activations) = self.activations.lock() {
            activations.insert((record.module_id.clone(), record.activation), record);
        }
    }

    async fn set_status(
        &self,
        _run_id: &str,
        status: RunStatus,
        error: Option<&str>,
    ) -> Result<(), RecordError> {
        *self.status.lock().map_err(poisoned)? = Some((status, error.map(str::to_owned)));
        Ok(())
    }

    async fn save_state(
        &self,
        _run_id: &str,
        changes: &[(String, String)],
    ) -> Result<(), RecordError> {
        self.state
            .lock()
            .map_err(poisoned)?
            .extend(changes.iter().cloned());
        Ok(())
    }
}

impl<R: Recorder> Recorder for std::sync::Arc<R> {
    fn append_events(
        &self,
        events: &[EventRecord],
    ) -> impl Future<Output = Result<(), RecordError>> + Send {
        (**self).append_events(events)
    }

    fn save_activation(
        &self,
        run_id: &str,
        record: &ActivationRecord,
        ending: Option<&str>,
    ) -> impl Future<Output = Result<(), RecordError>> + Send {
        (**self).save_activation(run_id, record, ending)
    }

    fn keep_activation(
        &self,
        run_id: &str,
        record: ActivationRecord,
    ) -> impl Future<Output = ()> + Send {
        (**self).keep_activation(run_id, record)
    }

    fn set_status(
        &self,
        run_id: &str,
        status: RunStatus,
        error: Option<&str>,
    ) -> impl Future<Output = Result<(), RecordError>> + Send {
        (**self).set_status(run_id, status, error)
    }

    fn save_state(
        &self,
        run_id: &str,
        changes: &[(String, String)],
    ) -> impl Future<Output = Result<(), RecordError>> + Send {
        (**self).save_state(run_id, changes)
    }

    // Every method is passed on, those with a default too: a method left
    // out here would run the default for every recorder behind an `Arc`
    // (the shell holds its recorder so), whatever the recorder says.
    fn record_wait(
        &self,
        run_id: &str,
        waited_ms: i64,
        waiting_since: Option<i64>,
    ) -> impl Future<Output = Result<(), RecordError>> + Send {
        (**self).record_wait(run_id, waited_ms, waiting_since)
    }

    fn claim_timeout(
        &self,
        run_id: &str,
        module_id: &str,
        activation: u32,
    ) -> impl Future<Output = Result<Option<DecisionRecord>, RecordError>> + Send {
        (**self).claim_timeout(run_id, module_id, activation)
    }

    fn claim_call_timeout(
        &self,
        run_id: &str,
        module_id: &str,
        activation: u32,
        call_id: &str,
    ) -> impl Future<Output = Result<Option<CallDecision>, RecordError>> + Send {
        (**self).claim_call_timeout(run_id, module_id, activation, call_id)
    }
}
