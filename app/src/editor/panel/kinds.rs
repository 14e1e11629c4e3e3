//! The fields of each module kind (PRODUCT §1.2), apart from coding.

use graph::ModuleConfig;
use graph::config::{Criterion, Persona, RePromptOwner, SessionMode};
use graph::port_moves;
use leptos::prelude::*;

use super::attachments::{AttachmentChips, AttachmentPlace};
use super::fields::{CheckField, NumberField, SelectField, TextArea, TextField};
use super::intent_gate::IntentGateSection;
use super::reprompts::RePromptSection;
use super::{AgentSettings, Instruction, Selected};

fn number(value: Option<f64>) -> u32 {
    value.map_or(0, |value| {
        value.round().clamp(0.0, f64::from(u32::MAX)) as u32
    })
}

/// Named outputs: one port each, filled from the last response.
#[component]
fn NamedOutputs(selected: Selected) -> impl IntoView {
    let names = selected.read(|config| match config {
        ModuleConfig::AgentTask(task) => task.named_outputs.clone(),
        _ => Vec::new(),
    });
    let rename = move |index: usize| {
        selected.move_ports(
            "Rename output",
            Some("named_output"),
            move |config, value: String| port_moves::rename_named_output(config, index, &value),
        )
    };
    let remove = selected.move_ports("Remove named output", None, |config, index: usize| {
        port_moves::remove_named_output(config, index)
    });
    let add = selected.act("Add named output", |config, (): ()| {
        if let ModuleConfig::AgentTask(task) = config {
            let name = format!("Output {}", task.named_outputs.len() + 1);
            task.named_outputs.push(name);
        }
    });
    view! {
        <section class="named-outputs" aria-label="Named outputs">
            <h3>"Named outputs"</h3>
            <p class="hint">"Each becomes an output port, filled from the last response's section of that name."</p>
            <For each=move || 0..names.get().len() key=|index| *index let:index>
                <div class="row">
                    <input
                        type="text"
                        aria-label=format!("Named output {}", index + 1)
                        prop:value=move || names.get().get(index).cloned().unwrap_or_default()
                        disabled=move || selected.disabled().get()
                        on:input={
                            let rename = rename(index);
                            move |event| rename.run(event_target_value(&event))
                        }
                    />
                    <button type="button" aria-label=format!("Remove named output {}", index + 1) disabled=move || selected.disabled().get() on:click=move |_| remove.run(index)>"✕"</button>
                </div>
            </For>
            <button type="button" class="add" disabled=move || selected.disabled().get() on:click=move |_| add.run(())>"+ Add named output"</button>
        </section>
    }
}

pub fn agent_task(selected: Selected) -> impl IntoView {
    view! {
        <Instruction selected placeholder="What the agent should do"/>
        <AttachmentChips selected place=AttachmentPlace::Instruction/>
        <RePromptSection selected owner=RePromptOwner::Module separate_outputs=true/>
        <super::tools::ToolsSection selected/>
        <NamedOutputs selected/>
        <IntentGateSection selected who="The last turn (the last re-prompt, or the instruction when there is none)"/>
        <super::validators::ValidatorsSection selected/>
        <AgentSettings selected/>
        <super::variants::VariantsSection selected/>
        <fieldset>
            <legend>"Session"</legend>
            <SelectField
                label="Session"
                value=selected.read(|config| match config {
                    ModuleConfig::AgentTask(task) if task.session_mode == SessionMode::Continue => "continue".to_owned(),
                    _ => "new".to_owned(),
                })
                options=Signal::derive(|| vec![
                    ("new".to_owned(), "New session".to_owned()),
                    ("continue".to_owned(), "Continue the upstream module's session".to_owned()),
                ])
                on_change=selected.act("Change session mode", |config, value: String| {
                    if let ModuleConfig::AgentTask(task) = config {
                        task.session_mode = if value == "continue" { SessionMode::Continue } else { SessionMode::New };
                    }
                })
                disabled=selected.disabled()
            />
            <super::fields::FieldProblems selected codes=&[graph::Code::SessionNotContinuable]/>
            <CheckField
                label="Keep the session across revision rounds"
                hint="On re-activation (a revision loop) the module continues its own session"
                checked=selected.read(|config| matches!(config, ModuleConfig::AgentTask(task) if task.session_persist))
                on_change=selected.act("Toggle session persist", |config, checked: bool| {
                    if let ModuleConfig::AgentTask(task) = config {
                        task.session_persist = checked;
                    }
                })
                disabled=selected.disabled()
            />
        </fieldset>
    }
}

