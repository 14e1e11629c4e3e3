//! Running a graph again from one module, reusing what a recorded run did
//! upstream of it (PRODUCT §3.15): which modules are reused and which run
//! again, and why a recorded run cannot be reused. Plain rules over two
//! documents and what the record says of each module, shared by the server
//! (which refuses a run it cannot start this way) and the editor (whose
//! run dialog lists what will be reused before anything is sent).

use crate::topology::Topology;
use crate::{Graph, Module};

/// How a recorded run left a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// It never ran.
    NotReached,
    /// Every activation ended, the last one with a result (or with a
    /// failure its `error_out` took).
    Completed,
    /// Its last activation failed, and nothing took the failure.
    Failed,
    /// An activation never ended: cancelled, interrupted, queued, running.
    Unfinished,
}

/// What the recorded run says of its modules.
pub trait RecordedRun {
    /// How it left `module`.
    fn state(&self, module: &str) -> Recorded;

    /// How many of `module`'s first activations had ended, each with a
    /// result, before `chosen` first started: what a module the chosen one
    /// can reach again (through a cable back, a loop) did before it, which
    /// a run from `chosen` reuses. 0 when `chosen` never ran, or nothing is
    /// known of when things ran.
    fn ended_before_first_start(&self, _module: &str, _chosen: &str) -> u32 {
        0
    }
}

/// What the module states alone say.
impl<F: Fn(&str) -> Recorded> RecordedRun for F {
    fn state(&self, module: &str) -> Recorded {
        self(module)
    }
}

/// What a run from a module does with the recorded run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Modules whose recorded activations are reused, in document order.
    pub reused: Vec<String>,
    /// Of those, modules downstream of the chosen one too (on a loop back
    /// to it, or fed by one) that ran before it: only their first this many
    /// activations are reused; one the new run sends something to after
    /// that runs.
    pub partly: Vec<(String, u32)>,
    /// Modules that run: the chosen one, everything downstream of it, and
    /// side branches the recorded run did not finish (with what follows
    /// them), in document order.
    pub runs: Vec<String>,
}

/// Why a recorded run cannot be reused from a module: the module it is
/// about (its id) and why, in words that name it by its label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub module: String,
    pub message: String,
}

/// Which modules of `current` a run from `chosen` reuses from the recorded
/// run `run_id` (which ran `recorded`, leaving each module as `state`
/// says), or why it cannot: a module to reuse did not finish in that run,
/// or changed since (added, removed, rewired, its settings or label).
pub fn plan(
    current: &Graph,
    recorded: &Graph,
    chosen: &str,
    run_id: &str,
    record: &impl RecordedRun,
) -> Result<Plan, Refusal> {
    let state = |module: &str| record.state(module);
    let topology = Topology::new(current);
    let Some(chosen_index) = topology.module_index(chosen) else {
        return Err(Refusal {
            module: chosen.to_owned(),
            message: format!("the graph has no module \"{chosen}\" to run from"),
        });
    };
    let recorded_topology = Topology::new(recorded);
    // Said first: a removed module leaves cables changed behind it too.
    removed_upstream(current, &recorded_topology, chosen, run_id)?;
    let mut runs = topology.reachable_from(&[chosen_index]);
    let upstream = topology.upstream_of(chosen_index);
    for (index, module) in current.modules.iter().enumerate() {
        if upstream[index] && !runs[index] {
            unchanged(&topology, &recorded_topology, index, run_id)?;
            finished_upstream(module, state(&module.id), run_id)?;
        }
    }
    let partly = ran_before(&topology, &recorded_topology, chosen_index, run_id, record);
    for (index, _) in &partly {
        runs[*index] = false;
    }
    // A side branch the recorded run did not finish runs again, and what
    // follows it with it: reusing a failure would fail this run too.
    loop {
        let again: Vec<usize> = (0..current.modules.len())
            .filter(|&index| {
                !runs[index]
                    && !partly.iter().any(|(partial, _)| *partial == index)
                    && matches!(
                        state(&current.modules[index].id),
                        Recorded::Failed | Recorded::Unfinished
                    )
            })
            .collect();
        if again.is_empty() {
            break;
        }
        for (index, reached) in topology.reachable_from(&again).into_iter().enumerate() {
            runs[index] |= reached;
        }
    }
    for index in 0..current.modules.len() {
        if !runs[index] && !upstream[index] {
            unchanged(&topology, &recorded_topology, index, run_id)?;
        }
    }
    let ids = |wanted: bool| {
        current
            .modules
            .iter()
            .zip(&runs)
            .filter(|(_, runs)| **runs == wanted)
            .map(|(module, _)| module.id.clone())
            .collect()
    };
    Ok(Plan {
        reused: ids(false),
        partly: partly
            .into_iter()
            .filter(|(index, _)| !runs[*index])
            .map(|(index, count)| (current.modules[index].id.clone(), count))
            .collect(),
        runs: ids(true),
    })
}

