//! The paper clip and the chips of attached files (DOC23 §6.1): on an agent
//! task's primary instruction and on each re-prompt, "the same attachment
//! picker" for both. A file is uploaded to the graph first (only its editor
//! may), and the prompt keeps a reference to it.

use graph::config::RePromptOwner;
use graph::{Attachment, ModuleConfig};
use leptos::prelude::*;

use super::Selected;
use crate::api::{self, ApiError};

/// Which prompt the files go with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachmentPlace {
    /// The agent task's instruction, sent as the first turn.
    Instruction,
    /// Re-prompt `index` (0-based) of the module or of one coding agent.
    RePrompt(RePromptOwner, usize),
}

impl AttachmentPlace {
    fn list(self, config: &ModuleConfig) -> Option<&Vec<Attachment>> {
        match (self, config) {
            (AttachmentPlace::Instruction, ModuleConfig::AgentTask(task)) => {
                Some(&task.attachments)
            }
            (AttachmentPlace::Instruction, _) => None,
            (AttachmentPlace::RePrompt(owner, index), config) => config
                .re_prompts(owner)
                .and_then(|list| list.get(index))
                .map(|re_prompt| &re_prompt.attachments),
        }
    }

    fn list_mut(self, config: &mut ModuleConfig) -> Option<&mut Vec<Attachment>> {
        match (self, config) {
            (AttachmentPlace::Instruction, ModuleConfig::AgentTask(task)) => {
                Some(&mut task.attachments)
            }
            (AttachmentPlace::Instruction, _) => None,
            (AttachmentPlace::RePrompt(owner, index), config) => config
                .re_prompts_mut(owner)
                .and_then(|list| list.get_mut(index))
                .map(|re_prompt| &mut re_prompt.attachments),
        }
    }

    /// What the paper clip says to a screen reader.
    fn label(self) -> String {
        match self {
            AttachmentPlace::Instruction => "Attach files to the first prompt".to_owned(),
            AttachmentPlace::RePrompt(_, index) => {
                format!("Attach files to re-prompt {}", index + 1)
            }
        }
    }
}

#[component]
pub fn AttachmentChips(selected: Selected, place: AttachmentPlace) -> impl IntoView {
    let attachments = selected.read(move |config| place.list(config).cloned().unwrap_or_default());
    let remove = selected.act("Remove attachment", move |config, attachment: String| {
        if let Some(list) = place.list_mut(config) {
            list.retain(|existing| existing.id != attachment);
        }
    });
    let attach = selected.act("Attach file", move |config, attachment: Attachment| {
        if let Some(list) = place.list_mut(config) {
            list.push(attachment);
        }
    });
    let editor = selected.editor;
    let upload = move |event: web_sys::Event| {
        let Some((input, files)) = crate::browser::chosen_files(&event) else {
            return;
        };
        input.set_value("");
        let graph_id = editor.graph_id();
        if crate::edit_token::authorization(&graph_id).is_none() {
            editor.notify("Only the graph's editor can attach files.");
            return;
        }
        for file in files {
            let graph_id = graph_id.clone();
            leptos::task::spawn_local(async move {
                match api::attach(&graph_id, &file).await {
                    Ok(attachment) => attach.run(attachment),
                    Err(ApiError::Unreadable(_)) => {
                        editor.notify("The server's answer to the upload was not understood.")
                    }
                    Err(ApiError::Unreachable(_)) => {
                        editor.notify("The server could not be reached; the file was not attached.")
                    }
                    Err(refused) => editor.notify(format!(
                        "Could not attach {}: {}",
                        file.name(),
                        refused.message_or("the server refused it")
                    )),
                }
            });
        }
    };
    view! {
        <div class="attachments">
            <For each=move || attachments.get() key=|attachment| attachment.id.clone() let:attachment>
                <span class="attachment-chip">
                    <a href=api::attachment_address(&attachment.id) target="_blank" rel="noopener">
                        {crate::icons::paperclip()}
                        {attachment.name.clone()}
                    </a>
                    <button
                        type="button"
                        aria-label=format!("Remove attachment {}", attachment.name)
                        disabled=move || selected.disabled().get()
                        on:click={
                            let id = attachment.id.clone();
                            move |_| remove.run(id.clone())
                        }
                    >"✕"</button>
                </span>
            </For>
            <label class="attach" class:disabled=move || selected.disabled().get() title=place.label()>
                {crate::icons::paperclip()}
                "Attach files"
                <input
                    type="file"
                    multiple=true
                    hidden=true
                    aria-label=place.label()
                    disabled=move || selected.disabled().get()
                    on:change=upload
                />
            </label>
        </div>
    }
}
