//! A run as a value (PRODUCT §3.1): what a run has done and what it does
//! next, fed one event at a time — an activation finished, a timer fired,
//! a person cancelled, the server is stopping, the budget is spent — and
//! answering each with commands for its shell (`scheduler.rs`) to carry
//! out: start an activation, announce an event, save a record, arm a
//! timer. It holds no task, recorder or clock: time is passed in, so a run
//! can be stepped and checked in a unit test, and a resumed run is the same
//! value fed the record of what happened (`resume.rs`).
//!
//! Activation rule. Each live cable into a module holds the last value it
//! carried and whether that value is fresh (arrived since the module last
//! ran). Cables that close a loop (back edges found from the entry modules)
//! do not hold up a first activation. A module runs when every other
//! incoming cable is fresh (join = all), or, in a revision loop, when a
//! loop cable is fresh and the others hold a value from before.

mod cables;
mod closing;
mod command;
mod ending;
mod finishing;
mod progress;
mod readiness;
mod reusing;
mod sending;
mod starting;
mod state_keys;
#[cfg(test)]
mod tests;
mod tool_waiting;
mod waiting;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use graph::Graph;
use graph::topology::Topology;
use wire::event::{RunEvent, RunStatus};

use crate::RunInput;
use crate::render::RunState;
use crate::resume::{Replay, Resume};
use crate::reuse::Reuse;
use cables::LiveCable;
pub use command::{Command, Ending, Finished, Limits, Paused, RunEnding, StartActivation, Timer};
use progress::{ModuleProgress, Slot};

/// The error a run fails with when it makes more activations than allowed.
pub const TRANSITION_LIMIT: &str = "step_transition_limit_exceeded";

/// One run's progress. Its methods take what happened and return what to
/// do about it, in order.
pub struct Run {
    modules: Vec<graph::Module>,
    progress: Vec<ModuleProgress>,
    cables: Vec<LiveCable>,
    /// Modules ready to run, in the order they became ready, waiting for a
    /// concurrency slot.
    ready: VecDeque<usize>,
    /// The run state: shared with the activations in flight, changed in
    /// place once none holds it, copied only while one does.
    state: Arc<RunState>,
    /// The run state as recorded.
    saved_state: RunState,
    run_input: Arc<RunInput>,
    limits: Limits,
    /// Activations started; the limit counts them.
    started: u32,
    /// Activations in flight: in tasks, or waiting for a replay to end.
    in_flight: usize,
    /// Activations running in the shell's tasks.
    spawned: usize,
    /// Endings handled so far; a recorded ending keeps its place.
    handled: u32,
    failure: Option<String>,
    cancelled: bool,
    /// The server is stopping: nothing more starts, and the run ends
    /// unfinished, to be resumed.
    stopping: bool,
    /// A stopping run's activations had their time.
    grace_over: bool,
    replay: Option<Replay>,
    /// When the run first started: from the record of a resumed run, else
    /// when `start` was called.
    first_started_at: Option<i64>,
    /// Approvals waiting for a person.
    waiting: usize,
    /// How long the run has waited for people with nothing running.
    waited_ms: i64,
    /// Since when it waits for people with nothing running: its deadline
    /// is paused, and its status `waiting`.
    waiting_since: Option<i64>,
    /// Decisions a resumed run's record holds, acted on once the replay
    /// is done.
    pending_decisions: Vec<crate::resume::PendingDecision>,
    /// Going again through what a resumed run's record says happened:
    /// nothing is announced, nothing that had ended runs again.
    replaying: bool,
    replayed_count: u32,
    /// While replaying: recorded endings of activations started again, by
    /// the order they were handled in.
    to_replay: BTreeMap<u32, Finished>,
    /// While replaying: activations that had not ended, started when the
    /// replay is done.
    deferred: Vec<StartActivation>,
    /// A run from a module: the recorded run whose activations are taken
    /// for the modules upstream of it.
    reuse: Option<Reuse>,
    /// Activations taken from the recorded run, handled in turn.
    reused: VecDeque<Finished>,
    /// Handling a reused activation: `module.reused` said it all.
    reusing: bool,
    /// What the event being handled asks for so far.
    commands: Vec<Command>,
}

