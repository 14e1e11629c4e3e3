//! The coding module's panel (DOC23 §6.2): one card per agent — ACP profile,
//! role, model and mode, the session it continues, instruction override and
//! that agent's re-prompts — and the module's
//! coordination settings. There is no test command: an agent runs tests
//! because a re-prompt asks it to. A module migrated from R3.1 says so once.

use graph::ModuleConfig;
use graph::config::{
    CodingAgentAssignment, Coordination, RePromptOwner, SessionMode, SessionStyle,
};
use leptos::prelude::*;
use wire::providers::AgentOffers;

use super::fields::{CheckField, FieldProblems, NumberField, SelectField, TextArea, TextField};
use super::intent_gate::IntentGateSection;
use super::reprompts::RePromptSection;
use super::{Instruction, Selected};

fn agents(config: &ModuleConfig) -> Vec<CodingAgentAssignment> {
    match config {
        ModuleConfig::Coding(coding) => coding.agents.clone(),
        _ => Vec::new(),
    }
}

fn agent_mut(config: &mut ModuleConfig, index: usize) -> Option<&mut CodingAgentAssignment> {
    match config {
        ModuleConfig::Coding(coding) => coding.agents.get_mut(index),
        _ => None,
    }
}

/// One agent of a coding module: which agent, in which mode and session,
/// with what instruction and re-prompts.
#[component]
fn AgentCard(selected: Selected, index: usize, count: Signal<usize>) -> impl IntoView {
    let agent = selected.read(move |config| agents(config).get(index).cloned().unwrap_or_default());
    let move_agent = selected.act("Reorder agents", move |config, to: usize| {
        if let ModuleConfig::Coding(coding) = config
            && index < coding.agents.len()
            && to < coding.agents.len()
        {
            let moved = coding.agents.remove(index);
            coding.agents.insert(to, moved);
        }
    });
    let remove = selected.act("Remove agent", move |config, (): ()| {
        if let ModuleConfig::Coding(coding) = config
            && index < coding.agents.len()
        {
            coding.agents.remove(index);
        }
    });
    let heading = move || {
        let role = agent.get().role;
        if role.is_empty() {
            format!("Agent {}", index + 1)
        } else {
            format!("Agent {}: {role}", index + 1)
        }
    };
    view! {
        <div class="card agent-card" aria-label=heading>
            <div class="card-head">
                <h4>{heading}</h4>
                <button type="button" aria-label=format!("Move agent {} up", index + 1) disabled=move || index == 0 || selected.disabled().get() on:click=move |_| move_agent.run(index.saturating_sub(1))>"▲"</button>
                <button type="button" aria-label=format!("Move agent {} down", index + 1) disabled=move || { index + 1 >= count.get() || selected.disabled().get() } on:click=move |_| move_agent.run(index + 1)>"▼"</button>
                <button type="button" aria-label=format!("Remove agent {}", index + 1) disabled=move || selected.disabled().get() on:click=move |_| remove.run(())>"✕"</button>
            </div>
            <AgentProfile selected index agent/>
            <AgentMode selected index agent/>
            <AgentSession selected index agent/>
            <TextArea
                label="Instruction override"
                rows=3
                placeholder="Leave empty to use the module's instruction"
                value=Signal::derive(move || agent.get().instruction_override.unwrap_or_default())
                on_input=selected.update("Edit instruction override", "agent_instruction", move |config, value: String| {
                    if let Some(agent) = agent_mut(config, index) {
                        agent.instruction_override = (!value.is_empty()).then_some(value);
                    }
                })
                disabled=selected.disabled()
            />
            <RePromptSection selected owner=RePromptOwner::Agent(index)/>
        </div>
    }
}

