//! A group's rows stored on SQLite: multi-row statements whose values are
//! bound by place (`?`), so a statement can be long: fewer statements,
//! fewer trips to the connection's thread.

use std::sync::OnceLock;

use sqlx::AnyConnection;

use super::RunWrite;
use super::rows::Group;
use crate::store::StoreError;

/// Rows per multi-row statement (3 to 8 bound values each).
pub const ROWS_PER_STATEMENT: usize = 128;

pub async fn insert_runs(
    connection: &mut AnyConnection,
    runs: &[&RunWrite],
) -> Result<(), StoreError> {
    static TEXTS: Texts = Texts::new();
    for chunk in runs.chunks(ROWS_PER_STATEMENT) {
        let sql = TEXTS.get(chunk.len(), 12, |values| {
            format!(
                "INSERT INTO runs (id, graph_id, graph_revision, snapshot, input, status, created_at, owner,
                    lease_until, budget_usd, from_run, from_module)
                 VALUES {values}"
            )
        });
        let mut query = sqlx::query(sql);
        for run in chunk {
            query = query
                .bind(run.id.as_str())
                .bind(run.graph_id.as_deref())
                .bind(run.graph_revision)
                .bind(run.snapshot.as_str())
                .bind(run.input.as_str())
                .bind("queued")
                .bind(run.created_at)
                .bind(run.owner.as_deref())
                .bind(run.lease_until)
                .bind(run.budget_usd)
                .bind(run.from.as_ref().map(|from| from.run.as_str()))
                .bind(run.from.as_ref().map(|from| from.module.as_str()));
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// Everything of the group but its new runs.
pub async fn store(connection: &mut AnyConnection, group: &Group<'_>) -> Result<(), StoreError> {
    insert_events(connection, group).await?;
    save_activations(connection, group).await?;
    save_state(connection, group).await?;
    set_statuses(connection, group).await
}

async fn insert_events(
    connection: &mut AnyConnection,
    group: &Group<'_>,
) -> Result<(), StoreError> {
    static TEXTS: Texts = Texts::new();
    for chunk in group.events.chunks(ROWS_PER_STATEMENT) {
        let sql = TEXTS.get(chunk.len(), 5, |values| {
            format!("INSERT INTO run_events (run_id, seq, name, payload, ts) VALUES {values}")
        });
        let mut query = sqlx::query(sql);
        for event in chunk {
            query = query
                .bind(event.run_id)
                .bind(event.seq)
                .bind(event.name)
                .bind(event.payload)
                .bind(event.ts);
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

async fn save_activations(
    connection: &mut AnyConnection,
    group: &Group<'_>,
) -> Result<(), StoreError> {
    static TEXTS: Texts = Texts::new();
    for chunk in group.activations.chunks(ROWS_PER_STATEMENT) {
        let sql = TEXTS.get(chunk.len(), 8, |values| {
            format!(
                "INSERT INTO activations (run_id, module_id, activation, status, record, started_at, finished_at, ending)
                 VALUES {values}
                 ON CONFLICT (run_id, module_id, activation)
                 DO UPDATE SET status = excluded.status, record = excluded.record, finished_at = excluded.finished_at,
                    ending = COALESCE(excluded.ending, activations.ending)"
            )
        });
        let mut query = sqlx::query(sql);
        for row in chunk {
            query = query
                .bind(row.run_id)
                .bind(row.module_id)
                .bind(row.activation)
                .bind(row.status)
                .bind(row.record)
                .bind(row.started_at)
                .bind(row.finished_at)
                .bind(row.ending);
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// Each part's changed keys merged into the stored part.
async fn save_state(connection: &mut AnyConnection, group: &Group<'_>) -> Result<(), StoreError> {
    static TEXTS: Texts = Texts::new();
    for chunk in group.state.chunks(ROWS_PER_STATEMENT) {
        let sql = TEXTS.get(chunk.len(), 3, |values| {
            format!(
                "INSERT INTO run_state_parts (run_id, part, state) VALUES {values}
                 ON CONFLICT (run_id, part) DO UPDATE SET state = json_patch(run_state_parts.state, excluded.state)"
            )
        });
        let mut query = sqlx::query(sql);
        for row in chunk {
            query = query
                .bind(row.run_id)
                .bind(row.part)
                .bind(row.state.as_str());
        }
        query.execute(&mut *connection).await?;
    }
    Ok(())
}

/// One statement a round (`Group::status_rounds`).
async fn set_statuses(connection: &mut AnyConnection, group: &Group<'_>) -> Result<(), StoreError> {
    static TEXTS: Texts = Texts::new();
    for round in group.status_rounds() {
        for chunk in round.chunks(ROWS_PER_STATEMENT) {
            // A VALUES list's columns are column1 (the run), column2 (the
            // status), column3 (the error), column4 (when), column5
            // (whether it finishes the run).
            let sql = TEXTS.get(chunk.len(), 5, |values| {
                format!(
                    "UPDATE runs SET status = moved.column2, error = moved.column3,
                        started_at = CASE WHEN moved.column2 = 'running' AND runs.started_at IS NULL
                            THEN moved.column4 ELSE runs.started_at END,
                        finished_at = CASE WHEN moved.column5 = 1 THEN moved.column4 ELSE runs.finished_at END
                     FROM (VALUES {values}) AS moved
                     WHERE runs.id = moved.column1
                       AND runs.status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')"
                )
            });
            let mut query = sqlx::query(sql);
            for row in chunk {
                query = query
                    .bind(row.run_id)
                    .bind(row.status)
                    .bind(row.error)
                    .bind(row.at)
                    .bind(i64::from(row.finished));
            }
            query.execute(&mut *connection).await?;
        }
    }
    Ok(())
}

/// The texts of one table's multi-row statement, for each number of rows,
/// each made once: made for every statement, they took a fifth of the
/// writer task's time.
struct Texts(OnceLock<Vec<String>>);

impl Texts {
    const fn new() -> Texts {
        Texts(OnceLock::new())
    }

    /// The text for `rows` rows (1 to `ROWS_PER_STATEMENT`) of `columns`
    /// values: `make` puts the rows' placeholders into the statement.
    fn get(
        &'static self,
        rows: usize,
        columns: usize,
        make: impl Fn(&str) -> String,
    ) -> &'static str {
        let texts = self.0.get_or_init(|| {
            (1..=ROWS_PER_STATEMENT)
                .map(|rows| make(&placeholders(rows, columns)))
                .collect()
        });
        texts.get(rows.saturating_sub(1)).map_or("", String::as_str)
    }
}

/// `count` rows of `columns` placeholders: `(?, ?), (?, ?)`. Only
/// placeholders are built into a statement, never a value.
fn placeholders(count: usize, columns: usize) -> String {
    let row = format!("({})", vec!["?"; columns].join(", "));
    vec![row.as_str(); count].join(", ")
}
