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
    /// `completed`, `reused`, `failed`, `rejected`, … or `not reached`.
    pub status: String,
    /// Everything it gave: each port's value (an output module's results,
    /// each under where it came from), its named outputs, its error.
    pub text: String,
    /// What it was given: the value on each cable into it, as the module
    /// at the other end last gave it.
    pub given: String,
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
            given: String::new(),
            cost: CostTotal::default(),
        };
    };
    Side {
        status: status_words(activation),
        text: given_out(record, activation),
        given: given_in(record, module),
        cost: record.module_cost(module),
    }
}

/// An approval says how it was decided, rather than that it completed.
fn status_words(activation: &ActivationRecord) -> String {
    let completed = activation.status == wire::ActivationStatus::Completed;
    match &activation.decision {
        Some(decided) if completed => {
            crate::run::module_state::decided_words(decided.decision).to_lowercase()
        }
        None if completed && activation.waiting.is_some() => "timed out".to_owned(),
        _ => activation.status.as_str().to_owned(),
    }
}

/// "── on approved_out ──" and the like, before a part of a side's text.
fn section(title: &str, text: &str) -> String {
    format!("── {title} ──\n{text}")
}

/// Every port's value, named output and error of `activation`.
fn given_out(record: &RunRecord, activation: &ActivationRecord) -> String {
    let is_result = |port: &str| graph::kinds::output::result_number(port).is_some();
    let mut parts = Vec::new();
    // An output module's results, each under where it came from.
    if activation.outputs.keys().any(|port| is_result(port)) {
        parts.extend(crate::run::reading::merged(activation, &|id| {
            record.label_of(id)
        }));
    }
    let ports: Vec<(&String, &wire::PortValue)> = activation
        .outputs
        .iter()
        .filter(|(port, _)| !is_result(port))
        .collect();
    for (port, value) in &ports {
        let text = crate::run::reading::value_text(value);
        let text = if text.is_empty() {
            "(a signal)".to_owned()
        } else {
            text
        };
        parts.push(if ports.len() == 1 && parts.is_empty() {
            text
        } else {
            section(&format!("on {port}"), &text)
        });
    }
    for (name, text) in &activation.named_outputs {
        parts.push(section(&format!("named output “{name}”"), text));
    }
    if let Some(error) = &activation.error {
        parts.push(if parts.is_empty() {
            error.clone()
        } else {
            section("error", error)
        });
    }
    parts.join("\n\n")
}

/// The value on each cable into `module`, as the module it comes from
/// last gave it on that port.
fn given_in(record: &RunRecord, module: &str) -> String {
    record
        .graph
        .cables
        .iter()
        .filter(|cable| cable.to.module == module)
        .filter_map(|cable| {
            let value = record
                .last(&cable.from.module)?
                .outputs
                .get(&cable.from.port)?;
            Some(section(
                &format!(
                    "given on {} by “{}”",
                    cable.to.port,
                    record.label_of(&cable.from.module)
                ),
                &crate::run::reading::value_text(value),
            ))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
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
            // Reused or run again, the same output is the same; anything it
            // gave or was given that is not, differs.
            differs: first_side.text != second_side.text
                || first_side.given != second_side.given
                || (first_side.status == NOT_REACHED) != (second_side.status == NOT_REACHED)
                || (first_side.status != second_side.status
                    && ![&first_side.status, &second_side.status]
                        .iter()
                        .all(|status| matches!(status.as_str(), "completed" | "reused"))),
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
    let whole = |side: &Side| {
        if side.given.is_empty() {
            side.text.clone()
        } else {
            format!("{}\n\n{}", side.text, side.given)
        }
    };
    let diff = row
        .differs
        .then(|| line_diff(&whole(&row.first), &whole(&row.second)));
    let given = |side: &Side| {
        (!side.given.is_empty()).then(|| {
            let given = side.given.clone();
            view! {
                <details class="compared-given">
                    <summary>"What it was given"</summary>
                    <pre>{given}</pre>
                </details>
            }
        })
    };
    view! {
        <li class="compared-module" class:differs=row.differs data-module-id=row.module_id.clone()>
            <header>
                <strong>{row.label.clone()}</strong>
                <span class="compared-mark">{if row.differs { "differs" } else { "same" }}</span>
            </header>
            <div class="compared-sides">
                <div><p class="hint">{facts(&row.first)}</p><pre>{row.first.text.clone()}</pre>{given(&row.first)}</div>
                <div><p class="hint">{facts(&row.second)}</p><pre>{row.second.text.clone()}</pre>{given(&row.second)}</div>
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

    #[test]
    fn every_input_and_output_is_compared_and_an_approval_says_how_it_was_decided() {
        // An output module with two results whose second differs between
        // the runs: it differs, though its first is the same.
        let graph = starter_graph();
        let run = |id: &str, second_result: &str, decision: wire::approval::Decision| {
            crate::editor::fixtures::finished_run(id, &graph, |module, activation| {
                if module.id == "m3" {
                    for (key, said) in [("result_1", "the same"), ("result_2", second_result)] {
                        activation.outputs.insert(
                            key.to_owned(),
                            PortValue::Bundle(ContextBundle::text("m2", said)),
                        );
                    }
                } else if module.id == "m2" {
                    activation.outputs.insert(
                        "data_out".to_owned(),
                        PortValue::Bundle(ContextBundle::text("m2", "the draft")),
                    );
                    activation.waiting = Some(wire::approval::Waiting {
                        asked: "Publish?".to_owned(),
                        shown: Vec::new(),
                        value: String::new(),
                        passes_on: None,
                        deadline_at: None,
                    });
                    activation.decision = Some(wire::approval::DecisionRecord {
                        decision,
                        feedback: String::new(),
                        value: None,
                        by: wire::approval::Decider::Editor,
                        at: 2,
                    });
                }
            })
        };
        use wire::approval::Decision;
        let compared = rows(
            &run("r_a", "first", Decision::Approve),
            &run("r_b", "second", Decision::Reject),
        );
        let final_essay = &compared[2];
        assert!(final_essay.differs, "{final_essay:?}");
        assert!(
            final_essay.second.text.contains("second"),
            "{final_essay:?}"
        );
        // The same value on its way, decided otherwise: it differs, and says so.
        let draft = &compared[1];
        assert_eq!(
            (draft.first.status.as_str(), draft.second.status.as_str()),
            ("approved", "rejected")
        );
        assert!(draft.differs);
        // What a module was given is compared too.
        let same = rows(
            &run("r_a", "x", Decision::Approve),
            &run("r_b", "x", Decision::Approve),
        );
        assert!(same.iter().all(|row| !row.differs), "{same:?}");
        assert!(
            same[2].first.given.contains("given on data_in by “Draft”"),
            "{:?}",
            same[2]
        );
        assert!(same[2].first.given.contains("the draft"), "{:?}", same[2]);
    }
}