/// Which agent (an ACP profile of the server's), its role and its model.
#[component]
fn AgentProfile(
    selected: Selected,
    index: usize,
    agent: Signal<CodingAgentAssignment>,
) -> impl IntoView {
    let editor = selected.editor;
    let profiles = Signal::derive(move || {
        let mut options = vec![(String::new(), "Server default".to_owned())];
        if let Some(catalogue) = editor.catalogue.get() {
            options.extend(catalogue.acp_profiles.iter().map(|profile| {
                let name = if profile.simulated {
                    format!("{} (simulated)", profile.name)
                } else {
                    profile.name.clone()
                };
                (profile.id.clone(), name)
            }));
        }
        let current = agent.get().acp_profile_id.unwrap_or_default();
        if !options.iter().any(|(id, _)| *id == current) {
            options.push((current.clone(), format!("{current} (not on this server)")));
        }
        options
    });
    view! {
        <SelectField
            label="Agent"
            value=Signal::derive(move || agent.get().acp_profile_id.unwrap_or_default())
            options=profiles
            on_change=selected.act("Change agent", move |config, value: String| {
                if let Some(agent) = agent_mut(config, index) {
                    agent.acp_profile_id = (!value.is_empty()).then_some(value);
                }
            })
            disabled=selected.disabled()
        />
        <TextField
            label="Role"
            value=Signal::derive(move || agent.get().role)
            on_input=selected.update("Edit role", "agent_role", move |config, value: String| {
                if let Some(agent) = agent_mut(config, index) {
                    agent.role = value;
                }
            })
            disabled=selected.disabled()
        />
        <TextField
            label="Model"
            placeholder="The agent's own"
            value=Signal::derive(move || agent.get().agent_config.model)
            on_input=selected.update("Edit agent model", "agent_model", move |config, value: String| {
                if let Some(agent) = agent_mut(config, index) {
                    agent.agent_config.model = value;
                }
            })
            disabled=selected.disabled()
        />
        <TextField
            label="MCP servers it is given (by id)"
            placeholder="patchbay"
            value=Signal::derive(move || agent.get().mcp_servers.join(", "))
            on_input=selected.update("Edit agent MCP servers", "agent_mcp_servers", move |config, value: String| {
                if let Some(agent) = agent_mut(config, index) {
                    agent.mcp_servers = super::fields::ids(&value);
                }
            })
            disabled=selected.disabled()
        />
    }
}

/// The agent's mode, among those the operator allows for its profile, and
/// what the agent said it offers.
#[component]
fn AgentMode(
    selected: Selected,
    index: usize,
    agent: Signal<CodingAgentAssignment>,
) -> impl IntoView {
    let editor = selected.editor;
    // The agent's profile as the server lists it (its default first).
    let profile = Signal::derive(move || {
        let id = agent.get().acp_profile_id;
        editor.catalogue.get().and_then(|catalogue| match &id {
            Some(id) => catalogue
                .acp_profiles
                .iter()
                .find(|profile| &profile.id == id)
                .cloned(),
            None => catalogue.acp_profiles.first().cloned(),
        })
    });
    // The modes the operator allows for the agent's profile, and the one
    // chosen even if not.
    let modes = Signal::derive(move || {
        let chosen = agent.get();
        let mut options = vec![(String::new(), "The agent's own".to_owned())];
        if let Some(profile) = profile.get() {
            options.extend(
                profile
                    .modes
                    .iter()
                    .map(|mode| (mode.clone(), mode.clone())),
            );
        }
        if let Some(mode) = chosen.acp_mode
            && !options.iter().any(|(id, _)| *id == mode)
        {
            options.push((mode.clone(), format!("{mode} (not allowed on this server)")));
        }
        options
    });
    view! {
        <SelectField
            label="Mode"
            value=Signal::derive(move || agent.get().acp_mode.unwrap_or_default())
            options=modes
            on_change=selected.act("Change agent mode", move |config, value: String| {
                if let Some(agent) = agent_mut(config, index) {
                    agent.acp_mode = (!value.is_empty()).then_some(value);
                }
            })
            disabled=selected.disabled()
        />
        <p class="hint">{move || {
            let allowed = modes.get().len() > 1;
            format!(
                "Chosen over ACP when the agent's session opens; empty leaves the agent's own. {}{}",
                profile.get().and_then(|profile| profile.offers).map_or_else(
                    || "What the agent offers shows here once it has run on this server.".to_owned(),
                    |offers| offers_text(&offers),
                ),
                if allowed { "" } else { " This server's operator allows no mode choice for this agent." }
            )
        }}</p>
        {move || {
            let problems = unsupported(&agent.get(), profile.get().and_then(|profile| profile.offers).as_ref());
            (!problems.is_empty()).then(|| view! {
                <ul class="field-problems" role="alert">
                    {problems.into_iter().map(|problem| view! { <li>{problem}</li> }).collect_view()}
                </ul>
            })
        }}
    }
}

/// Whether the agent continues the upstream coding module's session: only
/// the first agent of a chain can; elsewhere the choice shows only to be
/// undone.
#[component]
fn AgentSession(
    selected: Selected,
    index: usize,
    agent: Signal<CodingAgentAssignment>,
) -> impl IntoView {
    let continuable = selected.read(move |config| match config {
        ModuleConfig::Coding(coding) => coding.continue_refusal(index).is_none(),
        _ => false,
    });
    let continues = Signal::derive(move || !agent.get().session_mode.is_new());
    view! {
        <Show when=move || continuable.get() || continues.get()>
            <SelectField
                label="Session"
                value=Signal::derive(move || if continues.get() { "continue".to_owned() } else { "new".to_owned() })
                options=Signal::derive(|| vec![
                    ("new".to_owned(), "New session".to_owned()),
                    ("continue".to_owned(), "Continue the upstream session".to_owned()),
                ])
                on_change=selected.act("Change agent session", move |config, value: String| {
                    if let Some(agent) = agent_mut(config, index) {
                        agent.session_mode = if value == "continue" { SessionMode::Continue } else { SessionMode::New };
                    }
                })
                disabled=selected.disabled()
            />
            <p class="hint">"Continue takes up the conversation of the coding module wired to this one's input (ACP session/load), when it is the same agent and the agent can. The work is done in this module's own workspace."</p>
            <FieldProblems selected codes=&[graph::Code::SessionNotContinuable] at=format!("agents[{index}].session_mode")/>
        </Show>
    }
}

