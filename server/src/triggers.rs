//! Triggers (PRODUCT §6.5): what starts a graph's runs while nobody
//! watches. The document lists them (`graph::triggers`); here a schedule's
//! cron and time zone are read (`cadence.rs`), a tick is decided
//! (`tick.rs`) and fired once across processes (`ticker.rs`); webhooks are
//! delivered by `hooks_api.rs`.

pub mod cadence;
pub mod tick;
pub mod ticker;

use graph::triggers::Trigger;
use graph::{Graph, LoadError, LoadErrorKind};

use crate::error::ApiError;
use crate::store::ScheduleRow;
use cadence::Cadence;

/// How late a tick may be seen and still count as on time, unless the
/// operator says (`[schedules] late_after_seconds`): ticks seen later fell
/// while no server was up, and the schedule's `catch_up` decides.
pub const LATE_AFTER_SECONDS: u64 = 60;

/// The document's triggers with each schedule's cron and time zone read:
/// what a save stores, or why it is refused, at the field at fault.
pub fn read(graph: &Graph) -> Result<Vec<Trigger>, ApiError> {
    let triggers = graph::triggers::triggers(graph)?;
    for (index, trigger) in triggers.iter().enumerate() {
        if let Some(schedule) = trigger.schedule()
            && let Err(error) = Cadence::parse(&schedule.cron, &schedule.timezone)
        {
            return Err(ApiError::Document(LoadError {
                kind: LoadErrorKind::Shape,
                path: format!("triggers[{index}].{}", error.field()),
                message: error.message().to_owned(),
            }));
        }
    }
    Ok(triggers)
}

/// The schedules as the store mirrors them, each with its first tick
/// after `now` (kept by the store when the schedule did not change).
pub fn schedule_rows(triggers: &[Trigger], now: i64) -> Vec<ScheduleRow> {
    triggers
        .iter()
        .filter_map(|trigger| {
            let schedule = trigger.schedule()?;
            let next_at = Cadence::parse(&schedule.cron, &schedule.timezone)
                .ok()
                .and_then(|cadence| cadence.next_after(now));
            Some(ScheduleRow {
                trigger_id: trigger.id.clone(),
                cron: schedule.cron.clone(),
                timezone: schedule.timezone.clone(),
                catch_up: schedule.catch_up.as_str().to_owned(),
                paused: trigger.paused,
                next_at,
            })
        })
        .collect()
}
