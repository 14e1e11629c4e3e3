//! The graph's history in the editor (PRODUCT §6): the revisions kept, each
//! with when, how and what changed; a revision compared with the graph now
//! — what changed since highlighted on the canvas, what was removed named
//! — and restored as one undoable edit that autosave keeps as a new
//! revision. For the graph's editors: the history needs the edit token.

use graph::Graph;
use graph::changes::Changes;
use leptos::prelude::*;
use wire::graphs::{RevisionList, RevisionSummary};

use super::editing::Command;
use super::modal::Modal;
use super::state::{EditorState, Overlay};
use crate::api::{self, ApiError};

/// A revision the canvas is compared with.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    pub revision: i64,
    pub graph: Graph,
}

/// The stylesheet that marks what changed since the revision: modules
/// added, changed or moved, cables added or changed. Attribute selectors
/// on the ids the canvas already carries, so a canvas of thousands of
/// modules pays nothing when nothing is compared.
pub fn highlight_style(changes: &Changes) -> String {
    let selector = |attribute: &str, id: &str| {
        let escaped = id.replace('\\', "\\\\").replace('"', "\\\"");
        format!("[{attribute}=\"{escaped}\"]")
    };
    let rule = |attribute: &str, ids: &[String], class: &str| -> Option<String> {
        (!ids.is_empty()).then(|| {
            let selectors: Vec<String> = ids.iter().map(|id| selector(attribute, id)).collect();
            if attribute == "data-node-id" {
                format!(
                    "{} {{ outline: 3px solid var(--compared-{class}); outline-offset: 3px; }}",
                    selectors.join(", ")
                )
            } else {
                let lines: Vec<String> = selectors
                    .iter()
                    .map(|selector| format!("{selector} .cable-line"))
                    .collect();
                format!(
                    "{} {{ stroke: var(--compared-{class}); stroke-width: 3px; }}",
                    lines.join(", ")
                )
            }
        })
    };
    [
        rule("data-node-id", &changes.modules_added, "added"),
        rule("data-node-id", &changes.modules_changed, "changed"),
        rule("data-node-id", &changes.modules_moved, "moved"),
        rule("data-edge-id", &changes.cables_added, "added"),
        rule("data-edge-id", &changes.cables_changed, "changed"),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("\n")
}

/// "Revision 12 · saved · “Draft” changed"
fn line(revision: &RevisionSummary, current: i64) -> String {
    let mut line = format!("Revision {}", revision.revision);
    if revision.revision == current {
        line.push_str(" (now)");
    }
    if let Some(origin) = &revision.origin {
        line.push_str(&format!(" · {origin}"));
    }
    if let Some(summary) = revision
        .summary
        .as_ref()
        .filter(|summary| !summary.is_empty())
    {
        line.push_str(&format!(" · {summary}"));
    }
    line
}

/// A revision's document, read back, or what to tell the person.
async fn load(graph_id: &str, revision: i64) -> Result<Graph, String> {
    let text = api::revision(graph_id, revision)
        .await
        .map_err(|error| match error {
            ApiError::Unreachable(message) => format!("The server could not be reached: {message}"),
            other => other.message_or("the server refused"),
        })?;
    Graph::load(&text).map_err(|error| format!("Revision {revision} cannot be read: {error}"))
}

/// Compares the canvas with a revision.
fn compare(editor: EditorState, revision: i64) {
    // Its banner's code comes while the revision does.
    super::lazy_parts::preload(super::lazy_parts::Part::CompareBanner);
    leptos::task::spawn_local(async move {
        match load(&editor.graph_id(), revision).await {
            Ok(graph) => {
                editor.compare.set(Some(Compared { revision, graph }));
                editor.overlay.set(Overlay::None);
            }
            Err(message) => editor.notify(message),
        }
    });
}

/// Makes the graph that revision again: one edit, which undo takes back
/// (carried out by the editing part, `made_again`).
pub fn restore(editor: EditorState, revision: i64) {
    leptos::task::spawn_local(async move {
        match load(&editor.graph_id(), revision).await {
            Ok(graph) => editor.command(Command::RestoreRevision {
                revision,
                graph: Box::new(graph),
            }),
            Err(message) => editor.notify(message),
        }
    });
}

/// The edit of a restore, in the editing part.
pub fn made_again(editor: EditorState, revision: i64, graph: &Graph) {
    let label = format!("Restore revision {revision}");
    if editor.edit(&label, None, |edit| edit.restore(graph)) {
        editor.compare.set(None);
        editor.overlay.set(Overlay::None);
        editor.notify(format!(
            "Restored revision {revision}; it is saved as a new revision. Undo (Ctrl+Z) takes it back."
        ));
    }
}

/// The dialog listing the revisions kept, a page at a time.
#[component]
pub fn HistoryDialog() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let pages = RwSignal::new(Vec::<RevisionList>::new());
    let problem = RwSignal::new(None::<String>);
    let load_page = move |before: Option<i64>| {
        leptos::task::spawn_local(async move {
            match api::revisions(&editor.graph_id(), before).await {
                Ok(page) => pages.update(|pages| pages.push(page)),
                Err(error) => problem.set(Some(format!(
                    "The history could not be loaded: {}",
                    error.message_or("the server refused")
                ))),
            }
        });
    };
    load_page(None);
    let kept = move || {
        pages.with(|pages| {
            pages.first().map(|page| {
                format!(
                    "{} revisions kept ({} KB). Older ones thin out: one a minute after two minutes, one per ten minutes after an hour, one an hour after a day.",
                    page.kept,
                    page.kept_bytes / 1024
                )
            })
        })
    };
    let entries = move || {
        pages.with(|pages| {
            let current = pages.first().map_or(0, |page| page.current);
            pages
                .iter()
                .flat_map(|page| page.revisions.iter())
                .map(|revision| {
                    let number = revision.revision;
                    let past = number != current;
                    view! {
                        <li class="revision">
                            <span class="revision-line">{line(revision, current)}</span>
                            <span class="revision-time">{super::run_panel::local_time(revision.saved_at)}</span>
                            <Show when=move || past>
                                <a class="button-link" href=format!("/g/{}/revisions/{number}", editor.graph_id()) title="This revision on a canvas of its own, read-only">"Open"</a>
                                <button type="button" on:click=move |_| compare(editor, number)>"Compare"</button>
                                <button type="button" on:click=move |_| restore(editor, number)>"Restore"</button>
                            </Show>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    let older = move || pages.with(|pages| pages.last().and_then(|page| page.next_before));
    view! {
        <Modal title="History".to_owned() class="history-dialog">
            <p class="hint">{kept}</p>
            <p class="hint warning" role="alert">{move || problem.get()}</p>
            <ul class="revisions" aria-label="Revisions">{entries}</ul>
            <Show when=move || older().is_some()>
                <button type="button" on:click=move |_| load_page(older())>"Older revisions"</button>
            </Show>
        </Modal>
    }
}

/// Over the canvas while it is compared with a revision: what changed
/// since, in words, Restore and Done; and the highlighting.
#[component]
pub fn CompareBanner() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let changes = Memo::new(move |_| {
        editor.version.track();
        editor.compare.with(|compared| {
            compared.as_ref().map(|compared| {
                let now = editor.graph();
                let changes = graph::changes::between(&compared.graph, &now);
                let summary = changes.summary(&compared.graph, &now);
                (compared.revision, changes, summary)
            })
        })
    });
    move || {
        changes.get().map(|(revision, changes, summary)| {
            view! {
                <style>{highlight_style(&changes)}</style>
                <div class="notice compare-banner" role="status">
                    <strong>{format!("Since revision {revision}: ")}</strong>
                    {summary}
                    <span class="compare-key">
                        <span class="key-added">"added"</span>
                        <span class="key-changed">"changed"</span>
                        <span class="key-moved">"moved"</span>
                    </span>
                    <button type="button" on:click=move |_| restore(editor, revision)>{format!("Restore revision {revision}")}</button>
                    <button type="button" on:click=move |_| editor.compare.set(None)>"Done"</button>
                </div>
            }
        })
    }
}

/// On a recorded run's page: the page shows the graph as the run ran it,
/// and says so when the graph has been saved since.
#[component]
pub fn ChangedSinceBanner() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let since = RwSignal::new(None::<(String, i64, i64)>);
    let ran = editor.run.record.with_untracked(|record| {
        record
            .as_ref()
            .and_then(|record| Some((record.graph_id.clone()?, record.graph_revision?)))
    });
    if let Some((graph_id, ran)) = ran {
        Effect::new(move |_| {
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                // The graph as it is now is anyone's to read with the link.
                let Ok(text) = api::graph_text(&graph_id).await else {
                    return;
                };
                if let Ok(now) = Graph::load(&text) {
                    let now = i64::try_from(now.revision).unwrap_or(0);
                    if now > ran {
                        since.set(Some((graph_id, ran, now)));
                    }
                }
            });
        });
    }
    move || {
        since.get().map(|(graph_id, ran, now)| {
            view! {
                <div class="notice changed-since" role="status">
                    {format!("The graph has changed since this run: it ran revision {ran}, and the graph is at revision {now}. This page shows it as it ran.")}
                    <a class="button-link" href=format!("/g/{graph_id}")>"Open the graph as it is now"</a>
                </div>
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::starter::starter_graph;

    #[test]
    fn what_changed_is_marked_by_its_ids_and_nothing_else() {
        let before = starter_graph();
        let mut after = before.clone();
        *after.modules[1].config.instruction_mut().unwrap() = "Other".to_owned();
        after.modules[0].position.x += 10.0;
        after.modules[2].id = "odd\"id".to_owned();
        let style = highlight_style(&graph::changes::between(&before, &after));
        assert!(
            style.contains("[data-node-id=\"m2\"] { outline: 3px solid var(--compared-changed);"),
            "{style}"
        );
        assert!(
            style.contains("[data-node-id=\"m1\"] { outline: 3px solid var(--compared-moved);"),
            "{style}"
        );
        assert!(style.contains("[data-node-id=\"odd\\\"id\"]"), "{style}");
        assert!(highlight_style(&Changes::default()).is_empty());
    }
}