pub fn review_gate(selected: Selected) -> impl IntoView {
    view! {
        <Instruction selected label="Review instruction" placeholder="What the reviewer checks"/>
        <RePromptSection selected owner=RePromptOwner::Module/>
        <NumberField
            label="Max rounds"
            min=1.0
            max=100.0
            step=1.0
            value=selected.read(|config| match config {
                ModuleConfig::ReviewGate(gate) => Some(f64::from(gate.max_rounds)),
                _ => None,
            })
            on_input=selected.update("Change max rounds", "max_rounds", |config, value: Option<f64>| {
                if let ModuleConfig::ReviewGate(gate) = config {
                    gate.max_rounds = number(value).max(1);
                }
            })
            disabled=selected.disabled()
        />
        <p class="hint">"The reviewer decides approve or revise after its re-prompts. Wire “Revise” back upstream for a revision loop."</p>
        <AgentSettings selected/>
    }
}

pub fn red_team(selected: Selected) -> impl IntoView {
    view! {
        <Instruction selected label="Attack instruction" placeholder="What to attack (default: errors, weak arguments, risks)"/>
        <RePromptSection selected owner=RePromptOwner::Module/>
        <AgentSettings selected/>
    }
}

pub fn panel(selected: Selected) -> impl IntoView {
    let personas = selected.read(|config| match config {
        ModuleConfig::Panel(panel) => panel.personas.clone(),
        _ => Vec::new(),
    });
    let edit_persona = move |index: usize, name: bool| {
        selected.update(
            "Edit persona",
            if name {
                "persona_name"
            } else {
                "persona_perspective"
            },
            move |config, value: String| {
                if let ModuleConfig::Panel(panel) = config
                    && let Some(persona) = panel.personas.get_mut(index)
                {
                    if name {
                        persona.name = value;
                    } else {
                        persona.perspective = value;
                    }
                }
            },
        )
    };
    let remove = selected.act("Remove persona", |config, index: usize| {
        if let ModuleConfig::Panel(panel) = config
            && index < panel.personas.len()
        {
            panel.personas.remove(index);
        }
    });
    let add = selected.act("Add persona", |config, (): ()| {
        if let ModuleConfig::Panel(panel) = config {
            panel.personas.push(Persona {
                name: format!("Persona {}", panel.personas.len() + 1),
                ..Persona::default()
            });
        }
    });
    view! {
        <Instruction selected label="Question" placeholder="What the panel discusses"/>
        <section class="personas" aria-label="Personas">
            <h3>"Personas"</h3>
            <For each=move || 0..personas.get().len() key=|index| *index let:index>
                <div class="card">
                    <TextField
                        label="Name"
                        value=Signal::derive(move || personas.get().get(index).map(|persona| persona.name.clone()).unwrap_or_default())
                        on_input=edit_persona(index, true)
                        disabled=selected.disabled()
                    />
                    <TextArea
                        label="Perspective"
                        rows=2
                        value=Signal::derive(move || personas.get().get(index).map(|persona| persona.perspective.clone()).unwrap_or_default())
                        on_input=edit_persona(index, false)
                        disabled=selected.disabled()
                    />
                    <button type="button" class="remove-card" disabled=move || selected.disabled().get() on:click=move |_| remove.run(index)>"Remove persona"</button>
                </div>
            </For>
            <button type="button" class="add" disabled=move || selected.disabled().get() on:click=move |_| add.run(())>"+ Add persona"</button>
        </section>
        <NumberField
            label="Rounds"
            min=1.0
            max=20.0
            step=1.0
            value=selected.read(|config| match config {
                ModuleConfig::Panel(panel) => Some(f64::from(panel.rounds)),
                _ => None,
            })
            on_input=selected.update("Change rounds", "rounds", |config, value: Option<f64>| {
                if let ModuleConfig::Panel(panel) = config {
                    panel.rounds = number(value).max(1);
                }
            })
            disabled=selected.disabled()
        />
        <AgentSettings selected/>
    }
}

