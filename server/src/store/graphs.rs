//! Graphs and their revisions. Every accepted save is one transaction: the
//! graph row moves to the next revision only if it was still at the one the
//! writer read, and that revision's document is recorded alongside.

use sqlx::Row;

use super::{Store, StoreError, now_millis};

/// A graph as stored: its current revision and document (JSON text, with
/// `id` and `revision` filled in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGraph {
    pub id: String,
    pub revision: i64,
    pub document: String,
}

/// What a graph's entry on the home page needs, with the hash its edit
/// token is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphHeading {
    pub id: String,
    pub name: String,
    pub revision: i64,
    pub updated_at: i64,
    pub edit_token_hash: String,
}

/// A graph's newest run, as the home page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastRun {
    pub id: String,
    pub status: String,
    pub created_at: i64,
}

/// What a new graph row holds.
pub struct NewGraph<'a> {
    pub id: &'a str,
    pub edit_token_hash: &'a str,
    pub name: &'a str,
    /// Stamped with `id` and revision 1.
    pub document: &'a str,
    pub forked_from: Option<&'a str>,
    /// The document's schedules (`triggers.rs`).
    pub schedules: &'a [super::ScheduleRow],
}

impl Store {
    /// Stores a new graph at revision 1.
    pub async fn insert_graph(&self, graph: NewGraph<'_>) -> Result<(), StoreError> {
        let now = now_millis();
        let mut transaction = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO graphs (id, edit_token_hash, name, revision, document, forked_from, created_at, updated_at)
             VALUES ($1, $2, $3, 1, $4, $5, $6, $6)",
        )
        .bind(graph.id)
        .bind(graph.edit_token_hash)
        .bind(graph.name)
        .bind(graph.document)
        .bind(graph.forked_from)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        sqlx::query(
            "INSERT INTO graph_revisions (graph_id, revision, document, created_at, origin) VALUES ($1, 1, $2, $3, $4)",
        )
        .bind(graph.id)
        .bind(graph.document)
        .bind(now)
        .bind(if graph.forked_from.is_some() {
            "forked"
        } else {
            "created"
        })
        .execute(&mut *transaction)
        .await?;
        super::triggers::mirror_schedules(&mut transaction, graph.id, graph.schedules).await?;
        transaction.commit().await?;
        Ok(())
    }

    pub async fn graph(&self, id: &str) -> Result<Option<StoredGraph>, StoreError> {
        let row = sqlx::query("SELECT id, revision, document FROM graphs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| {
            Ok(StoredGraph {
                id: row.try_get("id")?,
                revision: row.try_get("revision")?,
                document: row.try_get("document")?,
            })
        })
        .transpose()
    }

    pub async fn edit_token_hash(&self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT edit_token_hash FROM graphs WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    /// The document of one past revision.
    pub async fn graph_revision(
        &self,
        id: &str,
        revision: i64,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT document FROM graph_revisions WHERE graph_id = $1 AND revision = $2",
        )
        .bind(id)
        .bind(revision)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// A page of a graph's revisions, newest first: those before
    /// `before` (all when `None`), at most `limit`.
    pub async fn revisions(
        &self,
        id: &str,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<StoredRevision>, StoreError> {
        type Row = (i64, i64, i64, Option<String>, Option<String>);
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT revision, created_at, CAST(LENGTH(document) AS BIGINT), origin, summary FROM graph_revisions
             WHERE graph_id = $1 AND revision < $2 ORDER BY revision DESC LIMIT $3",
        )
        .bind(id)
        .bind(before.unwrap_or(i64::MAX))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(revision, saved_at, size_bytes, origin, summary)| StoredRevision {
                    revision,
                    saved_at,
                    size_bytes,
                    origin,
                    summary,
                },
            )
            .collect())
    }

    /// Thins a graph's history out (`thinning.rs`): drops the revisions
    /// it no longer keeps at its age; says how many went.
    pub async fn thin_history(&self, id: &str) -> Result<usize, StoreError> {
        let revisions: Vec<(i64, i64)> =
            sqlx::query_as("SELECT revision, created_at FROM graph_revisions WHERE graph_id = $1")
                .bind(id)
                .fetch_all(&self.pool)
                .await?;
        let ran: Vec<Option<i64>> =
            sqlx::query_scalar("SELECT DISTINCT graph_revision FROM runs WHERE graph_id = $1")
                .bind(id)
                .fetch_all(&self.pool)
                .await?;
        let ran = ran.into_iter().flatten().collect();
        let dropped = super::thinning::dropped(&revisions, &ran, now_millis());
        for chunk in dropped.chunks(200) {
            let placeholders: Vec<String> = (2..chunk.len() + 2).map(|n| format!("${n}")).collect();
            let sql = format!(
                "DELETE FROM graph_revisions WHERE graph_id = $1 AND revision IN ({})",
                placeholders.join(", ")
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id);
            for revision in chunk {
                query = query.bind(*revision);
            }
            query.execute(&self.pool).await?;
        }
        Ok(dropped.len())
    }

    /// How many revisions a graph keeps, and their documents' size in all.
    pub async fn revisions_kept(&self, id: &str) -> Result<(i64, i64), StoreError> {
        Ok(sqlx::query_as(
            "SELECT COUNT(*), CAST(COALESCE(SUM(LENGTH(document)), 0) AS BIGINT) FROM graph_revisions WHERE graph_id = $1",
        )
        .bind(id)
        .fetch_one(&self.pool)
        .await?)
    }

    /// How many revisions a graph has recorded.
    pub async fn revision_count(&self, id: &str) -> Result<i64, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT COUNT(*) FROM graph_revisions WHERE graph_id = $1")
                .bind(id)
                .fetch_one(&self.pool)
                .await?,
        )
    }

    /// The headings of the graphs among `ids` that exist, in no particular
    /// order. One query: the caller keeps `ids` to a few hundred.
    pub async fn graph_headings(&self, ids: &[&str]) -> Result<Vec<GraphHeading>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (1..=ids.len()).map(|n| format!("${n}")).collect();
        let sql = format!(
            "SELECT id, name, revision, updated_at, edit_token_hash FROM graphs WHERE id IN ({})",
            placeholders.join(", ")
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for id in ids {
            query = query.bind(*id);
        }
        let rows = query.fetch_all(&self.pool).await?;
        rows.iter()
            .map(|row| {
                Ok(GraphHeading {
                    id: row.try_get("id")?,
                    name: row.try_get("name")?,
                    revision: row.try_get("revision")?,
                    updated_at: row.try_get("updated_at")?,
                    edit_token_hash: row.try_get("edit_token_hash")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// How many graphs are stored.
    pub async fn graph_count(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM graphs")
            .fetch_one(&self.pool)
            .await?)
    }
}

/// A revision as a history lists it: no document.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRevision {
    pub revision: i64,
    pub saved_at: i64,
    pub size_bytes: i64,
    pub origin: Option<String>,
    pub summary: Option<String>,
}
