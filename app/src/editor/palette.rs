//! The palette: every module kind, filtered as you type. Click (or Enter)
//! adds the module at the centre of the view; dragging one onto the canvas
//! puts it where it is dropped.

use graph::ModuleKind;
use leptos::prelude::*;

use super::state::EditorState;

/// The drag-and-drop type of a palette entry.
pub const KIND_MIME: &str = "application/x-patchbay-kind";

fn matches(kind: ModuleKind, query: &str) -> bool {
    let query = query.trim().to_lowercase();
    query.is_empty()
        || kind.title().to_lowercase().contains(&query)
        || kind.description().to_lowercase().contains(&query)
        || kind.as_str().contains(&query)
}

#[component]
pub fn Palette() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let query = RwSignal::new(String::new());
    let highlighted = RwSignal::new(0usize);
    let found = Memo::new(move |_| {
        query.with(|query| {
            ModuleKind::ALL
                .into_iter()
                .filter(|kind| matches(*kind, query))
                .collect::<Vec<_>>()
        })
    });
    // Focus goes to the canvas, where the new module is selected, so the
    // keys that follow (Delete, Escape, ], F) act on it.
    let add = move |kind: ModuleKind| {
        editor.add_module(kind, editor.view_centre());
        editor.focus_canvas();
    };
    let on_keydown = move |event: web_sys::KeyboardEvent| {
        let count = found.with_untracked(Vec::len);
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
                if let Some(kind) =
                    found.with_untracked(|found| found.get(highlighted.get_untracked()).copied())
                {
                    add(kind);
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
                aria-label="Search module kinds"
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
            </ul>
        </nav>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_matches_titles_descriptions_and_wire_names() {
        assert!(matches(ModuleKind::AgentTask, "agent"));
        assert!(matches(ModuleKind::ReviewGate, "revision"));
        assert!(matches(ModuleKind::Coding, "step.coding"));
        assert!(!matches(ModuleKind::Input, "judge"));
        assert!(matches(ModuleKind::Judge, ""));
    }
}
