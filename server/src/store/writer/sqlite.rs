//! A group's rows stored on SQLite: multi-row statements whose values are
//! bound by place (`?`), so a statement can be long: fewer statements,
//! fewer trips to the connection's thread.

use std::sync::OnceLock;

use sqlx::{AnyConnection, Connection, Executor};

use super::rows::{ActivationRow, EventRow, Group, StateRow, StatusRow};
use super::{RunWrite, Write};
use crate::store::StoreError;

/// Rows per multi-row statement (3 to 8 bound values each).
pub const ROWS_PER_STATEMENT: usize = 128;

/// A group this small (rows of every table together) is one trip to the
/// connection's thread: its statements, with BEGIN and COMMIT, as one text.
/// Larger ones send a statement at a time, as their texts, made of
/// statements of up to `ROWS_PER_STATEMENT` rows, would rarely repeat and
/// each would be compiled anew.
const ONE_TRIP_ROWS: usize = 32;

/// Stores `writes` (runs first, as the other writes may be of them) in one
/// transaction, or as one statement when that is all they are.
pub async fn commit(connection: &mut AnyConnection, writes: &[&Write]) -> Result<(), StoreError> {
    let runs = super::new_runs(writes);
    let group = Group::of(writes);
    let rounds = group.status_rounds();
    let statements = statements(&runs, &group, &rounds);
    let transaction = needs_transaction(writes.len(), statements.len());
    if statements.iter().map(Statement::rows).sum::<usize>() <= ONE_TRIP_ROWS {
        return in_one_trip(connection, &statements, transaction).await;
    }
    let mut open = connection.begin().await?;
    for statement in &statements {
        statement
            .bind(sqlx::query(statement.text()))
            .execute(&mut *open)
            .await?;
    }
    open.commit().await?;
    Ok(())
}

/// A write that is one statement is atomic alone: no BEGIN and COMMIT to
/// wait for (what a single run's chain mostly does).
fn needs_transaction(writes: usize, statements: usize) -> bool {
    writes > 1 || statements > 1
}

async fn in_one_trip(
    connection: &mut AnyConnection,
    statements: &[Statement<'_>],
    transaction: bool,
) -> Result<(), StoreError> {
    let mut text = String::from(if transaction { "BEGIN;\n" } else { "" });
    for statement in statements {
        text.push_str(statement.text());
        text.push_str(";\n");
    }
    if transaction {
        text.push_str("COMMIT");
    }
    // Made of the statements' own texts: placeholders, never a value.
    let mut query = sqlx::query(sqlx::AssertSqlSafe(text));
    for statement in statements {
        query = statement.bind(query);
    }
    if let Err(error) = query.execute(&mut *connection).await {
        // A statement that failed left the transaction open.
        if transaction && let Err(rollback) = connection.execute("ROLLBACK").await {
            tracing::warn!(%rollback, "a failed commit could not be rolled back");
        }
        return Err(error.into());
    }
    Ok(())
}

type Query<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// One multi-row statement of a group: a table and its rows.
enum Statement<'g> {
    Runs(&'g [&'g RunWrite]),
    Events(&'g [EventRow<'g>]),
    Activations(&'g [ActivationRow<'g>]),
    State(&'g [StateRow<'g>]),
    /// A round of statuses (`Group::status_rounds`).
    Statuses(&'g [&'g StatusRow<'g>]),
}

/// The group's statements, in the order they are stored: new runs, their
/// events, activation records, state, then statuses round by round.
fn statements<'g>(
    runs: &'g [&'g RunWrite],
    group: &'g Group<'g>,
    rounds: &'g [Vec<&'g StatusRow<'g>>],
) -> Vec<Statement<'g>> {
    let chunks = ROWS_PER_STATEMENT;
    runs.chunks(chunks)
        .map(Statement::Runs)
        .chain(group.events.chunks(chunks).map(Statement::Events))
        .chain(group.activations.chunks(chunks).map(Statement::Activations))
        .chain(group.state.chunks(chunks).map(Statement::State))
        .chain(
            rounds
                .iter()
                .flat_map(|round| round.chunks(chunks).map(Statement::Statuses)),
        )
        .collect()
}

impl<'g> Statement<'g> {
    fn rows(&self) -> usize {
        match self {
            Statement::Runs(rows) => rows.len(),
            Statement::Events(rows) => rows.len(),
            Statement::Activations(rows) => rows.len(),
            Statement::State(rows) => rows.len(),
            Statement::Statuses(rows) => rows.len(),
        }
    }

