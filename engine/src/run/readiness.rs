//! When a module is ready to run (its join: all or any; a loop cable), and
//! what happens to values a join-any module already ran without.

use std::sync::Arc;

use graph::join::Join;
use wire::event::RunEvent;

use super::Run;
use super::command::Command;
use super::progress::Slot;

impl Run {
    /// Whether `module` has the values it needs to run again.
    pub(super) fn is_ready(&self, module: usize) -> bool {
        let progress = &self.progress[module];
        let activations = progress.activations;
        if progress.join == Join::Any {
            // A value for an activation it has not made yet.
            return progress.incoming.iter().any(|&index| {
                self.cables[index].fresh && self.cables[index].arrivals > activations
            });
        }
        let mut forward = progress
            .incoming
            .iter()
            .map(|&index| &self.cables[index])
            .filter(|cable| !cable.loop_cable)
            .peekable();
        let has_forward = forward.peek().is_some();
        let forward_fresh = has_forward && forward.all(|cable| cable.fresh);
        if activations == 0 || forward_fresh {
            return forward_fresh;
        }
        let cables = || progress.incoming.iter().map(|&index| &self.cables[index]);
        cables().any(|cable| cable.loop_cable && cable.fresh)
            && cables()
                .filter(|cable| !cable.loop_cable)
                .all(|cable| cable.value.is_some())
    }

    /// Queues the modules among `candidates` that are neither queued nor
    /// running and are ready: a pending retry, or the values they need.
    pub(super) fn queue_if_ready(&mut self, candidates: Vec<usize>) {
        for candidate in candidates {
            let progress = &self.progress[candidate];
            if progress.slot == Slot::Idle && (progress.retry.is_some() || self.is_ready(candidate))
            {
                self.progress[candidate].slot = Slot::Ready;
                self.ready.push_back(candidate);
            }
        }
    }

    /// Modules a fresh value waits for, each once, in order.
    pub(super) fn fresh_targets(&self) -> Vec<usize> {
        let mut targets: Vec<usize> = self
            .cables
            .iter()
            .filter(|cable| cable.fresh)
            .map(|cable| cable.target)
            .collect();
        targets.sort_unstable();
        targets.dedup();
        targets
    }

    /// What came in on cables from another module's failure outcome, which
    /// is why a loop brought a module back.
    pub(super) fn failures_in(&self, module: usize) -> Option<String> {
        let texts: Vec<String> = self.progress[module]
            .incoming
            .iter()
            .map(|&index| &self.cables[index])
            .filter(|cable| {
                cable.fresh && graph::ports::failure_outcome(&cable.source_port).is_some()
            })
            .filter_map(|cable| cable.value.as_ref()?.as_bundle())
            .map(|bundle| bundle.as_text())
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n\n"))
    }

    /// Values a join-any module already ran without (its cables have
    /// carried no more values than it has run): recorded, and ignored.
    pub(super) fn ignore_late_arrivals(&mut self) {
        let late: Vec<usize> = (0..self.cables.len())
            .filter(|&index| {
                let cable = &self.cables[index];
                let target = &self.progress[cable.target];
                cable.fresh && target.join == Join::Any && cable.arrivals <= target.activations
            })
            .collect();
        for index in late {
            self.cables[index].fresh = false;
            let module = self.cables[index].target;
            let cable_id = self.cables[index].id.clone();
            self.emit(RunEvent::CableIgnored {
                module_id: self.module_id(module).to_owned(),
                activation: self.progress[module].activations,
                cable_id: cable_id.clone(),
            });
            let progress = &mut self.progress[module];
            if matches!(progress.slot, Slot::Running | Slot::Waiting) {
                progress.ignored.push(cable_id);
            } else if let Some(record) = progress.last_record.as_mut() {
                Arc::make_mut(record).ignored_inputs.push(cable_id);
                let record = Arc::clone(record);
                self.commands.push(Command::SaveActivation {
                    record,
                    ending: None,
                });
            }
        }
    }
}
