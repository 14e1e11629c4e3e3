//! Triggers (PRODUCT §6.5) as the API gives them to a graph's editors:
//! each with its next times or its webhook's address, a webhook's secret
//! made (shown once), and a schedule's next times worked out before it is
//! saved.

use serde::{Deserialize, Serialize};

/// `GET /api/graphs/{id}/triggers`: the document's triggers, in its order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TriggerList {
    pub triggers: Vec<TriggerState>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TriggerState {
    pub id: String,
    /// `schedule` or `webhook`.
    pub kind: String,
    pub paused: bool,
    /// A schedule's next five times (Unix milliseconds); none while paused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub next_times: Vec<i64>,
    /// A webhook's address (a path on this server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// When a webhook's secret was made; none until it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_made_at: Option<i64>,
}

/// `POST /api/graphs/{id}/triggers/{trigger_id}/secret`: a webhook's new
/// secret, this once; the one before it stops working.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TriggerSecretMade {
    pub trigger_id: String,
    pub secret: String,
    /// Where to deliver (a path on this server).
    pub url: String,
    /// The header that carries the secret; `?secret=` works too.
    pub header: String,
    pub created_at: i64,
}

/// `POST /api/schedules/next`: when a schedule would fall.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct NextTimesRequest {
    pub cron: String,
    #[serde(default)]
    pub timezone: Option<String>,
    #[serde(default)]
    pub count: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NextTimes {
    /// Unix milliseconds, soonest first.
    pub times: Vec<i64>,
    /// The same times as clocks in the schedule's time zone show them
    /// ("Mon 2026-11-30 09:00:00 CET"), which a browser may not know.
    pub local: Vec<String>,
    pub timezone: String,
}

/// The answer to a webhook delivery: the run it started (or, for an
/// `Idempotency-Key` seen within a day, the run the first delivery
/// started), readable at `url` by whoever has its id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HookDelivered {
    pub run_id: String,
    pub url: String,
    pub events_url: String,
}
