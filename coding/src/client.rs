//! The ACP client: one coding agent process, one ACP session in it, turns
//! sent one after another in that session (the first prompt, then each
//! re-prompt). Updates stream back as they come; each is parsed on its own,
//! and a malformed one is logged and skipped rather than failing the turn.
//! The agent's file requests are confined to the workspace and its
//! permission requests answered by the profile's policy. Dropping the
//! session cancels the turn in flight (`session/cancel`) and stops the
//! process. A session can also be taken up from an earlier process
//! (`session/load`), when a downstream module continues it.

mod choices;
mod continuation;
mod driver;
mod handlers;
mod session;
mod test_runs;
mod turn;

pub use choices::SessionChoices;
pub use continuation::Continuation;
pub use session::{AgentSession, Place, ToolServers};
pub use test_runs::{TestRun, looks_like_tests};
pub use turn::{TurnEvent, TurnOutcome};

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AgentError {
    #[error("{0}")]
    Failed(String),
    #[error("the agent's turn was cancelled")]
    Cancelled,
}
