//! Run tokens (PRODUCT §6.2): made for a graph by its editors, each starts
//! runs of that graph and reads them, and nothing else. A token is shown
//! once, when it is made; the server keeps a hash.

use serde::{Deserialize, Serialize};

/// `POST /api/graphs/{id}/run-tokens`: what the token is for, in a few
/// words (the run history says which token started a run).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NewRunToken {
    #[serde(default)]
    pub name: String,
}

/// A run token as its graph's editors see it: never the token itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunTokenInfo {
    pub id: String,
    pub name: String,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<i64>,
}

/// The reply to a token made: the token, this once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunTokenMade {
    #[serde(flatten)]
    pub info: RunTokenInfo,
    pub token: String,
}

/// `GET /api/graphs/{id}/run-tokens`: newest first, revoked ones included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunTokenList {
    pub tokens: Vec<RunTokenInfo>,
}