pub fn judge(selected: Selected) -> impl IntoView {
    let rubric = selected.read(|config| match config {
        ModuleConfig::Judge(judge) => judge.rubric.clone(),
        _ => Vec::new(),
    });
    let edit_name = move |index: usize| {
        selected.update(
            "Edit criterion",
            "criterion_name",
            move |config, value: String| {
                if let ModuleConfig::Judge(judge) = config
                    && let Some(criterion) = judge.rubric.get_mut(index)
                {
                    criterion.name = value;
                }
            },
        )
    };
    let edit_description = move |index: usize| {
        selected.update(
            "Edit criterion",
            "criterion_description",
            move |config, value: String| {
                if let ModuleConfig::Judge(judge) = config
                    && let Some(criterion) = judge.rubric.get_mut(index)
                {
                    criterion.description = value;
                }
            },
        )
    };
    let edit_weight = move |index: usize| {
        selected.update(
            "Edit weight",
            "criterion_weight",
            move |config, value: Option<f64>| {
                if let ModuleConfig::Judge(judge) = config
                    && let Some(criterion) = judge.rubric.get_mut(index)
                {
                    criterion.weight = value.unwrap_or(1.0);
                }
            },
        )
    };
    let remove = selected.act("Remove criterion", |config, index: usize| {
        if let ModuleConfig::Judge(judge) = config
            && index < judge.rubric.len()
        {
            judge.rubric.remove(index);
        }
    });
    let add = selected.act("Add criterion", |config, (): ()| {
        if let ModuleConfig::Judge(judge) = config {
            judge.rubric.push(Criterion {
                name: format!("Criterion {}", judge.rubric.len() + 1),
                weight: 1.0,
                ..Criterion::default()
            });
        }
    });
    view! {
        <Instruction selected label="Instruction" placeholder="Extra guidance for the judge (optional)"/>
        <section class="rubric" aria-label="Rubric">
            <h3>"Rubric"</h3>
            <For each=move || 0..rubric.get().len() key=|index| *index let:index>
                <div class="card">
                    <TextField
                        label="Criterion"
                        value=Signal::derive(move || rubric.get().get(index).map(|criterion| criterion.name.clone()).unwrap_or_default())
                        on_input=edit_name(index)
                        disabled=selected.disabled()
                    />
                    <TextArea
                        label="What it means"
                        rows=2
                        value=Signal::derive(move || rubric.get().get(index).map(|criterion| criterion.description.clone()).unwrap_or_default())
                        on_input=edit_description(index)
                        disabled=selected.disabled()
                    />
                    <NumberField
                        label="Weight"
                        min=0.0
                        max=100.0
                        step=0.5
                        value=Signal::derive(move || rubric.get().get(index).map(|criterion| criterion.weight))
                        on_input=edit_weight(index)
                        disabled=selected.disabled()
                    />
                    <button type="button" class="remove-card" disabled=move || selected.disabled().get() on:click=move |_| remove.run(index)>"Remove criterion"</button>
                </div>
            </For>
            <button type="button" class="add" disabled=move || selected.disabled().get() on:click=move |_| add.run(())>"+ Add criterion"</button>
        </section>
        <NumberField
            label="Highest score"
            min=1.0
            max=100.0
            step=1.0
            value=selected.read(|config| match config {
                ModuleConfig::Judge(judge) => Some(f64::from(judge.scale_max)),
                _ => None,
            })
            on_input=selected.update("Change scale", "scale_max", |config, value: Option<f64>| {
                if let ModuleConfig::Judge(judge) = config {
                    judge.scale_max = number(value).max(1);
                }
            })
            disabled=selected.disabled()
        />
        <AgentSettings selected/>
    }
}

pub fn transform(selected: Selected) -> impl IntoView {
    view! {
        <Instruction selected placeholder="How to rewrite the input"/>
        <AgentSettings selected/>
    }
}

