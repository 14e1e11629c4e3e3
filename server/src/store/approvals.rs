//! Approvals (PRODUCT §3.14): the decisions people take (the first on an
//! activation wins), the approver tokens of a run (kept as hashes), and
//! how long a run has waited for people.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, StoreError};

/// A decision as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredDecision {
    pub run_id: String,
    pub module_id: String,
    pub activation: i64,
    pub decision: String,
    pub feedback: String,
    pub edited_value: Option<String>,
    pub decided_by: String,
    pub decided_at: i64,
}

/// What an approval's timeout is stored as, in the decision's place (a
/// decision and its taker both): no person's decision reads so.
pub const TIMED_OUT: &str = "timeout";

const DECISION_COLUMNS: &str = "d.run_id, d.module_id, d.activation, d.decision, d.feedback, d.edited_value, d.decided_by, d.decided_at";

fn decision_from(row: &AnyRow) -> Result<StoredDecision, sqlx::Error> {
    Ok(StoredDecision {
        run_id: row.try_get("run_id")?,
        module_id: row.try_get("module_id")?,
        activation: row.try_get("activation")?,
        decision: row.try_get("decision")?,
        feedback: row.try_get("feedback")?,
        edited_value: row.try_get("edited_value")?,
        decided_by: row.try_get("decided_by")?,
        decided_at: row.try_get("decided_at")?,
    })
}

fn decisions_from(rows: &[AnyRow]) -> Result<Vec<StoredDecision>, StoreError> {
    rows.iter()
        .map(decision_from)
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError::from)
}

impl Store {
    /// Stores a decision unless one was taken on that activation already:
    /// false when another came first.
    pub async fn insert_decision(&self, decision: &StoredDecision) -> Result<bool, StoreError> {
        Ok(sqlx::query(
            "INSERT INTO decisions (run_id, module_id, activation, decision, feedback, edited_value, decided_by, decided_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT DO NOTHING",
        )
        .bind(&decision.run_id)
        .bind(&decision.module_id)
        .bind(decision.activation)
        .bind(&decision.decision)
        .bind(&decision.feedback)
        .bind(decision.edited_value.as_deref())
        .bind(&decision.decided_by)
        .bind(decision.decided_at)
        .execute(&self.pool)
        .await?
        .rows_affected()
            > 0)
    }

    /// Takes an approval's timeout as the decision on its activation
    /// (stored as [`TIMED_OUT`]) unless a decision is stored already:
    /// `None` when the timeout is first, else the decision that was.
    pub async fn claim_timeout(
        &self,
        run_id: &str,
        module_id: &str,
        activation: i64,
    ) -> Result<Option<StoredDecision>, StoreError> {
        let timeout = StoredDecision {
            run_id: run_id.to_owned(),
            module_id: module_id.to_owned(),
            activation,
            decision: TIMED_OUT.to_owned(),
            feedback: String::new(),
            edited_value: None,
            decided_by: TIMED_OUT.to_owned(),
            decided_at: super::now_millis(),
        };
        if self.insert_decision(&timeout).await? {
            return Ok(None);
        }
        self.decision(run_id, module_id, activation).await
    }

    /// The decision stored on an activation of an approval, if any.
    pub async fn decision(
        &self,
        run_id: &str,
        module_id: &str,
        activation: i64,
    ) -> Result<Option<StoredDecision>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {DECISION_COLUMNS} FROM decisions d
             WHERE d.run_id = $1 AND d.module_id = $2 AND d.activation = $3"
        )))
        .bind(run_id)
        .bind(module_id)
        .bind(activation)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref()
            .map(decision_from)
            .transpose()
            .map_err(StoreError::from)
    }

    /// Decisions on a run's approvals that still wait: what a resume acts
    /// on.
    pub async fn pending_decisions(&self, run_id: &str) -> Result<Vec<StoredDecision>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {DECISION_COLUMNS} FROM decisions d
             JOIN activations a ON a.run_id = d.run_id AND a.module_id = d.module_id AND a.activation = d.activation
             WHERE d.run_id = $1 AND a.status = 'waiting'
             ORDER BY d.decided_at"
        )))
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        decisions_from(&rows)
    }

    /// Decisions on the still waiting approvals of the runs `owner` holds:
    /// taken on another process, for this one to act on.
    pub async fn pending_decisions_of(
        &self,
        owner: &str,
    ) -> Result<Vec<StoredDecision>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {DECISION_COLUMNS} FROM decisions d
             JOIN activations a ON a.run_id = d.run_id AND a.module_id = d.module_id AND a.activation = d.activation
             JOIN runs r ON r.id = d.run_id
             WHERE r.owner = $1 AND r.status IN ('running', 'waiting') AND a.status = 'waiting'
             ORDER BY d.decided_at"
        )))
        .bind(owner)
        .fetch_all(&self.pool)
        .await?;
        decisions_from(&rows)
    }

    /// The record (JSON) of a module's last activation in a run, if it has
    /// one.
    pub async fn last_activation(
        &self,
        run_id: &str,
        module_id: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar::<_, String>(
            "SELECT record FROM activations WHERE run_id = $1 AND module_id = $2
             ORDER BY activation DESC LIMIT 1",
        )
        .bind(run_id)
        .bind(module_id)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Keeps how long a run has waited for people, and since when it waits;
    /// with a `fence` on PostgreSQL, only while that process holds the run.
    pub async fn record_wait(
        &self,
        run_id: &str,
        waited_ms: i64,
        waiting_since: Option<i64>,
        fence: Option<&str>,
    ) -> Result<(), StoreError> {
        let fence = fence.filter(|_| self.backend == super::Backend::Postgres);
        let changed = sqlx::query(
            "UPDATE runs SET waited_ms = $1, waiting_since = $2
             WHERE id = $3 AND (owner = $4 OR $5 = 0)",
        )
        .bind(waited_ms)
        .bind(waiting_since)
        .bind(run_id)
        .bind(fence.unwrap_or_default())
        .bind(i64::from(fence.is_some()))
        .execute(&self.pool)
        .await?
        .rows_affected();
        if changed == 0 && fence.is_some() {
            return Err(StoreError::LeaseLost(run_id.to_owned()));
        }
        Ok(())
    }

    /// How long a run has waited for people, and since when it waits.
    pub async fn run_wait(&self, run_id: &str) -> Result<(i64, Option<i64>), StoreError> {
        let row = sqlx::query("SELECT waited_ms, waiting_since FROM runs WHERE id = $1")
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await?;
        match row {
            Some(row) => Ok((row.try_get("waited_ms")?, row.try_get("waiting_since")?)),
            None => Ok((0, None)),
        }
    }

    /// Keeps the hash of a new approver token of a run.
    pub async fn insert_approver_token(
        &self,
        run_id: &str,
        token_hash: &str,
        created_at: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO approver_tokens (token_hash, run_id, created_at) VALUES ($1, $2, $3)",
        )
        .bind(token_hash)
        .bind(run_id)
        .bind(created_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Whether `token` is an approver token of this run.
    pub async fn is_approver_token(&self, run_id: &str, token: &str) -> Result<bool, StoreError> {
        let hash = crate::capability::hash_token(token);
        Ok(sqlx::query_scalar::<_, String>(
            "SELECT token_hash FROM approver_tokens WHERE token_hash = $1 AND run_id = $2",
        )
        .bind(&hash)
        .bind(run_id)
        .fetch_optional(&self.pool)
        .await?
        .is_some_and(|stored| crate::capability::token_matches(token, &stored)))
    }
}
