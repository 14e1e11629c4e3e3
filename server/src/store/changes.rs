//! Editing together (PRODUCT §3.16): the log of the changes the server
//! took, one row per revision. A change is stored with the document it
//! makes in one transaction: the graph row moves to the next revision only
//! if it was still at the one the change was applied to (two processes
//! applying changes to one graph at once: one of them applies again). On
//! PostgreSQL the transaction tells every process (`ROOMS_CHANNEL`).

use super::{Backend, Store, StoreError, now_millis};

/// Where PostgreSQL announces room news to every process: a change stored,
/// someone come or gone (`room.rs`).
pub const ROOMS_CHANNEL: &str = "patchbay_rooms";

/// How often the history keeps the document while people edit: a drag is
/// many changes, a revision kept every this long at most.
pub const KEEP_REVISION_EVERY_MILLIS: i64 = 30_000;

/// How many of a graph's newest changes who is typing where is read from:
/// more than two people dragging and typing make in a hold's time.
pub const RECENT_CHANGES: i64 = 1_000;

/// A change as stored (its edits as JSON text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredChange {
    pub revision: i64,
    pub previous: i64,
    pub author: String,
    pub author_name: String,
    pub edits: String,
    pub replaced: String,
}

/// A change to store: the graph's document with it, and the log entry.
pub struct NewChange<'a> {
    pub graph_id: &'a str,
    /// The revision it was applied to.
    pub previous: i64,
    pub name: &'a str,
    /// Stamped with `previous + 1`.
    pub document: &'a str,
    pub author: &'a str,
    pub author_name: &'a str,
    pub edits: &'a str,
    pub replaced: &'a str,
    /// What changed, in the history's words, if this change is kept as a
    /// revision of the history.
    pub summary: &'a str,
    /// Kept as a revision of the history whatever the last one's age (a
    /// save through the API: `saved`), or only every
    /// [`KEEP_REVISION_EVERY_MILLIS`] (editing together: `edited`).
    pub keep: Keep,
    /// `Some`: the notification every process gets (PostgreSQL).
    pub announce: Option<&'a str>,
    /// The document's schedules (`triggers.rs`).
    pub schedules: &'a [super::ScheduleRow],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    Always,
    Every,
}

/// What storing a change did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeOutcome {
    Stored {
        revision: i64,
        kept_revision: bool,
    },
    /// Another change came first: apply again to the graph as it is now.
    Stale,
    NotFound,
}

