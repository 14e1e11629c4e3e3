//! Structured intents (Climpt's structured gate, PRODUCT §3.8): a module
//! whose last turn answers in JSON with an intent from a fixed set, the
//! place of the intent in that JSON, the fields handed to the next module,
//! and what an intent the gate does not know does. The browser and the
//! server ask the same gate for its ports, its problems, the schema a
//! provider is held to and the words the model reads.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Extra;
use crate::json_schema::Schema;
use crate::ports::{Direction, Port, PortAccent, PortType};

/// The ports of the intents that leave a module (see [`Intent::port_id`]).
pub const NEXT_OUT: &str = "next_out";
pub const JUMP_OUT: &str = "jump_out";
pub const HANDOFF_OUT: &str = "handoff_out";
pub const ESCALATE_OUT: &str = "escalate_out";
pub const CLOSING_OUT: &str = "closing_out";

/// Climpt's seven intents. Which a module allows is the person's choice;
/// no other value exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Intent {
    Next,
    Repeat,
    Jump,
    Closing,
    Abort,
    Escalate,
    Handoff,
}

impl Intent {
    /// In the order the panel lists them and the ports appear.
    pub const ALL: [Intent; 7] = [
        Intent::Next,
        Intent::Jump,
        Intent::Handoff,
        Intent::Escalate,
        Intent::Closing,
        Intent::Repeat,
        Intent::Abort,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The intent called exactly `name`, as the API spells it.
    pub fn from_name(name: &str) -> Option<Intent> {
        Intent::ALL
            .into_iter()
            .find(|intent| intent.as_str() == name)
    }

    /// An intent as a reply may say it: its name, or one of the seed's
    /// aliases (continue and pass → next, retry, wait and fail → repeat,
    /// done and finished → closing), in any case and with spaces around.
    pub fn parse(said: &str) -> Option<Intent> {
        let said = said.trim().to_ascii_lowercase();
        let intent = match said.as_str() {
            "next" | "continue" | "pass" => Intent::Next,
            "repeat" | "retry" | "wait" | "fail" => Intent::Repeat,
            "jump" => Intent::Jump,
            "closing" | "done" | "finished" => Intent::Closing,
            "abort" => Intent::Abort,
            "escalate" => Intent::Escalate,
            "handoff" => Intent::Handoff,
            _ => return None,
        };
        Some(intent)
    }

    /// The output port of an intent that leaves the module; `repeat` and
    /// `abort` act inside the run instead.
    pub fn port_id(self) -> Option<&'static str> {
        match self {
            Intent::Next => Some(NEXT_OUT),
            Intent::Jump => Some(JUMP_OUT),
            Intent::Handoff => Some(HANDOFF_OUT),
            Intent::Escalate => Some(ESCALATE_OUT),
            Intent::Closing => Some(CLOSING_OUT),
            Intent::Repeat | Intent::Abort => None,
        }
    }

    /// The intent whose port this is.
    pub fn of_port(port_id: &str) -> Option<Intent> {
        Intent::ALL
            .into_iter()
            .find(|intent| intent.port_id() == Some(port_id))
    }

    /// What it means, to the model and to the person choosing.
    pub fn meaning(self) -> &'static str {
        match self {
            Intent::Next => "go on to the next step",
            Intent::Repeat => "do this step again",
            Intent::Jump => "go to another step",
            Intent::Closing => "the work is finished",
            Intent::Abort => "stop the whole run, it cannot succeed",
            Intent::Escalate => "a person or a verification step must look at it",
            Intent::Handoff => "hand the work over to another step",
        }
    }

    fn accent(self) -> PortAccent {
        match self {
            Intent::Next => PortAccent::Green,
            Intent::Jump => PortAccent::Violet,
            Intent::Handoff => PortAccent::Cyan,
            Intent::Escalate => PortAccent::Amber,
            Intent::Closing | Intent::Repeat | Intent::Abort => PortAccent::Muted,
        }
    }
}

