//! Runs, their append-only event log and activation records. The store
//! deals in JSON text; the run recorder turns engine types into it.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::writer::{ActivationWrite, FINISHED, RunWrite, Write};
use super::{LastRun, Store, StoreError, now_millis};

pub struct NewRun<'a> {
    pub id: &'a str,
    pub graph_id: Option<&'a str>,
    pub graph_revision: Option<i64>,
    /// The graph document the run runs (a snapshot: later edits do not count).
    pub snapshot: &'a str,
    pub input: &'a str,
    /// At most this many US dollars for the run.
    pub budget_usd: Option<f64>,
    /// The process that runs it, and until when (PRODUCT §8).
    pub lease: Option<Lease<'a>>,
    /// A run from a module: the run it reuses, and the module.
    pub from: Option<&'a wire::run::RunFrom>,
    /// How it started.
    pub started_by: Option<&'a wire::run::StartedBy>,
}

/// A server process's hold on a run: it runs the run while it renews the
/// lease; once `until` has passed, another process may take the run over.
#[derive(Clone, Copy, Debug)]
pub struct Lease<'a> {
    pub owner: &'a str,
    /// Unix milliseconds.
    pub until: i64,
}

/// A run a process has just taken over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimed {
    pub id: String,
    /// Someone asked to cancel it while nobody ran it.
    pub cancel_requested: bool,
}

#[derive(Clone, Debug, PartialEq)]
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
    pub budget_usd: Option<f64>,
    /// A run from a module: the run it reuses, and the module.
    pub from: Option<wire::run::RunFrom>,
    pub started_by: Option<wire::run::StartedBy>,
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
    /// How it ended, as a resume replays it; `None` keeps what was kept.
    pub ending: Option<&'a str>,
}

/// One activation row: its record and how it ended, if it has.
pub struct ActivationRow {
    pub record: String,
    pub ending: Option<String>,
}

const RUN_COLUMNS: &str = "id, graph_id, graph_revision, snapshot, input, status, error, created_at, started_at, finished_at, budget_usd, from_run, from_module, started_by";

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
        budget_usd: row.try_get("budget_usd")?,
        from: match (
            row.try_get::<Option<String>, _>("from_run")?,
            row.try_get::<Option<String>, _>("from_module")?,
        ) {
            (Some(run), Some(module)) => Some(wire::run::RunFrom { run, module }),
            _ => None,
        },
        // Written by this server; one it cannot read says nothing.
        started_by: row
            .try_get::<Option<String>, _>("started_by")?
            .and_then(|text| serde_json::from_str(&text).ok()),
    })
}

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

