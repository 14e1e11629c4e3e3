//! Taking up a run this process has claimed (at start, or from a process
//! whose lease ran out): its snapshot, input and record read back, and the
//! engine resumed where it stopped (PRODUCT §8). A run that cannot be
//! read back, or any run when the operator turned resume off, is closed
//! as interrupted instead.

use engine::RunInput;
use engine::resume::Resume;
use graph::Graph;
use wire::activation::{ActivationRecord, ActivationStatus};

use super::interrupted::{self, REASON};
use super::{Launch, Runner};
use crate::store::{Claimed, Store, StoreError};

/// Resumes `claimed`, or closes it when `resume` is off or it cannot be.
pub async fn take_up(runner: &Runner, claimed: Claimed, resume: bool) -> Result<(), StoreError> {
    if !resume {
        return interrupted::close(
            &runner.store,
            &claimed.id,
            &format!("{REASON}, and this server does not resume runs (--no-resume)"),
            &runner.owner,
        )
        .await;
    }
    match read_back(&runner.store, &claimed.id).await? {
        Ok((launch, resume)) => {
            tracing::info!(run = %claimed.id, replayed = resume.ended.len(), "resuming a run");
            runner.launch(launch, Some(resume), claimed.cancel_requested);
            Ok(())
        }
        Err(why) => {
            tracing::warn!(run = %claimed.id, %why, "a run cannot resume");
            interrupted::close(
                &runner.store,
                &claimed.id,
                &format!("{REASON}, and it could not resume: {why}"),
                &runner.owner,
            )
            .await
        }
    }
}

/// The run's graph, input and where it stopped; `Err` says why it cannot
/// resume.
async fn read_back(
    store: &Store,
    id: &str,
) -> Result<Result<(Launch, Resume), String>, StoreError> {
    let Some(run) = store.run(id).await? else {
        return Ok(Err("the run is gone".to_owned()));
    };
    let graph = match serde_json::from_str::<serde_json::Value>(&run.snapshot)
        .map_err(|error| error.to_string())
        .and_then(|value| Graph::from_value(value).map_err(|error| error.to_string()))
    {
        Ok(graph) => graph,
        Err(error) => return Ok(Err(format!("its graph cannot be read ({error})"))),
    };
    let input = match serde_json::from_str::<RunInput>(&run.input) {
        Ok(input) => input,
        Err(error) => return Ok(Err(format!("its input cannot be read ({error})"))),
    };
    let (waited_ms, waiting_since) = store.run_wait(id).await?;
    let mut decisions: Vec<_> = store
        .pending_decisions(id)
        .await?
        .iter()
        .filter_map(super::decisions::pending)
        .collect();
    decisions.extend(
        store
            .pending_call_decisions(id)
            .await?
            .iter()
            .filter_map(super::decisions::pending_call),
    );
    let mut resume = Resume {
        last_seq: u64::try_from(store.last_event_seq(id).await?).unwrap_or(0),
        started_at: run.started_at,
        waited_ms,
        waiting_since,
        decisions,
        ..Resume::default()
    };
    for row in store.activation_rows(id).await? {
        let Ok(record) = serde_json::from_str::<ActivationRecord>(&row.record) else {
            continue;
        };
        match row.ending {
            Some(ending) => resume.ended.push((record, ending)),
            None if matches!(
                record.status,
                ActivationStatus::Running | ActivationStatus::Waiting
            ) =>
            {
                resume.in_progress.push(record);
            }
            None => {}
        }
    }
    // A run from a module reuses what it reused when it started.
    let reuse = match (&run.from, &run.graph_id) {
        (Some(from), Some(graph_id)) => {
            match super::reuse::read(store, graph_id, &graph, from).await? {
                Ok(reusing) => Some(reusing.reuse),
                Err(refused) => {
                    return Ok(Err(format!(
                        "it reuses run {}, which it cannot any more: {}",
                        from.run, refused.message
                    )));
                }
            }
        }
        _ => None,
    };
    let launch = Launch {
        run_id: run.id,
        graph_id: run.graph_id,
        graph,
        input,
        budget_usd: run.budget_usd,
        reuse,
    };
    Ok(Ok((launch, resume)))
}