impl Store {
    /// Stores a change and the document it makes, if the graph is still at
    /// `change.previous`. The history keeps the document as a revision
    /// when its newest revision is older than [`KEEP_REVISION_EVERY_MILLIS`].
    pub async fn store_change(&self, change: NewChange<'_>) -> Result<ChangeOutcome, StoreError> {
        let now = now_millis();
        let revision = change.previous + 1;
        let mut transaction = self.pool.begin().await?;
        let updated = sqlx::query(
            "UPDATE graphs SET document = $1, name = $2, revision = revision + 1, updated_at = $3
             WHERE id = $4 AND revision = $5",
        )
        .bind(change.document)
        .bind(change.name)
        .bind(now)
        .bind(change.graph_id)
        .bind(change.previous)
        .execute(&mut *transaction)
        .await?;
        if updated.rows_affected() == 0 {
            let exists: Option<i64> =
                sqlx::query_scalar("SELECT revision FROM graphs WHERE id = $1")
                    .bind(change.graph_id)
                    .fetch_optional(&mut *transaction)
                    .await?;
            return Ok(if exists.is_some() {
                ChangeOutcome::Stale
            } else {
                ChangeOutcome::NotFound
            });
        }
        sqlx::query(
            "INSERT INTO graph_changes (graph_id, revision, previous, author, author_name, edits, replaced, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(change.graph_id)
        .bind(revision)
        .bind(change.previous)
        .bind(change.author)
        .bind(change.author_name)
        .bind(change.edits)
        .bind(change.replaced)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        let newest: Option<i64> =
            sqlx::query_scalar("SELECT MAX(created_at) FROM graph_revisions WHERE graph_id = $1")
                .bind(change.graph_id)
                .fetch_one(&mut *transaction)
                .await?;
        let kept_revision = change.keep == Keep::Always
            || newest.is_none_or(|newest| now - newest >= KEEP_REVISION_EVERY_MILLIS);
        if kept_revision {
            sqlx::query(
                "INSERT INTO graph_revisions (graph_id, revision, document, created_at, origin, summary) VALUES ($1, $2, $3, $4, $6, $5)",
            )
            .bind(change.graph_id)
            .bind(revision)
            .bind(change.document)
            .bind(now)
            .bind(change.summary)
            .bind(match change.keep {
                Keep::Always => "saved",
                Keep::Every => "edited",
            })
            .execute(&mut *transaction)
            .await?;
        }
        super::triggers::mirror_schedules(&mut transaction, change.graph_id, change.schedules)
            .await?;
        if let (Some(payload), Backend::Postgres) = (change.announce, self.backend()) {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(ROOMS_CHANNEL)
                .bind(payload)
                .execute(&mut *transaction)
                .await?;
        }
        transaction.commit().await?;
        Ok(ChangeOutcome::Stored {
            revision,
            kept_revision,
        })
    }

    /// The changes after revision `after`, oldest first, at most `limit`.
    pub async fn changes_after(
        &self,
        graph_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<StoredChange>, StoreError> {
        type Row = (i64, i64, String, String, String, String);
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT revision, previous, author, author_name, edits, replaced FROM graph_changes
             WHERE graph_id = $1 AND revision > $2 ORDER BY revision LIMIT $3",
        )
        .bind(graph_id)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(revision, previous, author, author_name, edits, replaced)| StoredChange {
                    revision,
                    previous,
                    author,
                    author_name,
                    edits,
                    replaced,
                },
            )
            .collect())
    }

    /// The changes taken since `since` (milliseconds) among the newest
    /// [`RECENT_CHANGES`] of a graph at `revision`, oldest first: who made
    /// each (connection, name), when, and its edits (JSON). Who is typing
    /// where is read from them (`graph::typing`); the revision bounds the
    /// read to the primary key's newest rows.
    pub async fn recent_changes(
        &self,
        graph_id: &str,
        revision: i64,
        since: i64,
    ) -> Result<Vec<(String, String, i64, String)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT author, author_name, created_at, edits FROM graph_changes
             WHERE graph_id = $1 AND revision > $2 AND created_at >= $3 ORDER BY revision",
        )
        .bind(graph_id)
        .bind(revision - RECENT_CHANGES)
        .bind(since)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Keeps the document at `revision` in the history if it is not there
    /// yet: a run names the revision it ran, which editing together may not
    /// have kept.
    pub async fn keep_revision(
        &self,
        graph_id: &str,
        revision: i64,
        document: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO graph_revisions (graph_id, revision, document, created_at, origin, summary)
             VALUES ($1, $2, $3, $4, 'edited', '') ON CONFLICT (graph_id, revision) DO NOTHING",
        )
        .bind(graph_id)
        .bind(revision)
        .bind(document)
        .bind(now_millis())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Drops the log's changes older than `age_millis`; says how many went.
    pub async fn prune_changes(&self, age_millis: i64) -> Result<u64, StoreError> {
        let result = sqlx::query("DELETE FROM graph_changes WHERE created_at < $1")
            .bind(now_millis() - age_millis)
            .execute(&self.pool)
            .await?;
        Ok(result.rows_affected())
    }

    /// Announces room news to every process (PostgreSQL; nothing on SQLite,
    /// where one process serves).
    pub async fn announce_to_rooms(&self, payload: &str) -> Result<(), StoreError> {
        if self.backend() == Backend::Postgres {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(ROOMS_CHANNEL)
                .bind(payload)
                .execute(&self.pool)
                .await?;
        }
        Ok(())
    }
}
