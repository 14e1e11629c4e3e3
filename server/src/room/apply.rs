//! Applying a change (PRODUCT §3.16): edits made on the graph at some
//! revision, applied to the graph as it is now in the server's order, stored
//! as the next revision with its log entry, and told to the rooms. A save
//! through the API (`PUT`) comes this way too, but is not moved along: its
//! `If-Match` is a precondition, checked against the revision the change is
//! stored on (the store's write is conditional on it), never a rebase.

use std::sync::Arc;

use graph::Graph;
use graph::edits::{self, Applied, Edit};
use graph::typing;
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

/// The revision a change was made on, and what happens when the graph has
/// moved on since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// An editor's change (PRODUCT §3.16): moved along the changes it had
    /// not seen and applied to the graph as it is.
    Rebased(i64),
    /// A save with `If-Match`: applied only to that revision, refused with
    /// a conflict once the graph is at another.
    Exactly(i64),
}

/// Applies `edits`, made on the graph at `base`, to the graph as it is now,
/// stores it as the next revision with its log entry, and tells the rooms.
/// A document the edits would break (a value of the wrong type, over a
/// limit) is refused whole, nothing stored.
pub async fn apply_change(
    state: &AppState,
    id: &str,
    author: Author<'_>,
    base: Base,
    edits: &[Edit],
) -> Result<ChangeAccepted, ApiError> {
    for _ in 0..TRIES {
        let graph = stored(state, id).await?;
        let edits = match base {
            Base::Exactly(expected) if graph.revision != expected => {
                return Err(ApiError::RevisionConflict {
                    current: graph.revision,
                });
            }
            Base::Exactly(_) => edits.to_vec(),
            Base::Rebased(base) => moved_along(state, id, base, graph.revision, edits).await?,
        };
        let (edits, held) = withhold_typing(state, &graph, &author, edits).await?;
        let mut document: serde_json::Value = serde_json::from_str(&graph.document)
            .map_err(|error| ApiError::Internal(format!("stored graph {id}: {error}")))?;
        let before = Graph::from_value(document.clone())
            .map_err(|error| ApiError::Internal(format!("stored graph {id}: {error}")))?;
        let mut applied = edits::apply(&mut document, &edits);
        edits::drop_dangling_cables(&mut document, &mut applied);
        applied.not_applied.extend(held);
        if applied.edits.is_empty() {
            return Ok(ChangeAccepted {
                revision: graph.revision,
                not_applied: applied.not_applied,
            });
        }
        let (after, text) = next_revision(state, id, document, graph.revision)?;
        graph::frame::check(&after)?;
        let schedules =
            crate::triggers::schedule_rows(&crate::triggers::read(&after)?, engine::now_millis());
        if let Some(accepted) = store(
            state,
            &graph,
            &author,
            applied,
            (&before, &after, &text, &schedules),
        )
        .await?
        {
            return Ok(accepted);
        }
    }
    let current = stored(state, id).await?.revision;
    Err(ApiError::RevisionConflict { current })
}

/// `edits` moved along the reorders the author had not seen (made after
/// `base`): an edit of a re-prompt stays that re-prompt's. A base the graph
/// has not reached, or older than the log keeps (a day), cannot be moved
/// along every change since: refused as a conflict, so that the editor
/// takes the document as it is rather than land an edit on the wrong item.
async fn moved_along(
    state: &AppState,
    id: &str,
    base: i64,
    now: i64,
    edits: &[Edit],
) -> Result<Vec<Edit>, ApiError> {
    let mut edits = edits.to_vec();
    if base > now {
        return Err(ApiError::RevisionConflict { current: now });
    }
    if base < now {
        let since = state.store.changes_after(id, base, i64::MAX).await?;
        if since.first().is_none_or(|first| first.previous != base) {
            return Err(ApiError::RevisionConflict { current: now });
        }
        let seen = since
            .into_iter()
            .filter_map(from_stored)
            .flat_map(|change| change.edits)
            .collect::<Vec<_>>();
        edits::transform(&mut edits, &seen);
    }
    Ok(edits)
}

/// `edits` without the typing in fields someone else is typing in
/// (`graph::typing`), which are returned as not applied. Read from the
/// changes stored up to `graph`'s revision: the change is stored only on
/// that revision, so a hold taken meanwhile is seen when it is applied
/// again.
async fn withhold_typing(
    state: &AppState,
    graph: &StoredGraph,
    author: &Author<'_>,
    edits: Vec<Edit>,
) -> Result<(Vec<Edit>, Vec<edits::NotApplied>), ApiError> {
    if author.connection.is_empty() || !edits.iter().any(typing::is_typing) {
        return Ok((edits, Vec::new()));
    }
    let now = engine::now_millis();
    let recent = state
        .store
        .recent_changes(&graph.id, graph.revision, now - typing::HOLD_MILLIS)
        .await?;
    let recent: Vec<(&str, &str, i64, Vec<Edit>)> = recent
        .iter()
        .map(|(connection, name, at, edits)| {
            (
                connection.as_str(),
                name.as_str(),
                *at,
                serde_json::from_str(edits).unwrap_or_default(),
            )
        })
        .collect();
    let holds = typing::holds(
        recent
            .iter()
            .map(|(connection, name, at, edits)| (*connection, *name, *at, edits.as_slice())),
    );
    Ok(typing::withhold(edits, &holds, author.connection, now))
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
    (before, after, text, schedules): (&Graph, &Graph, &str, &[crate::store::ScheduleRow]),
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
            schedules,
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
