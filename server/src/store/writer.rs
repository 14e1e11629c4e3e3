//! Group commit: the writes of every run's record (events, activation
//! records, state, status) go to one task, which stores what has gathered
//! while the previous transaction committed in one transaction, and answers
//! each write only after that commit. A caller that has its answer has its
//! write in the database, so broadcasting after it keeps "stored before
//! seen"; many runs share a commit instead of queueing for the write lock
//! one transaction at a time (SQLite has one writer).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sqlx::{AnyConnection, AnyPool, Connection, Executor};
use tokio::sync::{mpsc, oneshot};

use super::{Backend, StoreError, StoredEvent};

mod postgres;
mod rows;
mod sqlite;

/// At most this many writes share a transaction. Larger groups keep fewer
/// versions of a record that changes often (an activation's checkpoints):
/// 2048 stored 1000 starter runs at once a third faster than 512
/// (`patchbay bench`).
const MOST_PER_COMMIT: usize = 2048;

/// At most this many writes wait for the writer: one more waits for room
/// (backpressure), so a database slower than the runs' writes slows the
/// runs down instead of filling memory. 1000 runs at once on the simulated
/// provider queue about 4300 writes with no bound (their checkpoints are
/// not waited for), and a bound of 1024 cost them a tenth to a fifth of
/// their throughput (`patchbay bench`).
pub const MOST_WAITING: usize = 4 * MOST_PER_COMMIT;

/// Statuses after which a run never changes.
pub(super) const FINISHED: [&str; 4] = ["completed", "failed", "cancelled", "interrupted"];

/// One write of a run's record.
pub(super) enum Write {
    /// A new run (queued).
    Run(RunWrite),
    /// Events appended to the log. This and every write below carry a
    /// `fence` on PostgreSQL, where several processes share runs: the
    /// write is stored only while that process holds the run, so one that
    /// lost it (frozen past its lease, cut off) changes nothing of it.
    Events {
        run_id: String,
        events: Vec<StoredEvent>,
        fence: Option<String>,
    },
    Activation(ActivationWrite),
    State {
        run_id: String,
        changes: Vec<(String, String)>,
        fence: Option<String>,
    },
    Status {
        run_id: String,
        status: String,
        error: Option<String>,
        at: i64,
        fence: Option<String>,
    },
}

impl Write {
    /// The run written to, and the process that must hold it, if fenced.
    fn fenced(&self) -> Option<(&str, &str)> {
        match self {
            Write::Run(_) => None,
            Write::Events { run_id, fence, .. }
            | Write::State { run_id, fence, .. }
            | Write::Status { run_id, fence, .. } => Some((run_id.as_str(), fence.as_deref()?)),
            Write::Activation(activation) => {
                Some((activation.run_id.as_str(), activation.fence.as_deref()?))
            }
        }
    }
}

pub(super) struct RunWrite {
    pub id: String,
    pub graph_id: Option<String>,
    pub graph_revision: Option<i64>,
    pub snapshot: String,
    pub input: String,
    pub created_at: i64,
    pub owner: Option<String>,
    pub lease_until: Option<i64>,
    pub budget_usd: Option<f64>,
    pub from: Option<wire::run::RunFrom>,
    /// `wire::run::StartedBy` as JSON.
    pub started_by: Option<String>,
}

pub(super) struct ActivationWrite {
    pub run_id: String,
    pub module_id: String,
    pub activation: i64,
    pub status: String,
    pub record: String,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    /// `None` keeps the ending stored before.
    pub ending: Option<String>,
    pub fence: Option<String>,
}

struct Request {
    write: Write,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// Where the store sends its writes.
#[derive(Clone)]
pub(super) struct Writer {
    requests: mpsc::Sender<Request>,
    backlog: Arc<Backlog>,
}

/// How many writes wait for the writer task, and the most that have since
/// the figure was last read (`patchbay bench` reports it).
#[derive(Default)]
pub(super) struct Backlog {
    waiting: AtomicUsize,
    peak: AtomicUsize,
}

impl Backlog {
    fn add(&self) {
        let waiting = self.waiting.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak.fetch_max(waiting, Ordering::Relaxed);
    }

    fn taken(&self, count: usize) {
        self.waiting.fetch_sub(count, Ordering::Relaxed);
    }
}

impl Writer {
    /// Starts the task that commits the writes; it ends with the last
    /// `Writer`.
    pub fn start(pool: AnyPool, backend: Backend, url: String) -> Writer {
        let (requests, receiver) = mpsc::channel(MOST_WAITING);
        let backlog = Arc::new(Backlog::default());
        tokio::spawn(commit_loop(
            pool,
            backend,
            url,
            receiver,
            Arc::clone(&backlog),
        ));
        Writer { requests, backlog }
    }

