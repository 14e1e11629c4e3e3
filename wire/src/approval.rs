//! A person's part in a run (PRODUCT §3.14): what an approval asks and
//! shows while it waits, the decision someone takes on it, and the bodies
//! of the API that takes decisions and makes approver links.

use serde::{Deserialize, Serialize};

use crate::bundle::PortValue;
use crate::status::words;

words! {
    /// What a person decided.
    pub enum Decision {
        /// Go on: the value (as they may have edited it) leaves on
        /// `approved_out`.
        Approve,
        /// Stop: the value and their reason leave on `rejected_out`.
        Reject,
        /// Do it again, but …: their feedback leaves on `revise_out`.
        Revise,
    }
}

words! {
    /// Who decided: someone with the graph's edit link, or with an
    /// approver link of the run.
    pub enum Decider {
        Editor,
        ApproverLink,
    }
}

impl Decider {
    /// As a person reads it: "the editor", "an approver link".
    pub fn words(self) -> &'static str {
        match self {
            Decider::Editor => "the editor",
            Decider::ApproverLink => "an approver link",
        }
    }
}

/// A value an approval shows the person, and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Shown {
    /// The approval's input port it came on.
    pub port: String,
    pub source_module: String,
    pub source_label: String,
    /// The source module's output port it left by (a coding module's
    /// `diff_out`, `test_results_out`, …), which says how to show it; empty
    /// in records written before it was kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_port: String,
    pub value: PortValue,
}

/// What a waiting approval asks, in its activation's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Waiting {
    /// The question, its variables filled.
    pub asked: String,
    pub shown: Vec<Shown>,
    /// The value an approval passes on, which the person may edit: the
    /// text of what came on `data_in`.
    pub value: String,
    /// The one value that came on `data_in`, passed on as it came when
    /// approved unedited (a coding module's output keeps its session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes_on: Option<PortValue>,
    /// When its timeout fires (Unix ms); `None` waits as long as the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at: Option<i64>,
}

/// A decision as the record keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DecisionRecord {
    pub decision: Decision,
    /// Their reason (reject) or feedback (revise).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub feedback: String,
    /// The value as they edited it, when they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub by: Decider,
    /// Unix milliseconds.
    pub at: i64,
}

/// Why a tool call waits for a person (PRODUCT §3.17), in its record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CallWait {
    /// The verdict in words ("Calls wait for you: this module asks").
    pub reason: String,
    /// When nobody's decision comes too late and the call is refused to
    /// the model as timed out (Unix ms); `None` waits as long as the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_at: Option<i64>,
}

/// A decision on a tool call that waited, as its record keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CallDecision {
    /// `approve` or `reject` (a timeout is a rejection by nobody).
    pub decision: Decision,
    /// The arguments as the person edited them, when they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    /// Their reason, told to the model on a rejection.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub feedback: String,
    /// Who decided; `None` when nobody did in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Decider>,
    /// Unix milliseconds.
    pub at: i64,
}

/// `POST /api/runs/{run_id}/modules/{module_id}/decision`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DecisionRequest {
    pub decision: Decision,
    /// The activation the person decided on, as they saw it. When the
    /// approval has moved on (someone else decided, another round waits),
    /// the decision is refused rather than taken for what they never saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The tool call decided on, when the module waits on its tool calls
    /// (PRODUCT §3.17): `approve` or `reject` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// A call's arguments as the person edited them (an approval only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `POST /api/runs/{run_id}/approver-links`: a link that can decide this
/// run's approvals and nothing else. The token is shown once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApproverLink {
    pub url: String,
    pub token: String,
}