impl std::fmt::Display for Intent {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The name of the schema the last turn is held to.
pub const SCHEMA_NAME: &str = "intent_gate";

/// The heading of the words added to the last turn; what comes after it is
/// the gate's, not the person's.
pub const INSTRUCTION_HEADING: &str = "## Your decision";

/// The field of the reply that says why, which `abort` fails the run with.
pub const REASON_FIELD: &str = "reason";

/// A module's structured gate (`config.intent_gate`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IntentGate {
    pub allowed_intents: Vec<Intent>,
    /// Where the intent is in the reply, in dots: `next_action.action`.
    pub intent_field: String,
    /// What is handed on with the intent: `path`, or `path: a | b | c` to
    /// hold the model to those values (a condition on a cable can then
    /// compare them exactly).
    pub handoff_fields: Vec<String>,
    /// An intent the gate cannot read fails the activation; otherwise it
    /// becomes `fallback_intent`.
    pub fail_fast: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_intent: Option<Intent>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for IntentGate {
    fn default() -> IntentGate {
        IntentGate {
            allowed_intents: vec![Intent::Next, Intent::Repeat],
            intent_field: "intent".to_owned(),
            handoff_fields: Vec::new(),
            fail_fast: true,
            fallback_intent: None,
            extra: Extra::new(),
        }
    }
}

/// A handoff field read: its path in steps and the values it may take
/// (none: any text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandoffField<'a> {
    pub path: Vec<&'a str>,
    pub choices: Vec<&'a str>,
}

impl HandoffField<'_> {
    pub fn dotted(&self) -> String {
        self.path.join(".")
    }
}

/// The most steps a field path may have: the schema and the bundle are
/// built by recursion, which a path of thousands of steps would exhaust.
pub const MAX_STEPS: usize = 16;

/// A field path in dots: steps of letters, digits, `_` and `-`.
pub fn field_path(text: &str) -> Result<Vec<&str>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the path is empty".to_owned());
    }
    let steps: Vec<&str> = text.split('.').map(str::trim).collect();
    if steps.len() > MAX_STEPS {
        return Err(format!(
            "it has {} steps, and a path has at most {MAX_STEPS}",
            steps.len()
        ));
    }
    for (index, step) in steps.iter().enumerate() {
        if step.is_empty() {
            return Err(format!("step {} of “{text}” is empty", index + 1));
        }
        if let Some(bad) = step
            .chars()
            .find(|character| !(character.is_alphanumeric() || matches!(character, '_' | '-')))
        {
            return Err(format!(
                "“{step}” has a “{bad}”; a step is letters, digits, _ and -, and steps are joined by dots"
            ));
        }
    }
    Ok(steps)
}

/// `path` or `path: a | b | c`.
pub fn handoff_field(text: &str) -> Result<HandoffField<'_>, String> {
    let (path, choices) = match text.split_once(':') {
        Some((path, choices)) => (path, Some(choices)),
        None => (text, None),
    };
    let path = field_path(path)?;
    let choices = match choices {
        None => Vec::new(),
        Some(list) => {
            let choices: Vec<&str> = list.split('|').map(str::trim).collect();
            if choices.iter().any(|choice| choice.is_empty()) {
                return Err(format!(
                    "the values after “:” are separated by “|” and none may be empty: “{}”",
                    list.trim()
                ));
            }
            choices
        }
    };
    Ok(HandoffField { path, choices })
}

/// What is wrong with a gate: where inside it (`allowed_intents`,
/// `handoff_fields[1]`, …) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateProblem {
    pub field: String,
    pub message: String,
}

impl IntentGate {
    /// The allowed intents, each once, in [`Intent::ALL`]'s order.
    pub fn intents(&self) -> Vec<Intent> {
        Intent::ALL
            .into_iter()
            .filter(|intent| self.allowed_intents.contains(intent))
            .collect()
    }

    pub fn allows(&self, intent: Intent) -> bool {
        self.allowed_intents.contains(&intent)
    }

