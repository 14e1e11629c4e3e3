//! A structured gate at run time (PRODUCT §3.8): the intent read from a
//! module's last reply, with the seed's aliases and its fail-fast or
//! fallback rule, and what the intent does to the activation's output —
//! a bundle on its port, or, for `repeat` and `abort`, nothing sent on and
//! the scheduler told. Agent tasks and coding modules share it.

use graph::intent::{Intent, IntentGate, field_path, handoff_bundle, value_at};
use serde_json::Value;
use wire::IntentChoice;
use wire::activation::TranscriptRole;
use wire::content::meta::{ChosenIntent, IntentReply};
use wire::event::RunEvent;

use crate::activation::{ActivationContext, ActivationError, ActivationOutput, parse_json_reply};
use crate::bundle::{ContextBundle, PortValue};

/// The intent acted on, and what goes with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Decided {
    pub intent: Intent,
    pub choice: IntentChoice,
    /// What the intent's port carries: the handoff fields, `intent` and
    /// `reason`.
    pub content: Value,
}

/// The intent of `reply` as `gate` reads it: an intent it allows (or an
/// alias of one), else its fallback when it does not fail fast, else why
/// not.
pub fn decide(gate: &IntentGate, reply: &str) -> Result<Decided, String> {
    let parsed = parse_json_reply(reply);
    let path = field_path(&gate.intent_field).unwrap_or_default();
    let said = parsed
        .as_ref()
        .and_then(|value| value_at(value, &path))
        .map(|value| match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        // A model may put anything there; what is kept and quoted is short.
        .map(|said| graph::condition::quoted(&said));
    let allowed: Vec<&str> = gate.intents().into_iter().map(Intent::as_str).collect();
    let read = match (&parsed, &said) {
        (None, _) => Err("the reply is not JSON".to_owned()),
        (Some(_), None) => Err(format!("the reply has no “{}”", gate.intent_field.trim())),
        (Some(_), Some(said)) => match Intent::parse(said) {
            None => Err(format!("“{said}” is not an intent")),
            Some(intent) if !gate.allows(intent) => {
                Err(format!("“{said}” is not one of the intents it allows"))
            }
            Some(intent) => Ok(intent),
        },
    };
    let (intent, fallback) = match read {
        Ok(intent) => (intent, false),
        Err(why) => match (gate.fail_fast, gate.fallback_intent) {
            (false, Some(fallback)) => (fallback, true),
            _ => {
                return Err(format!(
                    "{why} (it allows {}), and the gate fails fast",
                    allowed.join(", ")
                ));
            }
        },
    };
    let reply_value = parsed.unwrap_or(Value::Null);
    let reason = reply_value
        .get(graph::intent::REASON_FIELD)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Ok(Decided {
        intent,
        content: handoff_bundle(gate, &reply_value, intent, &reason),
        choice: IntentChoice {
            intent,
            said: said.unwrap_or_default(),
            reason,
            fallback,
        },
    })
}

/// Reads the intent of `reply` (the module's last reply), records and
/// announces it, and shapes `output` by it: the bundle on the intent's
/// port, and for `repeat` and `abort` no port at all, since neither is a
/// result to pass on.
pub async fn apply(
    context: &ActivationContext,
    gate: &IntentGate,
    reply: &str,
    session_key: Option<&str>,
    output: &mut ActivationOutput,
) -> Result<(), ActivationError> {
    let label = context.module.display_label();
    let decided = decide(gate, reply).map_err(|why| {
        ActivationError::Failed(format!(
            "\"{label}\": its intent gate could not act on the reply: {why}"
        ))
    })?;
    if decided.choice.fallback {
        context.transcript(
            TranscriptRole::System,
            &format!(
                "The reply's intent could not be read; the gate's fallback “{}” was taken.",
                decided.intent
            ),
        );
    }
    context
        .emit(RunEvent::ModuleIntent {
            module_id: context.module.id.clone(),
            activation: context.activation,
            intent: decided.choice.intent,
            said: decided.choice.said.clone(),
            reason: decided.choice.reason.clone(),
            fallback: decided.choice.fallback,
        })
        .await;
    if let Ok(mut record) = context.record.lock() {
        record.intent = Some(decided.choice.clone());
    }
    match decided.intent.port_id() {
        Some(port) => {
            for (_, value) in &mut output.ports {
                if let PortValue::Bundle(bundle) = value {
                    bundle.add_meta(&ChosenIntent {
                        intent: decided.intent,
                    });
                }
            }
            let mut bundle = ContextBundle::json(&context.module.id, decided.content);
            bundle.source_session_key = session_key.map(str::to_owned);
            bundle.add_meta(&IntentReply {
                reply: reply.to_owned(),
            });
            output
                .ports
                .push((port.to_owned(), PortValue::Bundle(bundle)));
        }
        None => output.ports.clear(),
    }
    output.intent = Some((decided.intent, decided.choice.reason));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(intents: &[Intent]) -> IntentGate {
        IntentGate {
            allowed_intents: intents.to_vec(),
            intent_field: "next_action.action".to_owned(),
            handoff_fields: vec!["category".to_owned()],
            ..IntentGate::default()
        }
    }

    #[test]
    fn an_alias_is_read_as_its_intent_and_the_value_is_kept() {
        let decided = decide(
            &gate(&[Intent::Next, Intent::Closing]),
            "```json\n{\"next_action\": {\"action\": \"Finished\"}, \"reason\": \"all done\", \"category\": \"sales\"}\n```",
        )
        .unwrap();
        assert_eq!(decided.intent, Intent::Closing);
        assert_eq!(decided.choice.said, "Finished");
        assert_eq!(decided.choice.reason, "all done");
        assert!(!decided.choice.fallback);
        assert_eq!(decided.content["category"], "sales");
    }

    #[test]
    fn what_cannot_be_read_fails_fast_or_falls_back() {
        let strict = gate(&[Intent::Next, Intent::Repeat]);
        for (reply, why) in [
            ("not json at all", "the reply is not JSON"),
            (
                "{\"reason\": \"x\"}",
                "the reply has no “next_action.action”",
            ),
            (
                "{\"next_action\": {\"action\": \"proceed\"}}",
                "“proceed” is not an intent",
            ),
            (
                "{\"next_action\": {\"action\": \"escalate\"}}",
                "“escalate” is not one of the intents it allows",
            ),
        ] {
            let error = decide(&strict, reply).unwrap_err();
            assert!(
                error.starts_with(why) && error.contains("(it allows next, repeat)"),
                "{reply}: {error}"
            );
        }
        let lenient = IntentGate {
            fail_fast: false,
            fallback_intent: Some(Intent::Repeat),
            ..strict
        };
        let decided = decide(&lenient, "{\"next_action\": {\"action\": \"proceed\"}}").unwrap();
        assert_eq!(decided.intent, Intent::Repeat);
        assert!(decided.choice.fallback);
        assert_eq!(decided.choice.said, "proceed");
        // Whatever the reply put there is kept short.
        let long = format!(
            "{{\"next_action\": {{\"action\": \"{}\"}}}}",
            "x".repeat(5000)
        );
        let decided = decide(&lenient, &long).unwrap();
        assert_eq!(decided.choice.said.chars().count(), 81);
    }
}