impl Run {
    /// A run of `graph` on `input`. With `resume`, the run that stopped:
    /// `start` replays its record, then goes on from where it stopped.
    pub fn new(
        graph: Graph,
        run_id: &str,
        input: Arc<RunInput>,
        limits: Limits,
        mut resume: Option<Resume>,
    ) -> Run {
        let topology = Topology::new(&graph);
        let cables = cables::live_cables(&topology);
        let entries = topology.entries();
        drop(topology);
        let mut progress: Vec<ModuleProgress> =
            graph.modules.iter().map(ModuleProgress::new).collect();
        for (index, cable) in cables.iter().enumerate() {
            progress[cable.target].incoming.push(index);
            progress[cable.source].add_outgoing(&cable.source_port, index);
        }
        let mut ready = VecDeque::new();
        for entry in entries {
            progress[entry].slot = Slot::Ready;
            ready.push_back(entry);
        }
        let mut state = RunState::new();
        state.insert("input".to_owned(), input.text.clone());
        state.insert("run_id".to_owned(), run_id.to_owned());
        let first_started_at = resume.as_ref().and_then(|resume| resume.started_at);
        let waited_ms = resume.as_ref().map_or(0, |resume| resume.waited_ms);
        let waiting_since = resume.as_ref().and_then(|resume| resume.waiting_since);
        let pending_decisions = resume
            .as_mut()
            .map(|resume| std::mem::take(&mut resume.decisions))
            .unwrap_or_default();
        let replay = resume.map(Replay::new);
        Run {
            modules: graph.modules,
            progress,
            cables,
            ready,
            saved_state: state.clone(),
            state: Arc::new(state),
            run_input: input,
            limits,
            started: 0,
            in_flight: 0,
            spawned: 0,
            handled: 0,
            failure: None,
            cancelled: false,
            stopping: false,
            grace_over: false,
            replaying: replay.is_some(),
            replay,
            first_started_at,
            waiting: 0,
            waited_ms,
            waiting_since,
            pending_decisions,
            replayed_count: 0,
            to_replay: BTreeMap::new(),
            deferred: Vec::new(),
            reuse: None,
            reused: VecDeque::new(),
            reusing: false,
            commands: Vec::new(),
        }
    }

    /// A run from a module: the modules `reuse` names are taken from its
    /// recorded run instead of being run.
    pub fn reusing(mut self, reuse: Reuse) -> Run {
        self.reuse = Some(reuse);
        self
    }

    /// Starts the run: announces it, arms its deadline, starts its entry
    /// modules (a resumed run first replays its record).
    pub fn start(&mut self, now: i64) -> Vec<Command> {
        self.emit(RunEvent::RunStarted {
            status: RunStatus::Running,
        });
        // A run that was waiting for people says so again once its replay
        // shows it still is (`update_waiting`).
        if self.waiting_since.is_none() {
            self.commands.push(Command::SetStatus {
                status: RunStatus::Running,
                error: None,
            });
        }
        if !self.replaying {
            let initial = self.saved_state.clone().into_iter().collect();
            self.commands.push(Command::SaveState(initial));
        }
        self.first_started_at.get_or_insert(now);
        let resumed_waiting = self.waiting_since.is_some();
        let time_left = self.time_left(now);
        if time_left.is_zero() {
            // A resumed run whose maximum duration passed while no process
            // ran it: it fails, starting nothing again.
            self.failure = Some(self.out_of_time());
        } else if self.waiting_since.is_none() {
            self.commands.push(Command::ArmTimer {
                timer: Timer::RunDeadline,
                after: time_left,
            });
        }
        self.advance(now);
        self.update_waiting(now);
        if resumed_waiting && self.waiting_since.is_some() {
            // Still waiting for people, as the record says: the status says
            // so again, in case it was not stored.
            self.commands.push(Command::SetStatus {
                status: RunStatus::Waiting,
                error: None,
            });
        }
        self.take_commands()
    }

    /// What is left of the run's maximum duration: the time since it first
    /// started counts, but for the time it waited for people with nothing
    /// running (PRODUCT §3.14).
    fn time_left(&self, now: i64) -> std::time::Duration {
        let waiting_now = self
            .waiting_since
            .map_or(0, |since| now.saturating_sub(since).max(0));
        let elapsed = self.first_started_at.map_or(0, |started_at| {
            now.saturating_sub(started_at)
                .saturating_sub(self.waited_ms)
                .saturating_sub(waiting_now)
                .max(0)
        });
        let elapsed = std::time::Duration::from_millis(u64::try_from(elapsed).unwrap_or(0));
        self.limits.max_run_duration.saturating_sub(elapsed)
    }

    /// An activation's task ended.
    pub fn on_finished(&mut self, now: i64, finished: Finished) -> Vec<Command> {
        self.spawned = self.spawned.saturating_sub(1);
        match finished.ending {
            Ending::WaitsForCalls(paused) => self.begin_waiting_calls(
                now,
                finished.module,
                finished.activation,
                finished.record,
                *paused,
                false,
            ),
            ending => self.handle_ending(now, Finished { ending, ..finished }, false),
        }
        self.advance(now);
        self.update_waiting(now);
        self.take_commands()
    }

