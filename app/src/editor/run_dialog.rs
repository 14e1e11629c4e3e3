//! The run dialog: the run's input (text and files) and budget, then the
//! run starts and the canvas follows it. The server runs the saved graph, so unsaved edits
//! are saved first. Run from a module, it says what the recorded run lends
//! and what that saves, with the recorded input.

use std::time::Duration;

use graph::ModuleConfig;
use leptos::prelude::*;
use wire::run::{InputFile, RunFrom, RunInput, StartRun};

use crate::api::{self, ApiError};
use crate::browser;
use crate::editor::modal::Modal;
use crate::editor::save::SaveStatus;
use crate::editor::state::{EditorState, Overlay};

/// Waits until the editor's edits are on the server; false if they cannot be.
async fn saved(editor: EditorState) -> bool {
    if !editor.can_edit.get_untracked() {
        return true;
    }
    if editor.save.status.get_untracked() == SaveStatus::Saved {
        return true;
    }
    // Through the editing part, which made the edits: the dialog does not
    // carry the saving code itself.
    editor.save_now();
    for _ in 0..100 {
        browser::sleep(Duration::from_millis(100)).await;
        match editor.save.status.get_untracked() {
            SaveStatus::Saved => return true,
            SaveStatus::Conflict(_) | SaveStatus::Refused(_) | SaveStatus::ViewOnly => {
                return false;
            }
            _ => {}
        }
    }
    false
}

/// Starts a run of the graph with this input (and at most this budget),
/// from a module when `from` says so, and follows it.
pub fn start(editor: EditorState, input: RunInput, budget_usd: Option<f64>, from: Option<RunFrom>) {
    leptos::task::spawn_local(async move {
        if !saved(editor).await {
            editor.notify("The graph has edits the server does not have yet; the run uses what is saved. Resolve saving first.");
            return;
        }
        match api::start_run(&editor.graph_id(), &StartRun {
            input,
            budget_usd,
            from,
        }).await {
            Ok(started) => {
                editor.overlay.set(Overlay::None);
                editor.run.follow(editor.model, editor.graph(), &started.id);
            }
            Err(refused) if refused.status() == Some(422) => {
                editor.overlay.set(Overlay::None);
                editor.show_validation.set(true);
                editor.notify(refused.message_or("the graph cannot run"));
            }
            Err(ApiError::Unreachable(_)) => {
                editor.notify("The server could not be reached; the run did not start.")
            }
            Err(ApiError::Unreadable(error)) => editor.notify(format!(
                "The run started, but the server's answer could not be read ({error}); reload the page to follow it."
            )),
            Err(refused) => editor.notify(format!(
                "The run did not start: {}",
                refused.message_or("the server refused the run")
            )),
        }
    });
}

/// What the run may cost, from the graph's past runs, or that there is
/// nothing to go by.
#[component]
fn RunEstimate() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let estimate = LocalResource::new(move || {
        let graph_id = editor.graph_id();
        async move { api::estimate(&graph_id).await }
    });
    view! {
        <p class="hint estimate" aria-live="polite">
            {move || match estimate.get() {
                None => "Estimating the cost…".to_owned(),
                Some(Ok(estimate)) => estimate.text(),
                Some(Err(_)) => "No estimate: the graph's past runs could not be read.".to_owned(),
            }}
        </p>
    }
}

/// Reads the files chosen in the file field into the run's input; a file
/// that cannot be read is said, not dropped silently.
fn add_files(editor: EditorState, files: RwSignal<Vec<InputFile>>, event: &web_sys::Event) {
    let Some((input, chosen)) = browser::chosen_files(event) else {
        return;
    };
    for file in chosen {
        leptos::task::spawn_local(async move {
            match browser::read_bytes(&file).await {
                Ok(bytes) => files.update(|files| {
                    files.push(InputFile {
                        name: file.name(),
                        media_type: if file.type_().is_empty() {
                            "application/octet-stream".to_owned()
                        } else {
                            file.type_()
                        },
                        bytes,
                    });
                }),
                Err(message) => {
                    editor.notify(format!("“{}” could not be read: {message}", file.name()))
                }
            }
        });
    }
    input.set_value("");
}

/// What this server will refuse to run in the graph, as validation found
/// it (commands not enabled, processes it cannot confine), one line each.
fn cannot_run_here(editor: EditorState) -> Memo<Vec<String>> {
    Memo::new(move |_| {
        editor.findings.with(|findings| {
            findings
                .iter()
                .filter(|finding| {
                    matches!(
                        finding.code,
                        graph::Code::CommandsDisabled | graph::Code::SandboxUnavailable
                    )
                })
                .map(|finding| finding.message.clone())
                .collect()
        })
    })
}

/// What a run from a module reuses, and why it cannot when it cannot.
#[component]
fn RunFromSummary(from: RunFrom, preview: super::run_from::Preview) -> impl IntoView {
    let lines = match &preview.refusal {
        Some(refusal) => vec![format!("This cannot run from here: {refusal}.")],
        None => vec![preview.reused_text(&from.run), preview.runs_text()],
    };
    let refused = preview.refusal.is_some();
    view! {
        <div class="run-from" class:refused=refused role=refused.then_some("alert") aria-label="What is reused">
            {lines.into_iter().map(|line| view! { <p>{line}</p> }).collect_view()}
        </div>
    }
}

