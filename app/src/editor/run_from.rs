//! Running from a module (PRODUCT §3.15), as the run dialog shows it before
//! anything is sent: which modules the recorded run lends and which run
//! again, what that saves, and why it cannot when it cannot — by the same
//! rules the server applies (`graph::reuse::plan`); and the button that
//! offers it on a module of a finished run.

use graph::Graph;
use graph::ModuleKind;
use leptos::prelude::*;
use wire::RunRecord;
use wire::cost::CostTotal;
use wire::run::RunFrom;

use super::state::{EditorMode, EditorState, Overlay};

/// What a run from `module`, reusing `record`, would do.
#[derive(Clone, Debug, PartialEq)]
pub struct Preview {
    /// The labels of the modules reused, in document order.
    pub reused: Vec<String>,
    /// The labels of the modules that run.
    pub runs: Vec<String>,
    /// What the reused activations cost the recorded run.
    pub saved: CostTotal,
    /// The calls to a model or an agent they made, each one.
    pub calls: u32,
    /// The tokens those calls took, in and out.
    pub tokens: u64,
    /// Every reused activation that called a model or an agent called the
    /// simulated provider: it saves no money, only time.
    pub simulated: bool,
    /// An input module is reused: the recorded input is the run's.
    pub input_reused: bool,
    /// Why it cannot run this way (the server would refuse it).
    pub refusal: Option<String>,
}

/// The preview of a run of `current` from `module`, reusing `record`.
pub fn preview(current: &Graph, record: &RunRecord, module: &str) -> Preview {
    let labels = |ids: &[String]| -> Vec<String> {
        ids.iter()
            .map(|id| {
                current
                    .module(id)
                    .map_or_else(|| id.clone(), |module| module.display_label().to_owned())
            })
            .collect()
    };
    if !record.is_finished() {
        return Preview::refused(format!(
            "run {} is still {}: wait for it to end",
            record.id,
            record.status.as_str()
        ));
    }
    match graph::reuse::plan(current, &record.graph, module, &record.id, record) {
        Ok(plan) => {
            let mut saves = Saves {
                simulated: true,
                ..Saves::default()
            };
            for id in &plan.reused {
                // A module on a loop back is reused only so far.
                let reused_so_far = plan
                    .partly
                    .iter()
                    .find(|(partly, _)| partly == id)
                    .map(|(_, count)| *count);
                for activation in record
                    .modules
                    .get(id)
                    .map_or(&[][..], |module| &module.activations)
                    .iter()
                    .filter(|activation| {
                        reused_so_far.is_none_or(|count| activation.activation <= count)
                    })
                {
                    saves.add(activation);
                }
            }
            let input_reused = plan.reused.iter().any(|id| {
                current
                    .module(id)
                    .is_some_and(|module| module.kind() == Some(ModuleKind::Input))
            });
            Preview {
                reused: labels(&plan.reused),
                runs: labels(&plan.runs),
                saved: saves.cost,
                calls: saves.calls,
                tokens: saves.tokens,
                simulated: saves.simulated,
                input_reused,
                refusal: None,
            }
        }
        Err(refusal) => Preview::refused(refusal.message),
    }
}

/// What the reused activations would have cost again.
#[derive(Default)]
struct Saves {
    cost: CostTotal,
    calls: u32,
    tokens: u64,
    /// Every one that called anything called the simulated provider.
    simulated: bool,
}

impl Saves {
    fn add(&mut self, activation: &wire::ActivationRecord) {
        let calls = activation.model_calls();
        // Only what called a model or an agent had a cost.
        if calls == 0 {
            return;
        }
        self.cost.add(activation.cost());
        self.calls += calls;
        self.tokens += activation.tokens();
        // An attempt that failed before its receipt called the provider
        // its responses name; with neither, nothing says it was real.
        self.simulated &= activation
            .receipt
            .as_ref()
            .is_none_or(|receipt| receipt.simulated);
    }
}

impl Preview {
    /// A run from a module that cannot be, saying why.
    pub fn refused(why: String) -> Preview {
        Preview {
            reused: Vec::new(),
            runs: Vec::new(),
            saved: CostTotal::default(),
            calls: 0,
            tokens: 0,
            simulated: false,
            input_reused: false,
            refusal: Some(why),
        }
    }

    /// "Reused from run r_…, not run again: Topic, Outline, Draft (saves
    /// $0.0120)."
    pub fn reused_text(&self, run_id: &str) -> String {
        if self.reused.is_empty() {
            return format!("Nothing is reused from run {run_id}: every module runs.");
        }
        let calls = self.calls;
        let plural = if calls == 1 { "" } else { "s" };
        let tokens = if self.tokens == 0 {
            String::new()
        } else {
            format!(", {} tokens", self.tokens)
        };
        let saves = if calls == 0 {
            String::new()
        } else if self.simulated {
            format!(" — saves {calls} model call{plural}{tokens} (simulated, so no money)")
        } else {
            format!(
                " — saves {calls} model call{plural}{tokens}, {}",
                self.saved.text()
            )
        };
        format!(
            "Reused from run {run_id}, not run again: {}{saves}.",
            self.reused.join(", ")
        )
    }

