//! Attempts and timeout of the selected module (PRODUCT §3.9), the same in
//! every kind that has them: how many attempts, the wait before a retry,
//! the retry instruction with its variables, and the timeout, whose port
//! appears when it is set.

use graph::attempts::{BACKOFF_LIMIT_SECONDS, MAX_ATTEMPTS_LIMIT, TIMEOUT_LIMIT_SECONDS};
use graph::{ModuleConfig, ModuleKind};
use leptos::prelude::*;

use super::Selected;
use super::fields::{NumberField, TextArea};

fn whole(value: Option<f64>) -> Option<u32> {
    value.map(|value| value.round().clamp(0.0, f64::from(u32::MAX)) as u32)
}

/// The section, for kinds that retry or time out; nothing for the others.
pub fn attempts_section(selected: Selected) -> Option<impl IntoView> {
    let (retries, times_out) = selected.module.with_untracked(|module| {
        let config = module.as_ref().map(|module| &module.config);
        (
            config.and_then(ModuleConfig::retry).is_some(),
            config
                .and_then(ModuleConfig::effective_timeout_seconds)
                .is_some(),
        )
    });
    if !retries && !times_out {
        return None;
    }
    let attempts = selected.read(ModuleConfig::max_attempts);
    let has_retry_instruction = selected.read(|config| config.retry_instruction().is_some());
    let variables = selected.read(|config| {
        config
            .kind()
            .map(ModuleKind::retry_variables)
            .unwrap_or_default()
            .iter()
            .map(|name| format!("{{{{ {name} }}}}"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let retry_fields = move || {
        (attempts.get() > 1).then(|| {
            view! {
                <NumberField
                    label="Wait before a retry (seconds, doubling)"
                    placeholder="0"
                    min=0.0
                    max=f64::from(BACKOFF_LIMIT_SECONDS)
                    step=1.0
                    value=selected.read(|config| config.retry().map(|retry| f64::from(retry.backoff_seconds)))
                    on_input=selected.update("Change wait between attempts", "backoff_seconds", |config, value: Option<f64>| {
                        if let Some(retry) = config.retry_mut() {
                            retry.backoff_seconds = whole(value).unwrap_or(0);
                        }
                    })
                    disabled=selected.disabled()
                />
                {move || has_retry_instruction.get().then(|| view! {
                    <TextArea
                        label="Retry instruction"
                        rows=3
                        placeholder="Empty: the instruction again, after a note saying why"
                        value=selected.read(|config| config.retry_instruction().unwrap_or_default().to_owned())
                        on_input=selected.update("Edit retry instruction", "retry_instruction", |config, text: String| {
                            if let Some(instruction) = config.retry_instruction_mut() {
                                *instruction = text;
                            }
                        })
                        disabled=selected.disabled()
                    />
                    <p class="hint retry-variables">"Sent instead of the instruction from attempt 2 on. Only it may use "{variables}"."</p>
                })}
            }
        })
    };
    // What the timeout is, in words, and where it ends (a poll always has
    // its port).
    let timeout_hint = selected.read(|config| {
        let Some(seconds) = config.effective_timeout_seconds() else {
            return String::new();
        };
        let has_port = graph::ports::ports_of(config)
            .output(graph::ports::TIMEOUT_OUT)
            .is_some();
        let own = if config.timeout_seconds().is_some() {
            ""
        } else {
            " (the default)"
        };
        let ending = if has_port {
            "it ends on its own port, “Timed out”"
        } else {
            "it is an error; set a timeout of its own to give it a “Timed out” port"
        };
        format!(
            "{}{own}. A timed-out attempt is cancelled, and {ending}.",
            graph::attempts::duration_words(seconds)
        )
    });
    let placeholder = selected
        .module
        .with_untracked(|module| {
            module
                .as_ref()
                .and_then(|module| module.config.kind_config())
                .map(|config| config.default_timeout_seconds())
        })
        .map_or(default_timeout(), |seconds| {
            if seconds == graph::kinds::poll::POLL_TIMEOUT_SECONDS {
                "default: 72 h"
            } else {
                default_timeout()
            }
        });
    let timeout = times_out.then(|| {
        view! {
            <NumberField
                label="Timeout (seconds)"
                placeholder=placeholder
                min=1.0
                max=f64::from(TIMEOUT_LIMIT_SECONDS)
                step=1.0
                value=selected.read(|config| config.timeout_seconds().map(f64::from))
                on_input=selected.update("Change timeout", "timeout_seconds", |config, value: Option<f64>| {
                    if let Some(slot) = config.timeout_slot() {
                        *slot = whole(value).map(|seconds| seconds.max(1));
                    }
                })
                disabled=selected.disabled()
            />
            <p class="hint timeout-hint">{timeout_hint}</p>
        }
    });
    Some(view! {
        <fieldset class="attempts">
            <legend>"Attempts and timeout"</legend>
            {retries.then(|| view! {
                <NumberField
                    label="Attempts"
                    min=1.0
                    max=f64::from(MAX_ATTEMPTS_LIMIT)
                    step=1.0
                    value=selected.read(|config| config.retry().map(|retry| f64::from(retry.max_attempts)))
                    on_input=selected.update("Change attempts", "max_attempts", |config, value: Option<f64>| {
                        if let Some(retry) = config.retry_mut() {
                            retry.max_attempts = whole(value).unwrap_or(1).max(1);
                        }
                    })
                    disabled=selected.disabled()
                />
                <p class="hint">{move || if attempts.get() > 1 {
                    "A failed attempt (an error, a failed check, a timeout, a reply that chose repeat) runs again; a loop coming back counts too. When every attempt is used, it gives up on “Gave up”."
                } else {
                    "1: no retries. A failure goes where it is wired."
                }}</p>
                {retry_fields}
            })}
            {timeout}
        </fieldset>
    })
}

/// The timeout field's placeholder (a test keeps it true).
fn default_timeout() -> &'static str {
    "default: 30 min"
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::attempts::{DEFAULT_TIMEOUT_SECONDS, duration_words};

    #[test]
    fn the_placeholder_says_the_default() {
        assert!(default_timeout().contains(&duration_words(DEFAULT_TIMEOUT_SECONDS)));
        assert_eq!(
            duration_words(graph::kinds::poll::POLL_TIMEOUT_SECONDS),
            "72 h"
        );
    }
}
