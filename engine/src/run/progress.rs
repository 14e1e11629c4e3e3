//! Where one module of a run is: its place for a concurrency slot, its
//! activations and attempts, how its inputs join, and its last ending.

use std::sync::Arc;

use graph::join::Join;
use wire::activation::ActivationRecord;

use crate::attempts::Attempt;

/// A module's place with respect to the run's concurrency slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    /// Neither waiting for a slot nor running.
    Idle,
    /// Ready, in the run's queue for a slot.
    Ready,
    /// An activation of it is in flight (in a task, or waiting for a
    /// resumed run's replay to end).
    Running,
    /// An approval waits for a person: no task, no slot.
    Waiting,
}

/// An attempt to run again on the values the module had, whatever else
/// arrives: a failed attempt with attempts left, or a reply that chose
/// `repeat`.
#[derive(Clone, Debug)]
pub(super) struct PendingAttempt {
    /// What the attempt before left.
    pub attempt: Attempt,
    /// The wait before it starts.
    pub delay_seconds: u32,
}

#[derive(Debug)]
pub(super) struct ModuleProgress {
    pub label: String,
    pub join: Join,
    /// `max_attempts` of its config.
    pub max_attempts: u32,
    /// Activations made so far: the last one's number.
    pub activations: u32,
    pub slot: Slot,
    /// Recorded as queued (waiting for a slot) for its next activation,
    /// until it starts or the run ends.
    pub queued_recorded: bool,
    pub retry: Option<PendingAttempt>,
    /// Its last activation's record, with how it ended: a later attempt
    /// reads it, and giving up on arrival adds to it.
    pub last_record: Option<Arc<ActivationRecord>>,
    /// A waiting approval's record, which its decision completes; or an
    /// agent task's, whose tool calls wait for people.
    pub waiting_record: Option<ActivationRecord>,
    /// What that agent task is taken up with when its calls are decided.
    pub paused: Option<Box<super::command::Paused>>,
    /// Cables a join-any module ignored values on while it ran the
    /// activation they came for; its record gets them when it finishes.
    pub ignored: Vec<String>,
    /// Its live cables in, as indices into the run's cables.
    pub incoming: Vec<usize>,
    /// Its live cables out, by the port they leave.
    pub outgoing: Vec<(String, Vec<usize>)>,
}

impl ModuleProgress {
    pub fn new(module: &graph::Module) -> ModuleProgress {
        ModuleProgress {
            label: module.display_label().to_owned(),
            join: module.config.join(),
            max_attempts: module.config.max_attempts(),
            activations: 0,
            slot: Slot::Idle,
            queued_recorded: false,
            retry: None,
            last_record: None,
            waiting_record: None,
            paused: None,
            ignored: Vec::new(),
            incoming: Vec::new(),
            outgoing: Vec::new(),
        }
    }

    /// The cables that leave `port`, if any does.
    pub fn cables_from(&self, port: &str) -> Option<&[usize]> {
        self.outgoing
            .iter()
            .find(|(id, _)| id == port)
            .map(|(_, cables)| cables.as_slice())
    }

    /// Adds a cable that leaves `port`, after the ones before it.
    pub fn add_outgoing(&mut self, port: &str, cable: usize) {
        match self.outgoing.iter_mut().find(|(id, _)| id == port) {
            Some((_, cables)) => cables.push(cable),
            None => self.outgoing.push((port.to_owned(), vec![cable])),
        }
    }

    /// A loop that comes back to it finds its attempts used: it gives up
    /// instead of running (Cloche's `max_attempts`), which ends the loop.
    pub fn attempts_used(&self) -> bool {
        self.max_attempts > 1 && self.activations >= self.max_attempts
    }
}
