//! Idempotency keys of requests that start runs (PRODUCT §6.3): a key is
//! claimed for a run by one conditional write, so of two requests racing
//! with one key, one starts the run and the other hears of it.

use super::{Store, StoreError};

/// How long a claim holds: a day.
pub const KEY_HOLDS_MILLIS: i64 = 24 * 60 * 60 * 1000;

impl Store {
    /// Claims `key` of `graph_id` for `run_id` unless a claim of the last
    /// day holds it: the run the key is for (`run_id` when this claim won).
    pub async fn claim_idempotency_key(
        &self,
        graph_id: &str,
        key: &str,
        run_id: &str,
        now: i64,
    ) -> Result<String, StoreError> {
        let claimed: Option<String> = sqlx::query_scalar(
            "INSERT INTO idempotency_keys (graph_id, key, run_id, claimed_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (graph_id, key) DO UPDATE SET run_id = excluded.run_id, claimed_at = excluded.claimed_at
             WHERE idempotency_keys.claimed_at < $5
             RETURNING run_id",
        )
        .bind(graph_id)
        .bind(key)
        .bind(run_id)
        .bind(now)
        .bind(now.saturating_sub(KEY_HOLDS_MILLIS))
        .fetch_optional(&self.pool)
        .await?;
        if let Some(claimed) = claimed {
            return Ok(claimed);
        }
        Ok(sqlx::query_scalar(
            "SELECT run_id FROM idempotency_keys WHERE graph_id = $1 AND key = $2",
        )
        .bind(graph_id)
        .bind(key)
        .fetch_one(&self.pool)
        .await?)
    }

    /// Lets a key go when the run it was claimed for did not start.
    pub async fn release_idempotency_key(
        &self,
        graph_id: &str,
        key: &str,
        run_id: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE graph_id = $1 AND key = $2 AND run_id = $3",
        )
        .bind(graph_id)
        .bind(key)
        .bind(run_id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
