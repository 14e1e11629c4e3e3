//! What processes share about triggers (PRODUCT §6.5): each graph's
//! schedules, mirrored from its document in the transaction that stores
//! the document, with the tick each fires next; and webhooks' secrets, as
//! hashes. A tick is fired by one conditional write, so it fires once
//! with one process or many.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::{Store, StoreError};

/// A schedule as the document gives it, with its next tick from now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleRow {
    pub trigger_id: String,
    pub cron: String,
    pub timezone: String,
    pub catch_up: String,
    pub paused: bool,
    /// Kept as stored unless the cron, the time zone or the pause changed.
    pub next_at: Option<i64>,
}

/// A schedule whose tick has come.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueSchedule {
    pub graph_id: String,
    pub trigger_id: String,
    pub cron: String,
    pub timezone: String,
    pub catch_up: String,
    pub next_at: i64,
}

fn due_from_row(row: &AnyRow) -> Result<DueSchedule, sqlx::Error> {
    Ok(DueSchedule {
        graph_id: row.try_get("graph_id")?,
        trigger_id: row.try_get("trigger_id")?,
        cron: row.try_get("cron")?,
        timezone: row.try_get("timezone")?,
        catch_up: row.try_get("catch_up")?,
        next_at: row.try_get("next_at")?,
    })
}

/// Makes `graph_id`'s schedules those of its document, in the transaction
/// that stores the document. A schedule whose cron, time zone or pause is
/// unchanged keeps its next tick: saving a graph neither fires nor skips.
pub(super) async fn mirror_schedules(
    transaction: &mut Transaction<'_, Any>,
    graph_id: &str,
    schedules: &[ScheduleRow],
) -> Result<(), StoreError> {
    let mut delete = String::from("DELETE FROM schedules WHERE graph_id = $1");
    if !schedules.is_empty() {
        let kept: Vec<String> = (2..schedules.len() + 2).map(|n| format!("${n}")).collect();
        delete.push_str(&format!(" AND trigger_id NOT IN ({})", kept.join(", ")));
    }
    let mut query = sqlx::query(sqlx::AssertSqlSafe(delete)).bind(graph_id);
    for schedule in schedules {
        query = query.bind(&schedule.trigger_id);
    }
    query.execute(&mut **transaction).await?;
    for schedule in schedules {
        sqlx::query(
            "INSERT INTO schedules (graph_id, trigger_id, cron, timezone, catch_up, paused, next_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (graph_id, trigger_id) DO UPDATE SET
                 next_at = CASE
                     WHEN schedules.cron = excluded.cron AND schedules.timezone = excluded.timezone
                          AND schedules.paused = excluded.paused
                     THEN schedules.next_at ELSE excluded.next_at END,
                 cron = excluded.cron, timezone = excluded.timezone,
                 catch_up = excluded.catch_up, paused = excluded.paused",
        )
        .bind(graph_id)
        .bind(&schedule.trigger_id)
        .bind(&schedule.cron)
        .bind(&schedule.timezone)
        .bind(&schedule.catch_up)
        .bind(i64::from(schedule.paused))
        .bind(schedule.next_at)
        .execute(&mut **transaction)
        .await?;
    }
    Ok(())
}

impl Store {
    /// Schedules not paused whose next tick is at or before `now`, oldest
    /// tick first, at most `limit`.
    pub async fn due_schedules(
        &self,
        now: i64,
        limit: i64,
    ) -> Result<Vec<DueSchedule>, StoreError> {
        let rows = sqlx::query(
            "SELECT graph_id, trigger_id, cron, timezone, catch_up, next_at FROM schedules
             WHERE next_at <= $1 AND paused = 0 ORDER BY next_at LIMIT $2",
        )
        .bind(now)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(due_from_row)
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// Takes the tick at `due_at` for this process, moving the schedule
    /// on to `next_at`: false when another process took it first, or the
    /// schedule changed meanwhile.
    pub async fn claim_tick(
        &self,
        graph_id: &str,
        trigger_id: &str,
        due_at: i64,
        next_at: Option<i64>,
    ) -> Result<bool, StoreError> {
        let claimed = sqlx::query(
            "UPDATE schedules SET next_at = $4
             WHERE graph_id = $1 AND trigger_id = $2 AND next_at = $3 AND paused = 0",
        )
        .bind(graph_id)
        .bind(trigger_id)
        .bind(due_at)
        .bind(next_at)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(claimed == 1)
    }

    /// Each schedule of `graph_id` with its next tick.
    pub async fn schedule_ticks(
        &self,
        graph_id: &str,
    ) -> Result<Vec<(String, Option<i64>)>, StoreError> {
        Ok(
            sqlx::query_as("SELECT trigger_id, next_at FROM schedules WHERE graph_id = $1")
                .bind(graph_id)
                .fetch_all(&self.pool)
                .await?,
        )
    }

    /// Makes or replaces a webhook trigger's secret.
    pub async fn set_trigger_secret(
        &self,
        graph_id: &str,
        trigger_id: &str,
        secret_hash: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO trigger_secrets (graph_id, trigger_id, secret_hash, created_at)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (graph_id, trigger_id) DO UPDATE SET
                 secret_hash = excluded.secret_hash, created_at = excluded.created_at",
        )
        .bind(graph_id)
        .bind(trigger_id)
        .bind(secret_hash)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// When each of `graph_id`'s webhook secrets was made.
    pub async fn trigger_secrets(&self, graph_id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        Ok(
            sqlx::query_as(
                "SELECT trigger_id, created_at FROM trigger_secrets WHERE graph_id = $1",
            )
            .bind(graph_id)
            .fetch_all(&self.pool)
            .await?,
        )
    }

    /// The graph whose trigger `trigger_id` has the secret with this hash.
    pub async fn webhook_graph(
        &self,
        trigger_id: &str,
        secret_hash: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT graph_id FROM trigger_secrets WHERE trigger_id = $1 AND secret_hash = $2",
        )
        .bind(trigger_id)
        .bind(secret_hash)
        .fetch_optional(&self.pool)
        .await?)
    }
}
