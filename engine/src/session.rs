//! Chat sessions of a run. A re-prompt is a new user turn in the same
//! session; `session_mode: continue` picks up an upstream module's session
//! by its key, and `session_persist` continues a module's own session when
//! a revision loop activates it again.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::provider::ChatMessage;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Session {
    pub provider: String,
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<ChatMessage>,
}

/// The sessions of one run, by key.
#[derive(Default)]
pub struct SessionStore {
    sessions: Mutex<HashMap<String, Session>>,
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
}
