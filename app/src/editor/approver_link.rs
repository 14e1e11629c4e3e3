//! "Make an approver link" (PRODUCT §3.14): for the graph's editor, a link
//! someone else opens to decide this run's approvals — and nothing else —
//! shown once with a copy button, since the server keeps only its hash.

use leptos::either::Either;
use leptos::prelude::*;

use super::share::{LinkRow, origin};
use crate::api::{self, ApiError};
use crate::run::RunView;

/// What a refused link means to the person.
fn refusal_words(error: &ApiError) -> String {
    match error {
        ApiError::Unreachable(message) => {
            format!("No link was made ({message}); try again.")
        }
        refused => format!(
            "No link was made: {}.",
            refused.message_or("the server refused")
        ),
    }
}

#[component]
pub fn ApproverLinkMaker(view_state: RunView) -> impl IntoView {
    let link = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let problem = RwSignal::new(None::<String>);
    let make = move |_| {
        let (Some(graph_id), Some(run_id)) =
            (view_state.graph_id(), view_state.run_id.get_untracked())
        else {
            return;
        };
        busy.set(true);
        problem.set(None);
        leptos::task::spawn_local(async move {
            match api::make_approver_link(&graph_id, &run_id).await {
                Ok(made) => {
                    let _ = link.try_set(Some(format!("{}{}", origin(), made.url)));
                }
                Err(error) => {
                    let _ = problem.try_set(Some(refusal_words(&error)));
                }
            }
            let _ = busy.try_set(false);
        });
    };
    view! {
        <div class="approver-link">
            {move || match link.get() {
                Some(url) => Either::Left(view! {
                    <LinkRow label="Approver link" name="approver-link" url/>
                    <p class="hint">"Whoever opens it can approve, reject or send back this run's approvals — and nothing else: not edit the graph, run, cancel, or see other runs. It is shown only now; make another any time."</p>
                }),
                None => Either::Right(view! {
                    <p class="hint">"Someone else to decide?"</p>
                    <button type="button" disabled=move || busy.get() on:click=make>"Make an approver link"</button>
                }),
            }}
            {move || problem.get().map(|message| view! { <p class="decision-problem" role="alert">{message}</p> })}
        </div>
    }
}
