//! Whether a coding module's agents set to continue their input's session
//! will find one (DOC23 §7.1): only the first agent of a sequential or
//! review chain may, the session must be one an upstream coding module
//! hands on (`CodingConfig::session_holder`), held by an agent of the same
//! ACP profile, and no one else may take it up first.

use super::{CodingAgentAssignment, CodingConfig};
use crate::kinds::OutputSession;
use crate::validate::sessions::{handing_on, quoted_labels, session_sources};
use crate::validate::{Code, ModuleFindings};
use crate::{Module, ModuleConfig};

/// Each agent set to continue a session that will not find one, or that
/// another module takes up too, said at its `session_mode`.
pub(super) fn check(coding: &CodingConfig, findings: &mut ModuleFindings<'_>) {
    let sources = findings.session_sources(false);
    let handing = findings.session_sources(true);
    let name = findings.name();
    for (position, agent) in coding.agents.iter().enumerate() {
        if agent.session_mode.is_new() {
            continue;
        }
        let path = Some(format!("config.agents[{position}].session_mode"));
        if let Some(reason) = problem(coding, position, &sources, &handing) {
            findings.report(
                Code::SessionNotContinuable,
                path,
                format!(
                    "Agent {} of \"{name}\" continues its input's session, but {reason}: it starts a new session",
                    position + 1
                ),
            );
        } else if let Some(others) = rivals(findings, coding) {
            findings.report(
                Code::SessionNotContinuable,
                path,
                format!(
                    "Agent {} of \"{name}\" continues its input's session, as {others}: taking it up continues it, so only the first to start does, and the others work in new sessions",
                    position + 1
                ),
            );
        }
    }
}

/// Who else would take up the session the module continues: its own
/// variants, and other coding modules continuing the same upstream one.
fn rivals(findings: &ModuleFindings<'_>, coding: &CodingConfig) -> Option<String> {
    if !coding.variants.is_empty() {
        return Some("each of its variants does".to_owned());
    }
    let topology = findings.topology();
    let index = findings.index();
    let upstream: Vec<usize> = session_sources(topology, index, true)
        .into_iter()
        .map(|(from, _)| from)
        .collect();
    let others: Vec<&Module> = topology
        .graph
        .modules
        .iter()
        .enumerate()
        .filter(|(other, module)| {
            *other != index
                && matches!(&module.config, ModuleConfig::Coding(config)
                    if config.agents.first().is_some_and(|agent| !agent.session_mode.is_new()))
                && session_sources(topology, *other, true)
                    .iter()
                    .any(|(from, _)| upstream.contains(from))
        })
        .map(|(_, module)| module)
        .collect();
    (!others.is_empty()).then(|| format!("{} also does", quoted_labels(others.into_iter())))
}

/// Why agent `position` of `coding` will find no session to continue among
/// `sources`, when it will not.
fn problem(
    coding: &CodingConfig,
    position: usize,
    sources: &[&Module],
    handing: &[&Module],
) -> Option<String> {
    if let Some(refusal) = coding.continue_refusal(position) {
        return Some(refusal.to_owned());
    }
    let agent = coding.agents.get(position)?;
    let upstream: Vec<(&Module, &CodingAgentAssignment)> = handing
        .iter()
        .filter_map(|source| match &source.config {
            ModuleConfig::Coding(upstream) => upstream
                .session_holder()
                .and_then(|holder| upstream.agents.get(holder))
                .map(|holder| (*source, holder)),
            _ => None,
        })
        .collect();
    if upstream.is_empty() {
        return Some(no_upstream(sources, handing));
    }
    // The profile the server picks for an unnamed one is not known here,
    // so only two named, different profiles are certain to differ.
    let named = |assignment: &CodingAgentAssignment| {
        assignment
            .acp_profile_id
            .clone()
            .filter(|id| !id.trim().is_empty())
    };
    let mine = named(agent)?;
    let others: Vec<String> = upstream
        .iter()
        .filter_map(|(_, holder)| named(holder))
        .collect();
    (others.len() == upstream.len() && others.iter().all(|other| *other != mine)).then(|| {
        format!(
            "its agent ({mine}) is not the one that holds the session of {} ({}): a session continues only with the same agent",
            quoted_labels(upstream.iter().map(|(source, _)| *source)),
            others.join(", ")
        )
    })
}

/// Why no upstream coding module hands on a session to continue.
fn no_upstream(sources: &[&Module], handing: &[&Module]) -> String {
    let chats = handing_on(sources, OutputSession::Chat);
    let parallel = handing_on(handing, OutputSession::CodingAgent);
    let other_ports = handing_on(sources, OutputSession::CodingAgent);
    if !chats.is_empty() {
        format!(
            "{} is a model's chat, which a coding agent cannot take up",
            quoted_labels(chats.into_iter())
        )
    } else if !parallel.is_empty() {
        format!(
            "{} runs its agents in parallel, which hands on no session",
            quoted_labels(parallel.into_iter())
        )
    } else if !other_ports.is_empty() {
        format!(
            "{} is wired to it from a port that names no session (its Output, data_out, does)",
            quoted_labels(other_ports.into_iter())
        )
    } else if sources.is_empty() {
        "nothing is wired to its data or context input".to_owned()
    } else {
        format!(
            "{} is not a coding module and has no session to hand on",
            quoted_labels(sources.iter().copied())
        )
    }
}
