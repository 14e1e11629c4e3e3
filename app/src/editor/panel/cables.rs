//! The selected module's cables, in and out, each a button that selects it
//! (the cable panel opens: its condition, its order, Remove). The canvas
//! draws cables but cannot give them the keyboard focus; this is how a
//! keyboard, or a screen reader, reaches one.

use leptos::prelude::*;

use super::Selected;
use super::cable::end_words;

/// One cable of the module: its id and how it reads from the module's side.
#[derive(Clone, PartialEq, Eq)]
struct Listed {
    id: String,
    words: String,
}

pub fn cables_section(selected: Selected) -> impl IntoView {
    let editor = selected.editor;
    let listed = Memo::new(move |_| {
        editor.version.track();
        let id = selected.id();
        editor.with_graph(|graph| {
            let Some(module) = graph.module(&id) else {
                return Vec::new();
            };
            let ports = graph::ports(module);
            let own = |port_id: &str, output: bool| {
                let port = if output {
                    ports.output(port_id)
                } else {
                    ports.input(port_id)
                };
                port.map_or_else(|| port_id.to_owned(), |port| port.label.clone())
            };
            graph
                .cables
                .iter()
                .filter_map(|cable| {
                    let words = if cable.from.module == id {
                        format!(
                            "{} → {}",
                            own(&cable.from.port, true),
                            end_words(graph, &cable.to.module, &cable.to.port, false)
                        )
                    } else if cable.to.module == id {
                        format!(
                            "{} → {}",
                            end_words(graph, &cable.from.module, &cable.from.port, true),
                            own(&cable.to.port, false)
                        )
                    } else {
                        return None;
                    };
                    // Cables from one port differ by their conditions.
                    let words = match &cable.condition {
                        Some(condition) if !condition.trim().is_empty() => format!(
                            "{words}, when {}",
                            graph::routing::short_condition(condition, 40)
                        ),
                        _ => words,
                    };
                    Some(Listed {
                        id: cable.id.clone(),
                        words,
                    })
                })
                .collect::<Vec<_>>()
        })
    });
    let open = move |cable: &str| {
        editor.model.select_only(&[]);
        editor.model.select_edge(Some(cable));
        editor.selection_changed();
        // Into the cable's panel, where Tab reaches its fields and Delete
        // removes it.
        crate::browser::next_frame(|| crate::browser::focus(".cable-panel"));
    };
    view! {
        <fieldset class="module-cables">
            <legend>"Cables"</legend>
            {move || {
                let listed = listed.get();
                if listed.is_empty() {
                    view! { <p class="hint">"None: drag from a port to another module's, or press O on the canvas."</p> }.into_any()
                } else {
                    view! {
                        <ul>
                            {listed
                                .into_iter()
                                .map(|cable| {
                                    let id = cable.id;
                                    view! {
                                        <li><button type="button" title="Open this cable's details" on:click=move |_| open(&id)>{cable.words}</button></li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                        .into_any()
                }
            }}
        </fieldset>
    }
}
