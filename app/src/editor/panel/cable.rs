//! The detail panel of the selected cable: where it runs, its condition
//! (checked as it is typed, with the same `validate()` as the server), and
//! its place among its port's cables, which is the order conditions are
//! tried in.

use graph::Cable;
use leptos::prelude::*;

use super::fields::TextArea;
use crate::editor::state::EditorState;

/// "“Classify” · Data" for one end of a cable.
pub(super) fn end_words(
    graph: &graph::Graph,
    module_id: &str,
    port_id: &str,
    output: bool,
) -> String {
    let Some(module) = graph.module(module_id) else {
        return format!("a deleted module · {port_id}");
    };
    let ports = graph::ports(module);
    let port = if output {
        ports.output(port_id)
    } else {
        ports.input(port_id)
    };
    format!(
        "“{}” · {}",
        module.display_label(),
        port.map_or(port_id, |port| port.label.as_str())
    )
}

#[component]
pub fn CablePanel() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    move || {
        if editor.selected.get().is_some() {
            return None;
        }
        let id = editor.model.selected_edge.get()?.to_string();
        let stored_id = StoredValue::new(id.clone());
        let cable = Memo::new(move |_| {
            editor.version.track();
            editor.with_graph(|graph| {
                graph
                    .cables
                    .iter()
                    .find(|cable| cable.id == stored_id.get_value())
                    .cloned()
            })
        });
        let ends = Memo::new(move |_| {
            editor.version.track();
            cable.get().map(|cable: Cable| {
                editor.with_graph(|graph| {
                    (
                        end_words(graph, &cable.from.module, &cable.from.port, true),
                        end_words(graph, &cable.to.module, &cable.to.port, false),
                    )
                })
            })
        });
        // (its number, how many cables its port has), when conditions apply.
        let place = Memo::new(move |_| {
            editor.version.track();
            let cable = cable.get()?;
            editor.with_graph(|graph| {
                let order = graph::routing::cable_orders(graph).remove(&cable.id)?;
                let count = graph::routing::port_cables(graph, &cable).count();
                Some((order.number, count))
            })
        });
        let problems = Memo::new(move |_| {
            let id = stored_id.get_value();
            editor.findings.with(|findings| {
                findings
                    .iter()
                    .filter(|finding| finding.cable_id.as_deref() == Some(id.as_str()))
                    .map(|finding| finding.message.clone())
                    .collect::<Vec<_>>()
            })
        });
        let condition = Signal::derive(move || {
            cable.with(|cable| {
                cable
                    .as_ref()
                    .and_then(|cable| cable.condition.clone())
                    .unwrap_or_default()
            })
        });
        let set_condition = Callback::new(move |text: String| {
            let id = stored_id.get_value();
            editor.edit("Edit condition", Some(&format!("{id}.condition")), |edit| {
                if let Some(cable) = edit.cable_mut(&id) {
                    cable.condition = (!text.trim().is_empty()).then_some(text);
                }
            });
        });
        let move_cable = move |earlier: bool| {
            let id = stored_id.get_value();
            editor.edit(
                if earlier {
                    "Try cable earlier"
                } else {
                    "Try cable later"
                },
                None,
                |edit| {
                    edit.move_cable(&id, earlier);
                },
            );
        };
        let disabled = Signal::derive(move || !editor.can_edit.get());
        Some(view! {
            <aside class="detail-panel cable-panel" aria-label="Cable details" tabindex="-1">
                <header class="panel-header">
                    <span class="panel-kind">"Cable"</span>
                    <span class="panel-id">{id}</span>
                    <button type="button" class="close" aria-label="Close details" on:click=move |_| {
                        editor.model.select_edge(None);
                    }>"✕"</button>
                </header>
                {move || ends.get().map(|(from, to)| view! {
                    <p class="cable-ends">"From " <strong>{from}</strong> " to " <strong>{to}</strong></p>
                })}
                <TextArea
                    label="Condition"
                    placeholder="get('$.output.intent') == 'sales'"
                    rows=3
                    value=condition
                    on_input=set_condition
                    disabled=disabled
                />
                {move || {
                    let problems = problems.get();
                    (!problems.is_empty()).then(|| view! {
                        <ul class="cable-problems" role="alert">
                            {problems.into_iter().map(|problem| view! { <li>{problem}</li> }).collect_view()}
                        </ul>
                    })
                }}
                <p class="hint">
                    "Empty: the cable always carries the value. With a condition it carries the value only when the condition holds, read after the module finishes: "
                    <code>"$.output"</code>" (this port's value, JSON read as JSON), "
                    <code>"$.input"</code>" (the run's input), "
                    <code>"$.state['Label.status']"</code>" (the run state). Compare with == != < > <= >=, join with and, or, not. A path that is missing reads as null."
                </p>
                <div class="button-row">
                    <button type="button" class="danger" disabled=move || disabled.get() on:click=move |_| {
                        editor.delete_selection();
                        editor.focus_canvas();
                    }>"Remove cable"</button>
                </div>
                {move || place.get().map(|(number, count)| view! {
                    <div class="cable-order-field">
                        <span>{format!("Tried {number} of {count} from this port: the first that holds takes the value.")}</span>
                        <div class="button-row">
                            <button type="button" disabled=move || disabled.get() || number == 1 on:click=move |_| move_cable(true)>"↑ Try earlier"</button>
                            <button type="button" disabled=move || disabled.get() || number == count on:click=move |_| move_cable(false)>"↓ Try later"</button>
                        </div>
                    </div>
                })}
            </aside>
        })
    }
}
