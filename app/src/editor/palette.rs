//! The palette: every module kind, filtered as you type, and a note. Click
//! (or Enter) adds the module at the centre of the view; dragging one onto
//! the canvas puts it where it is dropped.

use graph::ModuleKind;
use leptos::prelude::*;

use super::editing::Command;
use super::state::EditorState;
use crate::browser;

/// The drag-and-drop type of a palette entry.
pub const KIND_MIME: &str = "application/x-patchbay-kind";

/// How well `kind` answers `query`: `None` when it does not; otherwise
/// lower is better — a title that starts with it, a title that holds it,
/// then its wire name or description. Typing "review" must put Review gate
/// first, not Coding (whose description mentions a review chain).
fn rank(kind: ModuleKind, query: &str) -> Option<u8> {
    let query = browser::lowercase(query.trim());
    let title = browser::lowercase(kind.title());
    if query.is_empty() || title.starts_with(&query) {
        Some(0)
    } else if title.contains(&query) {
        Some(1)
    } else if kind.as_str().contains(&query) {
        Some(2)
    } else if browser::lowercase(kind.description()).contains(&query) {
        Some(3)
    } else {
        None
    }
}

/// Whether the palette's note entry answers `query`.
fn note_answers(query: &str) -> bool {
    let query = browser::lowercase(query.trim());
    query.is_empty()
        || ["note", "text", "markdown", "comment", "sticky"]
            .iter()
            .any(|word| word.starts_with(&query) || query.starts_with(word))
}

#[component]
pub fn Palette() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let query = RwSignal::new(String::new());
    let highlighted = RwSignal::new(0usize);
    let found = Memo::new(move |_| {
        query.with(|query| {
            let mut found: Vec<(u8, ModuleKind)> = ModuleKind::ALL
                .into_iter()
                .filter_map(|kind| rank(kind, query).map(|rank| (rank, kind)))
                .collect();
            // Stable: equal ranks keep the palette's order.
            graph::order::by_rank(&mut found, |(rank, _)| usize::from(*rank));
            found.into_iter().map(|(_, kind)| kind).collect::<Vec<_>>()
        })
    });
    // Focus goes to the canvas, where the new module is selected, so the
    // keys that follow (Delete, Escape, ], F) act on it.
    let add = move |kind: ModuleKind| {
        editor.command(Command::AddModule(kind, editor.view_centre()));
        editor.focus_canvas();
    };
    let note_shown = Memo::new(move |_| query.with(|query| note_answers(query)));
    // The note opens for writing, and its field takes the focus.
    let add_note = move || {
        let centre = editor.view_centre();
        let at = graph::Position {
            x: centre.x - graph::notes::NEW_NOTE_SIZE.width / 2.0,
            y: centre.y - graph::notes::NEW_NOTE_SIZE.height / 2.0,
        };
        editor.command(Command::Note(crate::canvas::NoteEvent::Add(at)));
    };
    let on_keydown = move |event: web_sys::KeyboardEvent| {
        let count = found.with_untracked(Vec::len) + usize::from(note_shown.get_untracked());
        match event.key().as_str() {
            "ArrowDown" => {
                event.prevent_default();
                highlighted.update(|index| *index = (*index + 1).min(count.saturating_sub(1)));
            }
            "ArrowUp" => {
                event.prevent_default();
                highlighted.update(|index| *index = index.saturating_sub(1));
            }
            "Enter" => {
                event.prevent_default();
                let chosen = highlighted.get_untracked();
                if let Some(kind) = found.with_untracked(|found| found.get(chosen).copied()) {
                    add(kind);
                    query.set(String::new());
                } else if note_shown.get_untracked() && chosen == found.with_untracked(Vec::len) {
                    add_note();
                    query.set(String::new());
                }
            }
            "Escape" => query.set(String::new()),
            _ => {}
        }
    };
    view! {
        <nav class="palette" aria-label="Add modules">
            <input
                id="palette-search"
                type="search"
                placeholder="Add module…  ( / )"
                aria-label="Search module kinds: arrows choose, Enter adds"
                prop:value=move || query.get()
                on:input=move |event| {
                    query.set(event_target_value(&event));
                    highlighted.set(0);
                }
                on:keydown=on_keydown
            />
            <ul>
                <For each=move || found.get() key=|kind| *kind let:kind>
                    <li>
                        <button
                            type="button"
                            class="palette-item"
                            // One tab stop for the palette, its search: the
                            // arrows there choose a kind and Enter adds it,
                            // so Tab goes on to the canvas, not through
                            // thirteen kinds.
                            tabindex="-1"
                            class:highlighted=move || found.with(|found| found.get(highlighted.get()) == Some(&kind))
                            data-kind=kind.as_str()
                            draggable="true"
                            title=kind.description()
                            on:click=move |_| add(kind)
                            on:dragstart=move |event: web_sys::DragEvent| {
                                if let Some(transfer) = event.data_transfer() {
                                    let _ = transfer.set_data(KIND_MIME, kind.as_str());
                                    transfer.set_effect_allowed("copy");
                                }
                            }
                        >
                            <span class=format!("swatch kind-{}", kind.as_str().trim_start_matches("step."))></span>
                            <span class="palette-title">{kind.title()}</span>
                            <span class="palette-description">{kind.description()}</span>
                        </button>
                    </li>
                </For>
                <Show when=move || note_shown.get()>
                    <li>
                        <button
                            type="button"
                            class="palette-item palette-note"
                            tabindex="-1"
                            class:highlighted=move || highlighted.get() == found.with(Vec::len)
                            title="Markdown on the canvas: say what a part of the graph does (or double-click empty canvas)"
                            on:click=move |_| add_note()
                        >
                            <span class="swatch note-yellow"></span>
                            <span class="palette-title">"Note"</span>
                            <span class="palette-description">"Markdown on the canvas, for the people who read the graph"</span>
                        </button>
                    </li>
                </Show>
            </ul>
        </nav>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_match_comes_before_a_description_match() {
        let ranked = |query: &str| {
            let mut found: Vec<(u8, ModuleKind)> = ModuleKind::ALL
                .into_iter()
                .filter_map(|kind| rank(kind, query).map(|rank| (rank, kind)))
                .collect();
            graph::order::by_rank(&mut found, |(rank, _)| usize::from(*rank));
            found.into_iter().map(|(_, kind)| kind).collect::<Vec<_>>()
        };
        assert_eq!(ranked("review").first(), Some(&ModuleKind::ReviewGate));
        assert!(ranked("review").contains(&ModuleKind::Coding));
        assert_eq!(ranked("judge"), [ModuleKind::Judge]);
    }

    #[test]
    fn the_note_answers_the_words_people_look_for_it_by() {
        for query in ["", "no", "Note", "sticky", "markdown", "comment"] {
            assert!(note_answers(query), "{query:?}");
        }
        for query in ["agent", "review", "x"] {
            assert!(!note_answers(query), "{query:?}");
        }
    }

    #[test]
    fn search_matches_titles_descriptions_and_wire_names() {
        assert!(rank(ModuleKind::AgentTask, "agent").is_some());
        assert!(rank(ModuleKind::ReviewGate, "revision").is_some());
        assert!(rank(ModuleKind::Coding, "step.coding").is_some());
        assert!(rank(ModuleKind::Input, "judge").is_none());
        assert!(rank(ModuleKind::Judge, "").is_some());
    }
}
