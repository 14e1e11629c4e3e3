//! The graphs API's bodies (PRODUCT §6): a graph made or forked, a graph
//! saved, a document validated, an attachment stored, and what the home
//! page asks about the graphs a browser holds.

use graph::Finding;
use serde::{Deserialize, Serialize};

use crate::status::RunStatus;

/// `POST /api/graphs` and `POST /api/graphs/{id}/fork`: the new graph and
/// the edit token that only this reply ever carries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GraphCreated {
    pub id: String,
    pub revision: i64,
    pub edit_token: String,
    /// The view link.
    pub url: String,
    /// The edit link: the view link with `#edit=<token>`.
    pub edit_url: String,
    pub findings: Vec<Finding>,
}

/// `PUT /api/graphs/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GraphSaved {
    pub id: String,
    pub revision: i64,
    pub findings: Vec<Finding>,
    pub has_errors: bool,
}

/// `POST /api/validate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ValidationReport {
    pub has_errors: bool,
    pub findings: Vec<Finding>,
}

/// `POST /api/graphs/{id}/attachments`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AttachmentStored {
    pub id: String,
    pub name: String,
    pub media_type: String,
    pub size_bytes: usize,
}

/// `POST /api/graphs/summaries`: the graphs a browser holds edit tokens for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SummariesRequest {
    pub graphs: Vec<HeldGraph>,
}

/// A graph a browser holds the edit token of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HeldGraph {
    pub id: String,
    pub edit_token: String,
}

/// The reply: a summary of each graph whose token matched, and the ids of
/// all the others, with nothing about them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Summaries {
    pub graphs: Vec<GraphSummary>,
    pub unknown: Vec<String>,
}

/// A graph on the home page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GraphSummary {
    pub id: String,
    pub name: String,
    pub revision: i64,
    /// Its last edit, in Unix milliseconds.
    pub updated_at: i64,
    pub last_run: Option<LastRun>,
    /// Its newest run waiting for a person (PRODUCT §3.14), if one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_run: Option<String>,
}

/// The newest run of a graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LastRun {
    pub id: String,
    pub status: RunStatus,
    pub created_at: i64,
}

/// One saved revision of a graph, as its history lists it. Every save
/// (autosave included) is a revision, and every save needs the edit link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RevisionSummary {
    pub revision: i64,
    /// Unix milliseconds.
    pub saved_at: i64,
    /// The document's size as stored.
    pub size_bytes: i64,
    /// How it came to be: `created`, `forked` (from another graph) or
    /// `saved` (with the edit link, by the editor or a script).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// What changed from the revision before it, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// `GET /api/graphs/{id}/revisions`: newest first, a page at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RevisionList {
    /// The graph's current revision.
    pub current: i64,
    /// How many revisions are kept, and what they take in all.
    pub kept: i64,
    pub kept_bytes: i64,
    pub revisions: Vec<RevisionSummary>,
    /// Pass as `before` for the next page; `None` on the last.
    pub next_before: Option<i64>,
}
