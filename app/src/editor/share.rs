//! The Share dialog (PRODUCT §5): the view link, the edit link (it carries
//! the edit capability, so it comes with a warning), the self-contained
//! link, and the link of the run shown; each with a copy button.

use leptos::prelude::*;

use super::modal::Modal;
use super::state::{EditorMode, EditorState};
use crate::{edit_token, link};

pub(super) fn origin() -> String {
    web_sys::window()
        .and_then(|window| window.location().origin().ok())
        .unwrap_or_default()
}

/// Puts text on the clipboard; where the page may not (plain HTTP on
/// another host), the field is selected for Ctrl+C.
fn copy(editor: EditorState, field: NodeRef<leptos::html::Input>, text: String) {
    let Some(window) = web_sys::window() else {
        return;
    };
    if window.is_secure_context() {
        let _ = window.navigator().clipboard().write_text(&text);
        editor.notify("Copied.");
    } else if let Some(input) = field.get_untracked() {
        input.select();
        editor.notify("Selected: press Ctrl+C to copy.");
    }
}

#[component]
pub(super) fn LinkRow(
    label: &'static str,
    #[prop(into)] name: String,
    url: String,
    #[prop(optional, into)] warning: Option<String>,
) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let field = NodeRef::<leptos::html::Input>::new();
    let text = url.clone();
    view! {
        <div class="share-row">
            <label class="field">
                <span class="field-label">{label}</span>
                <div class="share-line">
                    <input type="text" readonly=true name=name value=url node_ref=field on:focus=move |_| {
                        if let Some(input) = field.get_untracked() {
                            input.select();
                        }
                    }/>
                    <button type="button" on:click=move |_| copy(editor, field, text.clone())>"Copy"</button>
                </div>
            </label>
            {warning.map(|warning| view! { <p class="hint warning">{warning}</p> })}
        </div>
    }
}

#[component]
pub fn ShareDialog() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let origin = origin();
    let id = editor.graph_id();
    let stored = editor.mode != EditorMode::Local && !id.is_empty();
    let view_url = format!("{origin}/g/{id}");
    let edit_url = (stored && editor.mode == EditorMode::Stored)
        .then(|| edit_token::stored(&id))
        .flatten()
        .map(|token| format!("{origin}/g/{id}#edit={token}"));
    let run_url = editor
        .run
        .run_id
        .get_untracked()
        .map(|run| format!("{origin}/g/{id}/runs/{run}"));
    let self_contained = editor
        .with_graph(link::encode)
        .map(|text| format!("{origin}/#{}{text}", link::FRAGMENT_KEY));
    view! {
        <Modal title="Share".to_owned() class="share">
                {stored.then(|| view! {
                    <LinkRow label="View link — anyone with it can see this graph, and fork it to run a copy of their own" name="view-link" url=view_url.clone()/>
                })}
                {edit_url.map(|url| view! {
                    <LinkRow
                        label="Edit link"
                        name="edit-link"
                        url
                        warning="Anyone with the edit link can change this graph, run it, stop its runs and see them all. Share it only with people you would give your own access."
                    />
                })}
                {run_url.map(|url| view! {
                    <LinkRow label="Run link — this run, read-only" name="run-link" url/>
                })}
                {match self_contained {
                    Ok(url) => view! {
                        <LinkRow
                            label="Self-contained link — the whole graph in the address; opens even where the server does not have it"
                            name="self-contained-link"
                            url
                        />
                    }
                    .into_any(),
                    Err(error) => view! {
                        <div class="share-row">
                            <span class="field-label">"Self-contained link"</span>
                            <p class="hint warning" role="alert">{error.to_string()}</p>
                        </div>
                    }
                    .into_any(),
                }}
        </Modal>
    }
}