    /// The handoff fields that read, in order.
    pub fn handoff(&self) -> Vec<HandoffField<'_>> {
        self.handoff_fields
            .iter()
            .filter(|text| !text.trim().is_empty())
            .filter_map(|text| handoff_field(text).ok())
            .collect()
    }

    /// The output ports of the allowed intents that leave the module.
    pub fn ports(&self) -> Vec<Port> {
        self.intents()
            .into_iter()
            .filter_map(|intent| {
                let id = intent.port_id()?;
                let name = intent.as_str();
                Some(Port {
                    id: id.to_owned(),
                    direction: Direction::Output,
                    port_type: PortType::Bundle,
                    label: format!("→ {name}"),
                    title: format!("Intent “{name}”"),
                    description: format!(
                        "When the reply chooses {name} ({}): the intent, its reason and the handoff fields",
                        intent.meaning()
                    ),
                    accent: intent.accent(),
                    required: false,
                    accepts_many: false,
                    // A loop through an intent ends when the model chooses
                    // another, and the run's activation limit ends it if not.
                    retry: true,
                })
            })
            .collect()
    }

    /// Everything that keeps the gate from working, each with its field.
    pub fn problems(&self) -> Vec<GateProblem> {
        let mut problems = Vec::new();
        let mut problem = |field: String, message: String| {
            problems.push(GateProblem { field, message });
        };
        if self.allowed_intents.is_empty() {
            problem(
                "allowed_intents".to_owned(),
                "allows no intent: choose at least one".to_owned(),
            );
        }
        let intent_path = match field_path(&self.intent_field) {
            Ok(path) => Some(path),
            Err(why) => {
                problem(
                    "intent_field".to_owned(),
                    format!("has an intent field that does not read: {why}"),
                );
                None
            }
        };
        if intent_path.as_deref() == Some(&[REASON_FIELD][..]) {
            problem(
                "intent_field".to_owned(),
                format!("cannot keep the intent in “{REASON_FIELD}”, which holds the reason"),
            );
        }
        let mut taken: Vec<Vec<&str>> = intent_path.into_iter().collect();
        taken.push(vec![REASON_FIELD]);
        for (index, text) in self.handoff_fields.iter().enumerate() {
            let field = format!("handoff_fields[{index}]");
            // A blank line of the panel's box hands nothing off.
            if text.trim().is_empty() {
                continue;
            }
            match handoff_field(text) {
                Err(why) => problem(
                    field,
                    format!("has a handoff field that does not read: {why}"),
                ),
                Ok(handoff) => {
                    // The bundle an intent port carries holds `intent` and
                    // `reason` next to the handed-off fields.
                    let first = handoff.path.first().copied().unwrap_or_default();
                    let overlaps = taken.iter().find(|other| {
                        let shorter = other.len().min(handoff.path.len());
                        other[..shorter] == handoff.path[..shorter]
                    });
                    if first == "intent" || first == REASON_FIELD {
                        problem(
                            field,
                            format!(
                                "hands off “{}”, but “{first}” is where the intent ports put the {first} themselves",
                                handoff.dotted()
                            ),
                        );
                    } else if let Some(other) = overlaps {
                        problem(
                            field,
                            format!(
                                "hands off “{}”, which overlaps “{}”; each field needs a place of its own",
                                handoff.dotted(),
                                other.join(".")
                            ),
                        );
                    } else {
                        taken.push(handoff.path);
                    }
                }
            }
        }
        match (self.fail_fast, self.fallback_intent) {
            (false, None) => problem(
                "fallback_intent".to_owned(),
                "does not fail fast, so it needs a fallback intent for a reply it cannot read"
                    .to_owned(),
            ),
            (_, Some(fallback)) if !self.allows(fallback) => problem(
                "fallback_intent".to_owned(),
                format!("falls back to “{fallback}”, which it does not allow"),
            ),
            _ => {}
        }
        problems
    }

    /// The JSON Schema the last turn's reply is held to (strict: every
    /// field required, nothing else allowed, as OpenAI's structured output
    /// asks).
    pub fn schema(&self) -> Value {
        let mut root = Vec::new();
        let intents = self.intents().into_iter().map(Intent::as_str);
        if let Ok(path) = field_path(&self.intent_field) {
            place_leaf(&mut root, &path, Schema::one_of(intents));
        }
        place_leaf(&mut root, &[REASON_FIELD], Schema::string());
        for handoff in self.handoff() {
            let leaf = if handoff.choices.is_empty() {
                Schema::string()
            } else {
                Schema::one_of(handoff.choices.iter().copied())
            };
            place_leaf(&mut root, &handoff.path, leaf);
        }
        Node::Branch(root).schema().to_value()
    }

    /// The words added to the last turn: the shape of the reply and what
    /// each intent means.
    pub fn instruction(&self) -> String {
        let mut example = Map::new();
        let intents: Vec<&str> = self.intents().into_iter().map(Intent::as_str).collect();
        if let Ok(path) = field_path(&self.intent_field) {
            place(
                &mut example,
                &path,
                Value::String(format!("one of: {}", intents.join(", "))),
            );
        }
        place(
            &mut example,
            &[REASON_FIELD],
            Value::String("why, in one sentence".to_owned()),
        );
        for handoff in self.handoff() {
            let text = if handoff.choices.is_empty() {
                format!("the {} to hand on", handoff.dotted())
            } else {
                format!("one of: {}", handoff.choices.join(", "))
            };
            place(&mut example, &handoff.path, Value::String(text));
        }
        let example = serde_json::to_string_pretty(&Value::Object(example)).unwrap_or_default();
        let meanings: Vec<String> = self
            .intents()
            .into_iter()
            .map(|intent| format!("- {intent}: {}", intent.meaning()))
            .collect();
        format!(
            "{INSTRUCTION_HEADING}\n\nReply with JSON only, in this shape:\n{example}\n\nThe {} is one of:\n{}",
            self.intent_field.trim(),
            meanings.join("\n")
        )
    }
}

