//! A group's rows stored on PostgreSQL: the rows of each table travel as
//! one JSON parameter that the database turns into rows
//! (`json_to_recordset`), one round trip for all of them. Bound one value
//! at a time they needed a statement per 25 rows (sqlx looks each numbered
//! parameter up among all of the statement's, which costs the square of
//! their number), and a round trip per 25 events, per fenced run and per
//! status was most of a commit (`patchbay bench`).

use std::collections::BTreeSet;

use sqlx::AnyConnection;

use super::rows::Group;
use super::{RunWrite, Write};
use crate::store::{EVENTS_CHANNEL, StoreError};

/// Rows per statement: a few megabytes of JSON at most.
pub const ROWS_PER_STATEMENT: usize = 4096;

/// Rows as the JSON array `json_to_recordset` reads.
fn rows_json<T: serde::Serialize>(rows: &[T]) -> Result<String, StoreError> {
    serde_json::to_string(rows)
        .map_err(|error| StoreError::Configuration(format!("rows cannot be written: {error}")))
}

#[derive(serde::Serialize)]
struct RunRow<'a> {
    id: &'a str,
    graph_id: Option<&'a str>,
    graph_revision: Option<i64>,
    snapshot: &'a str,
    input: &'a str,
    created_at: i64,
    owner: Option<&'a str>,
    lease_until: Option<i64>,
    budget_usd: Option<f64>,
    from_run: Option<&'a str>,
    from_module: Option<&'a str>,
    started_by: Option<&'a str>,
}

pub async fn insert_runs(
    connection: &mut AnyConnection,
    runs: &[&RunWrite],
) -> Result<(), StoreError> {
    for chunk in runs.chunks(ROWS_PER_STATEMENT) {
        let rows: Vec<RunRow> = chunk
            .iter()
            .map(|run| RunRow {
                id: &run.id,
                graph_id: run.graph_id.as_deref(),
                graph_revision: run.graph_revision,
                snapshot: &run.snapshot,
                input: &run.input,
                created_at: run.created_at,
                owner: run.owner.as_deref(),
                lease_until: run.lease_until,
                budget_usd: run.budget_usd,
                from_run: run.from.as_ref().map(|from| from.run.as_str()),
                from_module: run.from.as_ref().map(|from| from.module.as_str()),
                started_by: run.started_by.as_deref(),
            })
            .collect();
        sqlx::query(
            "INSERT INTO runs (id, graph_id, graph_revision, snapshot, input, status, created_at, owner,
                lease_until, budget_usd, from_run, from_module, started_by)
             SELECT id, graph_id, graph_revision, snapshot, input, 'queued', created_at, owner,
                lease_until, budget_usd, from_run, from_module, started_by
             FROM json_to_recordset($1::json) AS run (id text, graph_id text, graph_revision bigint,
                snapshot text, input text, created_at bigint, owner text, lease_until bigint,
                budget_usd double precision, from_run text, from_module text, started_by text)",
        )
        .bind(rows_json(&rows)?)
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}

/// A run a write is fenced by, and the process that must hold it.
#[derive(serde::Serialize)]
struct Fence<'a> {
    id: &'a str,
    owner: &'a str,
}

/// Locks the row of each run whose writes are fenced until the commit (a
/// takeover waits), in the order of their ids so that two commits never
/// wait on each other; returns the runs whose process no longer holds them.
/// The lock is the one an `UPDATE` of the row takes (`NO KEY UPDATE`), as
/// the fence was one until the group's fences became one statement, without
/// writing a new version of each row.
pub async fn fence<'a>(
    connection: &mut AnyConnection,
    writes: &'a [&Write],
) -> Result<BTreeSet<&'a str>, StoreError> {
    let fenced: BTreeSet<(&str, &str)> = writes.iter().filter_map(|write| write.fenced()).collect();
    if fenced.is_empty() {
        return Ok(BTreeSet::new());
    }
    let pairs: Vec<Fence> = fenced
        .iter()
        .map(|&(id, owner)| Fence { id, owner })
        .collect();
    let held: BTreeSet<String> = sqlx::query_scalar(
        "SELECT runs.id FROM runs
         JOIN json_to_recordset($1::json) AS fenced (id text, owner text)
           ON runs.id = fenced.id AND runs.owner = fenced.owner
         ORDER BY runs.id FOR NO KEY UPDATE OF runs",
    )
    .bind(rows_json(&pairs)?)
    .fetch_all(&mut *connection)
    .await?
    .into_iter()
    .collect();
    Ok(fenced
        .into_iter()
        .map(|(run_id, _)| run_id)
        .filter(|run_id| !held.contains(*run_id))
        .collect())
}

