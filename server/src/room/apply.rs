//! Applying a change (PRODUCT §3.16): edits made on the graph at some
//! revision, applied to the graph as it is now in the server's order, stored
//! as the next revision with its log entry, and told to the rooms. A save
//! through the API (`PUT`) comes this way too.

use std::sync::Arc;

use graph::Graph;
use graph::edits::{self, Applied, Edit};
use wire::room::{Change, ChangeAccepted};

use super::News;
use crate::error::ApiError;
use crate::room_api::{from_stored, stored};
use crate::state::AppState;
use crate::store::{ChangeOutcome, Keep, NewChange, StoredGraph};

/// Tries of a change that keeps meeting another process's at the same
/// revision.
const TRIES: usize = 8;

/// Who made a change, and how the history keeps it.
pub struct Author<'a> {
    /// The connection; empty for a save through the API.
    pub connection: &'a str,
    pub name: &'a str,
    pub keep: Keep,
}

/// Applies `edits`, made on the graph at `base`, to the graph as it is now,
/// stores it as the next revision with its log entry, and tells the rooms.
/// A document the edits would break (a value of the wrong type, over a
/// limit) is refused whole, nothing stored.
pub async fn apply_change(
    state: &AppState,
    id: &str,
    author: Author<'_>,
    base: i64,
    edits: &[Edit],
) -> Result<ChangeAccepted, ApiError> {
    for _ in 0..TRIES {
        let graph = stored(state, id).await?;
        let edits = moved_along(state, id, base, graph.revision, edits).await?;
        let mut document: serde_json::Value = serde_json::from_str(&graph.document)
            .map_err(|error| ApiError::Internal(format!("stored graph {id}: {error}")))?;
        let before = Graph::from_value(document.clone())
            .map_err(|error| ApiError::Internal(format!("stored graph {id}: {error}")))?;
        let mut applied = edits::apply(&mut document, &edits);
        edits::drop_dangling_cables(&mut document, &mut applied);
        if applied.edits.is_empty() {
            return Ok(ChangeAccepted {
                revision: graph.revision,
                not_applied: applied.not_applied,
            });
        }
        let (after, text) = next_revision(state, id, document, graph.revision)?;
        if let Some(accepted) =
            store(state, &graph, &author, applied, (&before, &after, &text)).await?
        {
            return Ok(accepted);
        }
    }
    let current = stored(state, id).await?.revision;
    Err(ApiError::RevisionConflict { current })
}

/// `edits` moved along the reorders the author had not seen (made after
/// `base`): an edit of a re-prompt stays that re-prompt's.
async fn moved_along(
    state: &AppState,
    id: &str,
    base: i64,
    now: i64,
    edits: &[Edit],
) -> Result<Vec<Edit>, ApiError> {
    let mut edits = edits.to_vec();
    if base < now {
        let seen = state
            .store
            .changes_after(id, base, i64::MAX)
            .await?
            .into_iter()
            .filter_map(from_stored)
            .flat_map(|change| change.edits)
            .collect::<Vec<_>>();
        edits::transform(&mut edits, &seen);
    }
    Ok(edits)
}

/// The document after the edits as the next revision's graph and text, or
/// why it cannot be one (unreadable, over a limit).
fn next_revision(
    state: &AppState,
    id: &str,
    document: serde_json::Value,
    previous: i64,
) -> Result<(Graph, String), ApiError> {
    let limits = &state.settings.limits;
    let mut after = Graph::from_value(document)?;
    limits.check(&after).map_err(ApiError::OverLimit)?;
    after.id = Some(id.to_owned());
    after.revision = u64::try_from(previous + 1).unwrap_or(0);
    let text = after
        .to_json()
        .map_err(|error| ApiError::Internal(error.to_string()))?;
    limits
        .check_size(text.len())
        .map_err(|_| ApiError::TooLarge {
            max_bytes: limits.max_document_bytes,
        })?;
    Ok((after, text))
}

/// Stores the change on `graph`'s revision and tells the rooms; `None` when
/// another change came first (the caller applies again).
async fn store(
    state: &AppState,
    graph: &StoredGraph,
    author: &Author<'_>,
    applied: Applied,
    (before, after, text): (&Graph, &Graph, &str),
) -> Result<Option<ChangeAccepted>, ApiError> {
    let id = graph.id.as_str();
    let change = Change {
        revision: graph.revision + 1,
        previous: graph.revision,
        author: author.connection.to_owned(),
        author_name: author.name.to_owned(),
        edits: applied.edits,
        replaced: applied.replaced,
    };
    let mut announcement = state.rooms.announcement(id);
    announcement.revision = Some(change.revision);
    let payload = serde_json::to_string(&announcement).unwrap_or_default();
    let summary = graph::changes::between(before, after).summary(before, after);
    let outcome = state
        .store
        .store_change(NewChange {
            graph_id: id,
            previous: graph.revision,
            name: &after.name,
            document: text,
            author: author.connection,
            author_name: author.name,
            edits: &serde_json::to_string(&change.edits).unwrap_or_default(),
            replaced: &serde_json::to_string(&change.replaced).unwrap_or_default(),
            summary: &summary,
            keep: author.keep,
            announce: Some(&payload),
        })
        .await?;
    match outcome {
        ChangeOutcome::Stored {
            revision,
            kept_revision,
        } => {
            // Older revisions thin out; a change that did not thin is still
            // stored.
            if kept_revision && let Err(error) = state.store.thin_history(id).await {
                tracing::warn!(graph = %id, %error, "the graph's history could not be thinned");
            }
            state.rooms.tell(
                id,
                News::Changed {
                    revision,
                    change: Some(Arc::new(change)),
                },
            );
            Ok(Some(ChangeAccepted {
                revision,
                not_applied: applied.not_applied,
            }))
        }
        ChangeOutcome::Stale => Ok(None),
        ChangeOutcome::NotFound => Err(ApiError::GraphNotFound),
    }
}
