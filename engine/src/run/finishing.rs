//! What the run does when an activation ends: its record and the run state
//! take what it produced, its ports' values go down their cables, and a
//! failure goes where it is wired, is tried again, gives up or fails the
//! run.

use std::sync::Arc;

use graph::ports::{ERROR_OUT, TIMEOUT_OUT};
use wire::activation::{ActivationRecord, ActivationStatus, Retried};
use wire::content::meta::Failure as FailureMeta;
use wire::event::RunEvent;

use super::Run;
use super::command::{Command, Ending, Finished};
use super::ending::{AttemptEnd, Failure, FailureKind, classify, encode_ending};
use super::progress::{PendingAttempt, Slot};
use super::state_keys::write_state;
use crate::activation::ActivationOutput;
use crate::attempts::Attempt;
use crate::bundle::{ContextBundle, PortValue};

impl Run {
    /// Handles how an activation ended. A `replayed` ending comes from the
    /// record of a resumed run: it is not recorded again.
    pub(super) fn handle_ending(&mut self, now: i64, finished: Finished, replayed: bool) {
        let Finished {
            module,
            activation,
            ending,
            mut record,
        } = finished;
        self.in_flight = self.in_flight.saturating_sub(1);
        self.progress[module].slot = Slot::Idle;
        let label = self.progress[module].label.clone();
        self.handled += 1;
        let reused = record.reused_from.is_some();
        let ending_kept = if replayed {
            self.replayed_count += 1;
            // What a reused activation cost was paid by the run it came from.
            if !reused {
                self.commands.push(Command::CountReplayedCost {
                    module_id: record.module_id.clone(),
                    label: label.clone(),
                    cost: record.cost(),
                });
            }
            None
        } else {
            record.finished_at = Some(now);
            encode_ending(self.handled, &ending)
        };
        // A reused activation's session is rebuilt from its transcript, as
        // a replayed one's.
        let session_key = self.keep_sessions(&ending, replayed || reused);
        record
            .ignored_inputs
            .append(&mut self.progress[module].ignored);
        let retry = self.modules[module]
            .config
            .retry()
            .copied()
            .unwrap_or_default();
        match classify(ending, retry.retries(), &label, &record) {
            AttemptEnd::Cancelled => record.status = ActivationStatus::Cancelled,
            AttemptEnd::Aborted(output) => self.aborted(module, activation, &mut record, output),
            AttemptEnd::Succeeded(output) => {
                self.succeeded(module, activation, &mut record, output);
            }
            AttemptEnd::Failed(failure) => {
                self.attempt_failed(module, activation, &mut record, failure);
            }
        }
        if reused {
            record.status = ActivationStatus::Reused;
        }
        let record = Arc::new(record);
        if !replayed {
            self.commands.push(Command::SaveActivation {
                record: Arc::clone(&record),
                ending: ending_kept,
            });
        }
        if let Some(key) = session_key
            && let Some(session) = crate::resume::session_from_record(&record)
        {
            self.commands.push(Command::KeepSession { key, session });
        }
        self.save_state_of(module);
        self.progress[module].last_record = Some(record);
        // Whoever got a value may be ready now, this module included (a
        // value may have arrived while it ran).
        let mut candidates = self.fresh_targets();
        candidates.push(module);
        candidates.sort_unstable();
        candidates.dedup();
        self.queue_if_ready(candidates);
    }

    /// Keeps a coding agent's session, fresh or replayed, for the coding
    /// agents downstream that continue it. Returns the key of a replayed
    /// agent task's session, which is rebuilt from its transcript for the
    /// modules that continue it.
    fn keep_sessions(&mut self, ending: &Ending, replayed: bool) -> Option<String> {
        let Ending::Done(done) = ending else {
            return None;
        };
        let Ok(output) = done.as_ref() else {
            return None;
        };
        if let Some((key, reference)) = &output.agent_session {
            self.commands.push(Command::KeepAgentSession {
                key: key.clone(),
                reference: reference.clone(),
            });
        }
        if replayed {
            output.session_key.clone()
        } else {
            None
        }
    }

    /// The model decided the run cannot succeed: no `error_out` takes
    /// this, the run ends with its reason. What it spent is kept.
    fn aborted(
        &mut self,
        module: usize,
        activation: u32,
        record: &mut ActivationRecord,
        output: ActivationOutput,
    ) {
        let label = &self.progress[module].label;
        record.receipt = output.receipt;
        let reason = output.intent.map(|(_, reason)| reason).unwrap_or_default();
        let reason = if reason.trim().is_empty() {
            "it gave no reason".to_owned()
        } else {
            reason
        };
        let error = format!("\"{label}\" chose to abort the run: {reason}");
        record.status = ActivationStatus::Failed;
        record.error = Some(error.clone());
        Arc::make_mut(&mut self.state).insert(format!("{label}.status"), "failed".to_owned());
        self.emit(RunEvent::ModuleFailed {
            module_id: record.module_id.clone(),
            activation,
            error: error.clone(),
        });
        self.failure = Some(error);
    }

    /// Keeps what the activation produced: its record, the run state.
    fn keep_output(
        &mut self,
        module: usize,
        activation: u32,
        record: &mut ActivationRecord,
        output: &ActivationOutput,
    ) {
        record.status = ActivationStatus::Completed;
        record.receipt.clone_from(&output.receipt);
        for (port, value) in &output.ports {
            record.outputs.insert(port.clone(), value.clone());
        }
        let label = &self.progress[module].label;
        write_state(
            Arc::make_mut(&mut self.state),
            label,
            activation,
            record,
            output,
        );
        self.emit(RunEvent::ModuleCompleted {
            module_id: record.module_id.clone(),
            activation,
        });
    }