/// Puts a schema leaf at `path`, making the objects on the way.
fn place(root: &mut Map<String, Value>, path: &[&str], leaf: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut here = root;
    for step in parents {
        let entry = here
            .entry((*step).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(inner) = entry else {
            return;
        };
        here = inner;
    }
    here.insert((*last).to_owned(), leaf);
}

/// A reply's schema as it is built: each field a leaf, or an object of
/// more fields, in the order they were placed.
enum Node {
    Leaf(Schema),
    Branch(Vec<(String, Node)>),
}

impl Node {
    /// Branches as strict object schemas.
    fn schema(self) -> Schema {
        match self {
            Node::Leaf(schema) => schema,
            Node::Branch(fields) => {
                Schema::object(fields.into_iter().map(|(name, node)| (name, node.schema())))
            }
        }
    }
}

/// Puts a schema leaf at `path`, making the objects on the way, as
/// [`place`] does with values.
fn place_leaf(root: &mut Vec<(String, Node)>, path: &[&str], leaf: Schema) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut here = root;
    for step in parents {
        let at = match here.iter().position(|(name, _)| name == step) {
            Some(at) => at,
            None => {
                here.push(((*step).to_owned(), Node::Branch(Vec::new())));
                here.len() - 1
            }
        };
        let Some((_, Node::Branch(inner))) = here.get_mut(at) else {
            return;
        };
        here = inner;
    }
    match here.iter_mut().find(|(name, _)| name == last) {
        Some((_, node)) => *node = Node::Leaf(leaf),
        None => here.push(((*last).to_owned(), Node::Leaf(leaf))),
    }
}

/// The value at a dotted path of a reply; a missing step is null.
pub fn value_at<'a>(reply: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(reply, |value, step| value.get(*step))
}

