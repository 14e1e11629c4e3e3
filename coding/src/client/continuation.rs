//! Taking up a session that an earlier agent process held (DOC23 §7.1,
//! `session_mode: continue` on a coding agent): ACP `session/load` in the
//! new process, in the new module's workspace. The agent replays the
//! conversation before it answers; the replay is read and counted here, so
//! it never reaches the first turn's reply. An agent that does not offer
//! `session/load`, or fails it, gets a new session instead, and the
//! transcript says why.

use agent_client_protocol::Agent;
use agent_client_protocol::util::MatchDispatch;
use agent_client_protocol::v1::schema::{SessionNotification, SessionUpdate};
use agent_client_protocol::v1::{ActiveSession, SessionMessage};
use futures::FutureExt;

/// How the session of a started agent came to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Continuation {
    /// A new session, as asked.
    New,
    /// The session asked for, loaded, with this many earlier user turns in
    /// its replay.
    Loaded { earlier_turns: usize },
    /// A session was asked for and could not be loaded: why. A new session
    /// was opened instead.
    NotLoaded(String),
}

/// Reads what the agent replayed while loading (queued on the session
/// before the load's answer) and counts the user turns in it.
pub(super) async fn read_replay(session: &mut ActiveSession<'static, Agent>) -> usize {
    let mut turns = 0;
    let mut in_user_turn = false;
    while let Some(Ok(message)) = session.read_update().now_or_never() {
        let SessionMessage::Message(dispatch) = message else {
            continue;
        };
        let mut user_chunk = false;
        // Only counted: an update that cannot be read, or a request the
        // agent makes while replaying (it has no turn to ask in), changes
        // nothing here.
        let _ = MatchDispatch::new(dispatch.into_raw())
            .if_notification(async |notification: SessionNotification| {
                user_chunk = matches!(notification.update, SessionUpdate::UserMessageChunk(_));
                Ok(())
            })
            .await
            .otherwise_ignore();
        if user_chunk && !in_user_turn {
            turns += 1;
        }
        in_user_turn = user_chunk;
    }
    turns
}