    fn text(&self) -> &'static str {
        static RUNS: Texts = Texts::new();
        static EVENTS: Texts = Texts::new();
        static ACTIVATIONS: Texts = Texts::new();
        static STATE: Texts = Texts::new();
        static STATUSES: Texts = Texts::new();
        let rows = self.rows();
        match self {
            Statement::Runs(_) => RUNS.get(rows, 13, |values| {
                format!(
                    "INSERT INTO runs (id, graph_id, graph_revision, snapshot, input, status, created_at, owner,
                        lease_until, budget_usd, from_run, from_module, started_by)
                     VALUES {values}"
                )
            }),
            Statement::Events(_) => EVENTS.get(rows, 5, |values| {
                format!("INSERT INTO run_events (run_id, seq, name, payload, ts) VALUES {values}")
            }),
            Statement::Activations(_) => ACTIVATIONS.get(rows, 8, |values| {
                format!(
                    "INSERT INTO activations (run_id, module_id, activation, status, record, started_at, finished_at, ending)
                     VALUES {values}
                     ON CONFLICT (run_id, module_id, activation)
                     DO UPDATE SET status = excluded.status, record = excluded.record, finished_at = excluded.finished_at,
                        ending = COALESCE(excluded.ending, activations.ending)"
                )
            }),
            // Each part's changed keys merged into the stored part.
            Statement::State(_) => STATE.get(rows, 3, |values| {
                format!(
                    "INSERT INTO run_state_parts (run_id, part, state) VALUES {values}
                     ON CONFLICT (run_id, part) DO UPDATE SET state = json_patch(run_state_parts.state, excluded.state)"
                )
            }),
            // A VALUES list's columns are column1 (the run), column2 (the
            // status), column3 (the error), column4 (when), column5
            // (whether it finishes the run).
            Statement::Statuses(_) => STATUSES.get(rows, 5, |values| {
                format!(
                    "UPDATE runs SET status = moved.column2, error = moved.column3,
                        started_at = CASE WHEN moved.column2 = 'running' AND runs.started_at IS NULL
                            THEN moved.column4 ELSE runs.started_at END,
                        finished_at = CASE WHEN moved.column5 = 1 THEN moved.column4 ELSE runs.finished_at END
                     FROM (VALUES {values}) AS moved
                     WHERE runs.id = moved.column1
                       AND runs.status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')"
                )
            }),
        }
    }

    /// `query` with this statement's values bound after those it has.
    fn bind<'q>(&self, mut query: Query<'q>) -> Query<'q>
    where
        'g: 'q,
    {
        match *self {
            Statement::Runs(rows) => {
                for run in rows {
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
                        .bind(run.from.as_ref().map(|from| from.module.as_str()))
                        .bind(run.started_by.as_deref());
                }
            }
            Statement::Events(rows) => {
                for event in rows {
                    query = query
                        .bind(event.run_id)
                        .bind(event.seq)
                        .bind(event.name)
                        .bind(event.payload)
                        .bind(event.ts);
                }
            }
            Statement::Activations(rows) => {
                for row in rows {
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
            }
            Statement::State(rows) => {
                for row in rows {
                    query = query
                        .bind(row.run_id)
                        .bind(row.part)
                        .bind(row.state.as_str());
                }
            }
            Statement::Statuses(rows) => {
                for row in rows {
                    query = query
                        .bind(row.run_id)
                        .bind(row.status)
                        .bind(row.error)
                        .bind(row.at)
                        .bind(i64::from(row.finished));
                }
            }
        }
        query
    }
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

#[cfg(test)]
mod tests {
    use super::super::tests::state;
    use super::*;

    fn statements_of(write: &Write) -> usize {
        let group = Group::of(&[write]);
        let rounds = group.status_rounds();
        statements(&[], &group, &rounds).len()
    }

    #[test]
    fn a_write_that_needs_two_statements_is_committed_in_a_transaction() {
        assert_eq!(statements_of(&state(3)), 1);
        assert!(!needs_transaction(1, statements_of(&state(3))));
        // A part per key: 700 rows, six statements.
        assert_eq!(statements_of(&state(700)), 6);
        assert!(needs_transaction(1, statements_of(&state(700))));
        assert!(needs_transaction(2, 1));
    }
}
