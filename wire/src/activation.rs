//! What a run keeps of each module activation: every response, the outputs
//! that fired, named outputs, the receipt and the session transcript
//! (DOC23 §12: re-prompt responses are part of the run record).

use std::collections::BTreeMap;

use graph::intent::Intent;
use serde::{Deserialize, Serialize};

use crate::bundle::{PortValue, Receipt};
pub use crate::status::ActivationStatus;

/// Why an activation that waited for a concurrency slot never ran: the run
/// ended first. The live view says "never started" of it, and so does the
/// record.
pub const NEVER_STARTED: &str = "the run ended before it had a slot to start in";

/// One response of an activation: the primary response is index 0, the
/// response to re-prompt i is index i.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResponseRecord {
    pub index: u32,
    /// "Original", "Re-prompt 1", "Decision", "Critic (round 2)", …
    pub label: String,
    pub text: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub duration_ms: u64,
    /// False while it is still streaming (a cancelled run keeps it so).
    pub complete: bool,
    /// What the call cost in US dollars; `None` when the model has no
    /// price configured (or the call did not finish).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The model calls the response took: more than one when the model
    /// called tools and went on with what they gave back (PRODUCT §3.17).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub calls: u32,
}

fn one() -> u32 {
    1
}

impl Default for ResponseRecord {
    fn default() -> ResponseRecord {
        ResponseRecord {
            index: 0,
            label: String::new(),
            text: String::new(),
            tokens_in: 0,
            tokens_out: 0,
            duration_ms: 0,
            complete: false,
            cost: None,
            calls: one(),
        }
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
fn is_one(calls: &u32) -> bool {
    *calls == 1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TranscriptEntry {
    pub role: TranscriptRole,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TranscriptRole {
    System,
    User,
    Assistant,
    /// The model called a tool: its name and arguments (PRODUCT §3.17).
    ToolCall,
    /// What a tool call gave back, or why it gave nothing.
    ToolResult,
}

/// How a tool call ended (PRODUCT §3.17).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ToolOutcome {
    /// Asked for and not ended yet (a record checkpointed mid-call).
    #[default]
    Pending,
    Ok,
    /// The tool said it failed (`isError`).
    Error,
    /// It took longer than its server's `timeout_seconds`.
    TimedOut,
    /// Its server could not be reached, or stopped.
    ServerGone,
    /// The server running the run stopped while it was in flight, and it
    /// is not one that may be called twice: the model was told so.
    Interrupted,
    /// Past the module's `max_tool_calls`: not made.
    NotRun,
    /// A person declined it (PRODUCT §3.14), or nobody decided in time.
    Declined,
    /// It waits for a person to approve it (PRODUCT §3.17).
    Waiting,
}

/// One tool call of an activation, paired with what came of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolCallRecord {
    pub call_id: String,
    /// The response (turn) whose model call asked for it.
    pub response_index: u32,
    pub server: String,
    /// The name the model called it by.
    pub tool: String,
    /// As the call was made, locked arguments reading `🔒 locked`.
    pub arguments: serde_json::Value,
    pub outcome: ToolOutcome,
    /// What came back: the tool's structured content when it gave one,
    /// else its text; an error's words otherwise. Secrets of the server's
    /// configuration are replaced.
    #[serde(default)]
    pub result: serde_json::Value,
    #[serde(default)]
    pub duration_ms: u64,
    /// Why it waits (or waited) for a person, and until when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<crate::approval::CallWait>,
    /// What a person decided on it, when it waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<crate::approval::CallDecision>,
}

impl ActivationRecord {
    /// Whether it waits for a person now: an approval, or an agent task's
    /// tool calls (PRODUCT §3.14, §3.17).
    pub fn waits_for_a_person(&self) -> bool {
        self.status == ActivationStatus::Waiting
            && (self.waiting.is_some()
                || self
                    .tool_calls
                    .iter()
                    .any(|call| call.outcome == ToolOutcome::Waiting))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ActivationRecord {
    pub module_id: String,
    /// 1 for the first activation of the module in this run.
    pub activation: u32,
    pub status: ActivationStatus,
    /// Unix milliseconds.
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub responses: Vec<ResponseRecord>,
    /// The values of the ports that fired, by port id.
    pub outputs: BTreeMap<String, PortValue>,
    pub named_outputs: BTreeMap<String, String>,
    pub receipt: Option<Receipt>,
    /// The session as sent: system prompt, each user turn, each reply.
    pub transcript: Vec<TranscriptEntry>,
    pub error: Option<String>,
    /// Which way each port with conditions on its cables went.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
    /// What its structured gate read from the last reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<IntentChoice>,
    /// This attempt failed and the module ran again (PRODUCT §3.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried: Option<Retried>,
    /// This was the module's last attempt and it gave up: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gave_up: Option<String>,
    /// Cables whose values came for this activation after it had started
    /// on another's, which a module that joins any ignores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored_inputs: Vec<String>,
    /// An approval's question and what it shows, from when it waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<crate::approval::Waiting>,
    /// The decision a person took on an approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<crate::approval::DecisionRecord>,
    /// The tools it called, in the order the model asked, each with what
    /// came of it (PRODUCT §3.17).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRecord>,
    /// Not run: taken from this activation of a recorded run (PRODUCT
    /// §3.15), whose outputs, receipt and transcript it keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<ReusedFrom>,
    /// A poll between polls (status `waiting`): when it polls next (Unix
    /// ms), so a reload counts down as the live badge does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_poll_at: Option<i64>,
    /// An experiment in progress: the variants that have finished, so a
    /// resume takes them up instead of running them again. Only in the
    /// records of activations in progress; gone once it ends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finished_variants: Vec<FinishedVariant>,
}

/// A variant of an experiment in progress that has finished.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FinishedVariant {
    pub name: String,
    pub duration_ms: u64,
    /// How it ended, as the engine replays it (opaque JSON).
    pub ending: serde_json::Value,
}

/// The recorded activation a reused one was taken from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReusedFrom {
    pub run_id: String,
    pub activation: u32,
}

/// Why an attempt was followed by another, and when.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Retried {
    pub reason: String,
    /// The next attempt's number, of how many.
    pub next_attempt: u32,
    pub max_attempts: u32,
    pub delay_seconds: u32,
}

/// The intent a structured gate read (PRODUCT §3.8).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct IntentChoice {
    /// The intent acted on: `next`, `repeat`, …
    pub intent: Intent,
    /// The value as the reply had it (an alias, or what could not be read).
    pub said: String,
    pub reason: String,
    /// The value could not be read and the gate's fallback was taken.
    pub fallback: bool,
}

