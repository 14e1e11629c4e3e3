//! The decision tab of an approval in the run panel (PRODUCT §3.14): what
//! it asks, what it shows, when it times out; for whoever may decide (the
//! graph's editor, or an approver link of the run) the value to pass on,
//! feedback, and Approve / Send back / Reject; once decided, who decided
//! what and when. The editor can make an approver link from here for
//! someone else to decide.

pub mod shown;

use std::fmt::Write;

use graph::ports::TIMEOUT_OUT;
use leptos::prelude::*;
use wire::approval::{Decision, DecisionRecord, DecisionRequest, Waiting};
use wire::{ActivationRecord, ActivationStatus};

use super::approver_link::ApproverLinkMaker;
use crate::api::{self, ApiError};
use crate::browser;
use crate::canvas::escape;
use crate::run::{RunAccess, RunView};

/// Where an approval's activation is, as the decision tab shows it.
#[derive(Clone, Debug, PartialEq)]
pub enum Stage {
    /// Someone may decide now.
    Waiting,
    Decided(DecisionRecord),
    /// Nobody decided before its timeout: the value went to `timeout_out`.
    TimedOut,
    /// It stopped waiting with no decision (the run was cancelled or failed).
    Ended,
}

pub fn stage(activation: &ActivationRecord) -> Stage {
    if let Some(decision) = &activation.decision {
        return Stage::Decided(decision.clone());
    }
    match activation.status {
        ActivationStatus::Waiting => Stage::Waiting,
        _ if activation.outputs.contains_key(TIMEOUT_OUT) => Stage::TimedOut,
        _ => Stage::Ended,
    }
}

/// "Approved by the editor", "Sent back by an approver link", with an
/// edited value said.
pub fn outcome_words(decision: &DecisionRecord) -> String {
    let by = decision.by.words();
    match decision.decision {
        Decision::Approve if decision.value.is_some() => {
            format!("Approved by {by}, with the value edited")
        }
        Decision::Approve => format!("Approved by {by}"),
        Decision::Reject => format!("Rejected by {by}"),
        Decision::Revise => format!("Sent back by {by}"),
    }
}

/// What a refused decision means to the person.
fn refusal_words(error: &ApiError) -> String {
    let code = error.detail().map(|detail| detail.code.as_str());
    match (error, code) {
        (ApiError::Unreachable(message), _) => {
            format!("The decision could not be sent ({message}); try again.")
        }
        (_, Some("decision.token_required" | "decision.token_invalid")) => format!(
            "This page cannot decide: {}.",
            error.message_or("the link is not an approver link of this run")
        ),
        _ => format!(
            "The decision was not taken: {}.",
            error.message_or("the server refused")
        ),
    }
}

/// A moment in the person's own time zone and language, as markup.
fn time_markup(at: i64, markup: &mut String) {
    let (when, iso) = browser::local_date_time(at);
    markup.push_str("<time datetime=\"");
    escape(&iso, markup);
    markup.push_str("\">");
    escape(&when, markup);
    markup.push_str("</time>");
}

/// `<tag class="…">text</tag>`, the text escaped.
fn element(tag: &str, class: &str, text: &str, markup: &mut String) {
    let _ = write!(markup, "<{tag} class=\"{class}\">");
    escape(text, markup);
    let _ = write!(markup, "</{tag}>");
}

