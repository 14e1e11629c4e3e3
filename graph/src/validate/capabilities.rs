//! What the server will refuse to run, said before the run: a module that
//! runs shell commands (a command, a poll, validators) on a server started
//! without `--enable-commands`, and a module that starts processes (those,
//! and coding agents) on a server that cannot confine them. The finding
//! names the module by its label and says what in it needs the capability;
//! the server's refusal at run time says the same words.

use super::{Code, Findings, ValidationContext};
use crate::{Graph, Module, ModuleKind};

/// What in `module` runs shell commands, in words ("its validators"), if
/// anything does.
pub fn commands_in(module: &Module) -> Option<String> {
    let validators = module
        .config
        .validation()
        .map_or(0, |validation| validation.validators.len());
    match module.kind() {
        Some(ModuleKind::Command) => Some("its command".to_owned()),
        Some(ModuleKind::Poll) => Some("its poll command".to_owned()),
        _ if validators == 1 => Some("its validator".to_owned()),
        _ if validators > 1 => Some(format!("its {validators} validators")),
        _ => None,
    }
}

/// What in `module` starts processes on the host, in words, if anything
/// does.
pub fn processes_in(module: &Module) -> Option<String> {
    if !module.config.starts_processes() {
        return None;
    }
    Some(match module.kind() {
        Some(ModuleKind::Coding) => "its coding agents".to_owned(),
        _ => commands_in(module).unwrap_or_else(|| "its processes".to_owned()),
    })
}

/// The refusal of a module that runs commands on a server that does not.
pub fn commands_disabled(module: &Module, what: &str) -> String {
    format!(
        "“{}” runs shell commands ({what}), and this server does not run commands: start it with --enable-commands, or remove them",
        module.display_label()
    )
}

/// The refusal of a module that starts processes on a server that cannot
/// confine them.
pub fn sandbox_unavailable(module: &Module, what: &str) -> String {
    format!(
        "“{}” starts processes ({what}), and this server cannot confine them (bubblewrap is missing or not allowed), so it runs none",
        module.display_label()
    )
}

pub(super) fn check(findings: &mut Findings, graph: &Graph, context: &ValidationContext) {
    for (index, module) in graph.modules.iter().enumerate() {
        if context.commands_enabled == Some(false)
            && let Some(what) = commands_in(module)
        {
            findings.module(
                Code::CommandsDisabled,
                index,
                module,
                None,
                commands_disabled(module, &what),
            );
        } else if context.sandbox_available == Some(false)
            && let Some(what) = processes_in(module)
        {
            findings.module(
                Code::SandboxUnavailable,
                index,
                module,
                None,
                sandbox_unavailable(module, &what),
            );
        }
    }
}
