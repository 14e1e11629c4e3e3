//! A run as the API gives it: what it started from, its summary in a
//! graph's list, its whole record with every activation, and the bodies of
//! starting and cancelling one (PRODUCT §6).

use std::collections::BTreeMap;

use graph::{Finding, Graph};
use serde::{Deserialize, Serialize};

use crate::activation::ActivationRecord;
use crate::status::{CancelStatus, RunStatus};

/// A file given with the run's input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InputFile {
    pub name: String,
    pub media_type: String,
    #[serde(with = "base64_bytes", rename = "content_base64")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub bytes: Vec<u8>,
}

mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD
            .decode(text.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

/// What a run starts from: the text (and files) the input modules emit.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunInput {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub files: Vec<InputFile>,
}

/// `POST /api/graphs/{id}/runs`: the input, or no body at all.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StartRun {
    #[serde(default)]
    pub input: RunInput,
    /// At most this many US dollars for the run; the server's default
    /// budget when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// Run from this module, reusing what the named run did upstream of it
    /// (PRODUCT §3.15). The input defaults to that run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<RunFrom>,
}

/// A run from a module: the recorded run whose activations are reused,
/// and the module to run from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RunFrom {
    pub run: String,
    pub module: String,
}

/// The reply to a started run: where to read it and follow its events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunStarted {
    pub id: String,
    pub graph_id: String,
    pub graph_revision: i64,
    pub status: RunStatus,
    pub url: String,
    pub events_url: String,
    /// Warnings the graph had when it started (errors refuse the run).
    pub findings: Vec<Finding>,
}

/// The reply to a cancel that reached a running run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cancelling {
    pub id: String,
    pub status: CancelStatus,
}

/// A run in a graph's history list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunSummary {
    pub id: String,
    pub graph_id: Option<String>,
    pub graph_revision: Option<i64>,
    pub status: RunStatus,
    pub error: Option<String>,
    /// Unix milliseconds, as every time in the API.
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// A run from a module: which run it reused, from which module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<RunFrom>,
}

/// A run (its summary or its whole record) with how it started, as the
/// API gives it; runs from before it was kept say nothing. Apart from the
/// run's types so that the browser bundle, which does not show it yet,
/// carries no code to read it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WithStartedBy<T> {
    #[serde(flatten)]
    pub run: T,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<StartedBy>,
}

/// How a run started: from the editor (with the edit token), through the
/// API with a run token, or by one of the graph's triggers, and which.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StartedBy {
    pub how: StartedHow,
    /// The run token's name, for a run started with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The trigger's id, for a run a schedule or a webhook started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// The tick a schedule fired for (Unix milliseconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<i64>,
    /// The schedule's run stands for ticks that fell while no server was
    /// up (`catch_up: "one"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub caught_up: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StartedHow {
    Editor,
    Api,
    Schedule,
    Webhook,
}

/// `GET /api/graphs/{id}/runs`: newest first (the server says how each
/// started; the browser reads the summaries).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunList<T = RunSummary> {
    pub runs: Vec<T>,
}

/// Every activation of one module, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ModuleRecord {
    pub activations: Vec<ActivationRecord>,
}

/// `GET /api/runs/{id}`: the run, what it started from, the graph as it
/// was when it started, and per module every activation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunRecord {
    pub id: String,
    pub graph_id: Option<String>,
    pub graph_revision: Option<i64>,
    pub status: RunStatus,
    pub error: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub input: RunInput,
    /// The graph as it was when the run started.
    pub graph: Graph,
    pub modules: BTreeMap<String, ModuleRecord>,
    /// The run state (PRODUCT §3.5): `Draft.output`, `Draft.status`, …
    #[serde(default)]
    pub state: BTreeMap<String, String>,
    /// The sequence number of its newest event, where a stream may resume.
    pub last_event_id: i64,
    /// Its budget in US dollars, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// A run from a module: which run it reused, from which module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<RunFrom>,
}

impl RunRecord {
    /// A module's label in the graph as it ran (its id if it is not there).
    pub fn label_of(&self, module: &str) -> String {
        self.graph.module(module).map_or_else(
            || module.to_owned(),
            |module| module.display_label().to_owned(),
        )
    }

    /// The last activation of a module.
    pub fn last(&self, module: &str) -> Option<&ActivationRecord> {
        self.modules.get(module)?.activations.last()
    }

    pub fn is_finished(&self) -> bool {
        self.status.is_finished()
    }

    /// What the run cost: every activation's known cost, and how many had
    /// none (a model with no price configured). Reused activations cost
    /// this run nothing: they are what it saved.
    pub fn cost(&self) -> crate::cost::CostTotal {
        self.cost_of(|activation| activation.reused_from.is_none())
    }