/// What an agent offers, as its card says it.
fn offers_text(offers: &AgentOffers) -> String {
    let models = if offers.models.is_empty() {
        "no model choice over ACP".to_owned()
    } else {
        format!("the models {}", offers.models.join(", "))
    };
    let load = if offers.load_session {
        "can continue a session"
    } else {
        "cannot continue a session (no session/load)"
    };
    format!("This agent offers {models}, and {load}.")
}

/// What the card asks of the agent that it said it does not offer (known
/// once a session of it has opened on this server): the run would fail on
/// the model, and start a new session instead of continuing one.
fn unsupported(agent: &CodingAgentAssignment, offers: Option<&AgentOffers>) -> Vec<String> {
    let Some(offers) = offers else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    let model = agent.agent_config.model.trim();
    if !model.is_empty() && !offers.models.iter().any(|offered| offered == model) {
        problems.push(if offers.models.is_empty() {
            format!("This agent offers no model choice, so \"{model}\" would fail the module.")
        } else {
            format!(
                "This agent has no model \"{model}\" (it offers {}): the module would fail.",
                offers.models.join(", ")
            )
        });
    }
    if !agent.session_mode.is_new() && !offers.load_session {
        problems.push(
            "This agent cannot continue a session (it does not offer session/load): it will work in a new one.".to_owned(),
        );
    }
    problems
}

pub fn coding(selected: Selected) -> impl IntoView {
    view! {
        <MigrationNotice selected/>
        <Instruction selected placeholder="What the agents should build"/>
        <TextField
            label="Workspace folder"
            placeholder="A fresh temporary repository per run"
            value=selected.read(|config| match config {
                ModuleConfig::Coding(coding) => coding.workspace.path.clone().unwrap_or_default(),
                _ => String::new(),
            })
            on_input=selected.update("Change workspace", "workspace", |config, value: String| {
                if let ModuleConfig::Coding(coding) = config {
                    coding.workspace.path = (!value.trim().is_empty()).then_some(value);
                }
            })
            disabled=selected.disabled()
        />
        <AgentsSection selected/>
        <CoordinationSection selected/>
        <IntentGateSection selected who="After its work, the last agent (the reviewer of a review chain) is asked in a turn of its own and"/>
        <super::validators::ValidatorsSection selected/>
        <super::variants::VariantsSection selected/>
    }
}

/// What migrating the module from DOC23 R3.1 changed, until dismissed.
#[component]
fn MigrationNotice(selected: Selected) -> impl IntoView {
    let editor = selected.editor;
    let migration = Signal::derive(move || {
        let id = selected.id();
        editor
            .migrations
            .get()
            .into_iter()
            .find(|note| note.module_id == id)
            .map(|note| note.message)
    });
    let dismiss = move |_| {
        let id = selected.id();
        editor.edit("Dismiss migration note", None, |edit| {
            let remaining = edit
                .graph()
                .migrations
                .iter()
                .filter(|note| note.module_id != id)
                .cloned()
                .collect();
            edit.set_migrations(remaining);
        });
    };
    move || {
        migration.get().map(|message| {
            view! {
                <div class="notice migrated" role="status">
                    <strong>"Migrated from DOC23 R3.1. "</strong>{message}
                    <button type="button" on:click=dismiss>"Got it"</button>
                </div>
            }
        })
    }
}

/// The module's agents, in order, and adding one.
#[component]
fn AgentsSection(selected: Selected) -> impl IntoView {
    let count = selected.read(|config| agents(config).len());
    let add = selected.act("Add agent", |config, (): ()| {
        if let ModuleConfig::Coding(coding) = config {
            let role = if coding.agents.is_empty() {
                "builder"
            } else {
                "reviewer"
            };
            coding.agents.push(CodingAgentAssignment {
                role: role.to_owned(),
                ..CodingAgentAssignment::default()
            });
        }
    });
    view! {
        <section class="agents" aria-label="Agents">
            <h3>"Agents"</h3>
            <For each=move || 0..count.get() key=|index| *index let:index>
                <AgentCard selected index count/>
            </For>
            <button type="button" class="add" disabled=move || selected.disabled().get() on:click=move |_| add.run(())>"+ Add agent"</button>
        </section>
    }
}

