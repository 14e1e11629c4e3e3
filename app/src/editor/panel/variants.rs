//! A module's variants (DOC23 §7.2): each is the module as configured with
//! its own instruction and, for an agent task, re-prompts, model or
//! temperature, for a coding module its agents' ACP profiles; it runs the
//! whole activation, and leaves with the others on `⚖ Variants` for a
//! judge.

use graph::ModuleConfig;
use graph::experiment::{MAX_VARIANTS, Variant, variants_mut, variants_of};
use graph::reprompt::RePrompt;
use leptos::prelude::*;

use super::Selected;
use super::fields::FieldProblems;

fn variants(config: &ModuleConfig) -> Vec<Variant> {
    variants_of(config).to_vec()
}

/// Changes variant `index` of the module, if it has one.
fn with_variant(config: &mut ModuleConfig, index: usize, change: impl FnOnce(&mut Variant)) {
    if let Some(variant) = variants_mut(config).and_then(|variants| variants.get_mut(index)) {
        change(variant);
    }
}

/// `A`, `B`, … the first letter no variant is called yet.
fn next_name(taken: &[Variant]) -> String {
    ('A'..='Z')
        .map(String::from)
        .find(|name| !taken.iter().any(|variant| variant.name == *name))
        .unwrap_or_else(|| format!("Variant {}", taken.len() + 1))
}

