//! A graph's triggers (PRODUCT §1.5): what starts its runs while nobody
//! watches — a schedule (a cron expression in a time zone) or a webhook.
//! They live in the document's `triggers` array, edited like any field; a
//! webhook's secret never does (the server keeps its hash). Read from the
//! document's kept fields rather than a field of [`Graph`], so that the
//! browser's bundle carries this code only where a page reads triggers;
//! what a cron expression means is the server's to work out.

use serde_json::Value;

use crate::document::json_type_name;
use crate::{Graph, LoadError, LoadErrorKind};

/// The most triggers one graph has.
pub const MOST_TRIGGERS: usize = 16;
/// The longest trigger id: it is part of a webhook's address.
pub const MOST_ID_CHARACTERS: usize = 64;
const MOST_CRON_CHARACTERS: usize = 200;
const MOST_TIMEZONE_CHARACTERS: usize = 64;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    pub id: String,
    pub paused: bool,
    pub kind: TriggerKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    Schedule(Schedule),
    /// `POST /hooks/{id}` with the trigger's secret.
    Webhook,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Five fields, or six with seconds first.
    pub cron: String,
    /// An IANA time zone name, `UTC` unless the document says.
    pub timezone: String,
    pub catch_up: CatchUp,
}

/// What becomes of ticks that fell while no server was up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatchUp {
    /// One run at start stands for all of them.
    One,
    /// They are skipped.
    None,
}

impl CatchUp {
    pub fn as_str(self) -> &'static str {
        match self {
            CatchUp::One => "one",
            CatchUp::None => "none",
        }
    }

    pub fn parse(text: &str) -> Option<CatchUp> {
        match text {
            "one" => Some(CatchUp::One),
            "none" => Some(CatchUp::None),
            _ => None,
        }
    }
}

impl Trigger {
    pub fn schedule(&self) -> Option<&Schedule> {
        match &self.kind {
            TriggerKind::Schedule(schedule) => Some(schedule),
            TriggerKind::Webhook => None,
        }
    }

    pub fn is_webhook(&self) -> bool {
        self.kind == TriggerKind::Webhook
    }
}

/// Whether `id` can name a trigger: 1 to 64 letters, digits, `-` and `_`.
pub fn is_trigger_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MOST_ID_CHARACTERS
        && id
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

/// The graph's triggers, or the first thing wrong with them and where.
/// A document without `triggers` has none.
pub fn triggers(graph: &Graph) -> Result<Vec<Trigger>, LoadError> {
    let Some(value) = graph.extra.get("triggers") else {
        return Ok(Vec::new());
    };
    let list = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(list) => list,
        other => {
            return Err(shape(
                "triggers",
                format!("an array, not {}", json_type_name(other)),
            ));
        }
    };
    if list.len() > MOST_TRIGGERS {
        return Err(shape(
            "triggers",
            format!("at most {MOST_TRIGGERS} triggers, not {}", list.len()),
        ));
    }
    let mut triggers: Vec<Trigger> = Vec::with_capacity(list.len());
    for (index, value) in list.iter().enumerate() {
        let trigger = read_trigger(&format!("triggers[{index}]"), value)?;
        if triggers.iter().any(|seen| seen.id == trigger.id) {
            return Err(LoadError {
                kind: LoadErrorKind::Identity,
                path: format!("triggers[{index}].id"),
                message: format!("another trigger has the id \"{}\"", trigger.id),
            });
        }
        triggers.push(trigger);
    }
    Ok(triggers)
}

fn read_trigger(path: &str, value: &Value) -> Result<Trigger, LoadError> {
    let Value::Object(fields) = value else {
        return Err(shape(
            path,
            format!("an object, not {}", json_type_name(value)),
        ));
    };
    let id = text(path, fields, "id", MOST_ID_CHARACTERS)?
        .ok_or_else(|| shape(&format!("{path}.id"), "a trigger needs an id".to_owned()))?;
    if !is_trigger_id(&id) {
        return Err(shape(
            &format!("{path}.id"),
            "letters, digits, - and _ only (it is part of a webhook's address)".to_owned(),
        ));
    }
    let paused = match fields.get("paused") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(paused)) => *paused,
        Some(other) => {
            return Err(shape(
                &format!("{path}.paused"),
                format!("true or false, not {}", json_type_name(other)),
            ));
        }
    };
    let kind = match fields.get("kind").and_then(Value::as_str) {
        Some("schedule") => TriggerKind::Schedule(read_schedule(path, fields)?),
        Some("webhook") => TriggerKind::Webhook,
        _ => {
            return Err(shape(
                &format!("{path}.kind"),
                "a trigger's kind is \"schedule\" or \"webhook\"".to_owned(),
            ));
        }
    };
    Ok(Trigger { id, paused, kind })
}

