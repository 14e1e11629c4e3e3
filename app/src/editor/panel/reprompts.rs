//! The Re-Prompts section (DOC23 §6.1): numbered text areas, ✕ removes and
//! renumbers, a drag handle (or Alt+↑/↓) reorders, the paper clip attaches files to that
//! re-prompt only, `+ Add Re-Prompt` stops at 10, and for agent tasks the
//! "Send responses to separate outputs" checkbox. Used for module-level
//! re-prompts and for each coding agent's.

use graph::config::RePromptOwner;
use graph::port_moves;
use graph::validate::MAX_RE_PROMPTS;
use graph::{ModuleConfig, RePrompt};
use leptos::prelude::*;

use super::Selected;
use super::attachments::{AttachmentChips, AttachmentPlace};
use super::fields::CheckField;

fn owner_key(owner: RePromptOwner) -> String {
    match owner {
        RePromptOwner::Module => "module".to_owned(),
        RePromptOwner::Agent(index) => format!("agent-{index}"),
    }
}

/// The text area of re-prompt `index` (0-based), to give it focus.
fn area_id(module: &str, owner: RePromptOwner, index: usize) -> String {
    format!("reprompt-{module}-{}-{index}", owner_key(owner))
}

fn focus(id: &str) {
    if let Some(element) = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id(id))
        .and_then(|element| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(element).ok())
    {
        let _ = element.focus();
    }
}

fn list(config: &ModuleConfig, owner: RePromptOwner) -> Vec<RePrompt> {
    config.re_prompts(owner).cloned().unwrap_or_default()
}

/// Moves re-prompt `from` to `to` in one step, and keeps focus on it.
fn reorder(selected: Selected, owner: RePromptOwner, from: usize, to: usize) {
    let count = selected.module.with_untracked(|module| {
        module
            .as_ref()
            .map_or(0, |module| list(&module.config, owner).len())
    });
    if from >= count || to >= count || from == to {
        return;
    }
    selected.editor.update_module_moving_ports(
        &selected.id(),
        "Reorder re-prompts",
        None,
        |module| port_moves::move_re_prompt(&mut module.config, owner, from, to),
    );
    let id = area_id(&selected.id(), owner, to);
    crate::browser::next_frame(move || focus(&id));
}

