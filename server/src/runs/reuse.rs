//! A run from a module (PRODUCT §3.15): the recorded run it names read back
//! from the store, what is reused decided by `graph::reuse::plan`, and the
//! engine's `Reuse` made of that run's record. The same reading serves the
//! run as it starts and again when a process resumes it, so a resumed run
//! reuses what its first process did.

use std::collections::{BTreeMap, HashSet};

use engine::RunInput;
use engine::reuse::Reuse;
use graph::Graph;
use graph::reuse::{Plan, RecordedRun};
use wire::activation::ActivationRecord;
use wire::run::{RunFrom, ended_by, first_start, recorded_state};

use crate::capability::is_run_id;
use crate::store::{Store, StoreError};

/// What a run from a module takes from the recorded run.
pub struct Reusing {
    pub plan: Plan,
    pub reuse: Reuse,
    /// The recorded run's input, which the new run's defaults to.
    pub input: RunInput,
}

/// Why the named run cannot be reused: the module it is about, if one.
pub struct Refused {
    pub module: Option<String>,
    pub message: String,
}

fn refused(message: String) -> Refused {
    Refused {
        module: None,
        message,
    }
}

/// Reads the run `from` names for a run of `graph` (stored as `graph_id`):
/// it must be a finished run of the same graph that finished every module
/// to reuse, each unchanged since.
pub async fn read(
    store: &Store,
    graph_id: &str,
    graph: &Graph,
    from: &RunFrom,
) -> Result<Result<Reusing, Refused>, StoreError> {
    let run_id = from.run.as_str();
    let recorded = if is_run_id(run_id) {
        store.run(run_id).await?
    } else {
        None
    };
    let Some(recorded) = recorded else {
        return Ok(Err(refused(format!("there is no run {run_id}"))));
    };
    if recorded.graph_id.as_deref() != Some(graph_id) {
        return Ok(Err(refused(format!(
            "run {run_id} is not a run of this graph"
        ))));
    }
    if !wire::RunStatus::parse(&recorded.status).is_some_and(wire::RunStatus::is_finished) {
        return Ok(Err(refused(format!(
            "run {run_id} is still {}: wait for it to end",
            recorded.status
        ))));
    }
    let read_back = serde_json::from_str::<serde_json::Value>(&recorded.snapshot)
        .map_err(|error| error.to_string())
        .and_then(|value| Graph::from_value(value).map_err(|error| error.to_string()))
        .and_then(|graph| {
            serde_json::from_str::<RunInput>(&recorded.input)
                .map(|input| (graph, input))
                .map_err(|error| error.to_string())
        });
    let (recorded_graph, input) = match read_back {
        Ok(read) => read,
        Err(error) => {
            return Ok(Err(refused(format!(
                "run {run_id} cannot be read back ({error})"
            ))));
        }
    };
    let mut activations: Vec<(ActivationRecord, Option<String>)> = Vec::new();
    for row in store.activation_rows(run_id).await? {
        if let Ok(record) = serde_json::from_str::<ActivationRecord>(&row.record) {
            activations.push((record, row.ending));
        }
    }
    let plan = match plan(graph, &recorded_graph, from, &activations) {
        Ok(plan) => plan,
        Err(refusal) => {
            return Ok(Err(Refused {
                module: Some(refusal.module),
                message: refusal.message,
            }));
        }
    };
    let reuse = Reuse::new(
        run_id,
        plan.reused.iter().cloned(),
        activations
            .into_iter()
            .filter_map(|(record, ending)| Some((record, ending?)))
            .collect(),
    )
    .partly(plan.partly.iter().cloned());
    Ok(Ok(Reusing { plan, reuse, input }))
}

fn plan(
    graph: &Graph,
    recorded_graph: &Graph,
    from: &RunFrom,
    activations: &[(ActivationRecord, Option<String>)],
) -> Result<Plan, graph::reuse::Refusal> {
    let mut read = ReadBack::default();
    for (record, ending) in activations {
        read.by_module
            .entry(record.module_id.clone())
            .or_default()
            .push(record.clone());
        if ending.is_some() {
            read.ended
                .insert((record.module_id.clone(), record.activation));
        }
    }
    for records in read.by_module.values_mut() {
        records.sort_by_key(|record| record.activation);
    }
    graph::reuse::plan(graph, recorded_graph, &from.module, &from.run, &read)
}

/// The recorded run's activations by module, and which of them had their
/// ending kept (a resume or a reuse needs it).
#[derive(Default)]
struct ReadBack {
    by_module: BTreeMap<String, Vec<ActivationRecord>>,
    ended: HashSet<(String, u32)>,
}

impl ReadBack {
    fn activations(&self, module: &str) -> &[ActivationRecord] {
        self.by_module.get(module).map_or(&[][..], Vec::as_slice)
    }

    fn ended(&self, record: &ActivationRecord) -> bool {
        self.ended
            .contains(&(record.module_id.clone(), record.activation))
    }
}

impl RecordedRun for ReadBack {
    fn state(&self, module: &str) -> graph::reuse::Recorded {
        recorded_state(self.activations(module), |record| self.ended(record))
    }

    fn ended_before_first_start(&self, module: &str, chosen: &str) -> u32 {
        first_start(self.activations(chosen)).map_or(0, |start| {
            ended_by(self.activations(module), |record| self.ended(record), start)
        })
    }
}
