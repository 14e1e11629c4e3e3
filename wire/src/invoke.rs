//! A graph called as an API (PRODUCT §6.3): `POST /api/graphs/{id}/invoke`
//! starts a run and answers what its output modules received when it ends
//! within the wait, else where to follow it.

use serde::{Deserialize, Serialize};

use crate::run::RunInput;
use crate::status::RunStatus;

/// The request: the input as text, or as `{text, files}`; how long to
/// wait for the run to end (30 s unless said, at most 300).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Invoke {
    #[serde(default)]
    pub input: InvokeInput,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_seconds: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum InvokeInput {
    Text(String),
    Whole(RunInput),
}

impl Default for InvokeInput {
    fn default() -> InvokeInput {
        InvokeInput::Text(String::new())
    }
}

impl InvokeInput {
    pub fn into_run_input(self) -> RunInput {
        match self {
            InvokeInput::Text(text) => RunInput {
                text,
                files: Vec::new(),
            },
            InvokeInput::Whole(input) => input,
        }
    }
}

/// The answer: the run, how it stands, and — once it has ended — what each
/// output module received (`text`: all of it, one output after another).
/// A run that waits for a person gives a link to decide with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Invoked {
    pub run_id: String,
    pub status: RunStatus,
    pub url: String,
    pub events_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<InvokedOutput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver_url: Option<String>,
}

/// What one output module received.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InvokedOutput {
    pub module_id: String,
    pub label: String,
    pub text: String,
}
