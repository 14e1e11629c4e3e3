//! The decision tab of an agent task whose tool calls wait for a person
//! (PRODUCT §3.17): for each call that waited, the tool and what it does,
//! why it waits and until when, what the model said before it, and its
//! arguments as a form (locked ones shown locked); for whoever may decide
//! (the graph's editor, or an approver link of the run) Approve — with the
//! arguments as edited — or Reject with a reason, one call at a time; once
//! decided, who decided what and when.

use graph::tools::LOCKED;
use leptos::prelude::*;
use serde_json::{Map, Value};
use wire::ActivationRecord;
use wire::activation::{ToolCallRecord, ToolOutcome};
use wire::approval::{CallDecision, Decision, DecisionRequest};
use wire::providers::ToolInfo;

use crate::api;
use crate::editor::state::EditorState;
use crate::run::{RunAccess, RunView};

/// The calls of an activation that waited (or wait) for a person.
pub fn waited(activation: &ActivationRecord) -> Vec<ToolCallRecord> {
    activation
        .tool_calls
        .iter()
        .filter(|call| call.waits.is_some())
        .cloned()
        .collect()
}

/// What became of a call that waited, in words; `None` while it waits.
pub fn outcome_words(call: &ToolCallRecord) -> Option<String> {
    let decision: &CallDecision = call.decision.as_ref()?;
    let reason = decision.feedback.trim();
    Some(match (decision.decision, decision.by) {
        (_, None) => "Nobody decided in time: the model was told it was not made.".to_owned(),
        (Decision::Approve, Some(by)) if decision.arguments.is_some() => {
            format!("Approved by {}, with the arguments edited", by.words())
        }
        (Decision::Approve, Some(by)) => format!("Approved by {}", by.words()),
        (_, Some(by)) if reason.is_empty() => format!("Rejected by {}", by.words()),
        (_, Some(by)) => format!("Rejected by {}: {reason}", by.words()),
    })
}

