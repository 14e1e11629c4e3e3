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
}

/// The sessions of one run, by key: models' chats, and references to
/// coding agents' sessions. The two are kept apart, so an agent task never
/// takes up an ACP session as a chat, nor a coding agent a chat.
#[derive(Default)]
pub struct SessionStore {
    sessions: Mutex<HashMap<String, Session>>,
    agent_sessions: Mutex<HashMap<String, AgentSessionReference>>,
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

    pub fn put_agent_session(&self, key: &str, reference: AgentSessionReference) {
        if let Ok(mut sessions) = self.agent_sessions.lock() {
            sessions.insert(key.to_owned(), reference);
        }
    }
}