/// Who decided what and when, and what they said; `late` when this
/// person's own decision came second.
fn outcome_markup(decision: &DecisionRecord, late: bool, markup: &mut String) {
    let _ = write!(
        markup,
        "<div class=\"decision-outcome decided-{}\" role=\"status\">",
        decision.decision.as_str()
    );
    if late {
        markup.push_str("<p class=\"decision-late\">Someone already decided:</p>");
    }
    markup.push_str("<p class=\"decision-outcome-line\">");
    escape(&outcome_words(decision), markup);
    markup.push_str(" · ");
    time_markup(decision.at, markup);
    markup.push_str("</p>");
    if !decision.feedback.trim().is_empty() {
        let said = match decision.decision {
            Decision::Reject => "Reason",
            Decision::Approve | Decision::Revise => "Feedback",
        };
        markup.push_str("<blockquote class=\"decision-feedback\">");
        element("span", "field-label", said, markup);
        escape(&decision.feedback, markup);
        markup.push_str("</blockquote>");
    }
    if let Some(value) = &decision.value {
        markup.push_str("<div class=\"decision-edited\">");
        element("span", "field-label", "The value as edited", markup);
        element("pre", "decision-edited-value", value, markup);
        markup.push_str("</div>");
    }
    markup.push_str("</div>");
}

/// What the approval asks, when it times out, and, unless the person may
/// decide now, what became of it or why they cannot.
pub fn side_markup(waiting: &Waiting, stage: &Stage, late: bool, access: RunAccess) -> String {
    let mut markup = String::new();
    element("p", "decision-asked", &waiting.asked, &mut markup);
    if let Some(at) = waiting.deadline_at {
        markup.push_str("<p class=\"decision-deadline\">");
        markup.push_str(if *stage == Stage::Waiting {
            "Times out at "
        } else {
            "Its timeout was "
        });
        time_markup(at, &mut markup);
        markup.push_str("</p>");
    }
    match stage {
        Stage::Decided(decision) => outcome_markup(decision, late, &mut markup),
        Stage::Waiting if access == RunAccess::View => element(
            "p",
            "hint",
            "Only the graph's editors, or someone with an approver link of this run, can decide.",
            &mut markup,
        ),
        Stage::Waiting => {}
        Stage::TimedOut => element(
            "p",
            "decision-outcome",
            "Nobody decided in time: the value went on by “Timed out”.",
            &mut markup,
        ),
        Stage::Ended => element(
            "p",
            "decision-outcome",
            "The run ended before anyone decided.",
            &mut markup,
        ),
    }
    markup
}

/// The decision a clicked button stands for (its `value`).
fn clicked_decision(event: &web_sys::MouseEvent) -> Option<Decision> {
    let button = event
        .target()
        .and_then(|target| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(target).ok())?;
    Decision::parse(&button.get_attribute("value")?)
}

/// Sends the decision; what comes back is the activation decided, or why not.
fn send(
    view_state: RunView,
    (module_id, activation): (String, u32),
    request: DecisionRequest,
    form: FormState,
) {
    let (Some(run_id), graph_id) = (view_state.run_id.get_untracked(), view_state.graph_id())
    else {
        return;
    };
    // The panel stays on the approval to show the decision taken, as if
    // the person had chosen it, while the run goes on.
    view_state.choose(module_id.clone());
    form.busy.set(true);
    form.problem.set(None);
    leptos::task::spawn_local(async move {
        match api::decide(graph_id.as_deref(), &run_id, &module_id, &request).await {
            Ok(decided) => view_state.keep_activation(decided),
            // Someone decided first (or it timed out, or the run ended):
            // the record says which, and the tab says it came first.
            Err(error) if error.status() == Some(409) => {
                let _ = form.late.try_set(Some(activation));
                view_state.reload();
            }
            Err(error) => {
                let _ = form.problem.try_set(Some(refusal_words(&error)));
            }
        }
        let _ = form.busy.try_set(false);
    });
}

/// What the form says while and after it sends.
#[derive(Clone, Copy)]
struct FormState {
    busy: RwSignal<bool>,
    problem: RwSignal<Option<String>>,
    /// The activation this person's decision came too late for.
    late: RwSignal<Option<u32>>,
}