pub fn claim_extractor(selected: Selected) -> impl IntoView {
    view! {
        <Instruction selected label="Guidance" placeholder="What counts as a claim (optional)"/>
        <AgentSettings selected/>
    }
}

pub fn input(selected: Selected) -> impl IntoView {
    view! {
        <TextArea
            label="Description"
            rows=2
            placeholder="Shown above the input box when a run starts"
            value=selected.read(|config| match config {
                ModuleConfig::Input(input) => input.description.clone(),
                _ => String::new(),
            })
            on_input=selected.update("Edit description", "description", |config, value: String| {
                if let ModuleConfig::Input(input) = config {
                    input.description = value;
                }
            })
            disabled=selected.disabled()
        />
        <TextArea
            label="Default input"
            rows=3
            value=selected.read(|config| match config {
                ModuleConfig::Input(input) => input.default_text.clone(),
                _ => String::new(),
            })
            on_input=selected.update("Edit default input", "default_text", |config, value: String| {
                if let ModuleConfig::Input(input) = config {
                    input.default_text = value;
                }
            })
            disabled=selected.disabled()
        />
    }
}

pub fn output(selected: Selected) -> impl IntoView {
    view! {
        <TextArea
            label="Description"
            rows=2
            placeholder="What this output collects"
            value=selected.read(|config| match config {
                ModuleConfig::Output(output) => output.description.clone(),
                _ => String::new(),
            })
            on_input=selected.update("Edit description", "description", |config, value: String| {
                if let ModuleConfig::Output(output) = config {
                    output.description = value;
                }
            })
            disabled=selected.disabled()
        />
    }
}

pub fn command(selected: Selected) -> impl IntoView {
    view! {
        <TextArea
            label="Command"
            rows=2
            placeholder="cargo test --quiet"
            value=selected.read(|config| match config {
                ModuleConfig::Command(command) => command.command.clone(),
                _ => String::new(),
            })
            on_input=selected.update("Edit command", "command", |config, value: String| {
                if let ModuleConfig::Command(command) = config {
                    command.command = value;
                }
            })
            disabled=selected.disabled()
        />
        <p class="hint">"Runs with sh -c; exit status 0 fires “Pass”, anything else “Fail”. A {{ … }} in it is given its value as one quoted word, never run as code. The server runs commands only when started with --enable-commands."</p>
    }
}

pub fn poll(selected: Selected) -> impl IntoView {
    let poll_of = |config: &ModuleConfig| match config {
        ModuleConfig::Poll(poll) => Some(poll.clone()),
        _ => None,
    };
    view! {
        <TextArea
            label="Command"
            rows=2
            placeholder="scripts/check-review.sh"
            value=selected.read(move |config| poll_of(config).map(|poll| poll.command).unwrap_or_default())
            on_input=selected.update("Edit command", "command", |config, value: String| {
                if let ModuleConfig::Poll(poll) = config {
                    poll.command = value;
                }
            })
            disabled=selected.disabled()
        />
        <NumberField
            label="Every (seconds)"
            min=1.0
            max=86_400.0
            step=1.0
            value=selected.read(move |config| poll_of(config).map(|poll| f64::from(poll.interval_seconds)))
            on_input=selected.update("Change poll interval", "interval_seconds", |config, value: Option<f64>| {
                if let ModuleConfig::Poll(poll) = config {
                    poll.interval_seconds = number(value).max(1);
                }
            })
            disabled=selected.disabled()
        />
        <TextArea
            label="Results, one per line"
            rows=3
            placeholder="approved\nfix"
            value=selected.read(move |config| poll_of(config).map(|poll| poll.results.join("\n")).unwrap_or_default())
            on_input=selected.update("Edit poll results", "results", |config, value: String| {
                if let ModuleConfig::Poll(poll) = config {
                    poll.results = value.lines().map(str::to_owned).collect();
                }
            })
            disabled=selected.disabled()
        />
        <p class="hint">"Runs with sh -c at once, then again each interval after the last poll ends. It decides by printing PATCHBAY_RESULT:<name> (one of the results, each a port); exit 0 without it means “not yet”; another exit without it fails. A poll still running when the next is due skips it; three skips in a row fail. The run state is in the file $PATCHBAY_STATE."</p>
    }
}

