//! Graph ids and edit tokens. An id names a graph and lets anyone view it;
//! the edit token is the capability to change it: save over it, upload to
//! it, start, cancel and list its runs. A run's id lets anyone read that
//! one run. All are random and URL-safe; the server keeps only a hash of
//! the token.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// `prefix` and 144 random bits: unguessable, 24 URL-safe characters.
fn random_id(prefix: &str) -> String {
    let bytes: [u8; 18] = rand::random();
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether `id` has the shape `random_id(prefix)` gives (so junk never
/// reaches the database and every bad id is the same plain 404).
fn is_random_id(prefix: &str, id: &str) -> bool {
    id.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == 24
            && rest
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
    })
}

pub fn new_graph_id() -> String {
    random_id("g_")
}

pub fn new_run_id() -> String {
    random_id("r_")
}

/// A run token's id (not the token: it names one in a list).
pub fn new_run_token_id() -> String {
    random_id("t_")
}

pub fn is_run_token_id(id: &str) -> bool {
    is_random_id("t_", id)
}

pub fn new_attachment_id() -> String {
    random_id("a_")
}

pub fn is_attachment_id(id: &str) -> bool {
    is_random_id("a_", id)
}

/// A script nonce for one response: 128 random bits.
pub fn new_nonce() -> String {
    let bytes: [u8; 16] = rand::random();
    URL_SAFE_NO_PAD.encode(bytes)
}

/// 256 random bits.
pub fn new_edit_token() -> String {
    let bytes: [u8; 32] = rand::random();
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn is_graph_id(id: &str) -> bool {
    is_random_id("g_", id)
}

pub fn is_run_id(id: &str) -> bool {
    is_random_id("r_", id)
}

/// The stored form of a token. Tokens are long random strings, so a plain
/// SHA-256 is enough: there is nothing to brute-force.
pub fn hash_token(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Compares a presented token with a stored hash in constant time.
pub fn token_matches(token: &str, stored_hash: &str) -> bool {
    let presented = hash_token(token);
    presented.len() == stored_hash.len()
        && presented
            .bytes()
            .zip(stored_hash.bytes())
            .fold(0u8, |difference, (left, right)| difference | (left ^ right))
            == 0
}

/// The token of `Authorization: Bearer <token>`.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
        .filter(|token| !token.is_empty())
}

/// Checks that `headers` carry graph `id`'s edit token; `action` says what
/// needs it ("saving", "starting a run", …). A graph that does not exist is
/// `graph.not_found`, whatever was sent.
pub async fn require_edit_token(
    store: &crate::store::Store,
    id: &str,
    headers: &HeaderMap,
    action: &'static str,
) -> Result<(), crate::error::ApiError> {
    let (token, stored_hash) = presented(
        store,
        id,
        headers,
        crate::error::ApiError::EditTokenRequired(action),
    )
    .await?;
    if token_matches(token, &stored_hash) {
        Ok(())
    } else {
        Err(crate::error::ApiError::EditTokenInvalid)
    }
}

/// The bearer token `headers` carry for graph `id`, and the hash of the
/// graph's edit token: `graph.not_found` for a graph that does not exist,
/// whatever was sent, and `missing` without a token.
async fn presented<'h>(
    store: &crate::store::Store,
    id: &str,
    headers: &'h HeaderMap,
    missing: crate::error::ApiError,
) -> Result<(&'h str, String), crate::error::ApiError> {
    use crate::error::ApiError;
    if !is_graph_id(id) {
        return Err(ApiError::GraphNotFound);
    }
    let stored_hash = store
        .edit_token_hash(id)
        .await?
        .ok_or(ApiError::GraphNotFound)?;
    let token = bearer_token(headers).ok_or(missing)?;
    Ok((token, stored_hash))
}

/// Who starts a run: the graph's editors, a program with one of its run
/// tokens, or one of its triggers.
#[derive(Clone, Debug)]
pub enum Starter {
    Editor,
    Token(crate::store::StoredRunToken),
    Schedule {
        trigger: String,
        tick: i64,
        caught_up: bool,
    },
    /// A delivery to a webhook trigger, with its secret.
    Webhook {
        graph_id: String,
        trigger: String,
    },
}

impl Starter {
    pub fn started_by(&self) -> wire::run::StartedBy {
        let mut started_by = wire::run::StartedBy {
            how: wire::run::StartedHow::Editor,
            token: None,
            trigger: None,
            tick: None,
            caught_up: false,
        };
        match self {
            Starter::Editor => {}
            Starter::Token(token) => {
                started_by.how = wire::run::StartedHow::Api;
                started_by.token = Some(token.name.clone());
            }
            Starter::Schedule {
                trigger,
                tick,
                caught_up,
            } => {
                started_by.how = wire::run::StartedHow::Schedule;
                started_by.trigger = Some(trigger.clone());
                started_by.tick = Some(*tick);
                started_by.caught_up = *caught_up;
            }
            Starter::Webhook { trigger, .. } => {
                started_by.how = wire::run::StartedHow::Webhook;
                started_by.trigger = Some(trigger.clone());
            }
        }
        started_by
    }

    /// Whom an `Idempotency-Key` belongs to, and whose runs a rate limit
    /// counts together: the editors, a run token, a trigger.
    pub fn scope(&self) -> String {
        match self {
            Starter::Editor => "editor".to_owned(),
            Starter::Token(token) => token.id.clone(),
            Starter::Schedule { trigger, .. } => format!("schedule:{trigger}"),
            Starter::Webhook { graph_id, trigger } => format!("hook:{graph_id}:{trigger}"),
        }
    }
}

/// Checks that `headers` carry graph `id`'s edit token or one of its run
/// tokens that is not revoked (PRODUCT §6.2). A graph that does not exist
/// is `graph.not_found`, whatever was sent.
pub async fn require_starter(
    store: &crate::store::Store,
    id: &str,
    headers: &HeaderMap,
    action: &'static str,
) -> Result<Starter, crate::error::ApiError> {
    let missing = crate::error::ApiError::StarterTokenRequired(action);
    let (token, stored_hash) = presented(store, id, headers, missing).await?;
    if token_matches(token, &stored_hash) {
        return Ok(Starter::Editor);
    }
    // Tokens are 256 random bits: looking one up by its hash gives away
    // nothing a comparison in constant time would keep.
    store
        .use_run_token(id, &hash_token(token), crate::store::now_millis())
        .await?
        .map(Starter::Token)
        .ok_or(crate::error::ApiError::EditTokenInvalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_url_safe_and_recognised() {
        let first = new_graph_id();
        let second = new_graph_id();
        assert_ne!(first, second);
        assert!(is_graph_id(&first), "{first}");
        assert_eq!(first.len(), 26);
        assert!(!is_graph_id("g_short"));
        assert!(!is_graph_id("../../etc/passwd"));
        assert!(!is_graph_id(&format!("x{}", &first[1..])));
    }

    #[test]
    fn tokens_match_only_their_hash() {
        let token = new_edit_token();
        assert_eq!(token.len(), 43);
        let stored = hash_token(&token);
        assert!(token_matches(&token, &stored));
        assert!(!token_matches(&new_edit_token(), &stored));
        assert!(!token_matches("", &stored));
        assert_ne!(stored, token, "the token itself is never stored");
    }
}