    /// An activation's task was lost (it panicked): the run fails.
    pub fn on_lost_task(&mut self, why: &str) -> Vec<Command> {
        self.spawned = self.spawned.saturating_sub(1);
        self.failure = Some(format!("an activation task failed: {why}"));
        self.take_commands()
    }

    /// A person cancelled the run: it ends `cancelled`, and what is in
    /// flight is stopped, keeping what it produced.
    pub fn on_cancel(&mut self) -> Vec<Command> {
        self.cancelled = true;
        self.take_commands()
    }

    /// The server is stopping, or another process took the run over:
    /// nothing more starts, and what is in flight has the stop grace.
    pub fn on_stop(&mut self, now: i64) -> Vec<Command> {
        if !self.stopping {
            self.stopping = true;
            self.commands.push(Command::ArmTimer {
                timer: Timer::StopGrace,
                after: self.limits.stop_grace,
            });
        }
        self.advance(now);
        self.take_commands()
    }

    pub fn on_timer(&mut self, now: i64, timer: Timer) -> Vec<Command> {
        match timer {
            Timer::RunDeadline => self.failure = Some(self.out_of_time()),
            Timer::StopGrace if self.stopping => self.grace_over = true,
            Timer::StopGrace => {}
            Timer::Approval { module, activation } => {
                self.approval_timed_out(now, module, activation);
            }
            // The shell claims each overdue call's timeout and hands it
            // over as a decision (`on_call_decided`).
            Timer::ToolCalls { .. } => {}
        }
        self.advance(now);
        self.update_waiting(now);
        self.take_commands()
    }

    fn out_of_time(&self) -> String {
        format!(
            "the run timed out after {} s, its maximum duration (max_run_seconds)",
            self.limits.max_run_duration.as_secs()
        )
    }

    /// The run's budget is spent (`reason` says by whom): it fails, and
    /// what is in flight is stopped, keeping what it produced.
    pub fn on_budget_spent(&mut self, reason: Option<String>) -> Vec<Command> {
        if self.failure.is_none() {
            self.failure = reason;
        }
        self.take_commands()
    }

    /// Whether the run has nothing more to do before it ends: it failed,
    /// was cancelled, its stop grace is over, or nothing is in flight and
    /// no approval waits (a stopping run does not wait for people: it is
    /// resumed where they left it).
    pub fn is_over(&self) -> bool {
        self.cancelled
            || self.failure.is_some()
            || self.grace_over
            || (self.spawned == 0
                && self.to_replay.is_empty()
                && self.reused.is_empty()
                && (self.waiting == 0 || self.stopping))
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    pub fn is_stopping(&self) -> bool {
        self.stopping
    }

    pub fn has_failed(&self) -> bool {
        self.failure.is_some()
    }

    /// The run's steps until it waits for something from outside: values
    /// ignored, modules started, slots waited for, a replay ended, and
    /// while replaying, each recorded ending in its turn.
    fn advance(&mut self, now: i64) {
        loop {
            if self.cancelled || self.failure.is_some() || self.grace_over {
                return;
            }
            self.ignore_late_arrivals();
            self.start_ready(now);
            // Before what waits for a slot is recorded as queued: a reused
            // activation gives its slot back at once.
            if let Some(finished) = self.reused.pop_front() {
                self.handle_reused(now, finished);
                continue;
            }
            if !self.replaying && !self.stopping {
                self.record_queued(now);
            }
            if self.replaying && self.to_replay.is_empty() && !self.stopping {
                if self.failure.is_none() {
                    self.end_replay(now);
                    continue;
                }
                return;
            }
            if self.failure.is_some() {
                return;
            }
            let Some((_, finished)) = self.to_replay.pop_first() else {
                return;
            };
            self.handle_ending(now, finished, true);
        }
    }

    /// The replay reached where the run stopped: from here it is live, and
    /// what had not ended starts again.
    fn end_replay(&mut self, now: i64) {
        self.replaying = false;
        self.emit(RunEvent::RunResumed {
            status: RunStatus::Running,
            replayed: self.replayed_count,
        });
        for start in std::mem::take(&mut self.deferred) {
            self.spawned += 1;
            self.commands.push(Command::Start(Box::new(start)));
        }
        for pending in std::mem::take(&mut self.pending_decisions) {
            self.take_decision(now, pending);
        }
    }

    /// Announces an event, unless replaying (a resumed run's log has it) or
    /// handling a reused activation (`module.reused` says what happened).
    fn emit(&mut self, event: RunEvent) {
        if !self.replaying && !self.reusing {
            self.commands.push(Command::Emit(event));
        }
    }

    fn take_commands(&mut self) -> Vec<Command> {
        std::mem::take(&mut self.commands)
    }

    pub(crate) fn module_id(&self, module: usize) -> &str {
        &self.modules[module].id
    }
}
