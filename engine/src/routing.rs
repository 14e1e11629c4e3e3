//! Which cables a port's value takes (the agent-platform seed's
//! `next_steps`). A port none of whose cables has a condition fans out to
//! all of them. Otherwise its cables are tried in document order: the first
//! whose condition holds, or the first without a condition (the catch-all),
//! takes the value, and no other does; if none does, the branch ends there.

use graph::condition::Condition;
use serde_json::{Map, Value};
use wire::bundle::content_type;
use wire::{ActivationRecord, PortValue, Route};

use crate::render::RunState;

/// One cable leaving a port, as routing sees it.
pub struct Exit<'a> {
    pub cable_id: &'a str,
    /// The condition's text, when it has one.
    pub condition: Option<&'a str>,
}

/// The cables that take the value, as positions in the port's exits, and
/// the route to record (`None` when the port has no conditions).
pub struct Choice {
    pub taken: Vec<usize>,
    pub route: Option<Route>,
}

/// What conditions read: `$.output` (the value on the port; for an agent
/// task's merged output, its last response, the whole bundle being at
/// `$.merged`), `$.input` (the run's input text), `$.state` (the run
/// state, `$.state['draft.status']`) and `$.tools` (what each tool the
/// activation called last gave back, at the agent-platform seed's path:
/// `$.tools.lookup.outputs.latest.decision`).
pub fn context(
    value: &PortValue,
    record: &ActivationRecord,
    run_input: &str,
    state: &RunState,
) -> Value {
    let mut context = Map::new();
    let output = match value {
        PortValue::Bundle(bundle) if bundle.content_type == content_type::MERGED => {
            context.insert("merged".to_owned(), bundle.content.clone());
            let last = record
                .responses
                .iter()
                .max_by_key(|response| response.index)
                .map(|response| response.text.as_str())
                .unwrap_or_default();
            read_text(last)
        }
        PortValue::Bundle(bundle) => match &bundle.content {
            Value::String(text) => read_text(text),
            other => other.clone(),
        },
        PortValue::Receipt(receipt) => serde_json::to_value(receipt).unwrap_or(Value::Null),
        PortValue::Signal { .. } => Value::Null,
    };
    context.insert("output".to_owned(), output);
    context.insert("input".to_owned(), Value::String(run_input.to_owned()));
    context.insert(
        "tools".to_owned(),
        Value::Object(
            latest_tool_results(record)
                .into_iter()
                .map(|(name, value)| {
                    let latest = match value {
                        Value::String(text) => read_text(text),
                        other => other.clone(),
                    };
                    (
                        name.to_owned(),
                        serde_json::json!({"outputs": {"latest": latest}}),
                    )
                })
                .collect(),
        ),
    );
    context.insert(
        "state".to_owned(),
        Value::Object(
            state
                .iter()
                .map(|(key, value)| (key.clone(), Value::String(value.clone())))
                .collect(),
        ),
    );
    Value::Object(context)
}

/// What each tool an activation called last gave back, by the name the
/// model called it: the value of its last call that returned.
pub fn latest_tool_results(record: &ActivationRecord) -> Vec<(&str, &Value)> {
    let mut latest: Vec<(&str, &Value)> = Vec::new();
    for call in record
        .tool_calls
        .iter()
        .filter(|call| call.outcome == wire::activation::ToolOutcome::Ok)
    {
        match latest.iter_mut().find(|(name, _)| *name == call.tool) {
            Some(slot) => slot.1 = &call.result,
            None => latest.push((&call.tool, &call.result)),
        }
    }
    latest
}

/// Text as JSON when it is JSON (a model's reply in a ```json fence
/// included), else as the text itself.
fn read_text(text: &str) -> Value {
    let trimmed = text.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    if unfenced.starts_with(['{', '['])
        && let Ok(value) = serde_json::from_str(unfenced)
    {
        return value;
    }
    Value::String(text.to_owned())
}