/// The handed-off fields of a reply, in their nesting, with `intent` and
/// `reason` beside them: what an intent port carries.
pub fn handoff_bundle(gate: &IntentGate, reply: &Value, intent: Intent, reason: &str) -> Value {
    let mut content = Map::new();
    content.insert(
        "intent".to_owned(),
        Value::String(intent.as_str().to_owned()),
    );
    content.insert(REASON_FIELD.to_owned(), Value::String(reason.to_owned()));
    for handoff in gate.handoff() {
        let value = value_at(reply, &handoff.path)
            .cloned()
            .unwrap_or(Value::Null);
        place(&mut content, &handoff.path, value);
    }
    Value::Object(content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gate(intents: &[Intent], field: &str, handoff: &[&str]) -> IntentGate {
        IntentGate {
            allowed_intents: intents.to_vec(),
            intent_field: field.to_owned(),
            handoff_fields: handoff.iter().map(|text| (*text).to_owned()).collect(),
            ..IntentGate::default()
        }
    }

    #[test]
    fn names_and_the_seeds_aliases_are_read() {
        for (said, intent) in [
            ("next", Intent::Next),
            ("continue", Intent::Next),
            ("pass", Intent::Next),
            ("retry", Intent::Repeat),
            ("wait", Intent::Repeat),
            ("fail", Intent::Repeat),
            ("done", Intent::Closing),
            ("finished", Intent::Closing),
            (" Handoff ", Intent::Handoff),
            ("ESCALATE", Intent::Escalate),
            ("jump", Intent::Jump),
            ("abort", Intent::Abort),
        ] {
            assert_eq!(Intent::parse(said), Some(intent), "{said}");
        }
        assert_eq!(Intent::parse("proceed"), None);
        assert_eq!(Intent::parse(""), None);
    }

    #[test]
    fn only_intents_that_leave_have_ports_in_a_fixed_order() {
        let gate = gate(
            &[Intent::Abort, Intent::Handoff, Intent::Repeat, Intent::Next],
            "intent",
            &[],
        );
        let ids: Vec<String> = gate.ports().into_iter().map(|port| port.id).collect();
        assert_eq!(ids, ["next_out", "handoff_out"]);
        assert_eq!(Intent::of_port("handoff_out"), Some(Intent::Handoff));
        assert_eq!(Intent::of_port("data_out"), None);
    }

    #[test]
    fn the_schema_nests_fields_and_holds_the_intent_to_the_allowed_ones() {
        let gate = gate(
            &[Intent::Repeat, Intent::Next],
            "next_action.action",
            &["analysis.summary", "category: billing | technical"],
        );
        let schema = gate.schema();
        assert_eq!(
            schema.pointer("/properties/next_action/properties/action/enum"),
            Some(&json!(["next", "repeat"]))
        );
        assert_eq!(
            schema.pointer("/properties/category/enum"),
            Some(&json!(["billing", "technical"]))
        );
        assert_eq!(
            schema.pointer("/properties/analysis/properties/summary/type"),
            Some(&json!("string"))
        );
        assert_eq!(
            schema.pointer("/required"),
            Some(&json!(["next_action", "reason", "analysis", "category"]))
        );
        assert_eq!(
            schema.pointer("/properties/next_action/additionalProperties"),
            Some(&json!(false))
        );
        let words = gate.instruction();
        assert!(words.starts_with(INSTRUCTION_HEADING), "{words}");
        assert!(
            words.contains("\"action\": \"one of: next, repeat\""),
            "{words}"
        );
        assert!(words.contains("- repeat: do this step again"), "{words}");
    }

    #[test]
    fn problems_name_their_field() {
        let fields = |gate: &IntentGate| -> Vec<String> {
            gate.problems()
                .into_iter()
                .map(|problem| problem.field)
                .collect()
        };
        assert!(IntentGate::default().problems().is_empty());
        assert_eq!(fields(&gate(&[], "intent", &[])), ["allowed_intents"]);
        assert_eq!(
            fields(&gate(&[Intent::Next], "a..b", &[])),
            ["intent_field"]
        );
        assert_eq!(
            fields(&gate(&[Intent::Next], "reason", &[])),
            ["intent_field"]
        );
        assert_eq!(
            fields(&gate(
                &[Intent::Next],
                "decision.intent",
                &["ok", "decision", "reason", "x: a |", "bad field", ""]
            )),
            [
                "handoff_fields[1]",
                "handoff_fields[2]",
                "handoff_fields[3]",
                "handoff_fields[4]"
            ]
        );
        let mut no_fallback = gate(&[Intent::Next], "intent", &[]);
        no_fallback.fail_fast = false;
        assert_eq!(fields(&no_fallback), ["fallback_intent"]);
        no_fallback.fallback_intent = Some(Intent::Repeat);
        assert_eq!(fields(&no_fallback), ["fallback_intent"]);
        no_fallback.fallback_intent = Some(Intent::Next);
        assert!(no_fallback.problems().is_empty());
    }

    #[test]
    fn the_bundle_carries_the_handed_off_fields_where_they_were() {
        let gate = gate(&[Intent::Next], "intent", &["analysis.summary", "category"]);
        let reply = json!({"intent": "continue", "reason": "clear", "analysis": {"summary": "s", "other": 1}});
        assert_eq!(
            handoff_bundle(&gate, &reply, Intent::Next, "clear"),
            json!({"intent": "next", "reason": "clear", "analysis": {"summary": "s"}, "category": null})
        );
    }
}
