//! Group commit: the writes of every run's record (events, activation
//! records, state, status) go to one task, which stores what has gathered
//! while the previous transaction committed in one transaction, and answers
//! each write only after that commit. A caller that has its answer has its
//! write in the database, so broadcasting after it keeps "stored before
//! seen"; many runs share a commit instead of queueing for the write lock
//! one transaction at a time (SQLite has one writer).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use sqlx::{AnyConnection, AnyPool, Connection, Executor};
use tokio::sync::{mpsc, oneshot};

use super::{Backend, EVENTS_CHANNEL, StoreError, StoredEvent};

/// At most this many writes share a transaction.
const MOST_PER_COMMIT: usize = 512;

/// At most this many writes wait for the writer: one more waits for room
/// (backpressure), so a database slower than the runs' writes slows the
/// runs down instead of filling memory. Eight commits' worth: 1000 runs at
/// once on the simulated provider queue about 4300 writes with no bound
/// (their checkpoints are not waited for), and 1024 cost them a tenth to a fifth
/// of their throughput (`patchbay bench`).
pub const MOST_WAITING: usize = 8 * MOST_PER_COMMIT;

/// Rows per multi-row `INSERT` (3 to 8 bound values each). On SQLite the
/// values are bound by place (`?`), so a statement can be long: fewer
/// statements, fewer trips to the connection's thread. PostgreSQL's are
/// numbered (`$1`), and sqlx looks up each one's name among all of the
/// statement's, which costs the square of its length: kept short there.
fn rows_per_statement(backend: Backend) -> usize {
    match backend {
        Backend::Sqlite => 128,
        Backend::Postgres => 25,
    }
}

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
    // A write that is one statement is atomic alone: no BEGIN and COMMIT
    // to wait for (what a single run's chain mostly does).
    if let [write] = writes
        && is_one_statement(write, backend)
    {
        return apply(connection, backend, writes).await;
    }
    let mut transaction = connection.begin().await?;
    let outcomes = apply(&mut transaction, backend, writes).await?;
    transaction.commit().await?;
    Ok(outcomes)
}

fn is_one_statement(write: &Write, backend: Backend) -> bool {
    // A fenced write locks its run's row first.
    if backend == Backend::Postgres && write.fenced().is_some() {
        return false;
    }
    match write {
        Write::Run(_) | Write::Activation(_) | Write::Status { .. } => true,
        Write::State { changes, .. } => changes.len() <= rows_per_statement(backend),
        // PostgreSQL fences and notifies as well.
        Write::Events { events, .. } => {
            backend == Backend::Sqlite && events.len() <= rows_per_statement(backend)
        }
    }
}

/// Stores `writes` on `connection`: each one's outcome, or the error that
/// stopped them.
async fn apply(
    connection: &mut AnyConnection,
    backend: Backend,
    writes: &[&Write],
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    // New runs first: the other writes may be of them.
    for write in writes {
        if let Write::Run(run) = write {
            insert_run(connection, run).await?;
        }
    }
    let lost = fence(connection, backend, writes).await?;
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
    let mut rows = Vec::new();
    let mut notify = BTreeSet::new();
    for write in &kept {
        if let Write::Events { run_id, events, .. } = write {
            notify.insert(run_id.as_str());
            rows.extend(events.iter().map(|event| (run_id.as_str(), event)));
        }
    }
    insert_events(connection, backend, &rows).await?;
    save_activations(connection, backend, &kept).await?;
    save_state(connection, backend, &kept).await?;
    for write in &kept {
        if let Write::Status {
            run_id,
            status,
            error,
            at,
            ..
        } = write
        {
            set_status(connection, run_id, status, error.as_deref(), *at).await?;
        }
    }
    if backend == Backend::Postgres {
        notify_followers(connection, &notify.into_iter().collect::<Vec<_>>()).await?;
    }
    Ok(outcomes)
}

/// Runs announced by one `pg_notify` statement at most.
const NOTIFY_GROUP: usize = 100;