    /// The most writes that waited at once since the last call.
    pub fn peak_backlog(&self) -> usize {
        let waiting = self.backlog.waiting.load(Ordering::Relaxed);
        self.backlog.peak.swap(waiting, Ordering::Relaxed)
    }

    /// Queues `write` without waiting for it to be stored, only for room
    /// in the queue: it is stored in order with the writes queued before
    /// and after it.
    pub async fn queue(&self, write: Write) -> Result<(), StoreError> {
        let (done, _) = oneshot::channel();
        self.send(Request { write, done }).await
    }

    async fn send(&self, request: Request) -> Result<(), StoreError> {
        self.backlog.add();
        let sent = self.requests.send(request).await;
        if sent.is_err() {
            self.backlog.taken(1);
        }
        sent.map_err(|_| StoreError::Configuration("the store is closed".to_owned()))
    }

    /// Stores `write`; returns once it is committed.
    pub async fn write(&self, write: Write) -> Result<(), StoreError> {
        let (done, answer) = oneshot::channel();
        self.send(Request { write, done }).await?;
        answer.await.map_err(|_| {
            StoreError::Configuration("the store stopped before the write was stored".to_owned())
        })?
    }
}

/// How often, at most, the SQLite log is copied into the database.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);

/// Where the commits go: on SQLite, a connection of the writer's own that
/// never copies the log into the database itself (a commit that does so
/// waits for it, and every write of the group with it); that is done in
/// the background instead. On PostgreSQL, the pool.
struct Committer {
    pool: AnyPool,
    backend: Backend,
    url: String,
    own: Option<AnyConnection>,
    last_checkpoint: Instant,
    checkpointing: Arc<AtomicBool>,
}

impl Committer {
    async fn commit(
        &mut self,
        writes: &[&Write],
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        if self.backend == Backend::Postgres {
            let mut connection = self.pool.acquire().await?;
            return commit(&mut connection, self.backend, writes).await;
        }
        if self.own.is_none() {
            self.own = Some(open_sqlite_writer(&self.url).await?);
        }
        let Some(connection) = self.own.as_mut() else {
            return Err(StoreError::Configuration(
                "no connection to write with".to_owned(),
            ));
        };
        let committed = commit(connection, self.backend, writes).await;
        if matches!(
            committed,
            Err(StoreError::Database(
                sqlx::Error::Io(_) | sqlx::Error::WorkerCrashed
            ))
        ) {
            self.own = None;
        }
        self.checkpoint();
        committed
    }

