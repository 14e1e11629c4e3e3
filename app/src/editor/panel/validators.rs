//! The validators and failure patterns of an agent task or a coding module
//! (PRODUCT §3.11): checks run when it has done its work, each naming the
//! failure pattern whose prompt follows when it fails, and how many fix
//! turns it gets. Their problems are the shared `validate()`'s.

use graph::ModuleConfig;
use graph::validators::{FailurePattern, Validation, Validator};
use leptos::prelude::*;

use super::Selected;
use super::fields::{FieldProblems, NumberField, SelectField, TextArea, TextField};

fn validation_of(config: &ModuleConfig) -> Validation {
    config.validation().cloned().unwrap_or_default()
}

/// `name: rule` per line, as the params of a validator are edited.
fn params_text(validator: &Validator) -> String {
    validator
        .extract_params
        .iter()
        .map(|(name, rule)| format!("{name}: {rule}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn parse_params(text: &str) -> std::collections::BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(name, rule)| (name.trim().to_owned(), rule.trim().to_owned()))
        .filter(|(name, _)| !name.is_empty())
        .collect()
}

#[component]
pub fn ValidatorsSection(selected: Selected) -> impl IntoView {
    let validation = selected.read(validation_of);
    let add_validator = selected.act("Add validator", |config, (): ()| {
        if let Some(validation) = config.validation_mut() {
            let number = validation.validators.len() + 1;
            // A new validator comes with a pattern to name, so it is whole.
            if validation.failure_patterns.is_empty() {
                validation.failure_patterns.push(FailurePattern {
                    name: "failed".to_owned(),
                    description: "The check failed".to_owned(),
                    prompt: "The check failed with:\n\n{{ output }}\n\nFix it.".to_owned(),
                    params: vec!["output".to_owned()],
                    ..FailurePattern::default()
                });
            }
            let pattern = validation.failure_patterns[0].name.clone();
            validation.validators.push(Validator {
                name: format!("check-{number}"),
                command: String::new(),
                success_when: "exit_code:0".to_owned(),
                failure_pattern: pattern,
                extract_params: [("output".to_owned(), "output".to_owned())].into(),
                ..Validator::default()
            });
        }
    });
    view! {
        <fieldset class="validators">
            <legend>"Validators"</legend>
            <p class="hint">"Checks run when the work is done. All pass: it completes. One fails: its failure pattern's prompt goes to the same session as a fix turn, and the checks run again. Parameter rules: output, stdout, stderr, first_line, last_line, line_count, exit_code."</p>
            <For each=move || 0..validation.get().validators.len() key=|index| *index let:index>
                <ValidatorCard selected validation index/>
            </For>
            <button type="button" class="add" disabled=move || selected.disabled().get() on:click=move |_| add_validator.run(())>"+ Add validator"</button>
            {move || (!validation.get().validators.is_empty()).then(|| view! { <FailurePatterns selected validation/> })}
            <FieldProblems selected codes=&[graph::Code::ValidatorInvalid]/>
        </fieldset>
    }
}

/// One validator: its command, when it passes, and the prompt it sends
/// when it does not.
#[component]
fn ValidatorCard(
    selected: Selected,
    validation: Signal<Validation>,
    index: usize,
) -> impl IntoView {
    // Typing into one of its fields is one undo step.
    let edit =
        move |label: &'static str, field: &'static str, apply: fn(&mut Validator, String)| {
            selected.update(label, field, move |config, value: String| {
                if let Some(validator) = config
                    .validation_mut()
                    .and_then(|validation| validation.validators.get_mut(index))
                {
                    apply(validator, value);
                }
            })
        };
    let remove = selected.act("Remove validator", |config, index: usize| {
        if let Some(validation) = config.validation_mut()
            && index < validation.validators.len()
        {
            validation.validators.remove(index);
        }
    });
    let pattern_options = Signal::derive(move || {
        validation
            .get()
            .failure_patterns
            .iter()
            .map(|pattern| (pattern.name.clone(), pattern.name.clone()))
            .collect::<Vec<_>>()
    });
    let read = move |get: fn(&Validator) -> String| {
        Signal::derive(move || {
            validation
                .get()
                .validators
                .get(index)
                .map(get)
                .unwrap_or_default()
        })
    };
    view! {
        <div class="validator-card" role="group" aria-label=format!("Validator {}", index + 1)>
            <div class="card-header">
                <strong>{format!("Validator {}", index + 1)}</strong>
                <button type="button" class="close" aria-label=format!("Remove validator {}", index + 1) disabled=move || selected.disabled().get() on:click=move |_| remove.run(index)>"✕"</button>
            </div>
            <TextField label="Name" value=read(|validator| validator.name.clone()) on_input=edit("Rename validator", "validator_name", |validator, value| validator.name = value) disabled=selected.disabled()/>
            <TextArea label="Command" rows=2 placeholder="cargo test --quiet" value=read(|validator| validator.command.clone()) on_input=edit("Edit validator command", "validator_command", |validator, value| validator.command = value) disabled=selected.disabled()/>
            <TextField label="Passes when" placeholder="exit_code:0 or empty" value=read(|validator| validator.success_when.clone()) on_input=edit("Edit validator rule", "validator_rule", |validator, value| validator.success_when = value) disabled=selected.disabled()/>
            <SelectField label="On failure, prompt with" value=read(|validator| validator.failure_pattern.clone()) options=pattern_options on_change=edit("Choose failure pattern", "validator_pattern", |validator, value| validator.failure_pattern = value) disabled=selected.disabled()/>
            <TextArea label="Parameters (name: rule)" rows=2 placeholder="failures: output" value=read(params_text) on_input=edit("Edit validator parameters", "validator_params", |validator, value| validator.extract_params = parse_params(&value)) disabled=selected.disabled()/>
        </div>
    }
}

/// The failure patterns the validators name, and how many fix turns.
#[component]
fn FailurePatterns(selected: Selected, validation: Signal<Validation>) -> impl IntoView {
    let add = selected.act("Add failure pattern", |config, (): ()| {
        if let Some(validation) = config.validation_mut() {
            let number = validation.failure_patterns.len() + 1;
            validation.failure_patterns.push(FailurePattern {
                name: format!("pattern-{number}"),
                prompt: "Fix it.".to_owned(),
                ..FailurePattern::default()
            });
        }
    });
    view! {
        <h4>"Failure patterns"</h4>
        <For each=move || 0..validation.get().failure_patterns.len() key=|index| *index let:index>
            <PatternCard selected validation index/>
        </For>
        <button type="button" class="add" disabled=move || selected.disabled().get() on:click=move |_| add.run(())>"+ Add failure pattern"</button>
        <NumberField
            label="Fix turns before giving up"
            min=1.0
            max=f64::from(graph::validators::FIX_LIMIT)
            step=1.0
            value=Signal::derive(move || Some(f64::from(validation.get().on_failure.max_attempts)))
            on_input=selected.update("Change fix turns", "fix_turns", |config, value: Option<f64>| {
                if let Some(validation) = config.validation_mut() {
                    validation.on_failure.max_attempts = value.map_or(3, |value| value.round().clamp(1.0, f64::from(graph::validators::FIX_LIMIT)) as u32);
                }
            })
            disabled=selected.disabled()
        />
    }
}

/// One failure pattern: its name, the prompt it sends and its parameters.
#[component]
fn PatternCard(selected: Selected, validation: Signal<Validation>, index: usize) -> impl IntoView {
    let edit =
        move |label: &'static str, field: &'static str, apply: fn(&mut FailurePattern, String)| {
            selected.update(label, field, move |config, value: String| {
                if let Some(pattern) = config
                    .validation_mut()
                    .and_then(|validation| validation.failure_patterns.get_mut(index))
                {
                    apply(pattern, value);
                }
            })
        };
    let remove = selected.act("Remove failure pattern", |config, index: usize| {
        if let Some(validation) = config.validation_mut()
            && index < validation.failure_patterns.len()
        {
            validation.failure_patterns.remove(index);
        }
    });
    let read = move |get: fn(&FailurePattern) -> String| {
        Signal::derive(move || {
            validation
                .get()
                .failure_patterns
                .get(index)
                .map(get)
                .unwrap_or_default()
        })
    };
    view! {
        <div class="validator-card" role="group" aria-label=format!("Failure pattern {}", index + 1)>
            <div class="card-header">
                <strong>{format!("Failure pattern {}", index + 1)}</strong>
                <button type="button" class="close" aria-label=format!("Remove failure pattern {}", index + 1) disabled=move || selected.disabled().get() on:click=move |_| remove.run(index)>"✕"</button>
            </div>
            <TextField label="Pattern name" value=read(|pattern| pattern.name.clone()) on_input=edit("Rename failure pattern", "pattern_name", |pattern, value| pattern.name = value) disabled=selected.disabled()/>
            <TextArea label="Follow-up prompt" rows=3 value=read(|pattern| pattern.prompt.clone()) on_input=edit("Edit failure prompt", "pattern_prompt", |pattern, value| pattern.prompt = value) disabled=selected.disabled()/>
            <TextField label="Its parameters" placeholder="failures, files" value=read(|pattern| pattern.params.join(", ")) on_input=edit("Edit failure parameters", "pattern_params", |pattern, value| {
                pattern.params = value.split(',').map(|name| name.trim().to_owned()).filter(|name| !name.is_empty()).collect();
            }) disabled=selected.disabled()/>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_edited_one_per_line() {
        let parsed = parse_params("failures: output\n count : line_count \nnot a param\n: x");
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed["count"], "line_count");
        let validator = Validator {
            extract_params: parsed,
            ..Validator::default()
        };
        assert_eq!(
            params_text(&validator),
            "count: line_count\nfailures: output"
        );
    }
}