/// Tells every process that these runs have new events: one statement for
/// the lot (a commit of many runs' events was a round trip per run).
async fn notify_followers(
    connection: &mut AnyConnection,
    run_ids: &[&str],
) -> Result<(), StoreError> {
    // Made once, as the insert statements are (Texts).
    static STATEMENTS: OnceLock<Vec<String>> = OnceLock::new();
    let statements = STATEMENTS.get_or_init(|| {
        (1..=NOTIFY_GROUP)
            .map(|count| {
                let calls = (0..count)
                    .map(|index| format!("pg_notify($1, ${})", index + 2))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!("SELECT {calls}")
            })
            .collect()
    });
    for group in run_ids.chunks(NOTIFY_GROUP) {
        let Some(statement) = statements.get(group.len() - 1) else {
            continue;
        };
        let mut query = sqlx::query(statement.as_str()).bind(EVENTS_CHANNEL);
        for run_id in group {
            query = query.bind(*run_id);
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// On PostgreSQL, locks the row of each run whose writes are fenced until
/// the commit (a takeover waits), in one order so that two commits never
/// wait on each other; returns the runs whose process no longer holds them.
async fn fence<'a>(
    connection: &mut AnyConnection,
    backend: Backend,
    writes: &'a [&Write],
) -> Result<BTreeSet<&'a str>, StoreError> {
    let mut lost = BTreeSet::new();
    if backend != Backend::Postgres {
        return Ok(lost);
    }
    let fenced: BTreeSet<(&str, &str)> = writes.iter().filter_map(|write| write.fenced()).collect();
    for (run_id, owner) in fenced {
        let held = sqlx::query("UPDATE runs SET owner = owner WHERE id = $1 AND owner = $2")
            .bind(run_id)
            .bind(owner)
            .execute(&mut *connection)
            .await?
            .rows_affected();
        if held == 0 {
            lost.insert(run_id);
        }
    }
    Ok(lost)
}

async fn insert_run(connection: &mut AnyConnection, run: &RunWrite) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO runs (id, graph_id, graph_revision, snapshot, input, status, created_at, owner, lease_until, budget_usd, from_run, from_module)
         VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8, $9, $10, $11)",
    )
    .bind(run.id.as_str())
    .bind(run.graph_id.as_deref())
    .bind(run.graph_revision)
    .bind(run.snapshot.as_str())
    .bind(run.input.as_str())
    .bind(run.created_at)
    .bind(run.owner.as_deref())
    .bind(run.lease_until)
    .bind(run.budget_usd)
    .bind(run.from.as_ref().map(|from| from.run.as_str()))
    .bind(run.from.as_ref().map(|from| from.module.as_str()))
    .execute(&mut *connection)
    .await?;
    Ok(())
}

