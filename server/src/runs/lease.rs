//! The lease keeper of this process (PRODUCT §8). Every second it renews
//! the leases on the runs this process runs, hands them the cancels other
//! processes left and the decisions people took on their approvals
//! elsewhere, stops the ones another process took over, and takes over
//! runs whose lease ran out (a process killed, frozen or cut off) — all
//! unfinished runs at start on SQLite, which one process serves.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Runner;
use super::resume::take_up;
use crate::store::{Backend, now_millis};

/// How often leases are renewed and expired ones looked for: a run whose
/// lease ran out is taken over within about this long.
const TICK: Duration = Duration::from_secs(1);

/// Runs taken over at once, at most.
const CLAIM_BATCH: i64 = 50;

/// One pass: renew, then claim. `first` is the pass at start.
pub async fn pass(runner: &Runner, resume: bool, first: bool) {
    // Only runs registered before the renewal can be missing from it: one
    // started meanwhile was stored after the renewal looked.
    let live = runner.hub.live_ids();
    match runner
        .store
        .renew_leases(&runner.owner, runner.lease().until)
        .await
    {
        Ok(held) => {
            for claimed in &held {
                if claimed.cancel_requested {
                    runner.hub.cancel(&claimed.id);
                }
            }
            for id in live {
                if held.iter().any(|claimed| claimed.id == id) {
                    continue;
                }
                // Not renewed: it has ended, or another process holds it.
                match runner.store.run_owner(&id).await {
                    Ok(Some((owner, true))) if *owner != *runner.owner => {
                        tracing::warn!(run = %id, "another server process took this run over");
                        runner.hub.stop(&id);
                    }
                    Ok(_) => {}
                    Err(error) => tracing::warn!(%error, "a run's owner could not be read"),
                }
            }
        }
        Err(error) => tracing::warn!(%error, "leases could not be renewed"),
    }
    super::decisions::deliver_pending(runner).await;
    // At start on SQLite every unfinished run is the previous process's.
    let expired_before = if first && runner.store.backend() == Backend::Sqlite {
        i64::MAX
    } else {
        now_millis()
    };
    match runner
        .store
        .claim_runs(runner.lease(), expired_before, CLAIM_BATCH)
        .await
    {
        Ok(claimed) => {
            for run in claimed {
                runner.metrics.taken_over();
                let id = run.id.clone();
                if let Err(error) = take_up(runner, run, resume).await {
                    tracing::error!(run = %id, %error, "a run could not be taken up");
                }
            }
        }
        Err(error) => tracing::warn!(%error, "runs could not be claimed"),
    }
}

/// Keeps passing until `shutdown`.
pub fn spawn(runner: Runner, resume: bool, shutdown: CancellationToken) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(TICK) => {}
                () = shutdown.cancelled() => return,
            }
            pass(&runner, resume, false).await;
        }
    });
}