#[component]
fn RePromptItem(
    selected: Selected,
    owner: RePromptOwner,
    index: usize,
    count: Signal<usize>,
) -> impl IntoView {
    let text = selected.read(move |config| {
        list(config, owner)
            .get(index)
            .map(|re_prompt| re_prompt.text.clone())
            .unwrap_or_default()
    });
    let edit = selected.update(
        "Edit re-prompt",
        "re_prompt",
        move |config, value: String| {
            if let Some(re_prompt) = config
                .re_prompts_mut(owner)
                .and_then(|list| list.get_mut(index))
            {
                re_prompt.text = value;
            }
        },
    );
    let remove = selected.move_ports("Remove re-prompt", None, move |config, (): ()| {
        port_moves::remove_re_prompt(config, owner, index)
    });
    let number = index + 1;
    let module_id = selected.id();
    let dragging = RwSignal::new(false);
    let held = super::fields::holder(text);
    view! {
        <li
            class="reprompt"
            class:drop-target=move || dragging.get()
            data-index=index
            on:dragover=move |event: web_sys::DragEvent| {
                event.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=move |event: web_sys::DragEvent| {
                event.prevent_default();
                dragging.set(false);
                let from = event
                    .data_transfer()
                    .and_then(|transfer| transfer.get_data("application/x-patchbay-reprompt").ok())
                    .and_then(|value| value.parse::<usize>().ok());
                if let Some(from) = from {
                    reorder(selected, owner, from, index);
                }
            }
        >
            <div class="reprompt-head">
                <span
                    class="drag-handle"
                    draggable="true"
                    title="Drag to reorder (or Alt+↑ / Alt+↓ in the text)"
                    aria-hidden="true"
                    on:dragstart=move |event: web_sys::DragEvent| {
                        if let Some(transfer) = event.data_transfer() {
                            let _ = transfer.set_data("application/x-patchbay-reprompt", &index.to_string());
                            transfer.set_effect_allowed("move");
                        }
                    }
                >"⠿"</span>
                <span class="reprompt-number">{format!("{number}.")}</span>
                {super::fields::typing_mark(held)}
                <button
                    type="button"
                    class="remove"
                    aria-label=format!("Remove re-prompt {number}")
                    title="Remove this re-prompt"
                    disabled=move || selected.disabled().get()
                    on:click=move |_| remove.run(())
                >"✕"</button>
            </div>
            <textarea
                id=area_id(&module_id, owner, index)
                rows=3
                aria-label=format!("Re-prompt {number}")
                placeholder="A follow-up prompt, sent in the same session after the previous response"
                prop:value=move || text.get()
                disabled=move || selected.disabled().get()
                readonly=move || held.get().is_some()
                title=super::fields::typing_title(held)
                class:held=move || held.get().is_some()
                on:input=move |event| edit.run(event_target_value(&event))
                on:keydown=move |event: web_sys::KeyboardEvent| {
                    super::fields::ignore_typing_while_held(held, &event);
                    if event.alt_key() && (event.key() == "ArrowUp" || event.key() == "ArrowDown") {
                        event.prevent_default();
                        let to = if event.key() == "ArrowUp" { index.checked_sub(1) } else { Some(index + 1).filter(|next| *next < count.get_untracked()) };
                        if let Some(to) = to {
                            reorder(selected, owner, index, to);
                        }
                    }
                }
            ></textarea>
            <AttachmentChips selected place=AttachmentPlace::RePrompt(owner, index)/>
            {(owner == RePromptOwner::Module).then(|| view! { <super::tools::RePromptTools selected index/> })}
        </li>
    }
}

#[component]
pub fn RePromptSection(
    selected: Selected,
    owner: RePromptOwner,
    /// Agent tasks offer per-response outputs (DOC23 §5); coding does not.
    #[prop(default = false)]
    separate_outputs: bool,
) -> impl IntoView {
    let count = selected.read(move |config| list(config, owner).len());
    let add = selected.act("Add re-prompt", move |config, (): ()| {
        if let Some(list) = config.re_prompts_mut(owner)
            && list.len() < MAX_RE_PROMPTS
        {
            list.push(RePrompt::new(""));
        }
    });
    let module_id = selected.id();
    let full = move || count.get() >= MAX_RE_PROMPTS;
    view! {
        <section class="reprompts" aria-label="Re-Prompts">
            <h3>"Re-Prompts"</h3>
            <p class="hint">"Sequential follow-up prompts in the same session. Each fires after the prior response."</p>
            <ol class="reprompt-list">
                <For each=move || 0..count.get() key=|index| *index let:index>
                    <RePromptItem selected owner index count/>
                </For>
            </ol>
            <button
                type="button"
                class="add-reprompt"
                disabled=move || full() || selected.disabled().get()
                on:click=move |_| {
                    add.run(());
                    let id = area_id(&module_id, owner, count.get_untracked().saturating_sub(1));
                    crate::browser::next_frame(move || focus(&id));
                }
            >"+ Add Re-Prompt"</button>
            <Show when=full>
                <p class="hint limit">{format!("At most {MAX_RE_PROMPTS} re-prompts per {}.", if owner == RePromptOwner::Module { "module" } else { "agent" })}</p>
            </Show>
            <Show when=move || separate_outputs>
                <CheckField
                    label="Send responses to separate outputs"
                    hint="Adds an output per response: Original Response, Re-prompt 1, …"
                    checked=selected.read(|config| matches!(config, ModuleConfig::AgentTask(task) if task.separate_outputs))
                    on_change=selected.act("Toggle separate outputs", |config, checked: bool| {
                        if let ModuleConfig::AgentTask(task) = config {
                            task.separate_outputs = checked;
                        }
                    })
                    disabled=selected.disabled()
                />
            </Show>
        </section>
    }
}