    /// "Runs: Polish."
    pub fn runs_text(&self) -> String {
        format!("Runs: {}.", self.runs.join(", "))
    }
}

/// What the run dialog needs to run from a module of the run shown.
pub struct FromModule {
    pub preview: Preview,
    /// The module's label.
    pub label: String,
    /// The recorded run's input text.
    pub recorded_input: Option<String>,
}

impl FromModule {
    pub fn of(editor: EditorState, from: &RunFrom) -> FromModule {
        let recorded = editor.run.record.with_untracked(|record| {
            record
                .as_ref()
                .filter(|record| record.id == from.run)
                .cloned()
        });
        editor.with_graph(|graph| FromModule {
            preview: match &recorded {
                Some(record) => preview(graph, record, &from.module),
                None => Preview::refused(format!("run {} is not the run shown", from.run)),
            },
            label: graph.module(&from.module).map_or_else(
                || from.module.clone(),
                |module| module.display_label().to_owned(),
            ),
            recorded_input: recorded.map(|record| record.input.text),
        })
    }
}

/// A run from `module` reusing the run shown, when this page may start
/// one; else why not, in words for a disabled menu item.
pub fn offer(editor: EditorState, module: &str) -> Result<RunFrom, &'static str> {
    if editor.mode != EditorMode::Stored {
        return Err("Open the graph to run it from here");
    }
    if !editor.can_edit.get() {
        return Err("Only the graph's editors can run it");
    }
    let Some(run) = editor.run.run_id.get() else {
        return Err("Run the graph first: this reuses a finished run");
    };
    if !editor
        .run
        .status
        .get()
        .is_some_and(wire::RunStatus::is_finished)
    {
        return Err("Wait for the run to end");
    }
    editor.version.track();
    if !editor.with_graph(|graph| graph.module(module).is_some()) {
        return Err("The graph no longer has this module");
    }
    Ok(RunFrom {
        run,
        module: module.to_owned(),
    })
}

/// "▶ Run from here" on the module of a finished run the run panel
/// shows: the run dialog, to run it again from this module.
#[component]
pub fn RunFromHere() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let view_state = editor.run;
    let offered = Memo::new(move |_| {
        let focus = view_state.focus.get().unwrap_or_default();
        offer(editor, &focus).ok()
    });
    let label = move || editor.module_label(&view_state.focus.get().unwrap_or_default());
    view! {
        <Show when=move || offered.with(Option::is_some)>
            <button
                type="button"
                class="run-from-here"
                title=move || format!("Run again from “{}”, reusing what this run did upstream of it", label())
                on:click=move |_| {
                    if let Some(from) = offered.get_untracked() {
                        editor.overlay.set(Overlay::RunFrom(from));
                    }
                }
            >
                "▶ Run from here"
            </button>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::starter::starter_graph;
    use wire::bundle::Receipt;

    /// The starter graph, run to the end, every call priced at $0.01.
    fn recorded(graph: &Graph) -> RunRecord {
        crate::editor::fixtures::finished_run("r_first", graph, |module, activation| {
            if module.kind() == Some(ModuleKind::AgentTask) {
                // The instruction and two re-prompts: three calls.
                activation.receipt = Some(Receipt {
                    cost: Some(0.01),
                    tokens_in: 900,
                    tokens_out: 300,
                    re_prompt_count: 2,
                    ..Receipt::default()
                });
            }
        })
    }

    #[test]
    fn the_dialog_lists_what_is_reused_and_what_that_saves() {
        // Topic → Draft → Final essay, run from Final essay.
        let graph = starter_graph();
        let preview = preview(&graph, &recorded(&graph), "m3");
        assert!(preview.refusal.is_none(), "{preview:?}");
        assert!(preview.input_reused);
        assert_eq!(preview.reused, ["Topic", "Draft"]);
        assert_eq!(preview.runs, ["Final essay"]);
        assert_eq!(
            preview.reused_text("r_first"),
            "Reused from run r_first, not run again: Topic, Draft — saves 3 model calls, 1200 tokens, $0.0100."
        );
        assert_eq!(preview.runs_text(), "Runs: Final essay.");
    }

    #[test]
    fn a_change_upstream_is_said_before_anything_is_sent() {
        let graph = starter_graph();
        let mut changed = graph.clone();
        *changed.modules[1].config.instruction_mut().unwrap() = "Something else".to_owned();
        let preview = preview(&changed, &recorded(&graph), "m3");
        let refusal = preview.refusal.unwrap();
        assert!(
            refusal.starts_with("\"Draft\" had its settings changed since run r_first"),
            "{refusal}"
        );
        // From Draft itself, the change is what runs.
        let preview = super::preview(&changed, &recorded(&graph), "m2");
        assert_eq!(preview.refusal, None);
        assert_eq!(preview.runs, ["Draft", "Final essay"]);
    }
}
