//! The run panel under the canvas: the run's status and cancel, every
//! module with its state, and for the module in focus its merged output,
//! one tab per response (Original, Re-prompt 1…N, streaming live), named
//! outputs, a coding module's diff, changed files and test results, the
//! receipt, the session transcript and errors; and the graph's
//! run history, where opening a past run shows the canvas in its end state.

use graph::Graph;
use graph::kinds::coding::{DIFF_OUT, FILES_OUT, TEST_RESULTS_OUT};
use leptos::prelude::*;
use serde_json::Value;

use wire::content::{ChangedFile, TestResults};
use wire::run::{StartedBy, StartedHow, WithStartedBy};
use wire::{ActivationRecord, ActivationStatus, ContextBundle, Receipt, RunStatus, RunSummary};

use super::run_state::RunStateView;
use super::state::{EditorMode, EditorState};
use crate::api::{self, ApiError};
use crate::canvas::model::{ModuleRunState, duration_text};
use crate::edit_token;
use crate::run::{RunView, reading, remember_in_address};

/// A tab of the module view.
#[derive(Clone, Debug, PartialEq)]
pub enum Tab {
    /// An approval's question, what it shows, and the decision.
    Decision,
    Merged,
    /// An experiment's variants side by side (`comparison_out`).
    Variants,
    /// Response `index`: 0 is the original, i is re-prompt i.
    Response(u32),
    Named(String),
    /// One of a coding module's work outputs (see `WORK_OUTPUTS`).
    Work(&'static str),
    Receipt,
    Transcript,
    Error,
}

/// A coding module's outputs about its workspace, with their tab labels.
const WORK_OUTPUTS: [(&str, &str); 3] = [
    (DIFF_OUT, "Diff"),
    (FILES_OUT, "Files"),
    (TEST_RESULTS_OUT, "Tests"),
];

/// The bundle on output `port` of an activation, when it has content.
fn output_bundle<'a>(activation: &'a ActivationRecord, port: &str) -> Option<&'a ContextBundle> {
    match activation.outputs.get(port)? {
        wire::PortValue::Bundle(bundle) => Some(bundle).filter(|bundle| !bundle.content.is_null()),
        wire::PortValue::Signal { .. } | wire::PortValue::Receipt(_) => None,
    }
}

/// A coding module's work output as text: the diff as it is, the changed
/// files one per line, the test results as command, verdict and output.
fn work_text(port: &str, bundle: &ContextBundle) -> String {
    if let Value::String(text) = &bundle.content {
        return if text.is_empty() {
            "No changes.".to_owned()
        } else {
            text.clone()
        };
    }
    let typed = match port {
        FILES_OUT => bundle.content_as::<Vec<ChangedFile>>().map(|files| {
            if files.is_empty() {
                return "No files changed.".to_owned();
            }
            files
                .iter()
                .map(|file| format!("{:<9} {}", file.status.as_str(), file.path))
                .collect::<Vec<_>>()
                .join("\n")
        }),
        TEST_RESULTS_OUT => bundle
            .content_as::<TestResults>()
            .map(|results| match results {
                TestResults::NotRun => "No tests were run.".to_owned(),
                TestResults::Ran { run, .. } => format!(
                    "$ {}\n{}\n\n{}",
                    run.command,
                    if run.passed { "passed" } else { "failed" },
                    run.output
                ),
            }),
        _ => None,
    };
    typed.unwrap_or_else(|| serde_json::to_string_pretty(&bundle.content).unwrap_or_default())
}

/// The label of response `index` before the record names it.
/// A streaming response's label before the record has it; a variant's
/// (numbered from `RESPONSES_PER_VARIANT`) says whose it is.
pub fn response_label(index: u32, variants: &[String]) -> String {
    let per = graph::experiment::RESPONSES_PER_VARIANT;
    let turn = index % per;
    let base = if turn == 0 {
        "Original".to_owned()
    } else {
        format!("Re-prompt {turn}")
    };
    match (index / per).checked_sub(1) {
        Some(variant) => {
            let name = variants
                .get(usize::try_from(variant).unwrap_or(usize::MAX))
                .cloned()
                .unwrap_or_else(|| format!("Variant {}", variant + 1));
            format!("{name} · {base}")
        }
        None => base,
    }
}

/// The tabs of one module: what its record holds, and what streams now.
pub fn tabs(
    activation: Option<&ActivationRecord>,
    streaming: &[u32],
    variants: &[String],
) -> Vec<(Tab, String)> {
    // An approval opens on its decision.
    let mut tabs: Vec<(Tab, String)> = activation
        .filter(|activation| {
            activation.waiting.is_some()
                || activation
                    .tool_calls
                    .iter()
                    .any(|call| call.waits.is_some())
        })
        .map(|_| (Tab::Decision, "Decision".to_owned()))
        .into_iter()
        .collect();
    tabs.push((Tab::Merged, "Merged".to_owned()));
    if activation.is_some_and(|activation| {
        activation
            .outputs
            .contains_key(graph::experiment::COMPARISON_OUT)
    }) {
        tabs.push((Tab::Variants, "Variants".to_owned()));
    }
    let mut responses: Vec<(u32, String)> = activation
        .map(|activation| {
            activation
                .responses
                .iter()
                .map(|response| (response.index, response.label.clone()))
                .collect()
        })
        .unwrap_or_default();
    for index in streaming {
        if !responses.iter().any(|(known, _)| known == index) {
            responses.push((*index, response_label(*index, variants)));
        }
    }
    graph::order::by_rank(&mut responses, |(index, _)| {
        usize::try_from(*index).unwrap_or(usize::MAX)
    });
    tabs.extend(
        responses
            .into_iter()
            .map(|(index, label)| (Tab::Response(index), label)),
    );
    if let Some(activation) = activation {
        tabs.extend(
            activation
                .named_outputs
                .keys()
                .map(|name| (Tab::Named(name.clone()), format!("“{name}”"))),
        );
        tabs.extend(
            WORK_OUTPUTS
                .iter()
                .filter(|(port, _)| output_bundle(activation, port).is_some())
                .map(|(port, label)| (Tab::Work(port), (*label).to_owned())),
        );
        if activation.receipt.is_some() {
            tabs.push((Tab::Receipt, "Receipt".to_owned()));
        }
        if !activation.transcript.is_empty() {
            tabs.push((Tab::Transcript, "Transcript".to_owned()));
        }
        if activation.error.is_some() {
            tabs.push((Tab::Error, "Error".to_owned()));
        }
    }
    tabs
}

