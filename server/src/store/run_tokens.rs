//! Run tokens (PRODUCT §6.2), kept as hashes: made, listed and revoked by
//! a graph's editors; a token that is not revoked starts runs of its graph.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, StoreError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredRunToken {
    pub id: String,
    pub graph_id: String,
    pub name: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    pub last_used_at: Option<i64>,
}

const COLUMNS: &str = "id, graph_id, name, created_at, revoked_at, last_used_at";

fn from_row(row: &AnyRow) -> Result<StoredRunToken, sqlx::Error> {
    Ok(StoredRunToken {
        id: row.try_get("id")?,
        graph_id: row.try_get("graph_id")?,
        name: row.try_get("name")?,
        created_at: row.try_get("created_at")?,
        revoked_at: row.try_get("revoked_at")?,
        last_used_at: row.try_get("last_used_at")?,
    })
}

impl Store {
    pub async fn insert_run_token(
        &self,
        token: &StoredRunToken,
        token_hash: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO run_tokens (id, graph_id, name, token_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&token.id)
        .bind(&token.graph_id)
        .bind(&token.name)
        .bind(token_hash)
        .bind(token.created_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// A graph's run tokens, newest first.
    pub async fn run_tokens(&self, graph_id: &str) -> Result<Vec<StoredRunToken>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM run_tokens WHERE graph_id = $1 ORDER BY created_at DESC, id"
        )))
        .bind(graph_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(from_row)
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// The token of `graph_id` whose hash this is, if it is not revoked,
    /// marked as used now.
    pub async fn use_run_token(
        &self,
        graph_id: &str,
        token_hash: &str,
        now: i64,
    ) -> Result<Option<StoredRunToken>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE run_tokens SET last_used_at = $3
             WHERE graph_id = $1 AND token_hash = $2 AND revoked_at IS NULL
             RETURNING {COLUMNS}"
        )))
        .bind(graph_id)
        .bind(token_hash)
        .bind(now)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.as_ref().map(from_row).transpose()?)
    }

    /// Revokes a token of `graph_id`: false when there is no such token
    /// (one already revoked stays as it was).
    pub async fn revoke_run_token(
        &self,
        graph_id: &str,
        id: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let found = sqlx::query(
            "UPDATE run_tokens SET revoked_at = COALESCE(revoked_at, $3) WHERE graph_id = $1 AND id = $2",
        )
        .bind(graph_id)
        .bind(id)
        .bind(now)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(found > 0)
    }
}
