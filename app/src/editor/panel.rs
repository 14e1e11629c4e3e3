//! The detail panel of the selected module: its label, then the fields of
//! its kind (and, in `cable.rs`, the selected cable's). Fields read the document and every change goes through the
//! editor, so the canvas (ports appear and vanish), validation, undo and
//! autosave follow at once.

mod attachments;
mod attempts;
mod cable;
mod cables;
mod coding;
mod fields;
mod intent_gate;
mod join;
mod kinds;
mod reprompts;
mod tools;
mod validators;
mod variants;

use graph::config::AgentConfig;
use graph::{Module, ModuleConfig, ModuleKind};
use leptos::prelude::*;

use super::state::EditorState;
pub use cable::CablePanel;
use fields::{FieldProblems, NumberField, SelectField, TextArea, TextField};

/// The selected module as it is now, refreshed on every edit.
#[derive(Clone, Copy)]
pub struct Selected {
    pub id: StoredValue<String>,
    pub module: Memo<Option<Module>>,
    pub editor: EditorState,
}

impl Selected {
    pub fn id(&self) -> String {
        self.id.get_value()
    }

    pub fn disabled(&self) -> Signal<bool> {
        let editor = self.editor;
        Signal::derive(move || !editor.can_edit.get())
    }

    /// A value read from the module's config.
    pub fn read<T: Send + Sync + Default + Clone + PartialEq + 'static>(
        &self,
        read: impl Fn(&ModuleConfig) -> T + Send + Sync + 'static,
    ) -> Signal<T> {
        let module = self.module;
        Signal::derive(move || {
            module.with(|module| {
                module
                    .as_ref()
                    .map(|module| read(&module.config))
                    .unwrap_or_default()
            })
        })
    }

    /// An edit of the module's config. `field` names what is typed into, so
    /// that typing there is one undo step.
    pub fn update<T: 'static>(
        &self,
        label: &'static str,
        field: &'static str,
        apply: impl Fn(&mut ModuleConfig, T) + Send + Sync + 'static,
    ) -> Callback<T> {
        let editor = self.editor;
        let id = self.id;
        Callback::new(move |value: T| {
            editor.update_module(&id.get_value(), label, Some(field), |module| {
                apply(&mut module.config, value)
            });
        })
    }

    /// An edit of a list whose entries have output ports (re-prompts,
    /// named outputs): `apply` says how the port ids moved, and the cables
    /// follow. `field`: typing into one field is one undo step.
    pub fn move_ports<T: 'static>(
        &self,
        label: &'static str,
        field: Option<&'static str>,
        apply: impl Fn(&mut ModuleConfig, T) -> graph::port_moves::PortMoves + Send + Sync + 'static,
    ) -> Callback<T> {
        let editor = self.editor;
        let id = self.id;
        Callback::new(move |value: T| {
            editor.update_module_moving_ports(&id.get_value(), label, field, |module| {
                apply(&mut module.config, value)
            });
        })
    }

    /// An edit that is a step of its own (a click, not typing).
    pub fn act<T: 'static>(
        &self,
        label: &'static str,
        apply: impl Fn(&mut ModuleConfig, T) + Send + Sync + 'static,
    ) -> Callback<T> {
        let editor = self.editor;
        let id = self.id;
        Callback::new(move |value: T| {
            editor.update_module(&id.get_value(), label, None, |module| {
                apply(&mut module.config, value)
            });
        })
    }
}

/// The instruction field of kinds that have one.
#[component]
fn Instruction(
    selected: Selected,
    #[prop(default = "Instruction")] label: &'static str,
    #[prop(optional)] placeholder: &'static str,
) -> impl IntoView {
    view! {
        <TextArea
            label
            placeholder
            rows=5
            value=selected.read(|config| config.instruction().unwrap_or_default().to_owned())
            on_input=selected.update("Edit instruction", "instruction", |config, text: String| {
                if let Some(instruction) = config.instruction_mut() {
                    *instruction = text;
                }
            })
            disabled=selected.disabled()
        />
    }
}

