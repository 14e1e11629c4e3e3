//! Tool calls that wait for a person (PRODUCT §3.17): an agent task whose
//! model asked for a call that needs approval stops there, its record
//! saying which calls wait, and holds no task, slot or connection while
//! people decide — days if they must, across restarts. Each call is
//! decided once (by a person, or by its timeout); when the last is, the
//! activation is taken up from its record, as a resume takes one up: the
//! turns answered are not asked again, the approved calls are made, the
//! declined ones told to the model, and the session goes on.

use std::sync::Arc;

use wire::activation::{ActivationRecord, ActivationStatus};
use wire::approval::CallDecision;
use wire::event::RunEvent;

use super::Run;
use super::command::{Command, Paused, StartActivation, Timer};
use super::progress::Slot;
use crate::resume::{PendingDecision, Recovered};
use crate::tools::waiting::{self, Decided};

impl Run {
    /// A person (or the call's timeout) decided on tool call `call_id` of
    /// `module_id`'s activation `activation`. One on a call that does not
    /// wait (any more) changes nothing.
    pub fn on_call_decided(
        &mut self,
        now: i64,
        module_id: &str,
        activation: u32,
        call_id: &str,
        decision: CallDecision,
    ) -> Vec<Command> {
        self.decide_call(now, module_id, activation, call_id, decision);
        self.advance(now);
        self.update_waiting(now);
        self.take_commands()
    }

    /// A decision taken on this run, of either kind: an approval's, or
    /// one tool call's.
    pub fn on_decision(&mut self, now: i64, pending: PendingDecision) -> Vec<Command> {
        self.take_decision(now, pending);
        self.advance(now);
        self.update_waiting(now);
        self.take_commands()
    }

    pub(super) fn take_decision(&mut self, now: i64, pending: PendingDecision) {
        let PendingDecision {
            module_id,
            activation,
            decided,
        } = pending;
        match decided {
            crate::resume::Decided::Approval(decision) => {
                self.decide(now, &module_id, activation, decision);
            }
            crate::resume::Decided::Call { call_id, decision } => {
                self.decide_call(now, &module_id, activation, &call_id, decision);
            }
        }
    }

    /// `module`'s activation stopped for its tool calls to be decided:
    /// it waits, announced and recorded. On a resume, `recovered`: it
    /// waits again without saying so twice.
    pub(super) fn begin_waiting_calls(
        &mut self,
        now: i64,
        module: usize,
        activation: u32,
        mut record: ActivationRecord,
        paused: Paused,
        recovered: bool,
    ) {
        record.status = ActivationStatus::Waiting;
        let tools = waiting::waiting_tools(&record);
        if !recovered {
            let deadline_at = waiting::next_deadline(&record);
            self.emit(RunEvent::ModuleWaiting {
                module_id: record.module_id.clone(),
                activation,
                asked: format!("May it call {}?", tools.join(", ")),
                shown: Vec::new(),
                deadline_at,
                tools,
            });
            self.commands.push(Command::SaveActivation {
                record: Arc::new(record.clone()),
                ending: None,
            });
        }
        self.arm_call_timer(now, module, activation, &record);
        // It holds no slot while it waits.
        self.in_flight = self.in_flight.saturating_sub(1);
        self.waiting += 1;
        let progress = &mut self.progress[module];
        progress.slot = Slot::Waiting;
        progress.waiting_record = Some(record);
        progress.paused = Some(Box::new(paused));
    }

    /// The shell's timer for the first deadline of the calls still
    /// undecided, if any has one.
    fn arm_call_timer(
        &mut self,
        now: i64,
        module: usize,
        activation: u32,
        record: &ActivationRecord,
    ) {
        let timer = Timer::ToolCalls { module, activation };
        self.commands.push(Command::DisarmTimer(timer));
        if let Some(deadline_at) = waiting::next_deadline(record) {
            let left = u64::try_from(deadline_at.saturating_sub(now).max(0)).unwrap_or(0);
            self.commands.push(Command::ArmTimer {
                timer,
                after: std::time::Duration::from_millis(left),
            });
        }
    }

    /// The record of `module`'s activation while its calls wait.
    pub fn waiting_calls(&self, module: usize, activation: u32) -> Option<&ActivationRecord> {
        let progress = self.progress.get(module)?;
        (progress.slot == Slot::Waiting && progress.activations == activation)
            .then_some(progress.waiting_record.as_ref())
            .flatten()
            .filter(|record| waiting::waits_on_calls(record))
    }

    /// Takes a decision on one waiting call; the last one takes the
    /// activation up.
    pub(super) fn decide_call(
        &mut self,
        now: i64,
        module_id: &str,
        activation: u32,
        call_id: &str,
        decision: CallDecision,
    ) {
        let Some(module) = self
            .modules
            .iter()
            .position(|module| module.id == module_id)
        else {
            return;
        };
        if self.waiting_calls(module, activation).is_none() {
            return;
        }
        let Some(record) = self.progress[module].waiting_record.as_mut() else {
            return;
        };
        let event = RunEvent::ModuleDecided {
            module_id: module_id.to_owned(),
            activation,
            decision: decision.decision,
            by: decision.by.unwrap_or(wire::approval::Decider::Editor),
            feedback: decision.feedback.clone(),
            call_id: Some(call_id.to_owned()),
        };
        let timed_out = decision.by.is_none();
        match waiting::decide(record, call_id, decision) {
            Decided::NotWaiting => {}
            Decided::OthersWait => {
                let record = record.clone();
                if !timed_out {
                    self.emit(event);
                }
                self.commands.push(Command::SaveActivation {
                    record: Arc::new(record.clone()),
                    ending: None,
                });
                self.arm_call_timer(now, module, activation, &record);
            }
            Decided::AllDecided => {
                if !timed_out {
                    self.emit(event);
                }
                self.take_up(module, activation);
            }
        }
    }

    /// Every call of the activation is decided: it runs again from its
    /// record, in a task of its own, holding a slot.
    fn take_up(&mut self, module: usize, activation: u32) {
        let progress = &mut self.progress[module];
        let (Some(record), Some(paused)) = (progress.waiting_record.take(), progress.paused.take())
        else {
            return;
        };
        progress.slot = Slot::Running;
        self.waiting = self.waiting.saturating_sub(1);
        self.in_flight += 1;
        self.commands.push(Command::DisarmTimer(Timer::ToolCalls {
            module,
            activation,
        }));
        let mut started = ActivationRecord::new(&record.module_id, activation, record.started_at);
        started.status = ActivationStatus::Running;
        self.commands
            .push(Command::KeepActivation(Box::new(started.clone())));
        let Paused {
            module: definition,
            attempt,
            inputs,
            state,
            timeout_seconds,
            reused_earlier,
        } = *paused;
        self.spawned += 1;
        self.commands.push(Command::Start(Box::new(StartActivation {
            module_index: module,
            module: definition,
            activation,
            attempt,
            inputs,
            state,
            record: started,
            recovered: Some(Recovered::new(record)),
            delay_seconds: 0,
            timeout_seconds,
            reused_earlier,
        })));
    }

    /// The calls of `module`'s activation whose wait is over at `now`,
    /// for the shell to claim their timeouts.
    pub fn overdue_calls(&self, module: usize, activation: u32, now: i64) -> Vec<String> {
        self.waiting_calls(module, activation)
            .map(|record| waiting::overdue(record, now))
            .unwrap_or_default()
    }
}