/// What a tab shows, as text; `label_of` names a module by its id.
pub fn tab_text(
    tab: &Tab,
    activation: Option<&ActivationRecord>,
    stream: Option<&String>,
    label_of: &dyn Fn(&str) -> String,
) -> String {
    let Some(activation) = activation else {
        return match tab {
            Tab::Response(_) => stream.cloned().unwrap_or_default(),
            _ => String::new(),
        };
    };
    match tab {
        Tab::Merged => reading::merged(activation, label_of).unwrap_or_else(|| {
            let answered: Vec<&str> = activation
                .responses
                .iter()
                .filter(|response| response.complete)
                .map(|response| response.label.as_str())
                .collect();
            if activation.status == ActivationStatus::Running {
                "…".to_owned()
            } else if answered.is_empty() {
                "No output.".to_owned()
            } else {
                // Stopped mid-chain: what it had is in the responses' tabs.
                format!(
                    "No merged output: it stopped before its chain finished. What it had answered is kept: {}.",
                    answered.join(", ")
                )
            }
        }),
        Tab::Response(index) => {
            let recorded = activation
                .responses
                .iter()
                .find(|response| response.index == *index);
            match (recorded, stream) {
                (Some(response), _) if response.complete => response.text.clone(),
                (_, Some(stream)) => stream.clone(),
                (Some(response), None) => response.text.clone(),
                (None, None) => String::new(),
            }
        }
        Tab::Named(name) => activation
            .named_outputs
            .get(name)
            .cloned()
            .unwrap_or_default(),
        Tab::Work(port) => output_bundle(activation, port)
            .map(|bundle| work_text(port, bundle))
            .unwrap_or_default(),
        Tab::Receipt => receipt_text(activation.receipt.as_ref()),
        Tab::Transcript => activation
            .transcript
            .iter()
            .map(|line| format!("── {} ──\n{}", line.role.as_str(), line.text))
            .collect::<Vec<_>>()
            .join("\n\n"),
        Tab::Error => activation.error.clone().unwrap_or_default(),
        // Shown as columns, not text (`comparison::Comparison`), and as a
        // form (`decision::DecisionView`).
        Tab::Variants | Tab::Decision => String::new(),
    }
}

fn receipt_text(receipt: Option<&Receipt>) -> String {
    let Some(receipt) = receipt else {
        return String::new();
    };
    let simulated = if receipt.simulated {
        " (simulated)"
    } else {
        ""
    };
    let cost = if receipt.simulated {
        "free (simulated)".to_owned()
    } else {
        wire::cost::cost_text(receipt.cost)
    };
    format!(
        "Provider: {} · {}{simulated}\nTokens: {} in, {} out\nCost: {cost}\nDuration: {}\nRe-prompts: {}\n\n{}",
        receipt.provider,
        receipt.model,
        receipt.tokens_in,
        receipt.tokens_out,
        duration_text(receipt.duration_ms as f64),
        receipt.re_prompt_count,
        serde_json::to_string_pretty(receipt).unwrap_or_default(),
    )
}

/// What the run cost so far, for its header: `None` when nothing in it
/// called a model or an agent.
pub fn run_cost_text(record: &wire::RunRecord) -> Option<String> {
    let spent = |activation: &&wire::ActivationRecord| {
        activation.receipt.is_some() || !activation.responses.is_empty()
    };
    // What reused activations cost was the recorded run's: it is saved.
    let saved = record
        .modules
        .values()
        .flat_map(|module| module.activations.iter())
        .filter(spent)
        .any(|activation| activation.reused_from.is_some())
        .then(|| format!("{} saved by reuse", record.saved().text()));
    let spenders: Vec<&wire::ActivationRecord> = record
        .modules
        .values()
        .flat_map(|module| module.activations.iter())
        .filter(spent)
        .filter(|activation| activation.reused_from.is_none())
        .collect();
    if spenders.is_empty() {
        return saved;
    }
    let with_saved = |text: String| match &saved {
        Some(saved) => format!("{text} · {saved}"),
        None => text,
    };
    if spenders.iter().all(|activation| {
        activation
            .receipt
            .as_ref()
            .is_some_and(|receipt| receipt.simulated)
    }) {
        return Some(with_saved("free (simulated)".to_owned()));
    }
    Some(with_saved(record.cost().text()))
}