/// Provider, model and its price, system prompt, temperature and budget
/// (`agent_config`).
#[component]
fn AgentSettings(selected: Selected) -> impl IntoView {
    let editor = selected.editor;
    let agent = move |config: &ModuleConfig| config.agent_config().cloned().unwrap_or_default();
    let provider = selected.read(move |config| agent(config).provider);
    let providers = Signal::derive(move || {
        let mut options = vec![(String::new(), "Server default".to_owned())];
        if let Some(catalogue) = editor.catalogue.get() {
            options.extend(catalogue.providers.iter().map(|provider| {
                let label = if provider.simulated {
                    format!("{} (simulated)", provider.label)
                } else {
                    provider.label.clone()
                };
                (provider.id.clone(), label)
            }));
        }
        // Keep an unknown provider visible, so it can be seen and changed.
        let current = provider.get();
        if !options.iter().any(|(id, _)| *id == current) {
            options.push((current.clone(), format!("{current} (not on this server)")));
        }
        options
    });
    let models = Signal::derive(move || {
        let current = provider.get();
        editor
            .catalogue
            .get()
            .and_then(|catalogue| {
                catalogue
                    .providers
                    .into_iter()
                    .find(|entry| entry.id == current || (current.is_empty() && entry.simulated))
            })
            .map(|entry| entry.models)
            .unwrap_or_default()
    });
    // What the chosen model costs, as the server's configuration says.
    let price = Signal::derive(move || {
        let current = provider.get();
        let model = selected.read(move |config| agent(config).model).get();
        let catalogue = editor.catalogue.get()?;
        let entry = catalogue
            .providers
            .into_iter()
            .find(|entry| entry.id == current || (current.is_empty() && entry.simulated))?;
        let model = if model.is_empty() {
            entry.models.first().cloned().unwrap_or_default()
        } else {
            model
        };
        Some(match entry.price(&model) {
            _ if entry.simulated => "Free: the simulated provider costs nothing.".to_owned(),
            Some(price) => format!(
                "Price: {} in, {} out per million tokens.",
                wire::cost::dollars(price.input_per_million),
                wire::cost::dollars(price.output_per_million)
            ),
            None => "No price configured for this model on this server: its calls have no cost, and budgets cannot count them.".to_owned(),
        })
    });
    let list_id = format!("models-{}", selected.id());
    let set_agent = |apply: fn(&mut AgentConfig, String)| {
        move |config: &mut ModuleConfig, value: String| {
            if let Some(agent) = config.agent_config_mut() {
                apply(agent, value);
            }
        }
    };
    view! {
        <fieldset class="agent-settings">
            <legend>"Model"</legend>
            <SelectField
                label="Provider"
                value=provider
                options=providers
                on_change=selected.act("Change provider", set_agent(|agent, value| agent.provider = value))
                disabled=selected.disabled()
            />
            <label class="field">
                <span class="field-label">"Model"</span>
                <input
                    type="text"
                    list=list_id.clone()
                    prop:value=selected.read(move |config| agent(config).model)
                    disabled=move || selected.disabled().get()
                    on:input={
                        let update = selected.update("Change model", "model", set_agent(|agent, value| agent.model = value));
                        move |event| update.run(event_target_value(&event))
                    }
                />
                <datalist id=list_id>
                    {move || models.get().into_iter().map(|model| view! { <option value=model></option> }).collect_view()}
                </datalist>
            </label>
            <p class="hint price">{move || price.get()}</p>
            <TextArea
                label="System prompt"
                rows=2
                value=selected.read(move |config| agent(config).system.unwrap_or_default())
                on_input=selected.update("Edit system prompt", "system", set_agent(|agent, value| {
                    agent.system = (!value.is_empty()).then_some(value);
                }))
                disabled=selected.disabled()
            />
            <NumberField
                label="Temperature"
                placeholder="default"
                min=0.0
                max=2.0
                step=0.1
                value=selected.read(move |config| agent(config).temperature)
                on_input=selected.update("Change temperature", "temperature", |config, value: Option<f64>| {
                    if let Some(agent) = config.agent_config_mut() {
                        agent.temperature = value;
                    }
                })
                disabled=selected.disabled()
            />
            <NumberField
                label="Budget (US dollars per run)"
                placeholder="none"
                min=0.0
                max=1_000_000.0
                step=0.01
                value=selected.read(move |config| agent(config).budget_usd)
                on_input=selected.update("Change budget", "budget_usd", |config, value: Option<f64>| {
                    if let Some(agent) = config.agent_config_mut() {
                        agent.budget_usd = value;
                    }
                })
                disabled=selected.disabled()
            />
            <FieldProblems selected=selected codes=&[graph::Code::BudgetInvalid]/>
        </fieldset>
    }
}