/// An approval: what the person is asked, how long it waits, how many
/// rounds a revision loop through it may go, and who is told it waits.
pub fn approval(selected: Selected) -> impl IntoView {
    let approval_of = |config: &ModuleConfig| match config {
        ModuleConfig::Approval(approval) => Some(approval.clone()),
        _ => None,
    };
    let webhooks = move || {
        selected.editor.catalogue.with(|catalogue| {
            let known = catalogue
                .as_ref()
                .map(|catalogue| catalogue.webhooks.join(", "))
                .unwrap_or_default();
            if known.is_empty() {
                "This server has no webhooks: its operator lists them in its configuration ([[webhooks]]).".to_owned()
            } else {
                format!("This server's webhooks: {known}.")
            }
        })
    };
    let wait_words = selected.read(move |config| {
        approval_of(config)
            .and_then(|approval| approval.timeout_seconds)
            .map_or_else(
                || "It waits as long as the run may. Set minutes to send the value to “Timed out” when nobody decided.".to_owned(),
                |seconds| format!("Nobody decided within {}: the value goes to “Timed out”.", graph::attempts::duration_words(seconds)),
            )
    });
    view! {
        <TextArea
            label="What the person is asked"
            rows=2
            placeholder=graph::kinds::approval::DEFAULT_ASK
            value=selected.read(move |config| approval_of(config).map(|approval| approval.ask).unwrap_or_default())
            on_input=selected.update("Edit the question", "ask", |config, value: String| {
                if let ModuleConfig::Approval(approval) = config {
                    approval.ask = value;
                }
            })
            disabled=selected.disabled()
        />
        <NumberField
            label="Wait at most (minutes)"
            min=1.0
            max=43_200.0
            step=1.0
            placeholder="no limit"
            value=selected.read(move |config| {
                approval_of(config)
                    .and_then(|approval| approval.timeout_seconds)
                    .map(|seconds| f64::from(seconds) / 60.0)
            })
            on_input=selected.update("Change how long it waits", "timeout_seconds", |config, value: Option<f64>| {
                if let ModuleConfig::Approval(approval) = config {
                    approval.timeout_seconds = value.map(|minutes| number(Some(minutes * 60.0)).max(1));
                }
            })
            disabled=selected.disabled()
        />
        <p class="hint">{wait_words}</p>
        <NumberField
            label="Max rounds"
            min=1.0
            max=100.0
            step=1.0
            value=selected.read(move |config| approval_of(config).map(|approval| f64::from(approval.max_rounds)))
            on_input=selected.update("Change max rounds", "max_rounds", |config, value: Option<f64>| {
                if let ModuleConfig::Approval(approval) = config {
                    approval.max_rounds = number(value).max(1);
                }
            })
            disabled=selected.disabled()
        />
        <TextField
            label="Notify (webhooks, by id)"
            placeholder="ops"
            value=selected.read(move |config| approval_of(config).map(|approval| approval.notify.join(", ")).unwrap_or_default())
            on_input=selected.update("Change who is notified", "notify", |config, value: String| {
                if let ModuleConfig::Approval(approval) = config {
                    approval.notify = super::fields::ids(&value);
                }
            })
            disabled=selected.disabled()
        />
        <p class="hint">{webhooks}</p>
        <p class="hint">"The run waits here for a person with the edit link or an approver link of the run: “Approved” passes the value on (as they may have edited it), “Rejected” the value and their reason, “Send back” their feedback (wire it back to the agent for another round in its session)."</p>
    }
}

pub fn unknown(selected: Selected) -> impl IntoView {
    let text = move || {
        selected.module.with(
            |module| match module.as_ref().map(|module| &module.config) {
                Some(ModuleConfig::Unknown { kind, config }) => format!(
                    "{kind}\n{}",
                    serde_json::to_string_pretty(config).unwrap_or_default()
                ),
                _ => String::new(),
            },
        )
    };
    view! {
        <p class="hint">"This server does not know this kind of module. It is kept as it is, and the graph cannot run until it is removed."</p>
        <pre class="unknown-config">{text}</pre>
    }
}
