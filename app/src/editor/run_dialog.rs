//! The run dialog: the run's input (text and files), then the run starts and
//! the canvas follows it. The server runs the saved graph, so unsaved edits
//! are saved first.

use std::time::Duration;

use base64::Engine;
use graph::ModuleConfig;
use leptos::prelude::*;
use serde_json::{Value, json};

use crate::browser;
use crate::editor::modal::Modal;
use crate::editor::save::{SaveStatus, save_now};
use crate::editor::state::{EditorState, Overlay};

/// A file chosen for the run's input.
#[derive(Clone, Debug, PartialEq)]
struct Chosen {
    name: String,
    media_type: String,
    base64: String,
}

/// Waits until the editor's edits are on the server; false if they cannot be.
async fn saved(editor: EditorState) -> bool {
    if !editor.can_edit.get_untracked() {
        return true;
    }
    if editor.save.status.get_untracked() == SaveStatus::Saved {
        return true;
    }
    save_now(editor);
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

/// Starts a run of the graph with this input and follows it.
pub fn start(editor: EditorState, text: String, files: Vec<Value>) {
    leptos::task::spawn_local(async move {
        if !saved(editor).await {
            editor.notify("The graph has edits the server does not have yet; the run uses what is saved. Resolve saving first.");
            return;
        }
        let body = json!({"input": {"text": text, "files": files}}).to_string();
        let graph_id = editor.graph_id();
        let url = format!("/api/graphs/{graph_id}/runs");
        let mut headers = vec![("Content-Type", "application/json".to_owned())];
        headers.extend(crate::edit_token::authorization(&graph_id));
        match browser::fetch("POST", &url, Some(&body), &headers).await {
            Ok((201, reply)) => {
                if let Ok(started) = serde_json::from_str::<wire::run::RunStarted>(&reply) {
                    editor.overlay.set(Overlay::None);
                    editor.run.follow(editor.model, editor.graph(), &started.id);
                }
            }
            Ok((422, reply)) => {
                let message = crate::browser::error_message(&reply)
                    .unwrap_or_else(|| "the graph cannot run".to_owned());
                editor.overlay.set(Overlay::None);
                editor.show_validation.set(true);
                editor.notify(message);
            }
            Ok((_, reply)) => {
                let message = crate::browser::error_message(&reply)
                    .unwrap_or_else(|| "the server refused the run".to_owned());
                editor.notify(format!("The run did not start: {message}"));
            }
            Err(_) => editor.notify("The server could not be reached; the run did not start."),
        }
    });
}

#[component]
pub fn RunDialog() -> impl IntoView {
    let editor = expect_context::<EditorState>();
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
    let text = RwSignal::new(default_text);
    let files = RwSignal::new(Vec::<Chosen>::new());
    let starting = RwSignal::new(false);
    let go = move || {
        if starting.get_untracked() {
            return;
        }
        starting.set(true);
        let chosen: Vec<Value> = files
            .get_untracked()
            .into_iter()
            .map(|file| json!({"name": file.name, "media_type": file.media_type, "content_base64": file.base64}))
            .collect();
        start(editor, text.get_untracked(), chosen);
        set_timeout(move || starting.set(false), Duration::from_millis(1500));
    };
    let choose = move |event: web_sys::Event| {
        let Some(input) = event.target().and_then(|target| {
            wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(target).ok()
        }) else {
            return;
        };
        let Some(list) = input.files() else { return };
        for position in 0..list.length() {
            let Some(file) = list.get(position) else {
                continue;
            };
            leptos::task::spawn_local(async move {
                match browser::read_bytes(&file).await {
                    Ok(bytes) => files.update(|files| {
                        files.push(Chosen {
                            name: file.name(),
                            media_type: if file.type_().is_empty() {
                                "application/octet-stream".to_owned()
                            } else {
                                file.type_()
                            },
                            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
                        });
                    }),
                    Err(message) => {
                        editor.notify(format!("“{}” could not be read: {message}", file.name()))
                    }
                }
            });
        }
        input.set_value("");
    };
    view! {
        <Modal title="Run the graph".to_owned() class="run-dialog">
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
                <label class="attach">
                    {crate::icons::paperclip()}
                    "Add files"
                    <input type="file" multiple=true hidden=true on:change=choose/>
                </label>
                <ul class="chosen-files">
                    {move || files.get().into_iter().map(|file| view! { <li>{file.name}</li> }).collect_view()}
                </ul>
                <div class="actions">
                    <button type="button" on:click=move |_| editor.overlay.set(Overlay::None)>"Cancel"</button>
                    <button type="button" class="primary" disabled=move || starting.get() on:click=move |_| go()>"Start run (Ctrl+Enter)"</button>
                </div>
        </Modal>
    }
}