/// A whole number of the module's config, from 1 to 1000.
fn coding_number(
    selected: Selected,
    label: &'static str,
    field: &'static str,
    read: fn(&graph::config::CodingConfig) -> u32,
    write: fn(&mut graph::config::CodingConfig, u32),
) -> impl IntoView {
    view! {
        <NumberField
            label
            min=1.0
            max=1000.0
            step=1.0
            value=selected.read(move |config| match config {
                ModuleConfig::Coding(coding) => Some(f64::from(read(coding))),
                _ => None,
            })
            on_input=selected.update("Change coding setting", field, move |config, value: Option<f64>| {
                if let ModuleConfig::Coding(coding) = config {
                    write(coding, value.map_or(1, |value| value.round().clamp(1.0, 1000.0) as u32));
                }
            })
            disabled=selected.disabled()
        />
    }
}

/// How the agents work together, and the caps on their work.
#[component]
fn CoordinationSection(selected: Selected) -> impl IntoView {
    let coordination = selected.read(|config| match config {
        ModuleConfig::Coding(coding) => match coding.coordination {
            Coordination::Sequential => "sequential",
            Coordination::Parallel => "parallel",
            Coordination::ReviewChain => "review_chain",
        }
        .to_owned(),
        _ => String::new(),
    });
    view! {
        <fieldset>
            <legend>"Coordination"</legend>
            <SelectField
                label="Coordination"
                value=coordination
                options=Signal::derive(|| vec![
                    ("sequential".to_owned(), "Sequential (each hands over to the next)".to_owned()),
                    ("parallel".to_owned(), "Parallel (each in its own worktree)".to_owned()),
                    ("review_chain".to_owned(), "Review chain (builder, then reviewer)".to_owned()),
                ])
                on_change=selected.act("Change coordination", |config, value: String| {
                    if let ModuleConfig::Coding(coding) = config {
                        coding.coordination = match value.as_str() {
                            "parallel" => Coordination::Parallel,
                            "review_chain" => Coordination::ReviewChain,
                            _ => Coordination::Sequential,
                        };
                    }
                })
                disabled=selected.disabled()
            />
            <Show when=move || coordination.get() == "review_chain">
                {coding_number(selected, "Max rounds", "coding_max_rounds", |coding| coding.max_rounds, |coding, value| coding.max_rounds = value)}
            </Show>
            {coding_number(selected, "Max iterations (safety cap on agent turns)", "max_iterations", |coding| coding.max_iterations, |coding, value| coding.max_iterations = value)}
            <CheckField
                label="Capture test results"
                hint="Keep the last test results the agents ran"
                checked=selected.read(|config| matches!(config, ModuleConfig::Coding(coding) if coding.capture_test_results))
                on_change=selected.act("Toggle test results", |config, checked: bool| {
                    if let ModuleConfig::Coding(coding) = config {
                        coding.capture_test_results = checked;
                    }
                })
                disabled=selected.disabled()
            />
            <SelectField
                label="When an agent is done"
                value=selected.read(|config| match config {
                    ModuleConfig::Coding(coding) if coding.session_style == SessionStyle::Park => "park".to_owned(),
                    _ => "close".to_owned(),
                })
                options=Signal::derive(|| vec![
                    ("close".to_owned(), "Close its session".to_owned()),
                    ("park".to_owned(), "Park its session".to_owned()),
                ])
                on_change=selected.act("Change session style", |config, value: String| {
                    if let ModuleConfig::Coding(coding) = config {
                        coding.session_style = if value == "park" { SessionStyle::Park } else { SessionStyle::Close };
                    }
                })
                disabled=selected.disabled()
            />
        </fieldset>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_says_what_the_agent_does_not_offer() {
        let offers = AgentOffers {
            models: vec!["sim-standard".to_owned(), "sim-careful".to_owned()],
            modes: vec!["code".to_owned()],
            load_session: false,
        };
        let mut agent = CodingAgentAssignment::default();
        assert!(unsupported(&agent, Some(&offers)).is_empty());
        agent.agent_config.model = "gpt-9".to_owned();
        agent.session_mode = SessionMode::Continue;
        assert_eq!(
            unsupported(&agent, Some(&offers)),
            [
                "This agent has no model \"gpt-9\" (it offers sim-standard, sim-careful): the module would fail.",
                "This agent cannot continue a session (it does not offer session/load): it will work in a new one.",
            ]
        );
        // Not known until the agent has run here: nothing is claimed.
        assert!(unsupported(&agent, None).is_empty());
        assert_eq!(
            offers_text(&offers),
            "This agent offers the models sim-standard, sim-careful, and cannot continue a session (no session/load)."
        );
    }
}