#[component]
pub fn RunDialog(#[prop(optional)] from: Option<RunFrom>) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let from_module = from
        .as_ref()
        .map(|from| super::run_from::FromModule::of(editor, from));
    let preview = from_module.as_ref().map(|from| from.preview.clone());
    let refused = preview
        .as_ref()
        .is_some_and(|preview| preview.refusal.is_some());
    let input_reused = preview.as_ref().is_some_and(|preview| preview.input_reused);
    let module_label = from_module.as_ref().map(|from| from.label.clone());
    // The input module's description and default text.
    let (description, default_text) = editor.with_graph(|graph| {
        graph
            .modules
            .iter()
            .find_map(|module| match &module.config {
                ModuleConfig::Input(input) => {
                    Some((input.description.clone(), input.default_text.clone()))
                }
                _ => None,
            })
            .unwrap_or_default()
    });
    // From a module, the recorded run's input.
    let text = RwSignal::new(
        from_module
            .and_then(|from| from.recorded_input)
            .unwrap_or(default_text),
    );
    let files = RwSignal::new(Vec::<InputFile>::new());
    let starting = RwSignal::new(false);
    // `Some(None)`: the field holds something that is not an amount.
    let budget = RwSignal::new(None::<Option<f64>>);
    let budget_problem = move || {
        budget
            .get()
            .is_some_and(|amount| !amount.is_some_and(|amount| amount > 0.0))
            .then_some("A budget is an amount of US dollars more than 0, like 0.50.")
    };
    let from_for_start = StoredValue::new(from.clone());
    let cannot = cannot_run_here(editor);
    let go = move || {
        if starting.get_untracked()
            || budget_problem().is_some()
            || refused
            || cannot.with_untracked(|cannot| !cannot.is_empty())
        {
            return;
        }
        starting.set(true);
        let budget_usd = budget.get_untracked().flatten();
        start(
            editor,
            // The server takes the recorded input when none is given.
            if input_reused {
                RunInput::default()
            } else {
                RunInput {
                    text: text.get_untracked(),
                    files: files.get_untracked(),
                }
            },
            budget_usd,
            from_for_start.get_value(),
        );
        crate::browser::run_after(move || starting.set(false), Duration::from_millis(1500));
    };
    let choose = move |event: web_sys::Event| add_files(editor, files, &event);
    view! {
        <Modal
            title=module_label.as_ref().map_or_else(|| "Run the graph".to_owned(), |label| format!("Run from “{label}”"))
            class="run-dialog"
        >
                {from.clone().zip(preview.clone()).map(|(from, preview)| view! { <RunFromSummary from preview/> })}
                <Show when={
                    let empty = description.is_empty();
                    move || !empty
                }>
                    <p class="hint">{description.clone()}</p>
                </Show>
                <label class="field">
                    <span class="field-label">"Input"</span>
                    <textarea
                        rows=5
                        autofocus=true
                        readonly=input_reused
                        title=input_reused.then_some("The recorded run's input: its input module is reused. Run from the input module to change it.")
                        aria-label="Run input"
                        prop:value=move || text.get()
                        on:input=move |event| text.set(event_target_value(&event))
                        on:keydown=move |event: web_sys::KeyboardEvent| {
                            if (event.ctrl_key() || event.meta_key()) && event.key() == "Enter" {
                                event.prevent_default();
                                go();
                            }
                        }
                    ></textarea>
                </label>
                <Show when=move || input_reused>
                    <p class="hint">"The recorded run's input: its input module is reused. Run from the input module to give another."</p>
                </Show>
                <label class="attach" hidden=input_reused>
                    {crate::icons::paperclip()}
                    "Add files"
                    <input type="file" multiple=true hidden=true on:change=choose/>
                </label>
                <ul class="chosen-files">
                    {move || files.get().into_iter().map(|file| view! { <li>{file.name}</li> }).collect_view()}
                </ul>
                <label class="field budget">
                    <span class="field-label">"Budget (US dollars, optional)"</span>
                    <input
                        type="number"
                        min="0"
                        step="0.01"
                        placeholder="no budget"
                        aria-label="Budget in US dollars"
                        aria-invalid=move || if budget_problem().is_some() { "true" } else { "false" }
                        on:input=move |event| {
                            // The browser reads the number (and keeps
                            // Rust's float parser out of the bundle).
                            let field = event_target::<web_sys::HtmlInputElement>(&event);
                            let number = field.value_as_number();
                            budget.set(if field.value().trim().is_empty() {
                                None
                            } else {
                                Some(number.is_finite().then_some(number))
                            });
                        }
                    />
                    <span class="hint">"When the run's calls have cost this much, what is in flight stops and the run fails with budget_exceeded; what was produced is kept."</span>
                    <span class="hint warning" role="alert">{budget_problem}</span>
                </label>
                // From a module, the dialog says what it saves instead.
                {from.is_none().then(|| view! { <RunEstimate/> })}
                <div class="actions">
                    <Show when=move || cannot.with(|cannot| !cannot.is_empty())>
                        <p class="hint warning cannot-run" role="alert">
                            {move || cannot.get().join(" ")}
                        </p>
                    </Show>
                    <button type="button" on:click=move |_| editor.overlay.set(Overlay::None)>"Cancel"</button>
                    <button type="button" class="primary" disabled=move || starting.get() || refused || cannot.with(|cannot| !cannot.is_empty()) on:click=move |_| go()>"Start run (Ctrl+Enter)"</button>
                </div>
        </Modal>
    }
}
