//! Each process's ticker: every quarter second it reads the schedules
//! whose tick has come, decides each (`tick.rs`), claims the decision in
//! one conditional write (`Store::claim_tick`), and starts the run only if
//! its claim won. Two processes seeing one tick both decide; one claims.
//! A process killed between its claim and the run's start loses that
//! tick: a tick runs at most once, never twice.

use std::time::Duration;

use graph::triggers::CatchUp;

use super::cadence::Cadence;
use super::tick::{Tick, decide};
use crate::capability::Starter;
use crate::rate_limit::ClientAddress;
use crate::runs_api::{Asked, launch};
use crate::state::AppState;
use crate::store::{DueSchedule, now_millis};

const LOOK_EVERY: Duration = Duration::from_millis(250);
/// Schedules taken up in one look; the rest wait for the next.
const MOST_AT_ONCE: i64 = 64;

/// Looks for due ticks until the server stops.
pub fn spawn(state: AppState) {
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(LOOK_EVERY);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = state.shutdown.cancelled() => break,
                _ = interval.tick() => {}
            }
            let now = now_millis();
            match state.store.due_schedules(now, MOST_AT_ONCE).await {
                Ok(due) => {
                    for schedule in due {
                        take(&state, schedule, now).await;
                    }
                }
                Err(error) => tracing::warn!(%error, "the schedules could not be read"),
            }
        }
    });
}

async fn take(state: &AppState, due: DueSchedule, now: i64) {
    let tick = match Cadence::parse(&due.cron, &due.timezone) {
        Ok(cadence) => decide(
            &cadence,
            due.next_at,
            CatchUp::parse(&due.catch_up).unwrap_or(CatchUp::One),
            now,
            state.schedule_late_after_millis(),
        ),
        // Saves refuse what cannot be read, so only another version of
        // this server stored it: it stops until its graph is saved again.
        Err(error) => {
            tracing::warn!(graph = %due.graph_id, trigger = %due.trigger_id, error = error.message(), "a schedule this server cannot read is stopped");
            Tick::Skip { next_at: None }
        }
    };
    match state
        .store
        .claim_tick(&due.graph_id, &due.trigger_id, due.next_at, tick.next_at())
        .await
    {
        Ok(true) => {}
        Ok(false) => return,
        Err(error) => {
            tracing::warn!(graph = %due.graph_id, trigger = %due.trigger_id, %error, "a schedule's tick could not be claimed");
            return;
        }
    }
    let Tick::Fire {
        tick, caught_up, ..
    } = tick
    else {
        tracing::info!(graph = %due.graph_id, trigger = %due.trigger_id, "ticks that fell while no server was up were skipped (catch_up: none)");
        return;
    };
    let starter = Starter::Schedule {
        trigger: due.trigger_id.clone(),
        tick,
        caught_up,
    };
    match launch(
        state,
        &due.graph_id,
        &ClientAddress(None),
        &starter,
        wire::RunInput::default(),
        Asked::default(),
    )
    .await
    {
        Ok(started) => {
            tracing::info!(graph = %due.graph_id, trigger = %due.trigger_id, run = %started.id, tick, caught_up, "a schedule started a run");
        }
        Err(error) => {
            tracing::warn!(graph = %due.graph_id, trigger = %due.trigger_id, code = error.code(), message = %error.message(), "a schedule's tick started no run");
        }
    }
}
