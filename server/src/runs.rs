//! Runs on this server: started (a snapshot stored, held by this process
//! with a lease), run by the engine with a recorder on the database, and
//! registered in the hub while they last; taken over and resumed when the
//! process that ran them stopped (PRODUCT §8).

pub mod decisions;
pub mod follow;
pub mod hub;
pub mod interrupted;
pub mod lease;
pub mod notify;
pub mod recorder;
pub mod resume;
pub mod reuse;

use std::sync::Arc;
use std::time::Duration;

use engine::resume::Resume;
use engine::{RunControl, RunInput, RunSpec};
use graph::Graph;

pub use crate::capability::{is_run_id, new_run_id};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{Lease, NewRun, Store, now_millis};
use hub::RunHub;
use recorder::StoreRecorder;

/// What starting and resuming runs needs. The lease keeper holds one, not
/// the server's whole state, so that dropping the state stops it.
#[derive(Clone)]
pub struct Runner {
    pub store: Store,
    pub hub: RunHub,
    pub engine: engine::Engine,
    /// This process, as the owner of the runs it runs.
    pub owner: Arc<str>,
    /// How long a lease holds without being renewed.
    pub lease: Duration,
    /// Tells webhooks that approvals wait.
    pub notifier: Arc<notify::Notifier>,
    /// What `/metrics` counts of the runs run here.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Where runs' traces go, when the operator configured a collector.
    pub telemetry: Option<Arc<crate::telemetry::Telemetry>>,
}

/// What a run is: its id, the graph it runs (and the stored graph it is a
/// run of), its input and budget.
pub struct Launch {
    pub run_id: String,
    pub graph_id: Option<String>,
    pub graph: Graph,
    pub input: RunInput,
    pub budget_usd: Option<f64>,
    /// A run from a module: what it takes from the recorded run.
    pub reuse: Option<engine::reuse::Reuse>,
}

impl Runner {
    /// A lease for this process from now.
    pub fn lease(&self) -> Lease<'_> {
        Lease {
            owner: &self.owner,
            until: now_millis()
                .saturating_add(i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)),
        }
    }

    /// Runs a stored run in this process until it ends or stops.
    pub fn launch(&self, launch: Launch, resume: Option<Resume>, cancel_requested: bool) {
        let Launch {
            run_id,
            graph_id,
            graph,
            input,
            budget_usd,
            reuse,
        } = launch;
        let registered = self.hub.register(&run_id);
        if cancel_requested {
            registered.cancel.cancel();
        }
        let recorder = Arc::new(StoreRecorder {
            store: self.store.clone(),
            events: registered.events,
            owner: self.owner.to_string(),
            notices: Some(recorder::Notices {
                notifier: Arc::clone(&self.notifier),
                graph: Arc::new(graph.clone()),
                graph_id,
                metrics: Some(Arc::clone(&self.metrics)),
                tracing: self
                    .telemetry
                    .as_ref()
                    .map(|telemetry| telemetry.run(&run_id)),
            }),
        });
        let control = RunControl {
            cancel: registered.cancel,
            stop: registered.stop,
            resume,
            decisions: Some(registered.decisions),
            reuse,
        };
        let engine = self.engine.clone();
        let hub = self.hub.clone();
        let store = self.store.clone();
        let owner = self.owner.clone();
        let spec = RunSpec {
            run_id,
            graph,
            input,
            budget_usd,
        };
        tokio::spawn(async move {
            let run_id = spec.run_id.clone();
            let outcome = engine::execute_controlled(&engine, spec, recorder, control).await;
            tracing::info!(run = %run_id, status = outcome.status.as_str(), activations = outcome.activations, "run ended or stopped");
            hub.finish(&run_id);
            // Stopped, not ended: whoever comes next goes on with it.
            if outcome.status == engine::RunStatus::Interrupted
                && let Err(error) = store.release_run(&run_id, &owner).await
            {
                tracing::warn!(run = %run_id, %error, "a stopped run could not be let go; its lease runs out by itself");
            }
        });
    }
}

/// Which run of which stored graph: the run's id (made by the caller, so
/// that an idempotency key can be claimed for it first) and the graph and
/// revision it runs.
pub struct RunOf<'a> {
    pub run_id: String,
    pub graph_id: &'a str,
    pub revision: i64,
}

/// Stores the run (queued, held by this process) and starts it; returns
/// its id. `from` makes it a run from a module, reusing a recorded run.
pub async fn start_run(
    state: &AppState,
    graph: Graph,
    of: RunOf<'_>,
    input: RunInput,
    budget_usd: Option<f64>,
    from: Option<(wire::run::RunFrom, engine::reuse::Reuse)>,
    started_by: &wire::run::StartedBy,
) -> Result<String, ApiError> {
    let (from, reuse) = from.unzip();
    let budget_usd = budget_usd.or(state.engine.settings.default_run_budget_usd);
    let run_id = of.run_id;
    let snapshot = graph
        .to_json()
        .map_err(|error| ApiError::Internal(error.to_string()))?;
    let input_json =
        serde_json::to_string(&input).map_err(|error| ApiError::Internal(error.to_string()))?;
    let runner = &state.runner;
    state
        .store
        .insert_run(NewRun {
            id: &run_id,
            graph_id: Some(of.graph_id),
            graph_revision: Some(of.revision),
            snapshot: &snapshot,
            input: &input_json,
            budget_usd,
            lease: Some(runner.lease()),
            from: from.as_ref(),
            started_by: Some(started_by),
        })
        .await?;
    runner.launch(
        Launch {
            run_id: run_id.clone(),
            graph_id: Some(of.graph_id.to_owned()),
            graph,
            input,
            budget_usd,
            reuse,
        },
        None,
        false,
    );
    Ok(run_id)
}