/// The value to pass on, the feedback, and the three decisions. The
/// fields are the browser's own (read when a button is pressed).
#[component]
fn DecisionForm(
    view_state: RunView,
    module_id: String,
    activation: u32,
    value: String,
    late: RwSignal<Option<u32>>,
) -> impl IntoView {
    let form = FormState {
        busy: RwSignal::new(false),
        problem: RwSignal::new(None),
        late,
    };
    let value_field = NodeRef::<leptos::html::Textarea>::new();
    let feedback_field = NodeRef::<leptos::html::Textarea>::new();
    let original = StoredValue::new(value.clone());
    let on_click = move |event: web_sys::MouseEvent| {
        let Some(decision) = clicked_decision(&event) else {
            return;
        };
        let said = feedback_field
            .get_untracked()
            .map(|field| field.value())
            .unwrap_or_default();
        if decision == Decision::Revise && said.trim().is_empty() {
            form.problem.set(Some(
                "Say what to do again: sending it back needs feedback.".to_owned(),
            ));
            if let Some(field) = feedback_field.get_untracked() {
                let _ = field.focus();
            }
            return;
        }
        let edited = value_field.get_untracked().map(|field| field.value());
        // Unedited, the value goes on as it came (a coding module's output
        // keeps its session), so it is sent only when changed.
        let edited = edited.filter(|edited| original.with_value(|original| original != edited));
        let request = DecisionRequest {
            decision,
            activation: Some(activation),
            feedback: (!said.trim().is_empty()).then_some(said),
            value: edited.filter(|_| decision == Decision::Approve),
            call: None,
            arguments: None,
        };
        send(view_state, (module_id.clone(), activation), request, form);
    };
    view! {
        <fieldset class="decision-form" disabled=move || form.busy.get()>
            <label class="field">
                <span class="field-label">"The value it passes on when approved — edit it if it needs it"</span>
                <textarea class="decision-value" rows="4" node_ref=value_field prop:value=value></textarea>
            </label>
            <label class="field">
                <span class="field-label">"Feedback — what to do again, to send it back; why, to reject (optional then)"</span>
                <textarea class="decision-feedback-field" rows="2" node_ref=feedback_field></textarea>
            </label>
            <div class="decision-buttons" on:click=on_click>
                <button type="button" class="primary" value="approve" title="Go on: the value leaves by “Approved”">"Approve"</button>
                <button type="button" value="revise" title="Do it again: your feedback leaves by “Send back”">"Send back"</button>
                <button type="button" class="danger" value="reject" title="Stop: the value and your reason leave by “Rejected”">"Reject"</button>
            </div>
            <p class="decision-problem" role="alert">{move || form.problem.get()}</p>
        </fieldset>
    }
}

