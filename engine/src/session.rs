//! Chat sessions of a run. A re-prompt is a new user turn in the same
//! session; `session_mode: continue` picks up an upstream module's session
//! by its key, and `session_persist` continues a module's own session when
//! a revision loop activates it again. A coding agent's session is held by
//! the agent, not here: the run keeps only a reference to it, for a
//! downstream coding agent that continues it over ACP (`session/load`).

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::provider::ChatMessage;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Session {
    pub provider: String,
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<ChatMessage>,
}

/// A coding agent's ACP session, as a downstream coding agent of the same
/// run continues it: the profile whose agent holds it and the session id
/// that agent gave it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentSessionReference {
    pub profile_id: String,
    pub session_id: String,
    /// Who held it: the module's label and the agent's role, for the
    /// transcript of the one that continues it.
    pub held_by: String,
    /// Whether the module's whole `data_out` is in the session (one agent
    /// did all the work), so one who continues it need not be given it
    /// again; a chain's other agents' replies and a reviewer's verdict are
    /// not.
    #[serde(default)]
    pub holds_whole_output: bool,
    /// The folder the agent worked in, as it saw it: an agent that keys
    /// its sessions by folder (Qwen Code, Claude Code) loads this one only
    /// there, so the module that continues it is shown its own copy at
    /// this path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<std::path::PathBuf>,
}

/// The sessions of one run, by key: models' chats, and references to
/// coding agents' sessions. The two are kept apart, so an agent task never
/// takes up an ACP session as a chat, nor a coding agent a chat.
#[derive(Default)]
pub struct SessionStore {
    sessions: Mutex<HashMap<String, Session>>,
    agent_sessions: Mutex<HashMap<String, AgentSessionReference>>,
    /// Who took up each agent session. Taking one up continues it (ACP
    /// has no copy): a second module, or a second variant, would write
    /// into the first one's conversation.
    agent_session_takers: Mutex<HashMap<String, String>>,
}

impl SessionStore {
    /// The key of a module's session: its own per activation, or one key
    /// across activations when it persists.
    pub fn key(module_id: &str, activation: u32, persist: bool) -> String {
        if persist {
            format!("{module_id}#persist")
        } else {
            format!("{module_id}#{activation}")
        }
    }

    pub fn get(&self, key: &str) -> Option<Session> {
        self.sessions.lock().ok()?.get(key).cloned()
    }

    pub fn put(&self, key: &str, session: Session) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(key.to_owned(), session);
        }
    }

    pub fn agent_session(&self, key: &str) -> Option<AgentSessionReference> {
        self.agent_sessions.lock().ok()?.get(key).cloned()
    }

    /// Takes up the agent session under `key` for `taker` (a module, or a
    /// module's variant): the first to ask, and the same taker again (a
    /// repeated activation goes on with it), get it; anyone else is told
    /// who has it.
    pub fn take_agent_session(&self, key: &str, taker: &str) -> Result<(), String> {
        let mut takers = self
            .agent_session_takers
            .lock()
            .map_err(|_| "the run's sessions are unavailable".to_owned())?;
        match takers.get(key) {
            Some(holder) if holder != taker => Err(holder.clone()),
            Some(_) => Ok(()),
            None => {
                takers.insert(key.to_owned(), taker.to_owned());
                Ok(())
            }
        }
    }

    pub fn put_agent_session(&self, key: &str, reference: AgentSessionReference) {
        if let Ok(mut sessions) = self.agent_sessions.lock() {
            sessions.insert(key.to_owned(), reference);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_session_is_taken_up_by_one_taker_only() {
        let store = SessionStore::default();
        assert_eq!(store.take_agent_session("build#1/acp", "fix"), Ok(()));
        assert_eq!(store.take_agent_session("build#1/acp", "fix"), Ok(()));
        assert_eq!(
            store.take_agent_session("build#1/acp", "fix--variant-2"),
            Err("fix".to_owned())
        );
        assert_eq!(store.take_agent_session("build#2/acp", "other"), Ok(()));
    }
}