/// Re-prompts as a text box shows them, one per line.
fn lines_of(re_prompts: Option<&Vec<RePrompt>>) -> String {
    re_prompts.map_or_else(String::new, |re_prompts| {
        re_prompts
            .iter()
            .map(|re_prompt| re_prompt.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The module's variants, as a signal of the list.
type Variants = Signal<Vec<Variant>>;

/// A text field of variant `index`, as `read` shows it.
fn field_of(list: Variants, index: usize, read: fn(&Variant) -> String) -> impl Fn() -> String {
    move || list.with(|list| list.get(index).map(read).unwrap_or_default())
}

#[component]
pub fn VariantsSection(selected: Selected) -> impl IntoView {
    let list = selected.read(variants);
    let count = Memo::new(move |_| list.with(Vec::len));
    let add = selected.act("Add variant", |config, (): ()| {
        if let Some(variants) = variants_mut(config) {
            // An experiment compares: the first click makes two.
            let wanted = if variants.is_empty() { 2 } else { 1 };
            for _ in 0..wanted {
                let name = next_name(variants);
                variants.push(Variant::new(name));
            }
        }
    });
    let coding = selected.read(|config| matches!(config, ModuleConfig::Coding(_)));
    view! {
        <fieldset class="variants-section">
            <legend>"Variants"</legend>
            <p class="hint">
                {move || if coding.get() {
                    "Compare versions of this module: each runs its agents, re-prompts included, in a workspace of its own on the same inputs — with other agents' profiles or its own instruction."
                } else {
                    "Compare versions of this module: each runs the whole chain, re-prompts included, in its own session on the same inputs."
                }}
                " Wire ⚖ Variants to a judge's “Compare with” to score them. Empty fields keep the module's own."
            </p>
            <For each=move || 0..count.get() key=|index| *index let:index>
                <VariantCard selected list index coding/>
            </For>
            <button
                type="button"
                class="add"
                disabled=move || { selected.disabled().get() || count.get() >= MAX_VARIANTS }
                on:click=move |_| add.run(())
            >
                {move || if count.get() == 0 { "+ Compare variants" } else { "+ Add variant" }}
            </button>
            <FieldProblems selected=selected codes=&[graph::Code::ExperimentInvalid]/>
        </fieldset>
    }
}

/// One variant: its name, its instruction, and what else it changes —
/// a coding module's agents' profiles, or an agent task's chain.
#[component]
fn VariantCard(
    selected: Selected,
    list: Variants,
    index: usize,
    coding: Signal<bool>,
) -> impl IntoView {
    let remove = selected.act("Remove variant", |config, index: usize| {
        if let Some(variants) = variants_mut(config)
            && index < variants.len()
        {
            variants.remove(index);
        }
    });
    let rename = selected.update(
        "Rename variant",
        "variant_name",
        |config, (index, name): (usize, String)| {
            with_variant(config, index, |variant| variant.name = name);
        },
    );
    let instruct = selected.update(
        "Edit variant instruction",
        "variant_instruction",
        |config, (index, text): (usize, String)| {
            with_variant(config, index, |variant| {
                variant.instruction_override = (!text.trim().is_empty()).then_some(text);
            });
        },
    );
    let number = index + 1;
    let name = move || {
        list.with(|list| {
            list.get(index)
                .map(|variant| variant.name.clone())
                .unwrap_or_default()
        })
    };
    view! {
        <div class="variant-card" role="group" aria-label=move || format!("Variant {}", name())>
            <div class="row">
                <input
                    type="text"
                    class="variant-name"
                    aria-label=format!("Name of variant {number}")
                    prop:value=field_of(list, index, |variant| variant.name.clone())
                    disabled=move || selected.disabled().get()
                    on:input=move |event| rename.run((index, event_target_value(&event)))
                />
                <button type="button" aria-label=format!("Remove variant {number}") disabled=move || selected.disabled().get() on:click=move |_| remove.run(index)>"✕"</button>
            </div>
            <label class="field">
                <span class="field-label">"Instruction"</span>
                <textarea
                    rows=2
                    aria-label=format!("Instruction of variant {number}")
                    placeholder="the module's instruction"
                    prop:value=field_of(list, index, |variant| variant.instruction_override.clone().unwrap_or_default())
                    disabled=move || selected.disabled().get()
                    on:input=move |event| instruct.run((index, event_target_value(&event)))
                ></textarea>
            </label>
            <Show when=move || coding.get()>
                <VariantProfiles selected list index/>
            </Show>
            <Show when=move || !coding.get()>
                <VariantChain selected list index/>
            </Show>
        </div>
    }
}

/// A coding module's variant: the ACP profile of each of its agents.
#[component]
fn VariantProfiles(selected: Selected, list: Variants, index: usize) -> impl IntoView {
    let roles = selected.read(|config| match config {
        ModuleConfig::Coding(coding) => coding
            .agents
            .iter()
            .map(|agent| agent.role.clone())
            .collect(),
        _ => Vec::<String>::new(),
    });
    let editor = selected.editor;
    let profiles = Signal::derive(move || {
        let mut options = vec![(String::new(), "the module's".to_owned())];
        if let Some(catalogue) = editor.catalogue.get() {
            options.extend(
                catalogue
                    .acp_profiles
                    .iter()
                    .map(|profile| (profile.id.clone(), profile.name.clone())),
            );
        }
        options
    });
    let choose_profile = selected.act(
        "Choose variant profile",
        |config, (index, role, profile): (usize, String, String)| {
            with_variant(config, index, |variant| {
                let chosen = variant
                    .config_overrides
                    .agent_profiles
                    .get_or_insert_with(Default::default);
                if profile.is_empty() {
                    chosen.remove(&role);
                } else {
                    chosen.insert(role, profile);
                }
                if chosen.is_empty() {
                    variant.config_overrides.agent_profiles = None;
                }
            });
        },
    );
    let number = index + 1;
    move || {
        roles.get().into_iter().map(|role| {
        let shown = role.clone();
        let chosen = role.clone();
        let current = move || list.with(|list| {
            list.get(index)
                .and_then(|variant| variant.config_overrides.agent_profiles.as_ref()?.get(&role).cloned())
                .unwrap_or_default()
        });
        view! {
            <label class="field">
                <span class="field-label">{format!("Profile of {shown}")}</span>
                <select
                    aria-label=format!("Profile of {shown} in variant {number}")
                    disabled=move || selected.disabled().get()
                    on:change=move |event| choose_profile.run((index, chosen.clone(), event_target_value(&event)))
                >
                    {move || {
                        let now = current();
                        profiles.get().into_iter().map(|(id, name)| {
                            let selected = id == now;
                            view! { <option value=id selected=selected>{name}</option> }
                        }).collect_view()
                    }}
                </select>
            </label>
        }
    }).collect_view()
    }
}

/// An agent task's variant: its re-prompts, model and temperature.
#[component]
fn VariantChain(selected: Selected, list: Variants, index: usize) -> impl IntoView {
    let re_prompt = selected.update(
        "Edit variant re-prompts",
        "variant_re_prompts",
        |config, (index, text): (usize, String)| {
            with_variant(config, index, |variant| {
                let lines: Vec<RePrompt> = text
                    .lines()
                    .filter(|line| !line.trim().is_empty())
                    .map(RePrompt::new)
                    .collect();
                variant.config_overrides.re_prompts = (!lines.is_empty()).then_some(lines);
            });
        },
    );
    let model = selected.update(
        "Edit variant model",
        "variant_model",
        |config, (index, text): (usize, String)| {
            with_variant(config, index, |variant| {
                variant.config_overrides.model =
                    (!text.trim().is_empty()).then(|| text.trim().to_owned());
            });
        },
    );
    let temperature = selected.update(
        "Edit variant temperature",
        "variant_temperature",
        |config, (index, value): (usize, Option<f64>)| {
            with_variant(config, index, |variant| {
                variant.config_overrides.temperature = value
            });
        },
    );
    let number = index + 1;
    view! {
        <label class="field">
            <span class="field-label">"Re-prompts, one per line"</span>
            <textarea
                rows=2
                aria-label=format!("Re-prompts of variant {number}")
                placeholder="the module's re-prompts"
                prop:value=field_of(list, index, |variant| lines_of(variant.config_overrides.re_prompts.as_ref()))
                disabled=move || selected.disabled().get()
                on:input=move |event| re_prompt.run((index, event_target_value(&event)))
            ></textarea>
        </label>
        <div class="row">
            <label class="field">
                <span class="field-label">"Model"</span>
                <input
                    type="text"
                    aria-label=format!("Model of variant {number}")
                    placeholder="the module's"
                    prop:value=field_of(list, index, |variant| variant.config_overrides.model.clone().unwrap_or_default())
                    disabled=move || selected.disabled().get()
                    on:input=move |event| model.run((index, event_target_value(&event)))
                />
            </label>
            <label class="field field-number">
                <span class="field-label">"Temperature"</span>
                <input
                    type="number"
                    min=0
                    max=2
                    step=0.1
                    aria-label=format!("Temperature of variant {number}")
                    placeholder="the module's"
                    prop:value=field_of(list, index, |variant| variant.config_overrides.temperature.map(|value| value.to_string()).unwrap_or_default())
                    disabled=move || selected.disabled().get()
                    on:input=move |event| {
                        let input = event_target::<web_sys::HtmlInputElement>(&event);
                        let value = input.value_as_number();
                        temperature.run((index, (!input.value().trim().is_empty() && value.is_finite()).then_some(value.clamp(0.0, 2.0))));
                    }
                />
            </label>
        </div>
    }
}