/// The modules downstream of the chosen one (but for it) that ran before it
/// first ran in the recorded run, unchanged since, with how many of their
/// activations ended before then: reused as they were, since the new run
/// gets to them first the same way. A cable back to one of them brings it
/// again only when the new run sends something down it.
fn ran_before(
    current: &Topology,
    recorded: &Topology,
    chosen: usize,
    run_id: &str,
    record: &impl RecordedRun,
) -> Vec<(usize, u32)> {
    let chosen_id = &current.graph.modules[chosen].id;
    current
        .reachable_from(&[chosen])
        .into_iter()
        .enumerate()
        .filter(|&(index, reached)| reached && index != chosen)
        .filter_map(|(index, _)| {
            let count =
                record.ended_before_first_start(&current.graph.modules[index].id, chosen_id);
            (count > 0 && unchanged(current, recorded, index, run_id).is_ok())
                .then_some((index, count))
        })
        .collect()
}

/// A module upstream of the chosen one must have a result to reuse.
fn finished_upstream(module: &Module, state: Recorded, run_id: &str) -> Result<(), Refusal> {
    let label = module.display_label();
    let why = match state {
        Recorded::Completed => return Ok(()),
        Recorded::NotReached => "did not run",
        Recorded::Failed => "failed",
        Recorded::Unfinished => "did not finish",
    };
    Err(Refusal {
        module: module.id.clone(),
        message: format!(
            "\"{label}\" {why} in run {run_id}, so it has no result to reuse: run from \"{label}\" or from further up"
        ),
    })
}

/// A module to reuse must be as the recorded run ran it: there, with the
/// same settings, label and cables in.
fn unchanged(
    current: &Topology,
    recorded: &Topology,
    index: usize,
    run_id: &str,
) -> Result<(), Refusal> {
    let module = &current.graph.modules[index];
    let label = module.display_label();
    let refuse = |what: String| {
        Err(Refusal {
            module: module.id.clone(),
            message: format!(
                "\"{label}\" {what} since run {run_id}, so its recorded result would not fit: run from \"{label}\" or from further up"
            ),
        })
    };
    let Some(old_index) = recorded.module_index(&module.id) else {
        return refuse("was added".to_owned());
    };
    let old = &recorded.graph.modules[old_index];
    if old.config != module.config {
        return refuse("had its settings changed".to_owned());
    }
    if old.label != module.label {
        return refuse(format!("was renamed (it was \"{}\")", old.display_label()));
    }
    if cables_in(current, index) != cables_in(recorded, old_index) {
        return refuse("had its cables in changed".to_owned());
    }
    Ok(())
}

/// The live cables into a module, as what they join and carry.
fn cables_in<'a>(
    topology: &'a Topology,
    index: usize,
) -> Vec<(&'a str, &'a str, &'a str, Option<&'a str>)> {
    let mut cables: Vec<_> = topology
        .live
        .iter()
        .filter(|(_, _, to)| *to == index)
        .map(|(cable, _, _)| {
            (
                cable.from.module.as_str(),
                cable.from.port.as_str(),
                cable.to.port.as_str(),
                cable.condition.as_deref(),
            )
        })
        .collect();
    cables.sort_unstable();
    cables
}

/// A module that fed the chosen one in the recorded run and is gone now.
fn removed_upstream(
    current: &Graph,
    recorded: &Topology,
    chosen: &str,
    run_id: &str,
) -> Result<(), Refusal> {
    let Some(chosen_before) = recorded.module_index(chosen) else {
        return Ok(());
    };
    let upstream = recorded.upstream_of(chosen_before);
    let gone = recorded
        .graph
        .modules
        .iter()
        .zip(upstream)
        .find(|(module, upstream)| *upstream && current.module(&module.id).is_none());
    match gone {
        Some((module, _)) => Err(Refusal {
            module: module.id.clone(),
            message: format!(
                "\"{}\" was removed since run {run_id}, and it was upstream of \"{}\": run the whole graph",
                module.display_label(),
                recorded.graph.modules[chosen_before].display_label()
            ),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
