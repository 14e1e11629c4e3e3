//! Starting what is ready, as far as the concurrency slots go: an
//! activation with its inputs and attempt, a module that gives up on
//! arrival instead, and the record of what waits for a slot.

use std::sync::Arc;

use wire::activation::{ActivationRecord, ActivationStatus};
use wire::event::RunEvent;

use super::command::{Command, Finished, StartActivation};
use super::progress::{PendingAttempt, Slot};
use super::state_keys::{changes_since, keep_as_previous};
use super::{Run, TRANSITION_LIMIT};
use crate::activation::InputValue;
use crate::attempts::Attempt;
use crate::bundle::PortValue;
use graph::join::Join;
use graph::kinds::coding::DIFF_OUT;

impl Run {
    /// Starts ready modules while there are slots. Activations a resumed
    /// run replays, or defers until its replay ends, hold a slot too: they
    /// were in flight in the run that stopped. A run that has failed (a
    /// module that gave up on arrival, with nothing to take it) starts
    /// nothing more.
    pub(super) fn start_ready(&mut self, now: i64) {
        while !self.stopping && self.failure.is_none() {
            let Some(module) = self.next_ready() else {
                break;
            };
            self.progress[module].slot = Slot::Idle;
            let pending = self.progress[module].retry.take();
            if pending.is_none() && self.progress[module].attempts_used() {
                self.give_up_on_arrival(now, module);
                continue;
            }
            if self.started >= self.limits.max_activations {
                self.failure = Some(format!(
                    "{TRANSITION_LIMIT}: the run reached its limit of {} activations (max_activations); {}",
                    self.limits.max_activations,
                    self.the_loop()
                ));
                break;
            }
            self.start_activation(now, module, pending);
        }
    }

    /// The next ready module that may start: the first while a slot is
    /// free, else the first approval, which waits for a person without
    /// one.
    fn next_ready(&mut self) -> Option<usize> {
        if self.in_flight < self.limits.max_concurrency.max(1) {
            return self.ready.pop_front();
        }
        let position = self.ready.iter().position(|&module| {
            matches!(
                self.modules[module].config,
                graph::ModuleConfig::Approval(_)
            )
        })?;
        self.ready.remove(position)
    }

    fn start_activation(&mut self, now: i64, module: usize, pending: Option<PendingAttempt>) {
        self.started += 1;
        self.in_flight += 1;
        let progress = &mut self.progress[module];
        progress.activations += 1;
        progress.slot = Slot::Running;
        progress.queued_recorded = false;
        let activation = progress.activations;
        let (attempt, delay_seconds) = match pending {
            Some(pending) => (Some(pending.attempt), pending.delay_seconds),
            // A loop brought a module that retries new input: a later
            // attempt too, with what the one before left.
            None if progress.max_attempts > 1 && activation > 1 => {
                (Some(self.attempt_after_a_loop(module)), 0)
            }
            None => (None, 0),
        };
        if activation > 1 {
            let label = &self.progress[module].label;
            keep_as_previous(Arc::make_mut(&mut self.state), label);
        }
        let inputs = self.take_inputs(module);
        let module_id = self.module_id(module).to_owned();
        if self.replaying
            && let Some(replayed) = self
                .replay
                .as_mut()
                .and_then(|replay| replay.take_ended(&module_id, activation))
        {
            self.to_replay.insert(
                replayed.order,
                Finished {
                    module,
                    activation,
                    ending: replayed.ended.into(),
                    record: replayed.record,
                },
            );
            return;
        }
        if self
            .reuse
            .as_ref()
            .is_some_and(|reuse| reuse.reuses(&module_id, activation))
        {
            self.take_reused(now, module, activation);
            return;
        }
        if matches!(
            self.modules[module].config,
            graph::ModuleConfig::Approval(_)
        ) {
            let recovered = self
                .replay
                .as_mut()
                .and_then(|replay| replay.take_waiting(&module_id, activation));
            self.begin_waiting(now, module, activation, inputs, recovered);
            return;
        }
        let timeout_seconds = self.modules[module].config.effective_timeout_seconds();
        let reused_earlier = self.progress[module]
            .last_record
            .clone()
            .filter(|earlier| earlier.reused_from.is_some());
        // Its tool calls were waiting for people when the run stopped:
        // they wait again.
        if let Some(waiting) = self
            .replay
            .as_mut()
            .and_then(|replay| replay.take_waiting(&module_id, activation))
        {
            let paused = super::command::Paused {
                module: self.modules[module].clone(),
                attempt,
                inputs,
                state: Arc::clone(&self.state),
                timeout_seconds,
                reused_earlier,
            };
            self.begin_waiting_calls(now, module, activation, waiting, paused, true);
            return;
        }
        let recovered = self
            .replay
            .as_mut()
            .and_then(|replay| replay.take_in_progress(&module_id, activation));
        let started_at = recovered
            .as_ref()
            .map_or(now, |recovered| recovered.started_at);
        let record = ActivationRecord::new(&module_id, activation, started_at);
        // Stored as running from now (PRODUCT §3.1), its queued record if
        // it waited for a slot replaced; not waited for, so starting costs
        // no commit.
        self.commands
            .push(Command::KeepActivation(Box::new(record.clone())));
        let start = StartActivation {
            module_index: module,
            module: self.modules[module].clone(),
            activation,
            attempt,
            inputs,
            state: Arc::clone(&self.state),
            record,
            recovered,
            delay_seconds,
            timeout_seconds,
            reused_earlier,
        };
        if self.replaying {
            self.deferred.push(start);
        } else {
            self.spawned += 1;
            self.commands.push(Command::Start(Box::new(start)));
        }
    }

