//! The prompts the agents are given: an agent's first turn (the module's
//! inputs, its instruction, what the agent before it handed over), and
//! long text cut to fit in a prompt.

use engine::activation::{ActivationContext, ActivationError};
use engine::prompt::{InputSelection, primary_turn};
use graph::config::{CodingAgentAssignment, CodingConfig};

use super::turns::Phase;
use crate::workspace::ChangedFile;

/// Diffs longer than this are cut in prompts (never in `diff_out`).
pub(super) const PROMPT_DIFF_CHARACTERS: usize = 20_000;

/// The first turn of an agent: the module's inputs (but the one that named
/// the session it `continued`, already in its conversation), then
/// its instruction (the agent's override, or the module's), then what it is
/// handed.
pub(super) fn agent_prompt(
    context: &ActivationContext,
    config: &CodingConfig,
    agent: &CodingAgentAssignment,
    handoff: Option<&Phase>,
    continued: Option<&str>,
) -> Result<String, ActivationError> {
    // An agent's own instruction stays its own on a retry; the module's
    // gives way to the retry instruction when it has one.
    let instruction = match agent
        .instruction_override
        .as_deref()
        .filter(|text| !text.trim().is_empty())
    {
        Some(own) => context.render(own)?,
        None => context.render_instruction(&config.instruction)?,
    };
    let selection = continued.map_or(InputSelection::All, InputSelection::AllButSession);
    let mut prompt = primary_turn(context, &instruction, selection);
    if let Some(previous) = handoff {
        prompt.push_str(&format!(
            "\n\n## Handoff from {} ({})\n\n{}",
            previous.role,
            previous.agent_name,
            previous.summary()
        ));
        if !previous.files.is_empty() {
            prompt.push_str("\n\nFiles changed so far: ");
            prompt.push_str(&file_list(&previous.files));
        }
    }
    Ok(prompt)
}

fn file_list(files: &[ChangedFile]) -> String {
    files
        .iter()
        .map(|file| format!("{} ({})", file.path, file.status))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn cut(text: &str, characters: usize) -> String {
    match text.char_indices().nth(characters) {
        Some((end, _)) => format!(
            "{}\n… (cut at {characters} characters)",
            text.get(..end).unwrap_or(text)
        ),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééééé", 2), "éé\n… (cut at 2 characters)");
    }
}