/// Each argument of a call as its form shows it: its name, the text in
/// its field, its schema type, and whether it is locked.
pub fn fields(
    call: &ToolCallRecord,
    info: Option<&ToolInfo>,
) -> Vec<(String, String, String, bool)> {
    let properties = info
        .and_then(|info| info.input_schema.get("properties"))
        .and_then(Value::as_object);
    let kind = |name: &str| {
        properties
            .and_then(|properties| properties.get(name))
            .and_then(|schema| schema.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("string")
            .to_owned()
    };
    let mut names: Vec<String> = call
        .arguments
        .as_object()
        .map(|given| given.keys().cloned().collect())
        .unwrap_or_default();
    for name in properties
        .into_iter()
        .flat_map(|properties| properties.keys())
    {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
        .into_iter()
        .map(|name| {
            let value = call.arguments.get(&name);
            let locked = value.and_then(Value::as_str) == Some(LOCKED);
            let text = match value {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
            };
            let kind = kind(&name);
            (name, text, kind, locked)
        })
        .collect()
}

/// A field's text as its argument's value: text for a string, else JSON
/// when it reads as JSON (a number, true, a list), else the text.
pub fn typed(kind: &str, text: &str) -> Option<Value> {
    if text.trim().is_empty() {
        return None;
    }
    if kind == "string" {
        return Some(Value::String(text.to_owned()));
    }
    Some(serde_json::from_str(text.trim()).unwrap_or_else(|_| Value::String(text.to_owned())))
}

/// The arguments as the form has them, when they differ from the call's
/// (locked ones left out: they are the graph's).
pub fn edited(
    call: &ToolCallRecord,
    typed_in: &[(String, String, String)],
) -> Option<Map<String, Value>> {
    let mut arguments = Map::new();
    for (name, kind, text) in typed_in {
        if let Some(value) = typed(kind, text) {
            arguments.insert(name.clone(), value);
        }
    }
    let mut original = call.arguments.as_object().cloned().unwrap_or_default();
    original.retain(|_, value| value.as_str() != Some(LOCKED) && !value.is_null());
    (arguments != original).then_some(arguments)
}

/// The server's tool a call was of: the record names it as the model
/// called it, the module's choice in the run's graph says which it is.
fn tool_of(graph: &graph::Graph, module_id: &str, call: &ToolCallRecord) -> String {
    graph
        .modules
        .iter()
        .find(|module| module.id == module_id)
        .and_then(|module| match &module.config {
            graph::ModuleConfig::AgentTask(task) => task
                .tools
                .iter()
                .find(|choice| choice.server == call.server && choice.name() == call.tool)
                .map(|choice| choice.tool.clone()),
            _ => None,
        })
        .unwrap_or_else(|| call.tool.clone())
}

/// What the server says of the tool, when the catalogue is here.
fn tool_info(editor: Option<EditorState>, server: &str, tool: &str) -> Option<ToolInfo> {
    editor?.catalogue.with(|catalogue| {
        catalogue
            .as_ref()?
            .tool_servers
            .iter()
            .find(|known| known.id == server)?
            .tools
            .iter()
            .find(|info| info.name == tool)
            .cloned()
    })
}

/// The tab: one card per call that waited.
#[component]
pub fn CallDecisions(
    view_state: RunView,
    activation: Memo<Option<ActivationRecord>>,
) -> impl IntoView {
    let editor = use_context::<EditorState>();
    if let Some(editor) = editor
        && editor.catalogue.with_untracked(Option::is_none)
    {
        super::lazy_parts::load_catalogue(editor);
    }
    let calls = Memo::new(move |_| {
        activation.with(|activation| {
            activation.as_ref().map(|activation| {
                (
                    activation.module_id.clone(),
                    activation.activation,
                    waited(activation),
                )
            })
        })
    });
    move || {
        let access = view_state.access.get();
        let (module_id, number, calls) = calls.get()?;
        let any_waits = calls
            .iter()
            .any(|call| call.outcome == ToolOutcome::Waiting && call.decision.is_none());
        // The editor can hand the decision to someone else.
        let link_maker = (any_waits && access == RunAccess::Edit)
            .then(|| view! { <super::approver_link::ApproverLinkMaker view_state/> });
        let said = activation.with_untracked(|activation| {
            activation
                .as_ref()
                .map(|activation| activation.responses.clone())
                .unwrap_or_default()
        });
        Some(view! {
            <div class="decision call-decisions" role="tabpanel" aria-label="Decision">
                {calls.into_iter().map(|call| {
                    let before = said
                        .iter()
                        .find(|response| response.index == call.response_index)
                        .map(|response| response.text.trim().to_owned())
                        .filter(|text| !text.is_empty());
                    let tool = view_state.record.with_untracked(|record| {
                        record.as_ref().map(|record| tool_of(&record.graph, &module_id, &call))
                    });
                    let info = tool.and_then(|tool| tool_info(editor, &call.server, &tool));
                    view! {
                        <CallCard view_state module_id=module_id.clone() activation=number call info before access/>
                    }
                }).collect_view()}
                {link_maker}
            </div>
        })
    }
}

/// One call that waited.
#[component]
fn CallCard(
    view_state: RunView,
    module_id: String,
    activation: u32,
    call: ToolCallRecord,
    info: Option<ToolInfo>,
    before: Option<String>,
    access: RunAccess,
) -> impl IntoView {
    let waits = call.outcome == ToolOutcome::Waiting && call.decision.is_none();
    let reason = call
        .waits
        .as_ref()
        .map(|waits| waits.reason.clone())
        .unwrap_or_default();
    let deadline = call
        .waits
        .as_ref()
        .and_then(|waits| waits.deadline_at)
        .filter(|_| waits)
        .map(|at| {
            format!(
                "Refused to the model if nobody decides by {}",
                crate::browser::local_date_time(at).0
            )
        });
    let description = info
        .as_ref()
        .map(|info| info.description.clone())
        .filter(|text| !text.is_empty());
    let outcome = outcome_words(&call);
    let form = (waits && access != RunAccess::View).then(|| {
        view! { <CallForm view_state module_id activation call=call.clone() info=info.clone()/> }
    });
    let viewer = (waits && access == RunAccess::View).then(|| view! {
        <p class="hint">"Only the graph's editors, or someone with an approver link of this run, can decide."</p>
    });
    view! {
        <section class="call-decision" data-call=call.call_id.clone() aria-label=format!("Call of {}", call.tool)>
            <h4 class="call-decision-tool">{format!("{} · {}", call.tool, call.server)}</h4>
            {description.map(|text| view! { <p class="hint">{text}</p> })}
            <p class="call-decision-reason">{reason}</p>
            {deadline.map(|text| view! { <p class="decision-deadline">{text}</p> })}
            {before.map(|text| view! {
                <div class="call-decision-before">
                    <span class="field-label">"What the model said before it"</span>
                    <pre>{text}</pre>
                </div>
            })}
            {outcome.map(|text| view! { <p class="decision-outcome" role="status">{text}</p> })}
            {form}
            {viewer}
        </section>
    }
}

/// The arguments and the two decisions, for a call that waits.
#[component]
fn CallForm(
    view_state: RunView,
    module_id: String,
    activation: u32,
    call: ToolCallRecord,
    info: Option<ToolInfo>,
) -> impl IntoView {
    let busy = RwSignal::new(false);
    let problem = RwSignal::new(None::<String>);
    let fields = fields(&call, info.as_ref());
    let inputs: Vec<(String, String, NodeRef<leptos::html::Input>)> = fields
        .iter()
        .filter(|(_, _, _, locked)| !locked)
        .map(|(name, _, kind, _)| (name.clone(), kind.clone(), NodeRef::new()))
        .collect();
    let reason_field = NodeRef::<leptos::html::Textarea>::new();
    let stored = StoredValue::new((call.clone(), inputs.clone(), module_id));
    let decide = move |decision: Decision| {
        let (call, inputs, module_id) = stored.get_value();
        let typed_in: Vec<(String, String, String)> = inputs
            .iter()
            .map(|(name, kind, field)| {
                let text = field
                    .get_untracked()
                    .map(|field| field.value())
                    .unwrap_or_default();
                (name.clone(), kind.clone(), text)
            })
            .collect();
        let reason = reason_field
            .get_untracked()
            .map(|field| field.value())
            .unwrap_or_default();
        let request = DecisionRequest {
            decision,
            activation: Some(activation),
            feedback: (!reason.trim().is_empty()).then_some(reason),
            value: None,
            call: Some(call.call_id.clone()),
            arguments: (decision == Decision::Approve)
                .then(|| edited(&call, &typed_in))
                .flatten(),
        };
        let (Some(run_id), graph_id) = (view_state.run_id.get_untracked(), view_state.graph_id())
        else {
            return;
        };
        view_state.choose(module_id.clone());
        busy.set(true);
        problem.set(None);
        leptos::task::spawn_local(async move {
            match api::decide(graph_id.as_deref(), &run_id, &module_id, &request).await {
                Ok(decided) => view_state.keep_activation(decided),
                Err(error) if error.status() == Some(409) => {
                    let _ =
                        problem.try_set(Some("Someone already decided on this call.".to_owned()));
                    view_state.reload();
                }
                Err(error) => {
                    let _ = problem.try_set(Some(format!(
                        "The decision was not taken: {}.",
                        error.message_or("the server refused")
                    )));
                }
            }
            let _ = busy.try_set(false);
        });
    };
    view! {
        <fieldset class="decision-form call-form" disabled=move || busy.get()>
            <legend>"Its arguments — edit them before approving if they need it"</legend>
            {fields.into_iter().map(|(name, text, kind, locked)| {
                if locked {
                    return view! {
                        <p class="field call-argument-locked"><span class="field-label">{name}</span>{LOCKED}</p>
                    }.into_any();
                }
                let field = inputs
                    .iter()
                    .find(|(known, _, _)| *known == name)
                    .map(|(_, _, field)| *field)
                    .unwrap_or_default();
                view! {
                    <label class="field">
                        <span class="field-label">{format!("{name} · {kind}")}</span>
                        <input type="text" class="call-argument" data-argument=name.clone() node_ref=field prop:value=text/>
                    </label>
                }.into_any()
            }).collect_view()}
            <label class="field">
                <span class="field-label">"Reason — told to the model if you reject (optional)"</span>
                <textarea class="call-reason" rows="2" node_ref=reason_field></textarea>
            </label>
            <div class="decision-buttons">
                <button type="button" class="primary" on:click=move |_| decide(Decision::Approve) title="Make the call once, with these arguments">"Approve"</button>
                <button type="button" class="danger" on:click=move |_| decide(Decision::Reject) title="Do not make it: the model is told, with your reason">"Reject"</button>
            </div>
            <p class="decision-problem" role="alert">{move || problem.get()}</p>
        </fieldset>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::approval::Decider;

    fn call() -> ToolCallRecord {
        ToolCallRecord {
            call_id: "c1".to_owned(),
            tool: "pay".to_owned(),
            server: "refunds".to_owned(),
            arguments: serde_json::json!({"amount": 20, "account": LOCKED}),
            outcome: ToolOutcome::Waiting,
            ..ToolCallRecord::default()
        }
    }

    fn info() -> ToolInfo {
        ToolInfo {
            name: "issue_refund".to_owned(),
            input_schema: serde_json::json!({"properties": {
                "amount": {"type": "number"}, "account": {"type": "string"}, "note": {"type": "string"}
            }}),
            ..ToolInfo::default()
        }
    }

    #[test]
    fn the_form_has_every_argument_in_the_calls_order_locked_ones_locked_and_sends_only_an_edit() {
        let call = call();
        let fields = fields(&call, Some(&info()));
        assert_eq!(
            fields,
            [
                (
                    "amount".to_owned(),
                    "20".to_owned(),
                    "number".to_owned(),
                    false
                ),
                (
                    "account".to_owned(),
                    LOCKED.to_owned(),
                    "string".to_owned(),
                    true
                ),
                ("note".to_owned(), String::new(), "string".to_owned(), false),
            ]
        );
        let unchanged = [
            ("amount".to_owned(), "number".to_owned(), "20".to_owned()),
            ("note".to_owned(), "string".to_owned(), String::new()),
        ];
        assert_eq!(edited(&call, &unchanged), None);
        let changed = [
            ("amount".to_owned(), "number".to_owned(), "15".to_owned()),
            ("note".to_owned(), "string".to_owned(), "12".to_owned()),
        ];
        let sent = edited(&call, &changed).unwrap();
        assert_eq!(sent["amount"], serde_json::json!(15));
        // A string stays text, even when it reads as a number.
        assert_eq!(sent["note"], serde_json::json!("12"));
        assert!(
            !sent.contains_key("account"),
            "a locked argument is the graph's"
        );
    }

    #[test]
    fn what_became_of_a_call_is_said_with_who_and_why() {
        let mut call = call();
        assert_eq!(outcome_words(&call), None);
        call.decision = Some(CallDecision {
            decision: Decision::Reject,
            arguments: None,
            feedback: "Finance does these".to_owned(),
            by: Some(Decider::ApproverLink),
            at: 1,
        });
        assert_eq!(
            outcome_words(&call).unwrap(),
            "Rejected by an approver link: Finance does these"
        );
        call.decision = Some(CallDecision {
            decision: Decision::Reject,
            arguments: None,
            feedback: "nobody approved it in time".to_owned(),
            by: None,
            at: 1,
        });
        assert!(
            outcome_words(&call)
                .unwrap()
                .starts_with("Nobody decided in time")
        );
    }
}