async fn insert_events(
    connection: &mut AnyConnection,
    backend: Backend,
    rows: &[(&str, &StoredEvent)],
) -> Result<(), StoreError> {
    static TEXTS: Texts = Texts::new();
    for chunk in rows.chunks(rows_per_statement(backend)) {
        let sql = TEXTS.get(backend, chunk.len(), 5, |values| {
            format!("INSERT INTO run_events (run_id, seq, name, payload, ts) VALUES {values}")
        });
        let mut query = sqlx::query(sql);
        for (run_id, event) in chunk {
            query = query
                .bind(*run_id)
                .bind(event.seq)
                .bind(event.name.as_str())
                .bind(event.payload.as_str())
                .bind(event.ts);
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// The texts of one table's multi-row statement, for each backend and
/// number of rows, each made once: made for every statement, they took a
/// fifth of the writer task's time.
struct Texts {
    sqlite: OnceLock<Vec<String>>,
    postgres: OnceLock<Vec<String>>,
}

impl Texts {
    const fn new() -> Texts {
        Texts {
            sqlite: OnceLock::new(),
            postgres: OnceLock::new(),
        }
    }

    /// The text for `rows` rows (1 to `rows_per_statement`) of `columns`
    /// values: `make` puts the rows' placeholders into the statement.
    fn get(
        &'static self,
        backend: Backend,
        rows: usize,
        columns: usize,
        make: impl Fn(&str) -> String,
    ) -> &'static str {
        let texts = match backend {
            Backend::Sqlite => &self.sqlite,
            Backend::Postgres => &self.postgres,
        };
        let texts = texts.get_or_init(|| {
            (1..=rows_per_statement(backend))
                .map(|rows| make(&placeholders(backend, rows, columns)))
                .collect()
        });
        texts.get(rows.saturating_sub(1)).map_or("", String::as_str)
    }
}

/// `count` rows of `columns` placeholders: `(?, ?), (?, ?)` on SQLite,
/// `($1, $2), ($3, $4)` on PostgreSQL. Only placeholders are built into a
/// statement, never a value.
fn placeholders(backend: Backend, count: usize, columns: usize) -> String {
    (0..count)
        .map(|row| {
            let marks: Vec<String> = (1..=columns)
                .map(|column| match backend {
                    Backend::Sqlite => "?".to_owned(),
                    Backend::Postgres => format!("${}", row * columns + column),
                })
                .collect();
            format!("({})", marks.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Activation records, the last of each activation in the group (with the
/// last ending given, as saving them one by one keeps it).
async fn save_activations(
    connection: &mut AnyConnection,
    backend: Backend,
    writes: &[&Write],
) -> Result<(), StoreError> {
    let mut rows: Vec<(&ActivationWrite, Option<&str>)> = Vec::new();
    let mut index: HashMap<(&str, &str, i64), usize> = HashMap::new();
    for write in writes {
        let Write::Activation(activation) = write else {
            continue;
        };
        let key = (
            activation.run_id.as_str(),
            activation.module_id.as_str(),
            activation.activation,
        );
        match index.get(&key) {
            Some(&at) => {
                let (kept, ending): &mut (&ActivationWrite, Option<&str>) = &mut rows[at];
                *ending = activation.ending.as_deref().or(*ending);
                *kept = activation;
            }
            None => {
                index.insert(key, rows.len());
                rows.push((activation, activation.ending.as_deref()));
            }
        }
    }
    static TEXTS: Texts = Texts::new();
    for chunk in rows.chunks(rows_per_statement(backend)) {
        let sql = TEXTS.get(backend, chunk.len(), 8, |values| {
            format!(
                "INSERT INTO activations (run_id, module_id, activation, status, record, started_at, finished_at, ending)
                 VALUES {values}
                 ON CONFLICT (run_id, module_id, activation)
                 DO UPDATE SET status = excluded.status, record = excluded.record, finished_at = excluded.finished_at,
                    ending = COALESCE(excluded.ending, activations.ending)"
            )
        });
        let mut query = sqlx::query(sql);
        for (activation, ending) in chunk {
            query = query
                .bind(activation.run_id.as_str())
                .bind(activation.module_id.as_str())
                .bind(activation.activation)
                .bind(activation.status.as_str())
                .bind(activation.record.as_str())
                .bind(activation.started_at)
                .bind(activation.finished_at)
                .bind(*ending);
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// Keys of runs' state, the last value of each in the group.
async fn save_state(
    connection: &mut AnyConnection,
    backend: Backend,
    writes: &[&Write],
) -> Result<(), StoreError> {
    let mut rows: Vec<(&str, &str, &str)> = Vec::new();
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    for write in writes {
        let Write::State {
            run_id, changes, ..
        } = write
        else {
            continue;
        };
        for (key, value) in changes {
            match index.get(&(run_id.as_str(), key.as_str())) {
                Some(&at) => rows[at].2 = value.as_str(),
                None => {
                    index.insert((run_id.as_str(), key.as_str()), rows.len());
                    rows.push((run_id.as_str(), key.as_str(), value.as_str()));
                }
            }
        }
    }
    static TEXTS: Texts = Texts::new();
    for chunk in rows.chunks(rows_per_statement(backend)) {
        let sql = TEXTS.get(backend, chunk.len(), 3, |values| {
            format!(
                "INSERT INTO run_state (run_id, key, value) VALUES {values} ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value"
            )
        });
        let mut query = sqlx::query(sql);
        for (run_id, key, value) in chunk {
            query = query.bind(*run_id).bind(*key).bind(*value);
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// Moves a run to `status`; a finished run stays as it finished.
async fn set_status(
    connection: &mut AnyConnection,
    run_id: &str,
    status: &str,
    error: Option<&str>,
    at: i64,
) -> Result<(), StoreError> {
    let finished = FINISHED.contains(&status);
    sqlx::query(
        "UPDATE runs SET status = $1, error = $2,
            started_at = CASE WHEN $3 = 'running' AND started_at IS NULL THEN $4 ELSE started_at END,
            finished_at = CASE WHEN $5 = 1 THEN $4 ELSE finished_at END
         WHERE id = $6 AND status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')",
    )
    .bind(status)
    .bind(error)
    .bind(status)
    .bind(at)
    .bind(i64::from(finished))
    .bind(run_id)
    .execute(&mut *connection)
    .await?;
    Ok(())
}