/// The texts of the module `id` that others are typing in now, with who.
fn held_texts(editor: EditorState, id: StoredValue<String>) -> fields::HeldTexts {
    fields::HeldTexts(Memo::new(move |_| {
        let within = [
            graph::edits::Step::Field("modules".to_owned()),
            graph::edits::Step::Id(id.get_value()),
        ];
        editor.together.held.with(|held| {
            held.iter()
                .filter(|text| text.path.starts_with(&within))
                .map(|text| (text.text.clone(), text.by.clone()))
                .collect()
        })
    }))
}

#[component]
pub fn DetailPanel() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    move || {
        let id = editor.selected.get()?;
        let stored_id = StoredValue::new(id.clone());
        let module = Memo::new(move |_| {
            editor.version.track();
            editor.with_graph(|graph| graph.module(&stored_id.get_value()).cloned())
        });
        let kind = module.get_untracked()?.kind();
        let selected = Selected {
            id: stored_id,
            module,
            editor,
        };
        provide_context(held_texts(editor, stored_id));
        let kind_title = kind.map_or("Unknown module", ModuleKind::title);
        let body = match kind {
            Some(ModuleKind::AgentTask) => kinds::agent_task(selected).into_any(),
            Some(ModuleKind::Coding) => coding::coding(selected).into_any(),
            Some(ModuleKind::ReviewGate) => kinds::review_gate(selected).into_any(),
            Some(ModuleKind::RedTeam) => kinds::red_team(selected).into_any(),
            Some(ModuleKind::Panel) => kinds::panel(selected).into_any(),
            Some(ModuleKind::Judge) => kinds::judge(selected).into_any(),
            Some(ModuleKind::Transform) => kinds::transform(selected).into_any(),
            Some(ModuleKind::ClaimExtractor) => kinds::claim_extractor(selected).into_any(),
            Some(ModuleKind::Input) => kinds::input(selected).into_any(),
            Some(ModuleKind::Output) => kinds::output(selected).into_any(),
            Some(ModuleKind::Command) => kinds::command(selected).into_any(),
            Some(ModuleKind::Poll) => kinds::poll(selected).into_any(),
            Some(ModuleKind::Approval) => kinds::approval(selected).into_any(),
            None => kinds::unknown(selected).into_any(),
        };
        let label_update = Callback::new(move |text: String| {
            editor.update_module(
                &stored_id.get_value(),
                "Rename module",
                Some("label"),
                |module| module.label = text,
            );
        });
        Some(view! {
            <aside class="detail-panel" aria-label="Module details">
                <header class="panel-header">
                    <span class="panel-kind">{kind_title}</span>
                    <span class="panel-id">{id.clone()}</span>
                    <button type="button" class="close" aria-label="Close details" on:click=move |_| {
                        editor.model.select_only(&[]);
                        editor.selection_changed();
                    }>"✕"</button>
                </header>
                <TextField
                    label="Label"
                    id="module-label"
                    value=Signal::derive(move || module.with(|module| module.as_ref().map(|module| module.label.clone()).unwrap_or_default()))
                    on_input=label_update
                    disabled=selected.disabled()
                />
                {body}
                {join::join_field(selected)}
                {attempts::attempts_section(selected)}
                {cables::cables_section(selected)}
            </aside>
        })
    }
}