/// The way a port's value went when its cables have conditions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Route {
    pub port: String,
    /// The cable it took; `None` when no condition held and there was no
    /// catch-all, so the branch ended there.
    pub cable_id: Option<String>,
    /// Why: which condition held, the catch-all, or what each one gave.
    pub reason: String,
}

impl TranscriptRole {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl ActivationRecord {
    pub fn new(module_id: &str, activation: u32, started_at: i64) -> ActivationRecord {
        ActivationRecord {
            module_id: module_id.to_owned(),
            activation,
            status: ActivationStatus::Running,
            started_at,
            finished_at: None,
            responses: Vec::new(),
            outputs: BTreeMap::new(),
            named_outputs: BTreeMap::new(),
            receipt: None,
            transcript: Vec::new(),
            error: None,
            routes: Vec::new(),
            intent: None,
            retried: None,
            gave_up: None,
            ignored_inputs: Vec::new(),
            waiting: None,
            decision: None,
            tool_calls: Vec::new(),
            reused_from: None,
            next_poll_at: None,
            finished_variants: Vec::new(),
        }
    }

    /// Tokens in and out of the whole activation: its receipt's, or its
    /// responses' while it has none.
    pub fn tokens(&self) -> u64 {
        match &self.receipt {
            Some(receipt) => receipt.tokens_in + receipt.tokens_out,
            None => self
                .responses
                .iter()
                .map(|response| response.tokens_in + response.tokens_out)
                .sum(),
        }
    }

    /// How many calls it made to a model or an agent: one a response
    /// (the instruction, each re-prompt, a decision, a critic's round…),
    /// or by its receipt when it kept none.
    pub fn model_calls(&self) -> u32 {
        if self.responses.is_empty() {
            self.receipt
                .as_ref()
                .map_or(0, |receipt| receipt.re_prompt_count + 1)
        } else {
            self.responses.iter().map(|response| response.calls).sum()
        }
    }

    /// What it cost in US dollars: its receipt's, or while it has none
    /// the sum of its answered calls'. `None` when a call's model has no
    /// price configured; an activation that called no provider cost 0.
    pub fn cost(&self) -> Option<f64> {
        match &self.receipt {
            Some(receipt) => receipt.cost,
            None => self
                .responses
                .iter()
                .filter(|response| response.complete)
                .try_fold(0.0, |sum, response| Some(sum + response.cost?)),
        }
    }

    /// How long it ran, once it has finished.
    pub fn duration_ms(&self) -> Option<i64> {
        self.finished_at.map(|finished| finished - self.started_at)
    }
}
