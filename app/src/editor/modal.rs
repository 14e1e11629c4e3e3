//! The frame every editor dialog shares: a backdrop that closes it when
//! clicked, the dialog box with its title, and a close button.

use leptos::prelude::*;

use super::state::{EditorState, Overlay};

/// `alert` makes it an `alertdialog` (something went wrong and the person
/// must read it), closed by a button of its own rather than the ✕; `class`
/// names the dialog for styles and tests.
#[component]
pub fn Modal(
    title: String,
    class: &'static str,
    #[prop(optional)] alert: bool,
    children: Children,
) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let close = move || editor.overlay.set(Overlay::None);
    let dialog = NodeRef::<leptos::html::Div>::new();
    // `autofocus` is only honoured on page load, so focus by hand: the
    // element the dialog marks, else its close button.
    Effect::new(move |_| {
        if let Some(dialog) = dialog.get() {
            let target = dialog
                .query_selector("[autofocus]")
                .ok()
                .flatten()
                .or_else(|| dialog.query_selector("button.close").ok().flatten());
            if let Some(target) = target.and_then(|element| {
                wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(element).ok()
            }) {
                let _ = target.focus();
            }
        }
    });
    view! {
        <div class="modal-backdrop" on:click=move |_| close()>
            <div
                node_ref=dialog
                class=format!("modal {class}")
                role=if alert { "alertdialog" } else { "dialog" }
                aria-modal="true"
                aria-label=title.clone()
                on:click=|event| event.stop_propagation()
            >
                <header>
                    <h2>{title.clone()}</h2>
                    // An alert closes with its own, plainly worded button.
                    {(!alert).then(|| view! {
                        <button type="button" class="close" aria-label="Close" on:click=move |_| close()>"✕"</button>
                    })}
                </header>
                {children()}
            </div>
        </div>
    }
}
