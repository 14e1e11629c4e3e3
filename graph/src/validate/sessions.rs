//! Whether a module set to continue its input's session (`session_mode:
//! continue`) will find one; when it will not, it starts a new session,
//! which validation says rather than the run finding it out. A model's
//! chat and a coding agent's ACP session are of different kinds (each
//! kind's `OUTPUT_SESSION`): an agent task continues only a chat, a coding
//! agent only the session an upstream coding module hands on. The kinds
//! that continue sessions ask here, from their `validate_cables`.

use super::{Code, ModuleFindings};
use crate::kinds::OutputSession;
use crate::ports::{CONTEXT_IN, DATA_IN, DATA_OUT, EXHAUSTED_OUT};
use crate::topology::Topology;
use crate::{Module, ModuleKind};

/// The modules feeding module `index`'s data and context inputs, with the
/// place they have; with `handing`, only from the ports that name a coding
/// agent's session (`data_out`, and `exhausted_out` which carries it).
pub(crate) fn session_sources<'a>(
    topology: &Topology<'a>,
    index: usize,
    handing: bool,
) -> Vec<(usize, &'a Module)> {
    topology
        .live
        .iter()
        .filter(|(cable, _, to)| {
            *to == index
                && matches!(cable.to.port.as_str(), DATA_IN | CONTEXT_IN)
                && (!handing || matches!(cable.from.port.as_str(), DATA_OUT | EXHAUSTED_OUT))
        })
        .filter_map(|(_, from, _)| Some((*from, topology.graph.modules.get(*from)?)))
        .collect()
}

/// The modules whose output names a session of this sort.
pub(crate) fn handing_on<'a>(modules: &[&'a Module], session: OutputSession) -> Vec<&'a Module> {
    modules
        .iter()
        .copied()
        .filter(|module| module.kind().map(ModuleKind::output_session) == Some(session))
        .collect()
}

pub(crate) fn quoted_labels<'a>(modules: impl Iterator<Item = &'a Module>) -> String {
    modules
        .map(|module| format!("\"{}\"", module.display_label()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl<'a> ModuleFindings<'a> {
    /// The graph as validation sees it, for checks across modules.
    pub(crate) fn topology(&self) -> &'a Topology<'a> {
        self.topology
    }

    /// The module's place in the graph.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// The modules feeding this one's data and context inputs (see
    /// [`session_sources`]).
    pub(crate) fn session_sources(&self, handing: bool) -> Vec<&'a Module> {
        session_sources(self.topology, self.index, handing)
            .into_iter()
            .map(|(_, source)| source)
            .collect()
    }

    /// A module continuing its input's chat: said when the only sessions
    /// coming in are coding agents', which it cannot take up.
    pub(crate) fn chat_continued(&mut self) {
        let sources = self.session_sources(false);
        let coding = handing_on(&sources, OutputSession::CodingAgent);
        if !handing_on(&sources, OutputSession::Chat).is_empty() || coding.is_empty() {
            return;
        }
        let message = format!(
            "\"{}\" continues its input's session, but {} is a coding module, whose session is a coding agent's (ACP) and cannot be continued by an agent task: it starts a new session",
            self.module.display_label(),
            quoted_labels(coding.into_iter())
        );
        self.report(
            Code::SessionNotContinuable,
            Some("config.session_mode".to_owned()),
            message,
        );
    }
}