    /// The tools this run called, by the name the model called each, with
    /// how many calls and their time; a reused activation's calls were
    /// the recorded run's, not this one's.
    pub fn tool_uses(&self) -> Vec<crate::bundle::ToolUse> {
        crate::bundle::ToolUse::tally(
            self.modules
                .values()
                .flat_map(|module| module.activations.iter())
                .filter(|activation| activation.reused_from.is_none())
                .flat_map(|activation| activation.tool_calls.iter()),
        )
    }

    /// What the reused activations cost the run they were taken from.
    pub fn saved(&self) -> crate::cost::CostTotal {
        self.cost_of(|activation| activation.reused_from.is_some())
    }

    fn cost_of(&self, counts: impl Fn(&ActivationRecord) -> bool) -> crate::cost::CostTotal {
        let mut total = crate::cost::CostTotal::default();
        for activation in self
            .modules
            .values()
            .flat_map(|module| module.activations.iter())
            .filter(|activation| counts(activation))
        {
            total.add(activation.cost());
        }
        total
    }

    /// How this run left each module, as a run from one of its modules
    /// reads it (`graph::reuse::plan`). `ended` says whether an
    /// activation's ending was kept (the server knows; a page assumes so).
    pub fn recorded(&self, module: &str) -> graph::reuse::Recorded {
        recorded_state(
            self.modules
                .get(module)
                .map_or(&[][..], |record| &record.activations),
            |_| true,
        )
    }

    /// What one module's activations cost this run: those that called a
    /// model or an agent (one answered call is enough), not those reused
    /// from another run, which cost this one nothing.
    pub fn module_cost(&self, module: &str) -> crate::cost::CostTotal {
        let mut total = crate::cost::CostTotal::default();
        for activation in self
            .modules
            .get(module)
            .map_or(&[][..], |record| &record.activations)
            .iter()
            .filter(|activation| activation.reused_from.is_none())
        {
            let answered = activation
                .responses
                .iter()
                .any(|response| response.complete);
            if activation.receipt.is_some() || answered {
                total.add(activation.cost());
            }
        }
        total
    }
}

/// A finished run read back, as a run from one of its modules reads it
/// (the editor's preview; the server reads the same from its rows).
impl graph::reuse::RecordedRun for RunRecord {
    fn state(&self, module: &str) -> graph::reuse::Recorded {
        self.recorded(module)
    }

    fn ended_before_first_start(&self, module: &str, chosen: &str) -> u32 {
        let activations = |id: &str| {
            self.modules
                .get(id)
                .map_or(&[][..], |record| &record.activations)
        };
        first_start(activations(chosen))
            .map_or(0, |start| ended_by(activations(module), |_| true, start))
    }
}

/// When the first of a module's activations started, if one did.
pub fn first_start(activations: &[ActivationRecord]) -> Option<i64> {
    activations
        .iter()
        .map(|activation| activation.started_at)
        .min()
}

/// How many of `activations`' first ones (in order) had ended with a
/// result by `at` (`ended` says whether an ending was kept).
pub fn ended_by(
    activations: &[ActivationRecord],
    ended: impl Fn(&ActivationRecord) -> bool,
    at: i64,
) -> u32 {
    use crate::status::ActivationStatus;
    let with_a_result = |activation: &ActivationRecord| {
        matches!(
            activation.status,
            ActivationStatus::Completed | ActivationStatus::Reused
        ) || (activation.status == ActivationStatus::Failed && !activation.outputs.is_empty())
    };
    let count = activations
        .iter()
        .take_while(|activation| {
            with_a_result(activation)
                && ended(activation)
                && activation
                    .finished_at
                    .is_some_and(|finished| finished <= at)
        })
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// How a recorded run left a module, from its activations: every one must
/// have ended (`ended` says whether its ending was kept), the last one with
/// a result or with a failure that something took (its `error_out`).
pub fn recorded_state(
    activations: &[ActivationRecord],
    ended: impl Fn(&ActivationRecord) -> bool,
) -> graph::reuse::Recorded {
    use crate::status::ActivationStatus;
    use graph::reuse::Recorded;
    let Some(last) = activations.last() else {
        return Recorded::NotReached;
    };
    let all_ended = activations.iter().all(|activation| {
        matches!(
            activation.status,
            ActivationStatus::Completed | ActivationStatus::Failed | ActivationStatus::Reused
        ) && ended(activation)
    });
    if !all_ended {
        Recorded::Unfinished
    } else if last.status == ActivationStatus::Failed && last.outputs.is_empty() {
        Recorded::Failed
    } else {
        Recorded::Completed
    }
}