fn claimed_from(rows: &[AnyRow]) -> Result<Vec<Claimed>, StoreError> {
    rows.iter()
        .map(|row| {
            Ok(Claimed {
                id: row.try_get("id")?,
                cancel_requested: row.try_get::<i64, _>("cancel_requested")? != 0,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError::from)
}

impl Store {
    pub async fn insert_run(&self, run: NewRun<'_>) -> Result<(), StoreError> {
        self.writer
            .write(Write::Run(RunWrite {
                id: run.id.to_owned(),
                graph_id: run.graph_id.map(str::to_owned),
                graph_revision: run.graph_revision,
                snapshot: run.snapshot.to_owned(),
                input: run.input.to_owned(),
                created_at: now_millis(),
                owner: run.lease.map(|lease| lease.owner.to_owned()),
                lease_until: run.lease.map(|lease| lease.until),
                budget_usd: run.budget_usd,
                from: run.from.cloned(),
                started_by: run
                    .started_by
                    .and_then(|started| serde_json::to_string(started).ok()),
            }))
            .await
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

    /// A graph's newest run that waits for a person, if one does.
    pub async fn waiting_run(&self, graph_id: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar::<_, String>(
            "SELECT id FROM runs WHERE graph_id = $1 AND status = 'waiting' ORDER BY created_at DESC, id DESC LIMIT 1",
        )
        .bind(graph_id)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Moves a run to `status`; a finished run stays as it finished. With
    /// a `fence`, only while that process holds the run (see
    /// `append_events`).
    pub async fn set_run_status(
        &self,
        id: &str,
        status: &str,
        error: Option<&str>,
        fence: Option<&str>,
    ) -> Result<(), StoreError> {
        self.writer
            .write(Write::Status {
                run_id: id.to_owned(),
                status: status.to_owned(),
                error: error.map(str::to_owned),
                at: now_millis(),
                fence: fence.map(str::to_owned),
            })
            .await
    }

    /// Appends events, committed with other runs' writes (group commit).
    /// With a `fence` (on PostgreSQL, where several processes share runs),
    /// only while that process holds the run: one that lost it to another
    /// cannot add to its log. Every process following the run hears of the
    /// events when they commit.
    pub async fn append_events(
        &self,
        run_id: &str,
        events: Vec<StoredEvent>,
        fence: Option<&str>,
    ) -> Result<(), StoreError> {
        self.writer
            .write(Write::Events {
                run_id: run_id.to_owned(),
                events,
                fence: fence.map(str::to_owned),
            })
            .await
    }

    /// Sets keys of a run's state; with a `fence`, only while that process
    /// holds the run.
    pub async fn save_state(
        &self,
        run_id: &str,
        changes: &[(String, String)],
        fence: Option<&str>,
    ) -> Result<(), StoreError> {
        self.writer.write(state_write(run_id, changes, fence)).await
    }

    /// Sets keys of a run's state without waiting for them to be stored
    /// (in order with the writes before and after it): only for room in
    /// the queue.
    pub async fn queue_state(
        &self,
        run_id: &str,
        changes: &[(String, String)],
        fence: Option<&str>,
    ) -> Result<(), StoreError> {
        self.writer.queue(state_write(run_id, changes, fence)).await
    }

    /// A run's state, key by key.
    pub async fn state(
        &self,
        run_id: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, StoreError> {
        // Part '' first: it holds the keys of runs stored before the state
        // was kept in parts, which a module's part may have changed since.
        let parts: Vec<String> =
            sqlx::query_scalar("SELECT state FROM run_state_parts WHERE run_id = $1 ORDER BY part")
                .bind(run_id)
                .fetch_all(&self.pool)
                .await?;
        let mut state = std::collections::BTreeMap::new();
        for part in parts {
            let keys: std::collections::BTreeMap<String, String> = serde_json::from_str(&part)
                .map_err(|error| {
                    StoreError::Configuration(format!(
                        "the state of run {run_id} cannot be read: {error}"
                    ))
                })?;
            state.extend(keys);
        }
        Ok(state)
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

    /// Saves an activation's record; with a `fence`, only while that
    /// process holds the run.
    pub async fn save_activation(
        &self,
        run_id: &str,
        activation: StoredActivation<'_>,
        fence: Option<&str>,
    ) -> Result<(), StoreError> {
        self.writer
            .write(activation_write(run_id, activation, fence))
            .await
    }

    /// Saves an activation without waiting for it to be stored (in order
    /// with the writes before and after it): only for room in the queue.
    pub async fn queue_activation(
        &self,
        run_id: &str,
        activation: StoredActivation<'_>,
        fence: Option<&str>,
    ) -> Result<(), StoreError> {
        self.writer
            .queue(activation_write(run_id, activation, fence))
            .await
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

    /// Every activation of a run with how it ended, for a resume.
    pub async fn activation_rows(&self, run_id: &str) -> Result<Vec<ActivationRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT record, ending FROM activations WHERE run_id = $1 ORDER BY started_at, module_id, activation",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(ActivationRow {
                    record: row.try_get("record")?,
                    ending: row.try_get("ending")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// Renews `owner`'s leases on its unfinished runs; returns the runs it
    /// still holds, with whether someone asked to cancel each.
    pub async fn renew_leases(&self, owner: &str, until: i64) -> Result<Vec<Claimed>, StoreError> {
        let rows = sqlx::query(
            "UPDATE runs SET lease_until = $1
             WHERE owner = $2 AND status IN ('queued', 'running', 'waiting')
             RETURNING id, cancel_requested",
        )
        .bind(until)
        .bind(owner)
        .fetch_all(&self.pool)
        .await?;
        claimed_from(&rows)
    }

    /// Takes over up to `limit` unfinished runs whose lease ran out before
    /// `expired_before` (or that never had one), for `lease`. On
    /// PostgreSQL each is claimed by exactly one process: rows another
    /// claim has locked are skipped.
    pub async fn claim_runs(
        &self,
        lease: Lease<'_>,
        expired_before: i64,
        limit: i64,
    ) -> Result<Vec<Claimed>, StoreError> {
        let lock = match self.backend {
            super::Backend::Postgres => "FOR UPDATE SKIP LOCKED",
            // One process at a time writes a SQLite file.
            super::Backend::Sqlite => "",
        };
        let sql = format!(
            "UPDATE runs SET owner = $1, lease_until = $2
             WHERE id IN (
                SELECT id FROM runs
                WHERE status IN ('queued', 'running', 'waiting')
                  AND (lease_until IS NULL OR lease_until < $3)
                  AND (owner IS NULL OR owner <> $4)
                ORDER BY created_at LIMIT $5 {lock})
             RETURNING id, cancel_requested"
        );
        // Only the lock clause, a constant, is built into it.
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(lease.owner)
            .bind(lease.until)
            .bind(expired_before)
            .bind(lease.owner)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        claimed_from(&rows)
    }

    /// Gives up `owner`'s leases (it is stopping), so that the next process
    /// takes its runs over at once.
    pub async fn release_leases(&self, owner: &str) -> Result<u64, StoreError> {
        Ok(sqlx::query(
            "UPDATE runs SET lease_until = 0 WHERE owner = $1 AND status IN ('queued', 'running', 'waiting')",
        )
        .bind(owner)
        .execute(&self.pool)
        .await?
        .rows_affected())
    }

    /// How many runs wait for a person with nothing running, in the whole
    /// database.
    pub async fn count_waiting_runs(&self) -> Result<i64, StoreError> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs WHERE status = 'waiting'")
            .fetch_one(&self.pool)
            .await?;
        Ok(count)
    }

    /// Who holds a run, and whether it is unfinished.
    pub async fn run_owner(&self, id: &str) -> Result<Option<(String, bool)>, StoreError> {
        let row = sqlx::query("SELECT owner, status FROM runs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| {
            let owner: Option<String> = row.try_get("owner")?;
            let status: String = row.try_get("status")?;
            Ok((
                owner.unwrap_or_default(),
                !FINISHED.contains(&status.as_str()),
            ))
        })
        .transpose()
        .map_err(|error: sqlx::Error| StoreError::from(error))
    }

    /// Lets go of a run this process stopped without ending it: any
    /// process (this one too) may take it over at once.
    pub async fn release_run(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE runs SET owner = NULL, lease_until = 0
             WHERE id = $1 AND owner = $2 AND status IN ('queued', 'running', 'waiting')",
        )
        .bind(id)
        .bind(owner)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Leaves a cancel for the process that runs the run; false when the
    /// run has ended.
    pub async fn request_cancel(&self, id: &str) -> Result<bool, StoreError> {
        Ok(sqlx::query(
            "UPDATE runs SET cancel_requested = 1 WHERE id = $1 AND status IN ('queued', 'running', 'waiting')",
        )
        .bind(id)
        .execute(&self.pool)
        .await?
        .rows_affected()
            > 0)
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

fn state_write(run_id: &str, changes: &[(String, String)], fence: Option<&str>) -> Write {
    Write::State {
        run_id: run_id.to_owned(),
        changes: changes.to_vec(),
        fence: fence.map(str::to_owned),
    }
}

fn activation_write(run_id: &str, activation: StoredActivation<'_>, fence: Option<&str>) -> Write {
    Write::Activation(ActivationWrite {
        run_id: run_id.to_owned(),
        module_id: activation.module_id.to_owned(),
        activation: activation.activation,
        status: activation.status.to_owned(),
        record: activation.record.to_owned(),
        started_at: activation.started_at,
        finished_at: activation.finished_at,
        ending: activation.ending.map(str::to_owned),
        fence: fence.map(str::to_owned),
    })
}