fn read_schedule(
    path: &str,
    fields: &serde_json::Map<String, Value>,
) -> Result<Schedule, LoadError> {
    let cron = text(path, fields, "cron", MOST_CRON_CHARACTERS)?
        .filter(|cron| !cron.trim().is_empty())
        .ok_or_else(|| {
            shape(
                &format!("{path}.cron"),
                "a schedule needs a cron expression, e.g. \"0 9 * * MON-FRI\"".to_owned(),
            )
        })?;
    let timezone = text(path, fields, "timezone", MOST_TIMEZONE_CHARACTERS)?
        .filter(|timezone| !timezone.trim().is_empty())
        .unwrap_or_else(|| "UTC".to_owned());
    let catch_up = match text(path, fields, "catch_up", 8)? {
        None => CatchUp::One,
        Some(text) => CatchUp::parse(&text).ok_or_else(|| {
            shape(
                &format!("{path}.catch_up"),
                format!("\"one\" or \"none\", not \"{text}\""),
            )
        })?,
    };
    Ok(Schedule {
        cron,
        timezone,
        catch_up,
    })
}

/// A text field of at most `most` characters, `None` when absent.
fn text(
    path: &str,
    fields: &serde_json::Map<String, Value>,
    name: &str,
    most: usize,
) -> Result<Option<String>, LoadError> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.chars().count() <= most => Ok(Some(text.clone())),
        Some(Value::String(_)) => Err(shape(
            &format!("{path}.{name}"),
            format!("at most {most} characters"),
        )),
        Some(other) => Err(shape(
            &format!("{path}.{name}"),
            format!("a string, not {}", json_type_name(other)),
        )),
    }
}

fn shape(path: &str, message: String) -> LoadError {
    LoadError {
        kind: LoadErrorKind::Shape,
        path: path.to_owned(),
        message,
    }
}

/// The document with every trigger paused, as a copy starts: a fork must
/// not fire its original's schedule a second time without its editors
/// choosing to.
pub fn pause_all(graph: &mut Graph) {
    if let Some(Value::Array(list)) = graph.extra.get_mut("triggers") {
        for trigger in list.iter_mut().filter_map(Value::as_object_mut) {
            trigger.insert("paused".to_owned(), Value::Bool(true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(triggers: Value) -> Graph {
        let mut graph = Graph::default();
        graph.extra.insert("triggers".to_owned(), triggers);
        graph
    }

    #[test]
    fn a_document_without_triggers_has_none() {
        assert_eq!(triggers(&Graph::default()), Ok(Vec::new()));
    }

    #[test]
    fn schedules_and_webhooks_are_read_with_their_defaults() {
        let graph = with(json!([
            { "id": "daily", "kind": "schedule", "cron": "0 9 * * *" },
            { "id": "every-second", "kind": "schedule", "cron": "* * * * * *",
              "timezone": "Europe/Paris", "catch_up": "none", "paused": true },
            { "id": "hook_1", "kind": "webhook" }
        ]));
        let read = triggers(&graph).unwrap();
        assert_eq!(read.len(), 3);
        assert_eq!(
            read[0].schedule(),
            Some(&Schedule {
                cron: "0 9 * * *".to_owned(),
                timezone: "UTC".to_owned(),
                catch_up: CatchUp::One
            })
        );
        assert!(!read[0].paused);
        assert!(read[1].paused);
        assert_eq!(read[1].schedule().unwrap().catch_up, CatchUp::None);
        assert!(read[2].is_webhook());
    }

    #[test]
    fn every_problem_says_where_it_is() {
        let cases = [
            (json!({}), "triggers"),
            (json!([{ "kind": "webhook" }]), "triggers[0].id"),
            (
                json!([{ "id": "a/b", "kind": "webhook" }]),
                "triggers[0].id",
            ),
            (json!([{ "id": "a", "kind": "cron" }]), "triggers[0].kind"),
            (
                json!([{ "id": "a", "kind": "schedule" }]),
                "triggers[0].cron",
            ),
            (
                json!([{ "id": "a", "kind": "schedule", "cron": "* * * * *", "catch_up": "all" }]),
                "triggers[0].catch_up",
            ),
            (
                json!([{ "id": "a", "kind": "webhook", "paused": "yes" }]),
                "triggers[0].paused",
            ),
            (
                json!([{ "id": "a", "kind": "webhook" }, { "id": "a", "kind": "webhook" }]),
                "triggers[1].id",
            ),
        ];
        for (value, path) in cases {
            let error = triggers(&with(value.clone())).unwrap_err();
            assert_eq!(error.path, path, "{value}: {error}");
        }
        let many: Vec<Value> = (0..=MOST_TRIGGERS)
            .map(|index| json!({ "id": format!("t{index}"), "kind": "webhook" }))
            .collect();
        assert_eq!(
            triggers(&with(Value::Array(many))).unwrap_err().path,
            "triggers"
        );
    }

    #[test]
    fn a_copy_starts_with_its_triggers_paused() {
        let mut graph = with(json!([
            { "id": "daily", "kind": "schedule", "cron": "0 9 * * *" },
            { "id": "hook", "kind": "webhook", "paused": false }
        ]));
        pause_all(&mut graph);
        assert!(
            triggers(&graph)
                .unwrap()
                .iter()
                .all(|trigger| trigger.paused)
        );
    }
}