    /// Its ports' values go down their cables. A failure nobody handles
    /// must not end as a completed run.
    fn succeeded(
        &mut self,
        module: usize,
        activation: u32,
        record: &mut ActivationRecord,
        output: ActivationOutput,
    ) {
        self.keep_output(module, activation, record, &output);
        for (port, value) in output.ports {
            let carried = self.send(module, activation, record, &port, value);
            if let Some(outcome) = graph::ports::failure_outcome(&port)
                && !carried
            {
                let why = if self.progress[module].cables_from(&port).is_some() {
                    "none of the conditions on its cables held"
                } else {
                    "no cable leads on from that port"
                };
                let label = &self.progress[module].label;
                self.failure.get_or_insert(format!(
                    "\"{label}\" ended with {outcome} ({port}), and {why}"
                ));
            }
        }
    }

    fn attempt_failed(
        &mut self,
        module: usize,
        activation: u32,
        record: &mut ActivationRecord,
        failure: Failure,
    ) {
        let Failure {
            kind,
            reason,
            output,
            diff,
        } = failure;
        let repeat = matches!(kind, FailureKind::Repeat(_));
        // Used fix turns give up, attempts to retry or not.
        let checks = matches!(kind, FailureKind::Validators(_));
        let timed_out = matches!(kind, FailureKind::TimedOut);
        let retry = self.retry_of(module);
        match kind.produced() {
            // What it produced is kept, and nothing is sent on.
            Some(produced) => self.keep_output(module, activation, record, &produced),
            None => self.failed(module, activation, record, &reason, timed_out),
        }
        if retry.retries() || repeat || checks {
            let attempt = Attempt {
                of: retry.max_attempts,
                retried: true,
                repeat,
                error: reason,
                previous_output: output,
                previous_diff: diff,
            };
            self.retry_or_give_up(module, activation, record, attempt);
        }
    }

    /// The activation failed: recorded and announced. With no attempts to
    /// use, the failure goes where it is wired, a timeout first to its own
    /// port; where nothing takes it, the run fails.
    fn failed(
        &mut self,
        module: usize,
        activation: u32,
        record: &mut ActivationRecord,
        error: &str,
        timed_out: bool,
    ) {
        let label = &self.progress[module].label;
        record.status = ActivationStatus::Failed;
        record.error = Some(error.to_owned());
        let state = Arc::make_mut(&mut self.state);
        state.insert(format!("{label}.status"), "failed".to_owned());
        state.insert(format!("{label}.attempt"), activation.to_string());
        let module_id = record.module_id.clone();
        self.emit(RunEvent::ModuleFailed {
            module_id: module_id.clone(),
            activation,
            error: error.to_owned(),
        });
        if self.retry_of(module).retries() {
            return;
        }
        let mut bundle = ContextBundle::text(&module_id, error.to_owned());
        bundle.add_meta(&FailureMeta::new(timed_out));
        let value = PortValue::Bundle(bundle);
        for port in [TIMEOUT_OUT, ERROR_OUT] {
            if (port == ERROR_OUT || timed_out)
                && self.send(module, activation, record, port, value.clone())
            {
                record.outputs.insert(port.to_owned(), value);
                return;
            }
        }
        self.failure = Some(error.to_owned());
    }

    /// A failed attempt (or a reply that chose `repeat`) runs again on the
    /// same values while it has attempts left; then it gives up. A spent
    /// budget is not tried again: it would spend more.
    fn retry_or_give_up(
        &mut self,
        module: usize,
        activation: u32,
        record: &mut ActivationRecord,
        attempt: Attempt,
    ) {
        let retry = self.retry_of(module);
        let spent = attempt.error.starts_with(crate::budget::BUDGET_EXCEEDED);
        if activation < retry.max_attempts && !spent {
            let next = activation + 1;
            let delay_seconds = retry.delay_before(next);
            record.retried = Some(Retried {
                reason: attempt.error.clone(),
                next_attempt: next,
                max_attempts: retry.max_attempts,
                delay_seconds,
            });
            let label = &self.progress[module].label;
            Arc::make_mut(&mut self.state).insert(format!("{label}.status"), "retrying".to_owned());
            self.emit(RunEvent::ModuleRetrying {
                module_id: record.module_id.clone(),
                activation,
                attempt: next,
                max_attempts: retry.max_attempts,
                delay_seconds,
                reason: attempt.error.clone(),
            });
            self.progress[module].retry = Some(PendingAttempt {
                attempt,
                delay_seconds,
            });
            return;
        }
        let reason = if attempt.repeat {
            let said = if attempt.error.trim().is_empty() {
                "it gave no reason".to_owned()
            } else {
                format!("“{}”", attempt.error.trim())
            };
            let advice = if retry.retries() {
                ""
            } else {
                " (give it 2 or more in Attempts to let it run again)"
            };
            format!(
                "its reply chose to repeat it, and it has no attempts left{advice}; the reply's reason: {said}"
            )
        } else {
            attempt.error
        };
        let attempts = if spent {
            activation
        } else {
            retry.max_attempts
        };
        if let Some(error) = self.give_up(module, activation, record, attempts, reason) {
            self.failure.get_or_insert(error);
        }
    }

    fn retry_of(&self, module: usize) -> graph::attempts::Retry {
        self.modules[module]
            .config
            .retry()
            .copied()
            .unwrap_or_default()
    }
}
