//! Attachment bytes, by id.

use sqlx::Row;

use super::{Store, StoreError, now_millis};

pub struct NewAttachment<'a> {
    pub id: &'a str,
    pub graph_id: &'a str,
    pub name: &'a str,
    pub media_type: &'a str,
    pub content: &'a [u8],
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAttachment {
    pub id: String,
    pub name: String,
    pub media_type: String,
    pub content: Vec<u8>,
}

impl Store {
    pub async fn insert_attachment(&self, attachment: NewAttachment<'_>) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO attachments (id, graph_id, name, media_type, size_bytes, content, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(attachment.id)
        .bind(attachment.graph_id)
        .bind(attachment.name)
        .bind(attachment.media_type)
        .bind(i64::try_from(attachment.content.len()).unwrap_or(i64::MAX))
        .bind(attachment.content)
        .bind(now_millis())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn attachment(&self, id: &str) -> Result<Option<StoredAttachment>, StoreError> {
        let row =
            sqlx::query("SELECT id, name, media_type, content FROM attachments WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        row.map(|row| {
            Ok(StoredAttachment {
                id: row.try_get("id")?,
                name: row.try_get("name")?,
                media_type: row.try_get("media_type")?,
                content: row.try_get("content")?,
            })
        })
        .transpose()
    }
}
