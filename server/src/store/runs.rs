//! Runs, their append-only event log and activation records. The store
//! deals in JSON text; the run recorder turns engine types into it.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{LastRun, Store, StoreError, now_millis};

pub struct NewRun<'a> {
    pub id: &'a str,
    pub graph_id: Option<&'a str>,
    pub graph_revision: Option<i64>,
    /// The graph document the run runs (a snapshot: later edits do not count).
    pub snapshot: &'a str,
    pub input: &'a str,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRun {
    pub id: String,
    pub graph_id: Option<String>,
    pub graph_revision: Option<i64>,
    pub snapshot: String,
    pub input: String,
    pub status: String,
    pub error: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
}

/// One logged event, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEvent {
    pub seq: i64,
    pub name: String,
    pub payload: String,
    pub ts: i64,
}

pub struct StoredActivation<'a> {
    pub module_id: &'a str,
    pub activation: i64,
    pub status: &'a str,
    pub record: &'a str,
    pub started_at: i64,
    pub finished_at: Option<i64>,
}

const RUN_COLUMNS: &str = "id, graph_id, graph_revision, snapshot, input, status, error, created_at, started_at, finished_at";

fn run_from_row(row: &AnyRow) -> Result<StoredRun, sqlx::Error> {
    Ok(StoredRun {
        id: row.try_get("id")?,
        graph_id: row.try_get("graph_id")?,
        graph_revision: row.try_get("graph_revision")?,
        snapshot: row.try_get("snapshot")?,
        input: row.try_get("input")?,
        status: row.try_get("status")?,
        error: row.try_get("error")?,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
    })
}

/// Statuses after which a run never changes.
const FINISHED: [&str; 4] = ["completed", "failed", "cancelled", "interrupted"];

impl StoredRun {
    /// When the run ended; `None` while it is queued or running.
    pub fn ended_at(&self) -> Option<i64> {
        if FINISHED.contains(&self.status.as_str()) {
            self.finished_at
        } else {
            None
        }
    }
}

impl Store {
    pub async fn insert_run(&self, run: NewRun<'_>) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO runs (id, graph_id, graph_revision, snapshot, input, status, created_at)
             VALUES ($1, $2, $3, $4, $5, 'queued', $6)",
        )
        .bind(run.id)
        .bind(run.graph_id)
        .bind(run.graph_revision)
        .bind(run.snapshot)
        .bind(run.input)
        .bind(now_millis())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn run(&self, id: &str) -> Result<Option<StoredRun>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(run_from_row).transpose()?)
    }

    /// A graph's runs, newest first.
    pub async fn runs_for_graph(
        &self,
        graph_id: &str,
        limit: i64,
    ) -> Result<Vec<StoredRun>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE graph_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
        )))
        .bind(graph_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(run_from_row).collect::<Result<_, _>>()?)
    }

    /// A graph's newest run: only what a list shows, not its snapshot.
    pub async fn last_run(&self, graph_id: &str) -> Result<Option<LastRun>, StoreError> {
        let row = sqlx::query(
            "SELECT id, status, created_at FROM runs WHERE graph_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1",
        )
        .bind(graph_id)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| {
            Ok(LastRun {
                id: row.try_get("id")?,
                status: row.try_get("status")?,
                created_at: row.try_get("created_at")?,
            })
        })
        .transpose()
        .map_err(|error: sqlx::Error| StoreError::from(error))
    }

    /// Moves a run to `status`; a finished run stays as it finished.
    pub async fn set_run_status(
        &self,
        id: &str,
        status: &str,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        let now = now_millis();
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
        .bind(now)
        .bind(i64::from(finished))
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Appends events in one transaction.
    pub async fn append_events(
        &self,
        run_id: &str,
        events: &[StoredEvent],
    ) -> Result<(), StoreError> {
        let mut transaction = self.pool.begin().await?;
        for event in events {
            sqlx::query("INSERT INTO run_events (run_id, seq, name, payload, ts) VALUES ($1, $2, $3, $4, $5)")
                .bind(run_id)
                .bind(event.seq)
                .bind(&event.name)
                .bind(&event.payload)
                .bind(event.ts)
                .execute(&mut *transaction)
                .await?;
        }
        transaction.commit().await?;
        Ok(())
    }

    /// Sets keys of a run's state, in one statement.
    pub async fn save_state(
        &self,
        run_id: &str,
        changes: &[(String, String)],
    ) -> Result<(), StoreError> {
        // Bound parameters per statement stay well under SQLite's limit.
        // Numbered by hand: the `Any` query builder writes `?`, which
        // PostgreSQL does not read.
        for chunk in changes.chunks(300) {
            let rows: Vec<String> = (0..chunk.len())
                .map(|row| format!("(${}, ${}, ${})", row * 3 + 1, row * 3 + 2, row * 3 + 3))
                .collect();
            let sql = format!(
                "INSERT INTO run_state (run_id, key, value) VALUES {} ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
                rows.join(", ")
            );
            // Only placeholders are built into it, never a value.
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for (key, value) in chunk {
                query = query.bind(run_id).bind(key).bind(value);
            }
            query.execute(&self.pool).await?;
        }
        Ok(())
    }

    /// A run's state, key by key.
    pub async fn state(
        &self,
        run_id: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, StoreError> {
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT key, value FROM run_state WHERE run_id = $1")
                .bind(run_id)
                .fetch_all(&self.pool)
                .await?;
        Ok(rows.into_iter().collect())
    }

    /// Events with `seq` greater than `after`, in order.
    pub async fn events_after(
        &self,
        run_id: &str,
        after: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let rows = sqlx::query("SELECT seq, name, payload, ts FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq")
            .bind(run_id)
            .bind(after)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| {
                Ok(StoredEvent {
                    seq: row.try_get("seq")?,
                    name: row.try_get("name")?,
                    payload: row.try_get("payload")?,
                    ts: row.try_get("ts")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    pub async fn save_activation(
        &self,
        run_id: &str,
        activation: StoredActivation<'_>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO activations (run_id, module_id, activation, status, record, started_at, finished_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (run_id, module_id, activation)
             DO UPDATE SET status = excluded.status, record = excluded.record, finished_at = excluded.finished_at",
        )
        .bind(run_id)
        .bind(activation.module_id)
        .bind(activation.activation)
        .bind(activation.status)
        .bind(activation.record)
        .bind(activation.started_at)
        .bind(activation.finished_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every activation record of a run (JSON), in the order they started.
    pub async fn activations(&self, run_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT record FROM activations WHERE run_id = $1 ORDER BY started_at, module_id, activation",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Runs left queued or running by a server that stopped: they are
    /// marked interrupted. Returns their ids.
    pub async fn interrupt_unfinished_runs(&self) -> Result<Vec<String>, StoreError> {
        let ids: Vec<String> =
            sqlx::query_scalar("SELECT id FROM runs WHERE status IN ('queued', 'running')")
                .fetch_all(&self.pool)
                .await?;
        for id in &ids {
            self.set_run_status(
                id,
                "interrupted",
                Some("the server stopped while the run was in progress"),
            )
            .await?;
        }
        Ok(ids)
    }

    /// The highest event number of a run, 0 when it has none.
    pub async fn last_event_seq(&self, run_id: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar::<_, Option<i64>>(
            "SELECT MAX(seq) FROM run_events WHERE run_id = $1",
        )
        .bind(run_id)
        .fetch_one(&self.pool)
        .await?
        .unwrap_or(0))
    }
}