/// The decision tab of an approval's activation. Drawn in the browser
/// only (nothing before hydration): who may decide is known there, and so
/// are the person's time zone and language.
#[component]
pub fn DecisionView(
    view_state: RunView,
    activation: Memo<Option<ActivationRecord>>,
) -> impl IntoView {
    // The activation this person's decision came after someone else's on.
    let late = RwSignal::new(None::<u32>);
    let current = Memo::new(move |_| {
        activation.with(|activation| {
            activation.as_ref().map(|activation| {
                (
                    activation.module_id.clone(),
                    activation.activation,
                    stage(activation),
                )
            })
        })
    });
    move || {
        let access = view_state.access.get();
        let (module_id, number, stage) = current.get().filter(|_| access != RunAccess::Unknown)?;
        let waiting = activation.with_untracked(|activation| activation.as_ref()?.waiting.clone());
        // An agent task's tool calls that waited.
        let Some(waiting) = waiting else {
            return Some(
                view! { <super::call_decision::CallDecisions view_state activation/> }.into_any(),
            );
        };
        let shown = view_state
            .record
            .with_untracked(|record| shown::shown_markup(&waiting.shown, record.as_ref()));
        let side = side_markup(&waiting, &stage, late.get() == Some(number), access);
        let form = (stage == Stage::Waiting && access != RunAccess::View).then(|| {
            view! {
                <DecisionForm view_state module_id activation=number value=waiting.value.clone() late/>
                {(access == RunAccess::Edit).then(|| view! { <ApproverLinkMaker view_state/> })}
            }
        });
        Some(
            view! {
                <div class="decision" role="tabpanel" aria-label="Decision">
                    <div class="decision-side">
                        <div inner_html=side></div>
                        {form}
                    </div>
                    <div class="decision-inputs" inner_html=shown></div>
                </div>
            }
            .into_any(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::approval::Decider;

    fn waiting() -> ActivationRecord {
        let mut activation = ActivationRecord::new("approve", 1, 0);
        activation.status = ActivationStatus::Waiting;
        activation.waiting = Some(Waiting {
            asked: "Ship it?".to_owned(),
            shown: Vec::new(),
            value: "the change".to_owned(),
            passes_on: None,
            deadline_at: None,
        });
        activation
    }

    #[test]
    fn an_approval_waits_then_says_who_decided_what_or_that_nobody_did() {
        let mut activation = waiting();
        assert_eq!(stage(&activation), Stage::Waiting);
        let decision = DecisionRecord {
            decision: Decision::Revise,
            feedback: "Keep the title".to_owned(),
            value: None,
            by: Decider::ApproverLink,
            at: 1,
        };
        activation.decision = Some(decision.clone());
        activation.status = ActivationStatus::Completed;
        assert_eq!(stage(&activation), Stage::Decided(decision.clone()));
        assert_eq!(outcome_words(&decision), "Sent back by an approver link");
        let edited = DecisionRecord {
            decision: Decision::Approve,
            value: Some("edited".to_owned()),
            by: Decider::Editor,
            ..decision
        };
        assert_eq!(
            outcome_words(&edited),
            "Approved by the editor, with the value edited"
        );

        let mut timed_out = waiting();
        timed_out.status = ActivationStatus::Completed;
        timed_out.outputs.insert(
            TIMEOUT_OUT.to_owned(),
            wire::PortValue::Signal {
                source_module: "approve".to_owned(),
            },
        );
        assert_eq!(stage(&timed_out), Stage::TimedOut);
        let mut cancelled = waiting();
        cancelled.status = ActivationStatus::Cancelled;
        assert_eq!(stage(&cancelled), Stage::Ended);
    }

    #[test]
    fn the_side_says_what_became_of_it_and_escapes_what_people_wrote() {
        let activation = waiting();
        let asked = activation.waiting.as_ref().unwrap();
        let viewer = side_markup(asked, &Stage::Waiting, false, RunAccess::View);
        assert!(
            viewer.starts_with(r#"<p class="decision-asked">Ship it?</p>"#),
            "{viewer}"
        );
        assert!(viewer.contains("Only the graph&#39;s editors"), "{viewer}");
        assert_eq!(
            side_markup(asked, &Stage::Waiting, false, RunAccess::Approve),
            r#"<p class="decision-asked">Ship it?</p>"#
        );
        let rejected = DecisionRecord {
            decision: Decision::Reject,
            feedback: "<b>no</b>".to_owned(),
            value: None,
            by: Decider::Editor,
            at: 5,
        };
        let told = side_markup(asked, &Stage::Decided(rejected), true, RunAccess::Approve);
        assert!(
            told.contains(r#"<p class="decision-late">Someone already decided:</p>"#),
            "{told}"
        );
        assert!(told.contains("Rejected by the editor · <time"), "{told}");
        assert!(
            told.contains(r#"<span class="field-label">Reason</span>&lt;b&gt;no&lt;/b&gt;"#),
            "{told}"
        );
    }

    #[test]
    fn a_refused_decision_is_told_in_words() {
        let refused = crate::api::refusal(
            422,
            r#"{"error":{"code":"decision.invalid_request","message":"sending it back needs feedback"}}"#,
        );
        assert_eq!(
            refusal_words(&refused),
            "The decision was not taken: sending it back needs feedback."
        );
        let forbidden = crate::api::refusal(
            403,
            r#"{"error":{"code":"decision.token_invalid","message":"the token is neither"}}"#,
        );
        assert_eq!(
            refusal_words(&forbidden),
            "This page cannot decide: the token is neither."
        );
    }
}