    /// The attempt of a module that retries, brought new input by a loop:
    /// what the attempt before left.
    fn attempt_after_a_loop(&self, module: usize) -> Attempt {
        let progress = &self.progress[module];
        let previous_diff = progress
            .last_record
            .as_ref()
            .and_then(|record| record.outputs.get(DIFF_OUT))
            .and_then(PortValue::as_bundle)
            .map(|bundle| bundle.as_text())
            .unwrap_or_default();
        Attempt {
            of: progress.max_attempts,
            retried: false,
            repeat: false,
            error: self
                .failures_in(module)
                .unwrap_or_else(|| crate::attempts::NOT_A_FAILURE.to_owned()),
            previous_output: self
                .state
                .get(&format!("{}.output", progress.label))
                .cloned()
                .unwrap_or_default(),
            previous_diff,
        }
    }

    /// The values on `module`'s cables in, which are no longer fresh once
    /// it runs on them. Joining any, it runs on what arrived, not on older
    /// values.
    fn take_inputs(&mut self, module: usize) -> Vec<InputValue> {
        let progress = &self.progress[module];
        let inputs = progress
            .incoming
            .iter()
            .map(|&index| &self.cables[index])
            .filter(|cable| progress.join == Join::All || cable.fresh)
            .filter_map(|cable| {
                Some(InputValue {
                    port: cable.port.clone(),
                    source_module: self.modules[cable.source].id.clone(),
                    source_label: self.progress[cable.source].label.clone(),
                    source_port: cable.source_port.clone(),
                    value: cable.value.clone()?,
                    fresh: cable.fresh,
                })
            })
            .collect();
        for &index in &self.progress[module].incoming {
            self.cables[index].fresh = false;
        }
        inputs
    }

    /// A loop came back to a module whose attempts are used: it gives up
    /// without running, which is what ends such a loop.
    fn give_up_on_arrival(&mut self, now: i64, module: usize) {
        let max_attempts = self.progress[module].max_attempts;
        let why = self.failures_in(module).map_or_else(
            || "the loop came back to it".to_owned(),
            |failures| format!("the loop came back to it with: {failures}"),
        );
        for &index in &self.progress[module].incoming {
            self.cables[index].fresh = false;
        }
        let reason = format!("its {max_attempts} attempts are used, and {why}");
        let activation = self.progress[module].activations;
        let mut record = self.progress[module].last_record.take().unwrap_or_else(|| {
            Arc::new(ActivationRecord::new(
                self.module_id(module),
                activation,
                now,
            ))
        });
        let given_up = self.give_up(
            module,
            activation,
            Arc::make_mut(&mut record),
            max_attempts,
            reason,
        );
        if let Some(error) = given_up {
            self.failure.get_or_insert(error);
        }
        self.commands.push(Command::SaveActivation {
            record: Arc::clone(&record),
            ending: None,
        });
        self.save_state_of(module);
        self.progress[module].last_record = Some(record);
        let candidates = self.fresh_targets();
        self.queue_if_ready(candidates);
    }

    /// Records the state keys `module`'s activation changed.
    pub(super) fn save_state_of(&mut self, module: usize) {
        let changes = changes_since(
            &self.state,
            &mut self.saved_state,
            &self.progress[module].label,
        );
        if !changes.is_empty() {
            self.commands.push(Command::SaveState(changes));
        }
    }

    /// What is ready but has no slot is recorded as queued (PRODUCT §3.1),
    /// once. One whose attempts are used never runs; a stopping run starts
    /// nothing more, so nothing waits on a slot.
    pub(super) fn record_queued(&mut self, now: i64) {
        for position in 0..self.ready.len() {
            let module = self.ready[position];
            let progress = &self.progress[module];
            let gives_up = progress.retry.is_none() && progress.attempts_used();
            if progress.queued_recorded || gives_up {
                continue;
            }
            self.progress[module].queued_recorded = true;
            let activation = self.progress[module].activations + 1;
            let mut record = ActivationRecord::new(self.module_id(module), activation, now);
            record.status = ActivationStatus::Queued;
            self.commands.push(Command::SaveActivation {
                record: Arc::new(record),
                ending: None,
            });
            self.emit(RunEvent::ModuleQueued {
                module_id: self.module_id(module).to_owned(),
                activation,
            });
        }
    }

    /// The modules that repeated most, which is where a run that hit the
    /// activation limit went round: "the loop went through "Draft" (10
    /// times) and "Review" (10 times)".
    fn the_loop(&self) -> String {
        let mut repeated: Vec<(u32, usize)> = self
            .progress
            .iter()
            .enumerate()
            .filter(|(_, progress)| progress.activations > 1)
            .map(|(module, progress)| (progress.activations, module))
            .collect();
        // Most first; ties in document order.
        repeated.sort_by(|left, right| right.0.cmp(&left.0).then(left.1.cmp(&right.1)));
        let Some(&(most, _)) = repeated.first() else {
            return "no module repeated, so the graph is too large for the limit".to_owned();
        };
        // What ran about as often as the busiest module is on its loop.
        let names: Vec<String> = repeated
            .iter()
            .filter(|(count, _)| count * 2 >= most)
            .take(5)
            .map(|(count, module)| format!("\"{}\" ({count} times)", self.progress[*module].label))
            .collect();
        format!("the loop went through {}", names.join(", "))
    }
}
