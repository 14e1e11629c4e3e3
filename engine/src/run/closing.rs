//! How a run ends: what was still in flight is kept as it was, what never
//! started is said so, and the run is completed, failed or cancelled — or,
//! when the server stopped under it, left unfinished to be resumed.

use std::sync::Arc;

use wire::activation::{ActivationRecord, ActivationStatus};
use wire::event::{RunEvent, RunStatus};

use super::Run;
use super::command::{Command, Ending, Finished, RunEnding};
use crate::resume::Replay;

impl Run {
    /// Stopped rather than ended: what is in flight is kept as it is, to go
    /// on from there when the run resumes, and nothing says the run ended.
    fn stopped(&self) -> bool {
        self.stopping && self.failure.is_none() && !self.cancelled
    }

    /// An activation that was still in flight when the run ended, stopped
    /// by the shell: what it had produced is kept.
    pub fn on_drained(&mut self, now: i64, finished: Finished) -> Vec<Command> {
        self.spawned = self.spawned.saturating_sub(1);
        let Finished {
            mut record, ending, ..
        } = finished;
        if matches!(ending, Ending::WaitsForCalls(_)) {
            // Its calls wait for people: a stopped run waits on them again
            // when resumed; one that ended never will.
            if self.stopped() {
                record.status = ActivationStatus::Waiting;
            } else {
                record.finished_at = Some(now);
                record.status = ActivationStatus::Cancelled;
                record.error = Some("the run ended before anyone decided".to_owned());
            }
        } else if !self.stopped() {
            record.finished_at = Some(now);
            record.status = match ending {
                Ending::Done(done) => match *done {
                    Ok(_) => ActivationStatus::Completed,
                    Err(error) => {
                        record.error = Some(error.to_string());
                        ActivationStatus::Failed
                    }
                },
                Ending::TimedOut(_) | Ending::Cancelled | Ending::WaitsForCalls(_) => {
                    ActivationStatus::Cancelled
                }
            };
            // What finished as the run ended says so, as its record will:
            // the live view must not guess it was stopped.
            let module_id = record.module_id.clone();
            let activation = record.activation;
            match (&record.status, &record.error) {
                (ActivationStatus::Completed, _) => self.emit(RunEvent::ModuleCompleted {
                    module_id,
                    activation,
                }),
                (ActivationStatus::Failed, Some(error)) => self.emit(RunEvent::ModuleFailed {
                    module_id,
                    activation,
                    error: error.clone(),
                }),
                _ => {}
            }
        }
        self.commands.push(Command::SaveActivation {
            record: Arc::new(record),
            ending: None,
        });
        self.take_commands()
    }

    /// Ends the run, once what was in flight is drained: the records of
    /// what never ran or never finished, and the last event. The shell
    /// records the status once every event is written.
    pub fn finish(&mut self, now: i64) -> (Vec<Command>, RunEnding) {
        if self.stopped() {
            let ending = RunEnding {
                status: RunStatus::Interrupted,
                error: Some("the run was stopped, to be resumed".to_owned()),
                activations: self.started,
            };
            return (self.take_commands(), ending);
        }
        self.close_unfinished(now);
        if self.replaying {
            self.replaying = false;
            self.emit(RunEvent::RunResumed {
                status: RunStatus::Running,
                replayed: self.replayed_count,
            });
        }
        let (status, error) = match self.failure.clone() {
            Some(error) => {
                self.emit(RunEvent::RunFailed {
                    status: RunStatus::Failed,
                    error: error.clone(),
                });
                (RunStatus::Failed, Some(error))
            }
            None if self.cancelled => {
                self.emit(RunEvent::RunCancelled {
                    status: RunStatus::Cancelled,
                });
                (RunStatus::Cancelled, None)
            }
            None => {
                self.emit(RunEvent::RunCompleted {
                    status: RunStatus::Completed,
                });
                (RunStatus::Completed, None)
            }
        };
        let ending = RunEnding {
            status,
            error,
            activations: self.started,
        };
        (self.take_commands(), ending)
    }

    /// What was waiting for the replay to end, or in flight when the run
    /// stopped and never reached again, ended with the run; what waited for
    /// a slot never started.
    fn close_unfinished(&mut self, now: i64) {
        let mut unfinished: Vec<ActivationRecord> = std::mem::take(&mut self.deferred)
            .into_iter()
            .map(|start| start.record)
            .collect();
        unfinished.extend(
            self.replay
                .as_mut()
                .map(Replay::left_over)
                .unwrap_or_default(),
        );
        for mut record in unfinished {
            record.finished_at = Some(now);
            record.status = if self.cancelled {
                ActivationStatus::Cancelled
            } else {
                ActivationStatus::Interrupted
            };
            self.commands.push(Command::SaveActivation {
                record: Arc::new(record),
                ending: None,
            });
        }
        for module in 0..self.progress.len() {
            if let Some(mut record) = self.progress[module].waiting_record.take() {
                record.finished_at = Some(now);
                record.status = ActivationStatus::Cancelled;
                record.error = Some("the run ended before anyone decided".to_owned());
                self.commands.push(Command::SaveActivation {
                    record: Arc::new(record),
                    ending: None,
                });
            }
            if !self.progress[module].queued_recorded {
                continue;
            }
            let activation = self.progress[module].activations + 1;
            let mut record = ActivationRecord::new(self.module_id(module), activation, now);
            record.status = ActivationStatus::Cancelled;
            record.finished_at = record.started_at.into();
            record.error = Some(wire::activation::NEVER_STARTED.to_owned());
            self.commands.push(Command::SaveActivation {
                record: Arc::new(record),
                ending: None,
            });
        }
    }
}
