//! Approvals (PRODUCT §3.14): a module that waits for a person instead of
//! running. Its wait holds no task and no slot; a decision, or its
//! timeout, becomes its ending like any activation's, so it is recorded,
//! sent down its cables and replayed on a resume. While nothing runs and a
//! person is waited for, the run is `waiting` and its deadline is paused.

use std::sync::Arc;

use graph::ModuleConfig;
use graph::kinds::approval::{APPROVED_OUT, ApprovalConfig, REJECTED_OUT, REVISE_OUT};
use graph::ports::{DATA_IN, EXHAUSTED_OUT, SIGNAL_OUT, TIMEOUT_OUT};
use wire::activation::{ActivationRecord, ActivationStatus};
use wire::approval::{Decision, DecisionRecord, Shown, Waiting};
use wire::content::meta::{Decided, WaitedOut};
use wire::event::{RunEvent, RunStatus};

use super::Run;
use super::command::{Command, Ending, Finished, Timer};
use super::progress::Slot;
use crate::activation::{ActivationError, ActivationOutput, InputValue};
use crate::bundle::{ContextBundle, PortValue};

impl Run {
    /// A person decided on `module_id`'s approval `activation`. A decision
    /// for an approval that does not wait (any more) changes nothing.
    pub fn on_decided(
        &mut self,
        now: i64,
        module_id: &str,
        activation: u32,
        decision: DecisionRecord,
    ) -> Vec<Command> {
        self.decide(now, module_id, activation, decision);
        self.advance(now);
        self.update_waiting(now);
        self.take_commands()
    }

    /// The approval of `module` (its activation `activation`, just
    /// started) waits for a person: asked, announced and recorded. On a
    /// resume, `recovered` is its record as it waited: it waits again
    /// without saying so twice.
    pub(super) fn begin_waiting(
        &mut self,
        now: i64,
        module: usize,
        activation: u32,
        inputs: Vec<InputValue>,
        recovered: Option<ActivationRecord>,
    ) {
        let ModuleConfig::Approval(config) = &self.modules[module].config else {
            return;
        };
        let config = config.clone();
        let record = match recovered {
            Some(record) => record,
            None => match self.ask(now, module, activation, &config, &inputs) {
                Ok(record) => record,
                Err(error) => {
                    let finished = Finished {
                        module,
                        activation,
                        ending: Ending::Done(Box::new(Err(ActivationError::Failed(error)))),
                        record: ActivationRecord::new(self.module_id(module), activation, now),
                    };
                    self.handle_ending(now, finished, false);
                    return;
                }
            },
        };
        if let Some(deadline_at) = record
            .waiting
            .as_ref()
            .and_then(|waiting| waiting.deadline_at)
        {
            let left = u64::try_from(deadline_at.saturating_sub(now).max(0)).unwrap_or(0);
            self.commands.push(Command::ArmTimer {
                timer: Timer::Approval { module, activation },
                after: std::time::Duration::from_millis(left),
            });
        }
        // It holds no slot while it waits.
        self.in_flight = self.in_flight.saturating_sub(1);
        self.waiting += 1;
        let progress = &mut self.progress[module];
        progress.slot = Slot::Waiting;
        progress.waiting_record = Some(record);
    }

