//! Decisions on tool calls that wait for a person (PRODUCT §3.17): the
//! first taken on a call wins (one conditional insert), its timeout being
//! one; the process that runs the run acts on it.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, StoreError, TIMED_OUT};

/// A decision on one tool call, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredCallDecision {
    pub run_id: String,
    pub module_id: String,
    pub activation: i64,
    pub call_id: String,
    /// `approve` or `reject` (a timeout: `reject`, by [`TIMED_OUT`]).
    pub decision: String,
    pub feedback: String,
    /// The arguments as the person edited them, as JSON.
    pub arguments: Option<String>,
    pub decided_by: String,
    pub decided_at: i64,
}

const COLUMNS: &str = "d.run_id, d.module_id, d.activation, d.call_id, d.decision, d.feedback, d.arguments, d.decided_by, d.decided_at";

fn from_row(row: &AnyRow) -> Result<StoredCallDecision, sqlx::Error> {
    Ok(StoredCallDecision {
        run_id: row.try_get("run_id")?,
        module_id: row.try_get("module_id")?,
        activation: row.try_get("activation")?,
        call_id: row.try_get("call_id")?,
        decision: row.try_get("decision")?,
        feedback: row.try_get("feedback")?,
        arguments: row.try_get("arguments")?,
        decided_by: row.try_get("decided_by")?,
        decided_at: row.try_get("decided_at")?,
    })
}

fn all_from(rows: &[AnyRow]) -> Result<Vec<StoredCallDecision>, StoreError> {
    rows.iter()
        .map(from_row)
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError::from)
}

impl Store {
    /// Stores a decision on a call unless one was taken on it already:
    /// false when another came first.
    pub async fn insert_call_decision(
        &self,
        decision: &StoredCallDecision,
    ) -> Result<bool, StoreError> {
        Ok(sqlx::query(
            "INSERT INTO tool_call_decisions (run_id, module_id, activation, call_id, decision, feedback, arguments, decided_by, decided_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT DO NOTHING",
        )
        .bind(&decision.run_id)
        .bind(&decision.module_id)
        .bind(decision.activation)
        .bind(&decision.call_id)
        .bind(&decision.decision)
        .bind(&decision.feedback)
        .bind(decision.arguments.as_deref())
        .bind(&decision.decided_by)
        .bind(decision.decided_at)
        .execute(&self.pool)
        .await?
        .rows_affected()
            > 0)
    }

    /// The decision stored on a call, if any.
    pub async fn call_decision(
        &self,
        run_id: &str,
        module_id: &str,
        activation: i64,
        call_id: &str,
    ) -> Result<Option<StoredCallDecision>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM tool_call_decisions d
             WHERE d.run_id = $1 AND d.module_id = $2 AND d.activation = $3 AND d.call_id = $4"
        )))
        .bind(run_id)
        .bind(module_id)
        .bind(activation)
        .bind(call_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref()
            .map(from_row)
            .transpose()
            .map_err(StoreError::from)
    }

    /// Takes a call's timeout as the decision on it unless one is stored
    /// already: `None` when the timeout is first, else the decision that
    /// was.
    pub async fn claim_call_timeout(
        &self,
        run_id: &str,
        module_id: &str,
        activation: i64,
        call_id: &str,
    ) -> Result<Option<StoredCallDecision>, StoreError> {
        let timeout = StoredCallDecision {
            run_id: run_id.to_owned(),
            module_id: module_id.to_owned(),
            activation,
            call_id: call_id.to_owned(),
            decision: "reject".to_owned(),
            feedback: String::new(),
            arguments: None,
            decided_by: TIMED_OUT.to_owned(),
            decided_at: super::now_millis(),
        };
        if self.insert_call_decision(&timeout).await? {
            return Ok(None);
        }
        self.call_decision(run_id, module_id, activation, call_id)
            .await
    }

    /// Decisions on a run's waiting tool calls: what a resume acts on.
    pub async fn pending_call_decisions(
        &self,
        run_id: &str,
    ) -> Result<Vec<StoredCallDecision>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM tool_call_decisions d
             JOIN activations a ON a.run_id = d.run_id AND a.module_id = d.module_id AND a.activation = d.activation
             WHERE d.run_id = $1 AND a.status = 'waiting'
             ORDER BY d.decided_at"
        )))
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        all_from(&rows)
    }

    /// Decisions on the waiting tool calls of the runs `owner` holds:
    /// taken on another process, for this one to act on.
    pub async fn pending_call_decisions_of(
        &self,
        owner: &str,
    ) -> Result<Vec<StoredCallDecision>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM tool_call_decisions d
             JOIN activations a ON a.run_id = d.run_id AND a.module_id = d.module_id AND a.activation = d.activation
             JOIN runs r ON r.id = d.run_id
             WHERE r.owner = $1 AND r.status IN ('running', 'waiting') AND a.status = 'waiting'
             ORDER BY d.decided_at"
        )))
        .bind(owner)
        .fetch_all(&self.pool)
        .await?;
        all_from(&rows)
    }
}