/// Everything of the group but its new runs, then the other processes are
/// told which runs have new events.
pub async fn store(connection: &mut AnyConnection, group: &Group<'_>) -> Result<(), StoreError> {
    for chunk in group.events.chunks(ROWS_PER_STATEMENT) {
        sqlx::query(
            "INSERT INTO run_events (run_id, seq, name, payload, ts)
             SELECT run_id, seq, name, payload, ts FROM json_to_recordset($1::json)
               AS event (run_id text, seq bigint, name text, payload text, ts bigint)",
        )
        .bind(rows_json(chunk)?)
        .execute(&mut *connection)
        .await?;
    }
    for chunk in group.activations.chunks(ROWS_PER_STATEMENT) {
        sqlx::query(
            "INSERT INTO activations (run_id, module_id, activation, status, record, started_at, finished_at, ending)
             SELECT run_id, module_id, activation, status, record, started_at, finished_at, ending
             FROM json_to_recordset($1::json) AS saved (run_id text, module_id text, activation bigint,
                status text, record text, started_at bigint, finished_at bigint, ending text)
             ON CONFLICT (run_id, module_id, activation)
             DO UPDATE SET status = excluded.status, record = excluded.record, finished_at = excluded.finished_at,
                ending = COALESCE(excluded.ending, activations.ending)",
        )
        .bind(rows_json(chunk)?)
        .execute(&mut *connection)
        .await?;
    }
    for chunk in group.state.chunks(ROWS_PER_STATEMENT) {
        sqlx::query(
            "INSERT INTO run_state_parts (run_id, part, state)
             SELECT run_id, part, state FROM json_to_recordset($1::json) AS changed (run_id text, part text, state text)
             ON CONFLICT (run_id, part)
             DO UPDATE SET state = (run_state_parts.state::jsonb || excluded.state::jsonb)::text",
        )
        .bind(rows_json(chunk)?)
        .execute(&mut *connection)
        .await?;
    }
    set_statuses(connection, group).await?;
    notify_followers(connection, &group.runs_with_events).await
}

/// One statement a round (`Group::status_rounds`).
async fn set_statuses(connection: &mut AnyConnection, group: &Group<'_>) -> Result<(), StoreError> {
    for round in group.status_rounds() {
        sqlx::query(
            "UPDATE runs SET status = moved.status, error = moved.error,
                started_at = CASE WHEN moved.status = 'running' AND runs.started_at IS NULL
                    THEN moved.at ELSE runs.started_at END,
                finished_at = CASE WHEN moved.finished THEN moved.at ELSE runs.finished_at END
             FROM json_to_recordset($1::json)
               AS moved (run_id text, status text, error text, at bigint, finished boolean)
             WHERE runs.id = moved.run_id
               AND runs.status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')",
        )
        .bind(rows_json(&round)?)
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}

/// Tells every process that these runs have new events: one statement for
/// the lot (a commit of many runs' events was a round trip per run).
async fn notify_followers(
    connection: &mut AnyConnection,
    run_ids: &[&str],
) -> Result<(), StoreError> {
    if run_ids.is_empty() {
        return Ok(());
    }
    sqlx::query("SELECT pg_notify($1, run_id) FROM json_array_elements_text($2::json) AS run_id")
        .bind(EVENTS_CHANNEL)
        .bind(rows_json(run_ids)?)
        .execute(&mut *connection)
        .await?;
    Ok(())
}