    /// What the approval asks and shows, announced and recorded; an error
    /// when its question has a variable that cannot be filled.
    fn ask(
        &mut self,
        now: i64,
        module: usize,
        activation: u32,
        config: &ApprovalConfig,
        inputs: &[InputValue],
    ) -> Result<ActivationRecord, String> {
        let asked = crate::render::render(config.question(), &self.state)
            .map_err(|error| format!("what \"{}\" asks: {error}", self.progress[module].label))?;
        let shown: Vec<Shown> = inputs
            .iter()
            .filter(|input| config.shows(&input.port))
            .map(|input| Shown {
                port: input.port.clone(),
                source_module: input.source_module.clone(),
                source_label: input.source_label.clone(),
                source_port: input.source_port.clone(),
                value: input.value.clone(),
            })
            .collect();
        let on_data: Vec<&InputValue> = inputs
            .iter()
            .filter(|input| input.port == DATA_IN)
            .collect();
        let value = on_data
            .iter()
            .filter_map(|input| input.value.as_bundle())
            .map(|bundle| bundle.as_text())
            .collect::<Vec<_>>()
            .join("\n\n");
        let passes_on = match on_data.as_slice() {
            [only] => Some(only.value.clone()),
            _ => None,
        };
        let deadline_at = config
            .timeout_seconds
            .map(|seconds| now.saturating_add(i64::from(seconds) * 1000));
        let mut record = ActivationRecord::new(self.module_id(module), activation, now);
        record.status = ActivationStatus::Waiting;
        self.emit(RunEvent::ModuleWaiting {
            module_id: record.module_id.clone(),
            activation,
            asked: asked.clone(),
            shown: shown
                .iter()
                .map(|shown| shown.source_module.clone())
                .collect(),
            deadline_at,
            tools: Vec::new(),
        });
        record.waiting = Some(Waiting {
            asked,
            shown,
            value,
            passes_on,
            deadline_at,
        });
        self.commands.push(Command::SaveActivation {
            record: Arc::new(record.clone()),
            ending: None,
        });
        Ok(record)
    }

    /// Takes a decision on a waiting approval, as its ending.
    pub(super) fn decide(
        &mut self,
        now: i64,
        module_id: &str,
        activation: u32,
        decision: DecisionRecord,
    ) {
        let Some(module) = self
            .modules
            .iter()
            .position(|module| module.id == module_id)
        else {
            return;
        };
        let Some(mut record) = self.stop_waiting(module, activation) else {
            return;
        };
        self.emit(RunEvent::ModuleDecided {
            module_id: module_id.to_owned(),
            activation,
            decision: decision.decision,
            by: decision.by,
            feedback: decision.feedback.clone(),
            call_id: None,
        });
        let output = self.decision_output(module, activation, &record, &decision);
        record.decision = Some(decision);
        self.end_wait(now, module, activation, record, output);
    }

    /// Nobody decided in time: the value goes to `timeout_out`.
    pub(super) fn approval_timed_out(&mut self, now: i64, module: usize, activation: u32) {
        let Some(record) = self.stop_waiting(module, activation) else {
            return;
        };
        let module_id = self.module_id(module).to_owned();
        let value = waited_value(&record);
        let mut bundle = ContextBundle::text(&module_id, value.clone());
        bundle.add_meta(&WaitedOut { timeout: true });
        let output = ActivationOutput {
            ports: vec![(TIMEOUT_OUT.to_owned(), PortValue::Bundle(bundle))],
            output_text: value,
            ..ActivationOutput::default()
        };
        self.end_wait(now, module, activation, record, output);
    }

    /// The record of `module`'s approval `activation` if it waits, which
    /// then waits no more.
    fn stop_waiting(&mut self, module: usize, activation: u32) -> Option<ActivationRecord> {
        let progress = &mut self.progress[module];
        if progress.slot != Slot::Waiting || progress.activations != activation {
            return None;
        }
        let record = progress.waiting_record.take()?;
        // Its ending is handled as an activation's that held a slot.
        progress.slot = Slot::Running;
        self.waiting = self.waiting.saturating_sub(1);
        self.in_flight += 1;
        self.commands
            .push(Command::DisarmTimer(Timer::Approval { module, activation }));
        Some(record)
    }

    fn end_wait(
        &mut self,
        now: i64,
        module: usize,
        activation: u32,
        record: ActivationRecord,
        output: ActivationOutput,
    ) {
        let finished = Finished {
            module,
            activation,
            ending: Ending::Done(Box::new(Ok(output))),
            record,
        };
        self.handle_ending(now, finished, false);
    }