    /// Copies the log into the database in the background (PASSIVE: it
    /// waits for no reader or writer), one at a time.
    fn checkpoint(&mut self) {
        if self.last_checkpoint.elapsed() < CHECKPOINT_EVERY
            || self.checkpointing.swap(true, Ordering::AcqRel)
        {
            return;
        }
        self.last_checkpoint = Instant::now();
        let pool = self.pool.clone();
        let checkpointing = Arc::clone(&self.checkpointing);
        tokio::spawn(async move {
            if let Err(error) = pool.execute("PRAGMA wal_checkpoint(PASSIVE)").await {
                tracing::warn!(%error, "the SQLite log could not be copied into the database");
            }
            checkpointing.store(false, Ordering::Release);
        });
    }
}

async fn open_sqlite_writer(url: &str) -> Result<AnyConnection, StoreError> {
    let mut connection = AnyConnection::connect(url).await?;
    for pragma in [
        "PRAGMA synchronous = NORMAL",
        "PRAGMA foreign_keys = ON",
        "PRAGMA busy_timeout = 10000",
        "PRAGMA wal_autocheckpoint = 0",
        // A multi-row statement keeps what it changed in a statement
        // journal, to undo it alone if it fails: in memory, not a file
        // written and read back on every statement.
        "PRAGMA temp_store = MEMORY",
        // A group's pages stay in memory until its commit instead of
        // spilling into the log half-written (32 MB at most).
        "PRAGMA cache_size = -32768",
    ] {
        connection.execute(pragma).await?;
    }
    Ok(connection)
}

async fn commit_loop(
    pool: AnyPool,
    backend: Backend,
    url: String,
    mut receiver: mpsc::Receiver<Request>,
    backlog: Arc<Backlog>,
) {
    let mut committer = Committer {
        pool,
        backend,
        url,
        own: None,
        last_checkpoint: Instant::now(),
        checkpointing: Arc::new(AtomicBool::new(false)),
    };
    let mut batch = Vec::new();
    while let Some(first) = receiver.recv().await {
        batch.push(first);
        while batch.len() < MOST_PER_COMMIT {
            match receiver.try_recv() {
                Ok(request) => batch.push(request),
                Err(_) => break,
            }
        }
        backlog.taken(batch.len());
        let writes: Vec<&Write> = batch.iter().map(|request| &request.write).collect();
        match committer.commit(&writes).await {
            Ok(outcomes) => {
                for (request, outcome) in batch.drain(..).zip(outcomes) {
                    answer(request, outcome);
                }
            }
            // One write's error fails the whole transaction: each write is
            // tried again alone, so only that one fails.
            Err(error) if batch.len() > 1 => {
                tracing::debug!(%error, writes = batch.len(), "a grouped commit failed; writing one by one");
                for request in batch.drain(..) {
                    let outcome = match committer.commit(&[&request.write]).await {
                        Ok(mut outcomes) => outcomes.pop().unwrap_or(Ok(())),
                        Err(error) => Err(error),
                    };
                    answer(request, outcome);
                }
            }
            // A write alone: its own error.
            Err(error) => {
                if let Some(request) = batch.pop() {
                    answer(request, Err(error));
                }
                batch.clear();
            }
        }
    }
}

/// Tells the writer of `request` how it went. A queued write has no one
/// waiting (nor has one whose run was cancelled meanwhile): its failure is
/// logged, as nobody else will.
fn answer(request: Request, outcome: Result<(), StoreError>) {
    if let Err(Err(error)) = request.done.send(outcome) {
        tracing::error!(%error, "a write no one waited for could not be stored");
    }
}

/// Stores `writes` in one transaction: each one's outcome, or the error
/// that rolled them all back.
async fn commit(
    connection: &mut AnyConnection,
    backend: Backend,
    writes: &[&Write],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    if backend == Backend::Sqlite {
        sqlite::commit(connection, writes).await?;
        return Ok(writes.iter().map(|_| Ok(())).collect());
    }
    // A write that is one statement is atomic alone: no BEGIN and COMMIT
    // to wait for.
    if let [write] = writes
        && is_one_statement(write)
    {
        return apply(connection, writes).await;
    }
    let mut transaction = connection.begin().await?;
    let outcomes = apply(&mut transaction, writes).await?;
    transaction.commit().await?;
    Ok(outcomes)
}

fn is_one_statement(write: &Write) -> bool {
    // A fenced write locks its run's row first, and events are announced
    // to the other processes. A state write is a row per module part it
    // changes, at most one per key: more keys than a statement's rows take
    // two statements.
    write.fenced().is_none()
        && match write {
            Write::Events { .. } => false,
            Write::State { changes, .. } => changes.len() <= postgres::ROWS_PER_STATEMENT,
            _ => true,
        }
}

/// Stores `writes` on PostgreSQL: each one's outcome, or the error that
/// stopped them.
async fn apply(
    connection: &mut AnyConnection,
    writes: &[&Write],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    // New runs first: the other writes may be of them.
    postgres::insert_runs(connection, &new_runs(writes)).await?;
    let lost = postgres::fence(connection, writes).await?;
    let mut outcomes = Vec::with_capacity(writes.len());
    let mut kept = Vec::with_capacity(writes.len());
    for write in writes {
        match write.fenced() {
            Some((run_id, _)) if lost.contains(run_id) => {
                outcomes.push(Err(StoreError::LeaseLost(run_id.to_owned())));
            }
            _ => {
                outcomes.push(Ok(()));
                kept.push(*write);
            }
        }
    }
    postgres::store(connection, &rows::Group::of(&kept)).await?;
    Ok(outcomes)
}

/// The new runs among `writes`.
fn new_runs<'a>(writes: &[&'a Write]) -> Vec<&'a RunWrite> {
    writes
        .iter()
        .copied()
        .filter_map(|write| match write {
            Write::Run(run) => Some(run),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn state(keys: usize) -> Write {
        Write::State {
            run_id: "r1".to_owned(),
            changes: (0..keys)
                .map(|index| (format!("Step {index}.status"), "completed".to_owned()))
                .collect(),
            fence: None,
        }
    }

    #[test]
    fn a_write_that_needs_two_statements_is_committed_in_a_transaction() {
        // PostgreSQL; SQLite's in writer/sqlite.rs.
        assert!(is_one_statement(&state(700)));
        assert!(!is_one_statement(&state(5000)));
    }
}