/// Picks the cables `exits` (one port's, in order) that take a value;
/// `context` (what conditions read) is built only when some cable has one.
pub fn choose(port: &str, exits: &[Exit<'_>], context: impl FnOnce() -> Value) -> Choice {
    if exits.iter().all(|exit| exit.condition.is_none()) {
        return Choice {
            taken: (0..exits.len()).collect(),
            route: None,
        };
    }
    let context = &context();
    let mut notes = Vec::new();
    for (position, exit) in exits.iter().enumerate() {
        let number = position + 1;
        let Some(condition_text) = exit.condition else {
            return taken(
                port,
                exit,
                position,
                format!("cable {number} has no condition (the catch-all)"),
            );
        };
        let text = graph::condition::quoted(condition_text);
        match Condition::parse(condition_text).map_err(|error| error.to_string()) {
            Ok(condition) => match condition.holds(context) {
                Ok(true) => {
                    return taken(
                        port,
                        exit,
                        position,
                        format!("condition {number} held: {text}"),
                    );
                }
                Ok(false) => notes.push(format!("{number}: {text} did not hold")),
                Err(error) => notes.push(format!("{number}: {error}")),
            },
            Err(error) => notes.push(format!("{number}: {text} does not read: {error}")),
        }
    }
    Choice {
        taken: Vec::new(),
        route: Some(Route {
            port: port.to_owned(),
            cable_id: None,
            reason: format!(
                "no condition held and no cable is without one, so the branch ended ({})",
                notes.join("; ")
            ),
        }),
    }
}

fn taken(port: &str, exit: &Exit<'_>, position: usize, reason: String) -> Choice {
    Choice {
        taken: vec![position],
        route: Some(Route {
            port: port.to_owned(),
            cable_id: Some(exit.cable_id.to_owned()),
            reason,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wire::{ContextBundle, ResponseRecord};

    fn exits<'a>(conditions: &'a [Option<&'a str>], ids: &'a [&'a str]) -> Vec<Exit<'a>> {
        conditions
            .iter()
            .zip(ids)
            .map(|(condition, cable_id)| Exit {
                cable_id,
                condition: *condition,
            })
            .collect()
    }

    const IDS: [&str; 3] = ["c1", "c2", "c3"];

    #[test]
    fn a_port_without_conditions_fans_out_to_every_cable() {
        let choice = choose("data_out", &exits(&[None, None], &IDS), || {
            unreachable!("no condition to read it")
        });
        assert_eq!(choice.taken, [0, 1]);
        assert!(choice.route.is_none());
    }

    #[test]
    fn the_first_condition_that_holds_wins_and_the_catch_all_takes_the_rest() {
        let conditions = [
            Some("get('$.output.intent') == 'sales'"),
            Some("get('$.output.intent') != 'nothing'"),
            None,
        ];
        let sales = json!({"output": {"intent": "sales"}});
        let choice = choose("data_out", &exits(&conditions, &IDS), || sales.clone());
        assert_eq!(choice.taken, [0]);
        // The second holds too, but the first came first.
        let route = choice.route.unwrap();
        assert_eq!(route.cable_id.as_deref(), Some("c1"));
        assert!(
            route.reason.contains("condition 1 held"),
            "{}",
            route.reason
        );

        let other = json!({"output": {"intent": "nothing"}});
        let choice = choose("data_out", &exits(&conditions, &IDS), || other.clone());
        assert_eq!(choice.taken, [2]);
        assert!(choice.route.unwrap().reason.contains("catch-all"));
    }

    #[test]
    fn when_nothing_holds_and_there_is_no_catch_all_the_branch_ends_and_says_why() {
        let conditions = [
            Some("get('$.output.intent') == 'sales'"),
            Some("get('$.output.nested') == 1"),
        ];
        let context = json!({"output": {"intent": "support", "nested": {"a": 1}}});
        let choice = choose("data_out", &exits(&conditions, &IDS), || context.clone());
        assert!(choice.taken.is_empty());
        let route = choice.route.unwrap();
        assert_eq!(route.cable_id, None);
        assert!(
            route
                .reason
                .contains("1: get('$.output.intent') == 'sales' did not hold")
        );
        assert!(route.reason.contains("an object"), "{}", route.reason);
    }

    #[test]
    fn the_context_reads_json_replies_the_last_response_and_the_run_state() {
        let mut record = ActivationRecord::new("m2", 1, 0);
        for (index, text) in ["draft", "```json\n{\"intent\": \"billing\"}\n```"]
            .iter()
            .enumerate()
        {
            record.responses.push(ResponseRecord {
                index: u32::try_from(index).unwrap(),
                text: (*text).to_owned(),
                ..ResponseRecord::default()
            });
        }
        let merged = ContextBundle {
            content: json!({"merged_content": "…", "response_count": 2, "has_re_prompts": true}),
            content_type: content_type::MERGED.to_owned(),
            ..ContextBundle::text("m2", "")
        };
        let mut state = RunState::new();
        state.insert("Draft.status".to_owned(), "completed".to_owned());
        let context = context(&PortValue::Bundle(merged), &record, "Hello", &state);
        let holds = |text: &str| Condition::parse(text).unwrap().holds(&context).unwrap();
        assert!(holds("get('$.output.intent') == 'billing'"));
        assert!(holds("get('$.merged.response_count') == 2"));
        assert!(holds("get('$.input') == 'Hello'"));
        assert!(holds("get('$.state[\"Draft.status\"]') == 'completed'"));

        // Plain text stays text.
        let text = PortValue::Bundle(ContextBundle::text("m1", "not { json"));
        let context = super::context(&text, &record, "", &RunState::new());
        assert_eq!(context["output"], json!("not { json"));
    }
}
