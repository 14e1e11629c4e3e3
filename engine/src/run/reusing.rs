//! A run from a module (PRODUCT §3.15): an activation of a module upstream
//! of it is taken from the recorded run and handled as if it had just
//! ended, announced once as `module.reused`.

use wire::event::RunEvent;

use super::Run;
use super::command::Finished;

impl Run {
    /// Takes activation `activation` of a reused module from the recorded
    /// run, to be handled in turn; the run fails, saying why, when that
    /// run has no such activation (its values would not have brought it).
    pub(super) fn take_reused(&mut self, now: i64, module: usize, activation: u32) {
        let Some(reuse) = self.reuse.as_mut() else {
            return;
        };
        let module_id = &self.modules[module].id;
        match reuse.take(module_id, activation, now) {
            Some(reused) => self.reused.push_back(Finished {
                module,
                activation,
                ending: reused.ended.into(),
                record: reused.record,
            }),
            None => {
                let label = &self.progress[module].label;
                self.failure = Some(format!(
                    "\"{label}\" was to be reused from run {}, which has no finished activation {activation} of it",
                    reuse.from_run()
                ));
            }
        }
    }

    /// Handles a reused activation's recorded ending: its values go down
    /// the same cables, the run state and sessions take what it left, and
    /// its record is saved as reused.
    pub(super) fn handle_reused(&mut self, now: i64, finished: Finished) {
        if let Some(from) = &finished.record.reused_from {
            self.emit(RunEvent::ModuleReused {
                module_id: finished.record.module_id.clone(),
                activation: finished.activation,
                from_run: from.run_id.clone(),
                from_activation: from.activation,
            });
        }
        self.reusing = true;
        self.handle_ending(now, finished, false);
        self.reusing = false;
    }
}
