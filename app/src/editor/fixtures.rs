//! What the editor's unit tests build runs from: a finished run record of
//! a graph, with the activations a test gives.

use std::collections::BTreeMap;

use graph::Graph;
use wire::run::ModuleRecord;
use wire::status::{ActivationStatus, RunStatus};
use wire::{ActivationRecord, RunRecord};

/// A completed run `id` of `graph`: one completed activation per module,
/// as `each` changes it.
pub fn finished_run(
    id: &str,
    graph: &Graph,
    each: impl Fn(&graph::Module, &mut ActivationRecord),
) -> RunRecord {
    let mut modules = BTreeMap::new();
    for module in &graph.modules {
        let mut activation = ActivationRecord::new(&module.id, 1, 1);
        activation.status = ActivationStatus::Completed;
        each(module, &mut activation);
        modules.insert(
            module.id.clone(),
            ModuleRecord {
                activations: vec![activation],
            },
        );
    }
    RunRecord {
        id: id.to_owned(),
        graph_id: Some("g".to_owned()),
        graph_revision: Some(1),
        status: RunStatus::Completed,
        error: None,
        created_at: 1,
        started_at: Some(1),
        finished_at: Some(2),
        input: wire::run::RunInput::default(),
        graph: graph.clone(),
        modules,
        state: BTreeMap::new(),
        last_event_id: 9,
        budget_usd: None,
        from: None,
    }
}
