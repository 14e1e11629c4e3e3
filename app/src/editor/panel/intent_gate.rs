//! The intent gate of an agent task or a coding module (PRODUCT §3.8):
//! on or off, the intents it allows (each that leaves the module is a port,
//! so ticking one adds a port and unticking it leaves its cables dangling),
//! where the intent is in the reply, the handoff fields, and what a reply
//! it cannot read does. Its problems are the shared `validate()`'s.

use graph::ModuleConfig;
use graph::intent::{Intent, IntentGate};
use leptos::prelude::*;

use super::Selected;
use super::fields::{CheckField, FieldProblems, SelectField, TextArea, TextField};

/// The gate of `config`, to read a field of it.
fn gate_of(config: &ModuleConfig) -> Option<IntentGate> {
    config.intent_gate().cloned()
}

#[component]
pub fn IntentGateSection(
    selected: Selected,
    /// Whose reply it reads, in the hint.
    who: &'static str,
) -> impl IntoView {
    let on = selected.read(|config| config.intent_gate().is_some());
    let toggle = selected.act("Toggle intent gate", |config, checked: bool| {
        if let Some(slot) = config.intent_gate_slot() {
            *slot = checked.then(IntentGate::default);
        }
        // A new gate allows repeat, which needs attempts to repeat into.
        if checked
            && let Some(retry) = config.retry_mut()
            && retry.max_attempts == 1
        {
            retry.max_attempts = 3;
        }
    });
    // An edit of the gate, when there is one.
    let edit = move |label: &'static str,
                     field: Option<&'static str>,
                     apply: fn(&mut IntentGate, String)| {
        let change = move |config: &mut ModuleConfig, value: String| {
            if let Some(Some(gate)) = config.intent_gate_slot() {
                apply(gate, value);
            }
        };
        match field {
            Some(field) => selected.update(label, field, change),
            None => selected.act(label, change),
        }
    };
    let intent_box = move |intent: Intent| {
        let name = intent.as_str();
        let allowed =
            selected.read(move |config| gate_of(config).is_some_and(|gate| gate.allows(intent)));
        let change = selected.act("Change allowed intents", move |config, checked: bool| {
            if let Some(Some(gate)) = config.intent_gate_slot() {
                gate.allowed_intents.retain(|other| *other != intent);
                if checked {
                    gate.allowed_intents.push(intent);
                }
            }
        });
        let port = if intent.port_id().is_some() {
            "a port"
        } else {
            "built in"
        };
        view! {
            <label class="field field-check intent-choice" title=format!("{}; {port}", intent.meaning())>
                <input
                    type="checkbox"
                    aria-label=format!("Allow intent {name}")
                    prop:checked=move || allowed.get()
                    disabled=move || selected.disabled().get()
                    on:change=move |event| change.run(event_target_checked(&event))
                />
                <span><strong>{name}</strong>" — "{intent.meaning()}</span>
            </label>
        }
    };
    let unreadable = selected.read(|config| {
        gate_of(config).map_or_else(String::new, |gate| {
            match (gate.fail_fast, gate.fallback_intent) {
                (false, Some(fallback)) => fallback.as_str().to_owned(),
                _ => "fail".to_owned(),
            }
        })
    });
    let unreadable_options = selected.read(|config| {
        let mut options = vec![(
            "fail".to_owned(),
            "Fail the module (its Error port, else the run)".to_owned(),
        )];
        if let Some(gate) = gate_of(config) {
            options.extend(
                gate.intents()
                    .into_iter()
                    .map(|intent| (intent.as_str().to_owned(), format!("Take “{intent}”"))),
            );
        }
        options
    });
    view! {
        <fieldset class="intent-gate" aria-label="Intent gate">
            <legend>"Intent gate"</legend>
            <CheckField
                label="Decide where to go next (intent gate)"
                hint="The last turn answers in JSON with an intent; each intent that leaves the module is a port of its own"
                checked=on
                on_change=toggle
                disabled=selected.disabled()
            />
            <Show when=move || on.get()>
                <p class="hint">{format!("{who} answers in JSON with one of the intents ticked here (the provider is held to them where it can be). next, jump, handoff, escalate and closing each get a port carrying the intent, its reason and the handoff fields; repeat runs this module again; abort fails the run with the reply's reason.")}</p>
                <div class="intent-choices" role="group" aria-label="Allowed intents">
                    {Intent::ALL.into_iter().map(intent_box).collect_view()}
                </div>
                <TextField
                    label="Intent field"
                    placeholder="intent"
                    value=selected.read(|config| gate_of(config).map(|gate| gate.intent_field).unwrap_or_default())
                    on_input=edit("Change intent field", Some("intent_field"), |gate, value| gate.intent_field = value)
                    disabled=selected.disabled()
                />
                <TextArea
                    label="Handoff fields (one per line; “name: a | b | c” holds it to those values)"
                    rows=3
                    placeholder="team: billing | technical | sales\nsummary"
                    value=selected.read(|config| gate_of(config).map(|gate| gate.handoff_fields.join("\n")).unwrap_or_default())
                    on_input=edit("Change handoff fields", Some("handoff_fields"), |gate, value| {
                        // Kept as typed, blank lines too, so the box does
                        // not change under the cursor; blank lines hand
                        // nothing off.
                        gate.handoff_fields = if value.is_empty() {
                            Vec::new()
                        } else {
                            value.split('\n').map(str::to_owned).collect()
                        };
                    })
                    disabled=selected.disabled()
                />
                <SelectField
                    label="When the reply's intent cannot be read"
                    value=unreadable
                    options=unreadable_options
                    on_change=edit("Change unreadable intent", None, |gate, value| {
                        gate.fallback_intent = Intent::parse(&value);
                        gate.fail_fast = gate.fallback_intent.is_none();
                    })
                    disabled=selected.disabled()
                />
            </Show>
            <FieldProblems selected codes=&[
                graph::Code::IntentGateInvalid,
                graph::Code::IntentUnwired,
                graph::Code::RepeatWithoutAttempts,
            ]/>
        </fieldset>
    }
}