    /// The ports a decision fires: approved (the value as edited),
    /// rejected (the reason, the value in its meta), sent back (the
    /// feedback; out of rounds on the last one).
    fn decision_output(
        &self,
        module: usize,
        activation: u32,
        record: &ActivationRecord,
        decision: &DecisionRecord,
    ) -> ActivationOutput {
        let module_id = self.module_id(module);
        let value = decision
            .value
            .clone()
            .unwrap_or_else(|| waited_value(record));
        let max_rounds = match &self.modules[module].config {
            ModuleConfig::Approval(config) => config.max_rounds.max(1),
            _ => 1,
        };
        let feedback = decision.feedback.trim().to_owned();
        let (port, text) = match decision.decision {
            Decision::Approve => (APPROVED_OUT, value.clone()),
            Decision::Reject => (
                REJECTED_OUT,
                if feedback.is_empty() {
                    format!("Rejected by {}", decision.by.words())
                } else {
                    feedback.clone()
                },
            ),
            Decision::Revise if activation >= max_rounds => (
                EXHAUSTED_OUT,
                format!("Not approved after {max_rounds} rounds. The last feedback: {feedback}"),
            ),
            Decision::Revise => (REVISE_OUT, feedback.clone()),
        };
        let mut bundle = match (decision.decision, &decision.value, approved_as_is(record)) {
            // Unedited, the value goes on as it came: a coding module's
            // output keeps the session it names.
            (Decision::Approve, None, Some(original)) => original,
            _ => ContextBundle::text(module_id, text.clone()),
        };
        bundle.add_meta(&Decided {
            decision: decision.decision,
            decided_by: decision.by,
            value: (decision.decision == Decision::Reject).then_some(value),
        });
        ActivationOutput {
            ports: vec![
                (port.to_owned(), PortValue::Bundle(bundle)),
                (
                    SIGNAL_OUT.to_owned(),
                    PortValue::Signal {
                        source_module: module_id.to_owned(),
                    },
                ),
            ],
            output_text: text,
            ..ActivationOutput::default()
        }
    }

    /// Says whether the run waits for people only, once that changes:
    /// its status, and its deadline paused or going again.
    pub(super) fn update_waiting(&mut self, now: i64) {
        if self.failure.is_some() || self.cancelled || self.stopping {
            return;
        }
        let only_waiting = self.waiting > 0
            && self.spawned == 0
            && self.in_flight == 0
            && self.to_replay.is_empty()
            && self.ready.is_empty();
        match (only_waiting, self.waiting_since) {
            (true, None) => {
                self.waiting_since = Some(now);
                self.commands.push(Command::DisarmTimer(Timer::RunDeadline));
                self.commands.push(Command::RecordWait {
                    waited_ms: self.waited_ms,
                    waiting_since: Some(now),
                });
                self.commands.push(Command::SetStatus {
                    status: RunStatus::Waiting,
                    error: None,
                });
            }
            (false, Some(since)) => {
                self.waited_ms = self
                    .waited_ms
                    .saturating_add(now.saturating_sub(since).max(0));
                self.waiting_since = None;
                self.commands.push(Command::RecordWait {
                    waited_ms: self.waited_ms,
                    waiting_since: None,
                });
                self.commands.push(Command::SetStatus {
                    status: RunStatus::Running,
                    error: None,
                });
                self.commands.push(Command::ArmTimer {
                    timer: Timer::RunDeadline,
                    after: self.time_left(now),
                });
            }
            _ => {}
        }
    }
}

/// The value a waiting approval passes on: what came on its `data_in`.
fn waited_value(record: &ActivationRecord) -> String {
    record
        .waiting
        .as_ref()
        .map(|waiting| waiting.value.clone())
        .unwrap_or_default()
}

/// The one bundle that came on `data_in`, to pass on as it is.
fn approved_as_is(record: &ActivationRecord) -> Option<ContextBundle> {
    record.waiting.as_ref()?.passes_on.as_ref()?.as_bundle()
}
