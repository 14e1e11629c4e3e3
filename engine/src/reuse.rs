//! A run from a module (PRODUCT §3.15): the modules upstream of it are not
//! run but taken from a recorded run. The run value (`run.rs`) asks here
//! for each activation of a module to reuse, and handles the recorded
//! ending as if the activation had just ended — values go down the same
//! cables, the run state and sessions are the same — announcing it as
//! `module.reused` and recording it as reused. Which modules are reused is
//! decided before the run (`graph::reuse::plan`); this holds their record.

use std::collections::HashMap;

use wire::activation::{ActivationRecord, ReusedFrom};

use crate::resume::{Ended, RecordedEnding, as_the_activation_left_it};

/// The recorded run a run reuses, and what of it.
#[derive(Debug, Default)]
pub struct Reuse {
    from_run: String,
    /// The modules reused, each with how many of its first activations
    /// (`None`: all of them).
    modules: HashMap<String, Option<u32>>,
    ended: HashMap<(String, u32), (ActivationRecord, Ended)>,
}

/// A recorded activation, ready to be handled as this run's.
pub struct Reused {
    pub record: ActivationRecord,
    pub ended: Ended,
}

impl Reuse {
    /// Reuses `modules` (by id) from the run `from_run`, whose activations
    /// are given with their recorded endings (JSON, as the recorder keeps
    /// them). An ending that cannot be read is not reused: the run fails
    /// when it reaches it, saying so.
    pub fn new(
        from_run: &str,
        modules: impl IntoIterator<Item = String>,
        activations: Vec<(ActivationRecord, String)>,
    ) -> Reuse {
        let modules: HashMap<String, Option<u32>> =
            modules.into_iter().map(|module| (module, None)).collect();
        let mut ended = HashMap::new();
        for (record, json) in activations {
            if !modules.contains_key(&record.module_id) {
                continue;
            }
            let Ok(recorded) = serde_json::from_str::<RecordedEnding>(&json) else {
                continue;
            };
            ended.insert(
                (record.module_id.clone(), record.activation),
                (record, recorded.ended),
            );
        }
        Reuse {
            from_run: from_run.to_owned(),
            modules,
            ended,
        }
    }

    pub fn from_run(&self) -> &str {
        &self.from_run
    }

    /// Of the modules reused, these only for their first activations,
    /// as many as each says (`graph::reuse::Plan::partly`): one that comes
    /// after those runs.
    #[must_use]
    pub fn partly(mut self, partly: impl IntoIterator<Item = (String, u32)>) -> Reuse {
        for (module, count) in partly {
            if let Some(limit) = self.modules.get_mut(&module) {
                *limit = Some(count);
            }
        }
        self.ended.retain(|(module, activation), _| {
            self.modules
                .get(module)
                .is_some_and(|limit| limit.is_none_or(|count| *activation <= count))
        });
        self
    }

    /// Whether this module's activation `activation` is reused rather than
    /// run.
    pub fn reuses(&self, module_id: &str, activation: u32) -> bool {
        self.modules
            .get(module_id)
            .is_some_and(|limit| limit.is_none_or(|count| activation <= count))
    }

    /// Activation `activation` of a reused module, as the recorded run
    /// left it, marked as taken from there; `None` when that run has no
    /// such activation with an ending.
    pub fn take(&mut self, module_id: &str, activation: u32, now: i64) -> Option<Reused> {
        let (record, ended) = self.ended.remove(&(module_id.to_owned(), activation))?;
        let mut record = as_the_activation_left_it(record);
        record.reused_from = Some(ReusedFrom {
            run_id: self.from_run.clone(),
            activation,
        });
        record.started_at = now;
        record.finished_at = None;
        Some(Reused { record, ended })
    }
}
