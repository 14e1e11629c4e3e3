//! Two runs of one graph side by side (PRODUCT §3.15): per module, what
//! each run's last activation of it said and cost, the modules that differ
//! marked, with a line diff of their outputs — the way to see what a
//! prompt change did. Rows are plain Rust, tested natively; the dialog is
//! opened from the run history with two runs chosen.

use leptos::prelude::*;
use wire::cost::CostTotal;
use wire::{ActivationRecord, RunRecord};

use super::comparison::{diff_spans, line_diff};
use super::modal::Modal;
use crate::api;

/// One module in one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// `completed`, `reused`, `failed`, … or `not reached`.
    pub status: String,
    /// Its output (`data_out`, else its first port's), or its error.
    pub text: String,
    pub cost: CostTotal,
}

/// One module in both runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleRow {
    pub module_id: String,
    pub label: String,
    pub first: Side,
    pub second: Side,
    pub differs: bool,
}

const NOT_REACHED: &str = "not reached";

fn side(record: &RunRecord, module: &str) -> Side {
    let Some(activation) = record.last(module) else {
        return Side {
            status: NOT_REACHED.to_owned(),
            text: String::new(),
            cost: CostTotal::default(),
        };
    };
    Side {
        status: activation.status.as_str().to_owned(),
        text: output_text(activation),
        cost: record.module_cost(module),
    }
}

fn output_text(activation: &ActivationRecord) -> String {
    let bundle = activation
        .outputs
        .get(graph::ports::DATA_OUT)
        .or_else(|| activation.outputs.values().next())
        .and_then(|value| value.as_bundle());
    match bundle {
        Some(bundle) => bundle.as_text(),
        None => activation.error.clone().unwrap_or_default(),
    }
}

/// Every module of either run, in the order of the second (the newer) run's
/// graph, then those only the first had.
pub fn rows(first: &RunRecord, second: &RunRecord) -> Vec<ModuleRow> {
    let ids = second
        .graph
        .modules
        .iter()
        .chain(
            first
                .graph
                .modules
                .iter()
                .filter(|module| second.graph.module(&module.id).is_none()),
        )
        .map(|module| module.id.clone());
    ids.map(|module_id| {
        let first_side = side(first, &module_id);
        let second_side = side(second, &module_id);
        ModuleRow {
            label: if second.graph.module(&module_id).is_some() {
                second.label_of(&module_id)
            } else {
                first.label_of(&module_id)
            },
            // Reused or run again, the same output is the same.
            differs: first_side.text != second_side.text
                || (first_side.status == NOT_REACHED) != (second_side.status == NOT_REACHED),
            first: first_side,
            second: second_side,
            module_id,
        }
    })
    .collect()
}

fn facts(side: &Side) -> String {
    if side.cost.priced + side.cost.unpriced == 0 {
        side.status.clone()
    } else {
        format!("{} · {}", side.status, side.cost.text())
    }
}

/// The two runs, loaded, side by side.
#[component]
pub fn RunComparison(first: String, second: String) -> impl IntoView {
    let loaded = RwSignal::new(None::<Result<(RunRecord, RunRecord), String>>);
    {
        let (first, second) = (first.clone(), second.clone());
        leptos::task::spawn_local(async move {
            let both = match (api::run(&first).await, api::run(&second).await) {
                (Ok(a), Ok(b)) => Ok((a, b)),
                _ => Err("The runs could not be loaded; try again.".to_owned()),
            };
            loaded.set(Some(both));
        });
    }
    let title = format!("Run {first} ↔ run {second}");
    view! {
        <Modal title="Compare runs".to_owned() class="run-comparison">
            <p class="hint">{title}</p>
            {move || match loaded.get() {
                None => view! { <p class="hint">"Loading the two runs…"</p> }.into_any(),
                Some(Err(message)) => view! { <p class="hint warning" role="alert">{message}</p> }.into_any(),
                Some(Ok((a, b))) => {
                    let rows = rows(&a, &b);
                    let differing = rows.iter().filter(|row| row.differs).count();
                    let costs = format!("Cost: {} ↔ {}", a.cost().text(), b.cost().text());
                    view! {
                        <p>{format!("{differing} of {} modules differ. {costs}", rows.len())}</p>
                        <ul class="compared-modules" aria-label="Modules of the two runs">
                            {rows.into_iter().map(|row| view! { <ComparedModule row/> }).collect_view()}
                        </ul>
                    }
                    .into_any()
                }
            }}
        </Modal>
    }
}

#[component]
fn ComparedModule(row: ModuleRow) -> impl IntoView {
    let diff = row
        .differs
        .then(|| line_diff(&row.first.text, &row.second.text));
    view! {
        <li class="compared-module" class:differs=row.differs data-module-id=row.module_id.clone()>
            <header>
                <strong>{row.label.clone()}</strong>
                <span class="compared-mark">{if row.differs { "differs" } else { "same" }}</span>
            </header>
            <div class="compared-sides">
                <div><p class="hint">{facts(&row.first)}</p><pre>{row.first.text.clone()}</pre></div>
                <div><p class="hint">{facts(&row.second)}</p><pre>{row.second.text.clone()}</pre></div>
            </div>
            {diff.map(|lines| view! {
                <details>
                    <summary>"The difference"</summary>
                    <pre class="diff">{diff_spans(lines)}</pre>
                </details>
            })}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::comparison::DiffLine;
    use graph::starter::starter_graph;
    use wire::bundle::{ContextBundle, PortValue};

    fn record(id: &str, graph: &graph::Graph, draft: &str) -> RunRecord {
        crate::editor::fixtures::finished_run(id, graph, |module, activation| {
            let said = if module.id == "m2" { draft } else { "the same" };
            activation.outputs.insert(
                "data_out".to_owned(),
                PortValue::Bundle(ContextBundle::text(&module.id, said)),
            );
        })
    }

    #[test]
    fn the_module_whose_output_changed_is_marked_and_the_others_are_the_same() {
        let graph = starter_graph();
        let first = record("r_a", &graph, "An essay.\nIt ends.");
        let mut newer = graph.clone();
        newer.modules.remove(2);
        let second = record("r_b", &newer, "An essay.\nIt ends well.");
        let rows = rows(&first, &second);
        let marks: Vec<(&str, bool)> = rows
            .iter()
            .map(|row| (row.label.as_str(), row.differs))
            .collect();
        // Final essay ran only in the first run: listed last, not reached in the second.
        assert_eq!(
            marks,
            [("Topic", false), ("Draft", true), ("Final essay", true)]
        );
        assert_eq!(rows[2].second.status, "not reached");
        assert_eq!(
            line_diff(&rows[1].first.text, &rows[1].second.text),
            [
                DiffLine::Same("An essay.".to_owned()),
                DiffLine::Removed("It ends.".to_owned()),
                DiffLine::Added("It ends well.".to_owned()),
            ]
        );
    }
}