/// The tool calls the run made, for its header: how many and their time,
/// and each tool's for the tooltip; `None` when it made none.
pub fn run_tools_text(record: &wire::RunRecord) -> Option<(String, String)> {
    let used = record.tool_uses();
    let calls: u32 = used.iter().map(|tool| tool.calls).sum();
    if calls == 0 {
        return None;
    }
    let time: u64 = used.iter().map(|tool| tool.duration_ms).sum();
    let plural = |count: u32| if count == 1 { "call" } else { "calls" };
    let text = format!(
        "{calls} tool {} · {}",
        plural(calls),
        duration_text(time as f64)
    );
    let each = used
        .iter()
        .map(|tool| {
            format!(
                "{}: {} {}, {}",
                tool.tool,
                tool.calls,
                plural(tool.calls),
                duration_text(tool.duration_ms as f64)
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    Some((text, each))
}

/// What a resume kept and what it did again, for the notice's tooltip.
fn resumed_title(replayed: u32) -> String {
    let kept = match replayed {
        0 => "no activation had finished".to_owned(),
        1 => "1 finished activation was kept".to_owned(),
        many => format!("{many} finished activations were kept"),
    };
    format!(
        "The server running this run stopped, and a server took it up again: {kept}, \
         and what was in flight started again from its last answered turn."
    )
}

pub(super) fn status_text(status: Option<RunStatus>) -> &'static str {
    match status {
        Some(RunStatus::Queued) => "Queued",
        Some(RunStatus::Running) => "Running",
        Some(RunStatus::Waiting) => "Waiting for a person",
        Some(RunStatus::Completed) => "Completed",
        Some(RunStatus::Failed) => "Failed",
        Some(RunStatus::Cancelled) => "Cancelled",
        Some(RunStatus::Interrupted) => "Interrupted (the server stopped)",
        None => "Unknown",
    }
}

/// The modules of the run, in document order: id, label, kind.
fn modules_of(graph: &Graph) -> Vec<(String, String, String)> {
    graph
        .modules
        .iter()
        .map(|module| {
            let kind = module.kind().map_or("unknown", graph::ModuleKind::as_str);
            (
                module.id.clone(),
                module.display_label().to_owned(),
                kind.to_owned(),
            )
        })
        .collect()
}

/// Local time of a Unix-milliseconds instant (in the browser).
pub(super) fn local_time(milliseconds: i64) -> String {
    #[cfg(feature = "hydrate")]
    {
        String::from(
            js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(milliseconds as f64))
                .to_locale_string("default", &wasm_bindgen::JsValue::UNDEFINED),
        )
    }
    #[cfg(not(feature = "hydrate"))]
    {
        format!("{milliseconds}")
    }
}

#[component]
fn History(graph_id: String) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let view_state = editor.run;
    let runs = RwSignal::new(None::<Result<Vec<WithStartedBy<RunSummary>>, String>>);
    let graph_for_links = graph_id.clone();
    Effect::new(move |_| {
        // Read again when the run shown changes state.
        view_state.status.track();
        // The run list is for the graph's editors.
        if edit_token::authorization(&graph_id).is_none() {
            runs.set(Some(Err(
                "Only the graph's editors see its runs; a run's own link shows that run to anyone."
                    .to_owned(),
            )));
            return;
        }
        let graph_id = graph_id.clone();
        leptos::task::spawn_local(async move {
            let answer = match api::run_history(&graph_id).await {
                Ok(list) => Ok(list.runs),
                Err(ApiError::Unreadable(_)) => Err("The run list could not be read.".to_owned()),
                Err(ApiError::Unreachable(message)) => {
                    Err(format!("The run history could not be loaded: {message}"))
                }
                Err(refused) => Err(format!(
                    "The run history could not be loaded: {}",
                    refused.message_or("the server refused")
                )),
            };
            runs.set(Some(answer));
        });
    });
    let open = move |run_id: String| {
        leptos::task::spawn_local(async move {
            match api::run(&run_id).await {
                Ok(record) if record.is_finished() => {
                    view_state.show_record(editor.model, record);
                    remember_in_address(Some(&run_id));
                    view_state.history.set(false);
                }
                Ok(record) => {
                    view_state.follow(editor.model, record.graph, &run_id);
                    view_state.history.set(false);
                }
                Err(ApiError::Unreadable(error)) => {
                    editor.notify(format!("The run could not be read: {error}"))
                }
                Err(_) => editor.notify("The run could not be loaded; try again."),
            }
        });
    };
    // Two runs chosen to compare, the older first.
    let chosen = RwSignal::new(Vec::<(i64, String)>::new());
    let toggle = move |created_at: i64, id: String| {
        chosen.update(|chosen| {
            if let Some(at) = chosen.iter().position(|(_, known)| *known == id) {
                chosen.remove(at);
            } else {
                chosen.push((created_at, id));
                if chosen.len() > 2 {
                    chosen.remove(0);
                }
            }
        });
    };
    let compare = move || {
        let mut pair = chosen.get_untracked();
        pair.sort();
        if let [(_, first), (_, second)] = pair.as_slice() {
            editor.overlay.set(super::state::Overlay::CompareRuns {
                first: first.clone(),
                second: second.clone(),
            });
        }
    };
    view! {
        <div class="run-history" role="region" aria-label="Run history">
            <div class="history-compare">
                <span class="hint">"Tick two runs to compare them module by module."</span>
                <button type="button" disabled=move || chosen.with(|chosen| chosen.len() != 2) on:click=move |_| compare()>
                    "Compare the two runs"
                </button>
            </div>
            {move || match runs.get() {
                None => view! { <p class="hint">"Loading the run history…"</p> }.into_any(),
                Some(Err(message)) => view! { <p class="hint">{message}</p> }.into_any(),
                Some(Ok(list)) if list.is_empty() => view! { <p class="hint">"No runs yet. Run the graph with ▶ Run (Ctrl+Enter)."</p> }.into_any(),
                Some(Ok(list)) => {
                    let graph_id = graph_for_links.clone();
                    view! {
                        <ul>
                            {list
                                .into_iter()
                                .map(|listed| {
                                    let started_by = listed.started_by.as_ref().map(started_by_text).filter(|text| !text.is_empty());
                                    let summary = listed.run;
                                    let id = summary.id.clone();
                                    let link = format!("/g/{graph_id}/runs/{}", summary.id);
                                    let took = summary.finished_at.map(|end| duration_text((end - summary.created_at) as f64)).unwrap_or_default();
                                    let from = summary.from.as_ref().map(|from| from_text(from, &editor));
                                    let (ticked_id, tick_id) = (summary.id.clone(), summary.id.clone());
                                    let created_at = summary.created_at;
                                    view! {
                                        <li class=format!("history-run status-{}", summary.status.as_str())>
                                            <input
                                                type="checkbox"
                                                aria-label=format!("Compare run {}", summary.id)
                                                prop:checked=move || chosen.with(|chosen| chosen.iter().any(|(_, known)| *known == ticked_id))
                                                on:change=move |_| toggle(created_at, tick_id.clone())
                                            />
                                            <button type="button" class="history-open" on:click=move |_| open(id.clone())>
                                                <span class="history-status">{status_text(Some(summary.status))}</span>
                                                <span class="history-time">{local_time(summary.created_at)}</span>
                                                <span class="history-took">{took}</span>
                                                {from.map(|from| view! { <span class="history-from">{from}</span> })}
                                                {started_by.map(|how| view! { <span class="history-started-by">{how}</span> })}
                                            </button>
                                            <a href=link title="The run's own page, to share">"link"</a>
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                    .into_any()
                }
            }}
        </div>
    }
}

/// How a run started, in the history's words: "by schedule
/// “weekday-mornings”", "by webhook “inbox”", "through the API (Nightly
/// report)"; nothing for the editors' own runs.
fn started_by_text(started_by: &StartedBy) -> String {
    let trigger = started_by.trigger.as_deref().unwrap_or_default();
    match started_by.how {
        StartedHow::Editor => String::new(),
        StartedHow::Api => match &started_by.token {
            Some(token) => format!("through the API ({token})"),
            None => "through the API".to_owned(),
        },
        StartedHow::Schedule if started_by.caught_up => {
            format!("by schedule “{trigger}”, for ticks missed while the server was down")
        }
        StartedHow::Schedule => format!("by schedule “{trigger}”"),
        StartedHow::Webhook => format!("by webhook “{trigger}”"),
    }
}

/// "from run r_… at Draft": where a run from a module started, by the
/// module's label in the graph now.
fn from_text(from: &wire::run::RunFrom, editor: &EditorState) -> String {
    let label = editor.with_graph(|graph| {
        graph.module(&from.module).map_or_else(
            || from.module.clone(),
            |module| module.display_label().to_owned(),
        )
    });
    format!("from run {} at {label}", from.run)
}

/// Which way the activation went, in words: the intent its gate read
/// ("Intent “next”: …"), then each port with conditions ("Output →
/// “Support”: condition 2 held: …").
/// A reason short enough for one line of the panel; the record has it whole.
fn shortened(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(300) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

pub fn route_lines(activation: &ActivationRecord, record: &wire::RunRecord) -> Vec<String> {
    let module = record.graph.module(&activation.module_id);
    let intent = activation.intent.as_ref().map(|choice| {
        let reason = if choice.reason.is_empty() {
            "no reason given".to_owned()
        } else {
            choice.reason.clone()
        };
        if choice.fallback {
            format!(
                "Intent “{}” (the fallback: the reply said “{}”, which the gate could not use)",
                choice.intent, choice.said
            )
        } else if choice.said != choice.intent.as_str() {
            format!(
                "Intent “{}” (said “{}”): {reason}",
                choice.intent, choice.said
            )
        } else {
            format!("Intent “{}”: {reason}", choice.intent)
        }
    });
    // How the attempt ended, when it was not the module's last word.
    let attempt = activation
        .retried
        .as_ref()
        .map(|retried| {
            let wait = if retried.delay_seconds > 0 {
                format!(
                    " after {}",
                    graph::attempts::duration_words(retried.delay_seconds)
                )
            } else {
                String::new()
            };
            format!(
                "Attempt {} of {} failed, so attempt {} followed{wait}: {}",
                activation.activation,
                retried.max_attempts,
                retried.next_attempt,
                shortened(&retried.reason)
            )
        })
        .or_else(|| {
            activation
                .gave_up
                .as_ref()
                .map(|why| format!("Gave up: {}", shortened(why)))
        });
    // Values a module that joins any ran without.
    let ignored = activation.ignored_inputs.iter().map(|cable_id| {
        let source = record
            .graph
            .cables
            .iter()
            .find(|cable| &cable.id == cable_id)
            .map_or_else(
                || cable_id.clone(),
                |cable| record.label_of(&cable.from.module),
            );
        format!("Ignored the value from “{source}”: it runs on the first input to arrive")
    });
    attempt
        .into_iter()
        .chain(intent)
        .chain(ignored)
        .chain(activation.routes.iter().map(|route| {
            let port = module
                .and_then(|module| {
                    graph::ports(module)
                        .output(&route.port)
                        .map(|port| port.label.clone())
                })
                .unwrap_or_else(|| route.port.clone());
            let target = route.cable_id.as_ref().and_then(|id| {
                record
                    .graph
                    .cables
                    .iter()
                    .find(|cable| &cable.id == id)
                    .map(|cable| record.label_of(&cable.to.module))
            });
            match target {
                Some(target) => format!("{port} → “{target}”: {}", route.reason),
                None => format!("{port} → nowhere: {}", route.reason),
            }
        }))
        .collect()
}

/// Which activation of the module to show, when it ran more than once (a
/// retry, a loop): "Attempt n" for a module that retries, "Round n" for
/// one a loop brings back.
#[component]
fn ActivationPicker(
    view_state: RunView,
    chosen: RwSignal<Option<Tab>>,
    chosen_activation: RwSignal<Option<usize>>,
) -> impl IntoView {
    let count = Memo::new(move |_| {
        let focus = view_state.focus.get().unwrap_or_default();
        view_state.record.with(|record| {
            record
                .as_ref()
                .and_then(|record| record.modules.get(&focus))
                .map_or(0, |module| module.activations.len())
        })
    });
    let word = Memo::new(move |_| {
        let focus = view_state.focus.get().unwrap_or_default();
        let attempts = view_state.record.with(|record| {
            record
                .as_ref()
                .and_then(|record| record.graph.module(&focus))
                .map_or(1, |module| module.config.max_attempts())
        });
        if attempts > 1 { "Attempt" } else { "Round" }
    });
    move || {
        let count = count.get();
        (count > 1).then(|| {
            let shown = move || chosen_activation.get().unwrap_or(count - 1);
            view! {
                <div class="run-activations" role="group" aria-label="Activations">
                    {(0..count)
                        .map(|index| {
                            let selected = move || shown() == index;
                            view! {
                                <button
                                    type="button"
                                    class="run-activation"
                                    class:active=selected
                                    aria-pressed=move || if selected() { "true" } else { "false" }
                                    on:click=move |_| {
                                        chosen.set(None);
                                        chosen_activation.set((index + 1 < count).then_some(index));
                                    }
                                >
                                    {move || format!("{} {}", word.get(), index + 1)}
                                </button>
                            }
                        })
                        .collect_view()}
                </div>
            }
        })
    }
}

/// The tabs of the module's responses and outputs.
#[component]
fn TabList(
    tab_list: Memo<Vec<(Tab, String)>>,
    current: Memo<Tab>,
    chosen: RwSignal<Option<Tab>>,
) -> impl IntoView {
    view! {
        <div class="run-tabs" role="tablist" aria-label="Responses and outputs">
            {move || {
                tab_list
                    .get()
                    .into_iter()
                    .map(|(tab, label)| {
                        let selected = {
                            let tab = tab.clone();
                            move || current.get() == tab
                        };
                        let selected_too = selected.clone();
                        view! {
                            <button
                                type="button"
                                role="tab"
                                class="run-tab"
                                aria-selected=move || if selected() { "true" } else { "false" }
                                class:active=selected_too
                                on:click=move |_| chosen.set(Some(tab.clone()))
                            >
                                {label}
                            </button>
                        }
                    })
                    .collect_view()
            }}
        </div>
    }
}

/// Which way each port with conditions went.
#[component]
fn RouteLines(view_state: RunView, activation: Memo<Option<ActivationRecord>>) -> impl IntoView {
    move || {
        let lines = activation.with(|activation| {
            view_state.record.with(|record| match (activation, record) {
                (Some(activation), Some(record)) => route_lines(activation, record),
                _ => Vec::new(),
            })
        });
        (!lines.is_empty()).then(|| {
            view! {
                <ul class="run-routes" aria-label="Which way it went">
                    {lines.into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}
                </ul>
            }
        })
    }
}

#[component]
fn ModuleView(view_state: RunView) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    // None: follow the run (the response streaming now, else Merged).
    let chosen = RwSignal::new(None::<Tab>);
    // None: the latest activation; a module that ran again (a retry, a
    // loop) can show an earlier one.
    let chosen_activation = RwSignal::new(None::<usize>);
    Effect::new(move |_| {
        view_state.focus.track();
        chosen.set(None);
        chosen_activation.set(None);
    });
    let activation = Memo::new(move |_| {
        let focus = view_state.focus.get()?;
        let wanted = chosen_activation.get();
        view_state.record.with(|record| {
            let activations = &record.as_ref()?.modules.get(&focus)?.activations;
            match wanted {
                Some(index) => activations.get(index),
                None => activations.last(),
            }
            .cloned()
        })
    });
    let streaming = Memo::new(move |_| {
        let focus = view_state.focus.get().unwrap_or_default();
        view_state.streams.with(|streams| {
            streams
                .keys()
                .filter(|(id, _)| *id == focus)
                .map(|(_, index)| *index)
                .collect::<Vec<_>>()
        })
    });
    let running = Memo::new(move |_| {
        let focus = view_state.focus.get().unwrap_or_default();
        editor
            .model
            .node(&focus)
            .and_then(|node| node.run.get())
            .is_some_and(|run| run.state == ModuleRunState::Running)
    });
    // A module with variants (an agent task's or a coding module's): their
    // names label their streaming turns.
    let variant_names = Memo::new(move |_| {
        let focus = view_state.focus.get().unwrap_or_default();
        editor.version.track();
        editor.with_graph(|graph| {
            graph.module(&focus).map_or_else(Vec::new, |module| {
                graph::experiment::variants_of(&module.config)
                    .iter()
                    .map(|variant| variant.name.clone())
                    .collect()
            })
        })
    });
    let tab_list = Memo::new(move |_| {
        activation.with(|activation| {
            streaming.with(|streaming| {
                variant_names.with(|names| tabs(activation.as_ref(), streaming, names))
            })
        })
    });
    let compared = Memo::new(move |_| {
        activation.with(|activation| {
            view_state.record.with(|record| {
                activation
                    .as_ref()
                    .and_then(|activation| super::comparison::rows(activation, record.as_ref()))
            })
        })
    });
    let current = Memo::new(move |_| {
        chosen.get().unwrap_or_else(|| {
            if running.get()
                && let Some(index) = streaming.with(|streaming| streaming.iter().max().copied())
            {
                return Tab::Response(index);
            }
            // An experiment opens on its variants, an approval on its decision.
            if compared.with(Option::is_some) {
                return Tab::Variants;
            }
            if activation.with(|activation| {
                activation.as_ref().is_some_and(|activation| {
                    activation.waiting.is_some() || activation.waits_for_a_person()
                })
            }) {
                return Tab::Decision;
            }
            Tab::Merged
        })
    });
    let text = Memo::new(move |_| {
        let tab = current.get();
        let focus = view_state.focus.get().unwrap_or_default();
        let stream = match &tab {
            Tab::Response(index) => view_state
                .streams
                .with(|streams| streams.get(&(focus, *index)).cloned()),
            _ => None,
        };
        view_state.record.with(|record| {
            let label_of = |id: &str| {
                record
                    .as_ref()
                    .map_or_else(|| id.to_owned(), |record| record.label_of(id))
            };
            activation
                .with(|activation| tab_text(&tab, activation.as_ref(), stream.as_ref(), &label_of))
        })
    });
    view! {
        <div class="run-module">
            <div class="run-module-actions">
                <ActivationPicker view_state chosen chosen_activation/>
                <super::run_from::RunFromHere/>
            </div>
            <TabList tab_list current chosen/>
            <RouteLines view_state activation/>
            {move || {
                if current.get() == Tab::Decision {
                    view! { <super::decision::DecisionView view_state activation/> }.into_any()
                } else if current.get() == Tab::Variants {
                    let rows = Signal::derive(move || compared.get().unwrap_or_default());
                    view! { <super::comparison::Comparison rows/> }.into_any()
                } else if current.get() == Tab::Transcript {
                    view! { <super::transcript::TranscriptView activation/> }.into_any()
                } else {
                    view! { <pre class="run-output" role="tabpanel" aria-live="off">{move || text.get()}</pre> }.into_any()
                }
            }}
        </div>
    }
}

/// One module of the run in the panel's list: its state, its badge and,
/// with variants, each one's progress; choosing it shows it.
#[component]
fn ModuleEntry(
    id: String,
    label: String,
    kind: String,
    state_shown: RwSignal<bool>,
) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let view_state = editor.run;
    let node_run = editor.model.node(&id).map(|node| node.run);
    let state = move || {
        node_run
            .and_then(|run| run.get())
            .map(|run| run.state.class())
            .unwrap_or("run-idle")
    };
    let badge = move || {
        let now = editor.model.clock.get();
        node_run
            .and_then(|run| run.with(|run| run.as_ref().map(|run| run.badge_text(now))))
            .unwrap_or_default()
    };
    let focused = {
        let id = id.clone();
        move || !state_shown.get() && view_state.focus.get().as_deref() == Some(id.as_str())
    };
    view! {
        <button
            type="button"
            class=move || format!("run-module-entry {} kind-{kind}", state())
            class:focused=focused.clone()
            aria-pressed=move || if focused() { "true" } else { "false" }
            data-module-id=id.clone()
            on:click=move |_| {
                state_shown.set(false);
                view_state.choose(id.clone());
            }
        >
            <span class="entry-label">{label}</span>
            <span class="entry-badge">{badge}</span>
            // A module with variants: each one's progress.
            {move || {
                let lines = node_run
                    .and_then(|run| run.with(|run| run.as_ref().map(|run| run.variant_lines.clone())))
                    .unwrap_or_default();
                (!lines.is_empty()).then(|| view! {
                    <span class="entry-variants">
                        {lines.into_iter().map(|(name, doing)| view! {
                            <span class="entry-variant">{format!("{name}: {doing}")}</span>
                        }).collect_view()}
                    </span>
                })
            }}
        </button>
    }
}

#[component]
pub fn RunPanel() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let view_state = editor.run;
    let graph_id = Memo::new(move |_| {
        view_state
            .record
            .with(|record| record.as_ref().and_then(|record| record.graph_id.clone()))
            .unwrap_or_else(|| editor.graph_id())
    });
    let modules = Memo::new(move |_| {
        editor.version.track();
        view_state
            .record
            .with(|record| record.as_ref().map(|record| modules_of(&record.graph)))
            .unwrap_or_else(|| editor.with_graph(modules_of))
    });
    // The run's state instead of a module.
    let state_shown = RwSignal::new(false);
    let elapsed = move || {
        let now = editor.model.clock.get();
        view_state.record.with(|record| {
            let record = record.as_ref()?;
            let start = record.started_at.unwrap_or(record.created_at) as f64;
            let end = record.finished_at.map_or(now, |end| end as f64);
            (end > start).then(|| duration_text(end - start))
        })
    };
    view! {
        <Show when=move || view_state.panel_open.get()>
            // Deciding needs room for the diff and the form.
            <section class="run-panel" class:deciding=move || view_state.status.get() == Some(RunStatus::Waiting) aria-label="Run">
                <header class="run-header">
                    <Show
                        when=move || view_state.run_id.get().is_some()
                        fallback=|| view! { <strong>"Runs"</strong> }
                    >
                        <strong>"Run"</strong>
                        <code class="run-id">{move || view_state.run_id.get().unwrap_or_default()}</code>
                        <span class=move || format!("run-status status-{}", view_state.status.get().map_or("", RunStatus::as_str)) role="status">
                            {move || status_text(view_state.status.get())}
                        </span>
                        <span class="run-elapsed">{elapsed}</span>
                        <span class="run-cost" title="What the run's calls cost, from the tokens the providers reported and the prices configured on the server">
                            {move || view_state.record.with(|record| record.as_ref().and_then(run_cost_text))}
                        </span>
                        {move || view_state.record.with(|record| record.as_ref().and_then(run_tools_text)).map(|(text, each)| view! {
                            <span class="run-tools" title=each>{text}</span>
                        })}
                        <Show when=move || view_state.record.with(|record| record.as_ref().and_then(|record| record.budget_usd).is_some())>
                            <span class="run-notice">
                                {move || view_state.record.with(|record| record.as_ref().and_then(|record| record.budget_usd).map(|budget| format!("budget {}", wire::cost::dollars(budget))))}
                            </span>
                        </Show>
                        <Show when=move || view_state.reconnecting.get()>
                            <span class="run-notice warning" role="status">
                                "Lost the connection to the server; reconnecting…"
                            </span>
                        </Show>
                        <Show when=move || !view_state.reconnecting.get() && view_state.resumed.get().is_some()>
                            <span
                                class="run-notice"
                                title=move || resumed_title(view_state.resumed.get().unwrap_or(0))
                            >
                                "Resumed after the server restarted"
                            </span>
                        </Show>
                        <Show when=move || view_state.is_live() && edit_token::stored(&graph_id.get()).is_some()>
                            <button type="button" class="danger" on:click=move |_| {
                                let graph_id = graph_id.get_untracked();
                                leptos::task::spawn_local(async move {
                                    if let Err(message) = view_state.cancel(graph_id).await {
                                        editor.notify(message);
                                    }
                                });
                            }>"Cancel run"</button>
                        </Show>
                        <a
                            class="run-link"
                            href=move || format!("/g/{}/runs/{}", graph_id.get(), view_state.run_id.get().unwrap_or_default())
                            title="This run's own page: anyone with the link sees it, read-only"
                        >
                            "Run link"
                        </a>
                    </Show>
                    <span class="run-error">{move || view_state.error.get()}</span>
                    <button
                        type="button"
                        class="history-toggle"
                        aria-pressed=move || if view_state.history.get() { "true" } else { "false" }
                        on:click=move |_| view_state.history.update(|shown| *shown = !*shown)
                    >
                        "History"
                    </button>
                    <button type="button" class="close" aria-label="Close the run panel" title="Close (the canvas goes back to editing)" on:click=move |_| {
                        // A run page is the run: closing only hides the panel.
                        if editor.mode == EditorMode::Recorded {
                            view_state.panel_open.set(false);
                        } else {
                            view_state.close(editor.model);
                        }
                    }>
                        "✕"
                    </button>
                </header>
                <Show
                    when=move || !view_state.history.get() && view_state.run_id.get().is_some()
                    fallback=move || view! { <History graph_id=graph_id.get_untracked()/> }
                >
                    <div class="run-body">
                        <nav class="run-modules" aria-label="Modules of the run">
                            {move || {
                                modules
                                    .get()
                                    .into_iter()
                                    .map(|(id, label, kind)| view! { <ModuleEntry id label kind state_shown/> })
                                    .collect_view()
                            }}
                            <button
                                type="button"
                                class="run-module-entry run-state-entry"
                                class:focused=move || state_shown.get()
                                aria-pressed=move || if state_shown.get() { "true" } else { "false" }
                                on:click=move |_| state_shown.set(true)
                            >
                                <span class="entry-label">"Run state"</span>
                                <span class="entry-badge">{move || view_state.record.with(|record| {
                                    let count = record.as_ref().map_or(0, |record| record.state.len());
                                    format!("{count} keys")
                                })}</span>
                            </button>
                        </nav>
                        {move || if state_shown.get() {
                            view! { <RunStateView view_state/> }.into_any()
                        } else {
                            view! { <ModuleView view_state/> }.into_any()
                        }}
                    </div>
                </Show>
            </section>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::ResponseRecord;

    fn activation() -> ActivationRecord {
        ActivationRecord {
            responses: vec![ResponseRecord {
                index: 0,
                label: "Original".to_owned(),
                text: "first".to_owned(),
                complete: true,
                ..ResponseRecord::default()
            }],
            ..ActivationRecord::new("m2", 1, 0)
        }
    }

    /// A completed run of `graph` with nothing recorded yet.
    fn record(graph: graph::Graph) -> wire::RunRecord {
        wire::RunRecord {
            id: "r_1".to_owned(),
            graph_id: None,
            graph_revision: None,
            status: RunStatus::Completed,
            error: None,
            created_at: 0,
            started_at: None,
            finished_at: None,
            input: wire::RunInput::default(),
            graph,
            modules: std::collections::BTreeMap::new(),
            state: std::collections::BTreeMap::new(),
            last_event_id: 0,
            budget_usd: None,
            from: None,
        }
    }

    #[test]
    fn routes_say_which_module_the_value_went_to_or_that_it_went_nowhere() {
        let mut graph = graph::starter::starter_graph();
        graph.cables[1].condition = Some("get('$.output.intent') == 'sales'".to_owned());
        let record = record(graph);
        let mut activation = activation();
        activation.routes = vec![
            wire::Route {
                port: "data_out".to_owned(),
                cable_id: Some("c2".to_owned()),
                reason: "condition 1 held: …".to_owned(),
            },
            wire::Route {
                port: "error_out".to_owned(),
                cable_id: None,
                reason: "no condition held".to_owned(),
            },
        ];
        let final_label = record.label_of("m3");
        assert_eq!(
            route_lines(&activation, &record),
            [
                format!("Output → “{final_label}”: condition 1 held: …"),
                "Error → nowhere: no condition held".to_owned()
            ]
        );
        // The intent a gate read comes first, with what the reply said.
        activation.routes.clear();
        let choice = |said: &str, fallback: bool| wire::IntentChoice {
            intent: graph::intent::Intent::Closing,
            said: said.to_owned(),
            reason: "it is done".to_owned(),
            fallback,
        };
        activation.intent = Some(choice("closing", false));
        assert_eq!(
            route_lines(&activation, &record),
            ["Intent “closing”: it is done"]
        );
        activation.intent = Some(choice("finished", false));
        assert_eq!(
            route_lines(&activation, &record),
            ["Intent “closing” (said “finished”): it is done"]
        );
        activation.intent = Some(choice("proceed", true));
        assert_eq!(
            route_lines(&activation, &record),
            [
                "Intent “closing” (the fallback: the reply said “proceed”, which the gate could not use)"
            ]
        );
        // How the attempt ended comes before everything else.
        activation.intent = None;
        activation.retried = Some(wire::activation::Retried {
            reason: "3 tests failed".to_owned(),
            next_attempt: 2,
            max_attempts: 3,
            delay_seconds: 4,
        });
        assert_eq!(
            route_lines(&activation, &record),
            ["Attempt 1 of 3 failed, so attempt 2 followed after 4 s: 3 tests failed"]
        );
        activation.retried = None;
        activation.ignored_inputs = vec!["c1".to_owned()];
        assert_eq!(
            route_lines(&activation, &record),
            [format!(
                "Ignored the value from “{}”: it runs on the first input to arrive",
                record.label_of("m1")
            )]
        );
        activation.ignored_inputs.clear();
        activation.gave_up = Some("x".repeat(400));
        let lines = route_lines(&activation, &record);
        assert!(lines[0].starts_with("Gave up: xxx") && lines[0].chars().count() == 310);
    }

    #[test]
    fn the_run_counts_its_tool_calls_by_tool_and_not_a_reused_activations() {
        let mut record = record(graph::starter::starter_graph());
        assert_eq!(run_tools_text(&record), None);
        let call = |tool: &str, duration_ms: u64| wire::activation::ToolCallRecord {
            call_id: format!("call-{tool}-{duration_ms}"),
            response_index: 0,
            server: "patchbay".to_owned(),
            tool: tool.to_owned(),
            arguments: serde_json::json!({}),
            outcome: wire::activation::ToolOutcome::Ok,
            result: serde_json::Value::Null,
            duration_ms,
            ..wire::activation::ToolCallRecord::default()
        };
        let mut made = activation();
        made.tool_calls = vec![
            call("lookup", 400),
            call("calculate", 100),
            call("lookup", 700),
        ];
        let mut reused = activation();
        reused.reused_from = Some(wire::activation::ReusedFrom {
            run_id: "r_0".to_owned(),
            activation: 1,
        });
        reused.tool_calls = vec![call("lookup", 5000)];
        record
            .modules
            .entry("m2".to_owned())
            .or_default()
            .activations = vec![made, reused];
        let (text, each) = run_tools_text(&record).unwrap();
        assert_eq!(text, "3 tool calls · 1.2 s");
        assert_eq!(each, "lookup: 2 calls, 1.1 s\ncalculate: 1 call, 0.1 s");
    }

    #[test]
    fn the_run_says_what_it_cost_free_when_simulated_and_what_had_no_price() {
        let mut record = record(graph::starter::starter_graph());
        // Nothing called a model: nothing to say.
        let input = ActivationRecord::new("m1", 1, 0);
        record
            .modules
            .entry("m1".to_owned())
            .or_default()
            .activations
            .push(input);
        assert_eq!(run_cost_text(&record), None);
        let with_receipt = |simulated: bool, cost: Option<f64>| {
            let mut activation = activation();
            activation.receipt = Some(wire::Receipt {
                simulated,
                cost,
                ..wire::Receipt::default()
            });
            activation
        };
        let mut simulated = record.clone();
        simulated
            .modules
            .entry("m2".to_owned())
            .or_default()
            .activations = vec![with_receipt(true, Some(0.0))];
        assert_eq!(
            run_cost_text(&simulated).as_deref(),
            Some("free (simulated)")
        );
        let mut paid = record.clone();
        paid.modules.entry("m2".to_owned()).or_default().activations =
            vec![with_receipt(false, Some(0.012)), with_receipt(false, None)];
        assert_eq!(
            run_cost_text(&paid).as_deref(),
            Some("$0.0120 + 1 activation with no price configured")
        );
        assert!(
            receipt_text(paid.modules["m2"].activations[1].receipt.as_ref())
                .contains("Cost: no price configured")
        );
        // A chain stopped mid-way says where its answers are.
        let mut stopped = activation();
        stopped.status = ActivationStatus::Cancelled;
        assert_eq!(
            tab_text(&Tab::Merged, Some(&stopped), None, &str::to_owned),
            "No merged output: it stopped before its chain finished. What it had answered is kept: Original."
        );
    }

    #[test]
    fn a_variant_streaming_turn_is_labelled_with_its_variant() {
        let names = ["terse".to_owned(), "long".to_owned()];
        assert_eq!(response_label(0, &names), "Original");
        assert_eq!(response_label(2, &names), "Re-prompt 2");
        assert_eq!(response_label(100, &names), "terse · Original");
        assert_eq!(response_label(201, &names), "long · Re-prompt 1");
        assert_eq!(response_label(301, &names), "Variant 3 · Re-prompt 1");
    }

    #[test]
    fn a_streaming_re_prompt_gets_its_tab_before_the_record_has_it() {
        let activation = activation();
        let labels: Vec<String> = tabs(Some(&activation), &[1], &[])
            .into_iter()
            .map(|(_, label)| label)
            .collect();
        assert_eq!(labels, ["Merged", "Original", "Re-prompt 1"]);
        let stream = "partial reply".to_owned();
        assert_eq!(
            tab_text(
                &Tab::Response(1),
                Some(&activation),
                Some(&stream),
                &str::to_owned
            ),
            "partial reply"
        );
        assert_eq!(
            tab_text(
                &Tab::Response(0),
                Some(&activation),
                Some(&stream),
                &str::to_owned
            ),
            "first"
        );
        assert_eq!(
            tab_text(&Tab::Merged, Some(&activation), None, &str::to_owned),
            "…"
        );
    }

    #[test]
    fn a_finished_module_shows_named_outputs_receipt_and_error_tabs() {
        let mut activation = activation();
        activation.status = ActivationStatus::Failed;
        activation
            .named_outputs
            .insert("summary".to_owned(), "short".to_owned());
        activation.receipt = Some(Receipt {
            provider: "sim".to_owned(),
            model: "sim-1".to_owned(),
            simulated: true,
            tokens_in: 12,
            tokens_out: 30,
            duration_ms: 1500,
            re_prompt_count: 2,
            ..Receipt::default()
        });
        activation.error = Some("the provider refused".to_owned());
        let labels: Vec<String> = tabs(Some(&activation), &[], &[])
            .into_iter()
            .map(|(_, label)| label)
            .collect();
        assert_eq!(
            labels,
            ["Merged", "Original", "“summary”", "Receipt", "Error"]
        );
        let receipt = tab_text(&Tab::Receipt, Some(&activation), None, &str::to_owned);
        assert!(receipt.starts_with("Provider: sim · sim-1 (simulated)\nTokens: 12 in, 30 out\nCost: free (simulated)\nDuration: 1.5 s\nRe-prompts: 2"), "{receipt}");
        assert_eq!(
            tab_text(
                &Tab::Named("summary".to_owned()),
                Some(&activation),
                None,
                &str::to_owned
            ),
            "short"
        );
        assert_eq!(
            tab_text(&Tab::Merged, Some(&activation), None, &str::to_owned),
            "No merged output: it stopped before its chain finished. What it had answered is kept: Original."
        );
    }

    #[test]
    fn a_coding_module_shows_its_diff_files_and_tests() {
        let mut activation = activation();
        activation.status = ActivationStatus::Completed;
        let bundle = |content: serde_json::Value| {
            wire::PortValue::Bundle(wire::ContextBundle::json("m2", content))
        };
        activation.outputs.insert(
            "diff_out".to_owned(),
            bundle(serde_json::json!("+++ b/hello.txt\n+Hello")),
        );
        activation.outputs.insert(
            "files_out".to_owned(),
            bundle(serde_json::json!([{"path": "hello.txt", "status": "added"}, {"path": "README.md", "status": "modified"}])),
        );
        activation.outputs.insert(
            "test_results_out".to_owned(),
            bundle(serde_json::json!({"ran": false, "reason": "no test tool call"})),
        );
        let labels: Vec<String> = tabs(Some(&activation), &[], &[])
            .into_iter()
            .map(|(_, label)| label)
            .collect();
        assert_eq!(labels, ["Merged", "Original", "Diff", "Files", "Tests"]);
        assert_eq!(
            tab_text(
                &Tab::Work("diff_out"),
                Some(&activation),
                None,
                &str::to_owned
            ),
            "+++ b/hello.txt\n+Hello"
        );
        assert_eq!(
            tab_text(
                &Tab::Work("files_out"),
                Some(&activation),
                None,
                &str::to_owned
            ),
            "added     hello.txt\nmodified  README.md"
        );
        assert_eq!(
            tab_text(
                &Tab::Work("test_results_out"),
                Some(&activation),
                None,
                &str::to_owned
            ),
            "No tests were run."
        );
        activation.outputs.insert(
            "test_results_out".to_owned(),
            bundle(serde_json::json!({"ran": true, "passed": false, "command": "sh test.sh", "output": "1 test failed"})),
        );
        assert_eq!(
            tab_text(
                &Tab::Work("test_results_out"),
                Some(&activation),
                None,
                &str::to_owned
            ),
            "$ sh test.sh\nfailed\n\n1 test failed"
        );
    }
}
