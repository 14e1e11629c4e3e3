//! What passes between a run and the shell that carries it out: the
//! commands the run decides on, and how an activation's task ended.

use std::sync::Arc;
use std::time::Duration;

use wire::activation::ActivationRecord;
use wire::event::{RunEvent, RunStatus};

use crate::EngineSettings;
use crate::activation::{ActivationError, ActivationOutput, InputValue};
use crate::attempts::Attempt;
use crate::render::RunState;
use crate::resume::{Ended, Recovered};
use crate::session::{AgentSessionReference, Session};

/// Something the run wants done. The shell does them in order: an event
/// announced before a record is saved is announced first.
#[derive(Debug)]
pub enum Command {
    /// Announce an event; the shell's writer numbers and records it.
    Emit(RunEvent),
    /// Store an activation's record. `ending` is how it ended, as a resume
    /// replays it; a record saved again without one keeps the one it had.
    SaveActivation {
        record: Arc<ActivationRecord>,
        ending: Option<String>,
    },
    /// Keep the record of an activation as it starts, without waiting for
    /// it to be stored (`Recorder::keep_activation`).
    KeepActivation(Box<ActivationRecord>),
    /// Run an activation in a task of its own.
    Start(Box<StartActivation>),
    /// Record these keys of the run state (the ones that changed).
    SaveState(Vec<(String, String)>),
    SetStatus {
        status: RunStatus,
        error: Option<String>,
    },
    /// Call `Run::on_timer(timer)` after this long.
    ArmTimer { timer: Timer, after: Duration },
    /// Forget an armed timer.
    DisarmTimer(Timer),
    /// Record how long the run has waited for people, and since when it
    /// waits now (PRODUCT §3.14): its maximum duration leaves that out.
    RecordWait {
        waited_ms: i64,
        waiting_since: Option<i64>,
    },
    /// Keep an agent task's session, rebuilt from its record, for the
    /// modules that continue it.
    KeepSession { key: String, session: Session },
    /// Keep a coding agent's ACP session for the coding agents downstream
    /// that continue it.
    KeepAgentSession {
        key: String,
        reference: AgentSessionReference,
    },
    /// Count what an activation that had ended before a resume spent,
    /// against the run's budget.
    CountReplayedCost {
        module_id: String,
        label: String,
        cost: Option<f64>,
    },
}

/// Everything an activation's task needs from the run; the shell adds
/// what the engine shares (providers, sessions, the budget, the events).
#[derive(Debug)]
pub struct StartActivation {
    /// The module's place in the graph: the run's name for it.
    pub module_index: usize,
    pub module: graph::Module,
    pub activation: u32,
    pub attempt: Option<Attempt>,
    pub inputs: Vec<InputValue>,
    /// The run state as the activation starts.
    pub state: Arc<RunState>,
    /// Its record, as it starts.
    pub record: ActivationRecord,
    /// On a resume, the turns it had answered before the run stopped.
    pub recovered: Option<Recovered>,
    /// A retry waits this long before it starts (PRODUCT §3.9).
    pub delay_seconds: u32,
    /// Its kind's timeout, when it has one.
    pub timeout_seconds: Option<u32>,
    /// The module's activation before this one, when it was reused from a
    /// recorded run (PRODUCT §3.15: a loop back after a run from a
    /// module): this one goes on from what that one left.
    pub reused_earlier: Option<Arc<ActivationRecord>>,
}

/// The run's clocks, which the shell keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Timer {
    /// The run's maximum duration (`max_run_seconds`) is over.
    RunDeadline,
    /// A stopping run's activations have had their time to finish.
    StopGrace,
    /// An approval's wait for a decision is over.
    Approval { module: usize, activation: u32 },
    /// The first deadline of an activation's tool calls waiting for a
    /// person is here (PRODUCT §3.17).
    ToolCalls { module: usize, activation: u32 },
}

/// How an activation's task ended.
#[derive(Debug)]
pub enum Ending {
    Done(Box<Result<ActivationOutput, ActivationError>>),
    /// Its timeout fired after this many seconds.
    TimedOut(u32),
    Cancelled,
    /// It stopped for its tool calls to be decided by people (PRODUCT
    /// §3.17): not an end, a pause, with what it needs to be taken up.
    WaitsForCalls(Box<Paused>),
}

/// What an agent task that waits on its tool calls is taken up with once
/// they are decided: what it started with, kept while it holds no task.
#[derive(Debug)]
pub struct Paused {
    pub module: graph::Module,
    pub attempt: Option<Attempt>,
    pub inputs: Vec<InputValue>,
    pub state: Arc<RunState>,
    pub timeout_seconds: Option<u32>,
    pub reused_earlier: Option<Arc<ActivationRecord>>,
}

impl From<Ended> for Ending {
    fn from(ended: Ended) -> Ending {
        match ended {
            Ended::Output { output } => Ending::Done(Box::new(Ok(*output))),
            Ended::Error { error } => Ending::Done(Box::new(Err(ActivationError::Failed(error)))),
            Ended::TimedOut { seconds } => Ending::TimedOut(seconds),
            Ended::Cancelled => Ending::Cancelled,
        }
    }
}

/// An activation that ended, with its record as its task left it.
#[derive(Debug)]
pub struct Finished {
    pub module: usize,
    pub activation: u32,
    pub ending: Ending,
    pub record: ActivationRecord,
}

/// The engine's limits that shape a run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A run fails with `step_transition_limit_exceeded` past this many
    /// activations.
    pub max_activations: u32,
    /// Activations in flight at once.
    pub max_concurrency: usize,
    pub max_run_duration: Duration,
    /// How long a stopping run's activations may go on.
    pub stop_grace: Duration,
}

impl Limits {
    pub fn of(settings: &EngineSettings) -> Limits {
        Limits {
            max_activations: settings.max_activations,
            max_concurrency: settings.max_concurrency,
            max_run_duration: settings.max_run_duration,
            stop_grace: settings.stop_grace,
        }
    }
}

/// How a run ended, as the shell reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunEnding {
    pub status: RunStatus,
    pub error: Option<String>,
    /// Activations started.
    pub activations: u32,
}
