//! Unit tests of the run value, without tokio: build a graph, feed the run
//! what happened, and read the commands it answers. `Stepper` plays the
//! shell: it keeps the activations the run started and finishes them as a
//! test says.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod approvals;
mod attempts;
mod endings;
mod limits;
mod readiness;
mod resume;
mod reuse;
mod routing;
mod tool_calls;

use std::sync::Arc;
use std::time::Duration;

use graph::Graph;
use serde_json::{Value, json};
use wire::activation::ActivationRecord;
use wire::event::RunEvent;

use super::{Command, Ending, Finished, Limits, Run, StartActivation};
use crate::RunInput;
use crate::activation::{ActivationError, ActivationOutput};
use crate::bundle::{ContextBundle, PortValue};
use crate::resume::Resume;

pub fn module(id: &str, kind: &str, config: Value) -> Value {
    json!({"id": id, "kind": kind, "label": id, "position": {"x": 0, "y": 0}, "config": config})
}

/// An agent task on the simulated provider, with more of its config.
pub fn task(id: &str, more: Value) -> Value {
    let mut config = json!({"instruction": "Write", "agent_config": {"provider": "sim"}});
    if let (Some(config), Value::Object(more)) = (config.as_object_mut(), more) {
        config.extend(more);
    }
    module(id, "step.agent_task", config)
}

pub fn cable(id: &str, from: (&str, &str), to: (&str, &str)) -> Value {
    json!({"id": id, "from": {"module": from.0, "port": from.1}, "to": {"module": to.0, "port": to.1}})
}

pub fn conditional(id: &str, from: (&str, &str), to: (&str, &str), condition: &str) -> Value {
    let mut cable = cable(id, from, to);
    cable["condition"] = json!(condition);
    cable
}

pub fn graph(modules: Vec<Value>, cables: Vec<Value>) -> Graph {
    Graph::from_value(json!({"modules": modules, "cables": cables})).unwrap()
}

/// in → a → b → out: agent tasks between an input and an output.
pub fn chain() -> Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            task("a", json!({})),
            task("b", json!({})),
            module("out", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("a", "data_in")),
            cable("c2", ("a", "data_out"), ("b", "data_in")),
            cable("c3", ("b", "data_out"), ("out", "data_in")),
        ],
    )
}

pub fn limits() -> Limits {
    Limits {
        max_activations: 500,
        max_concurrency: 8,
        max_run_duration: Duration::from_secs(24 * 60 * 60),
        stop_grace: Duration::from_secs(10),
    }
}

/// A text value on a port, from `module`.
pub fn text(module: &str, text: &str) -> PortValue {
    PortValue::Bundle(ContextBundle::text(module, text))
}

/// What an activation produced: these ports with these texts, the first
/// one's text as its output.
pub fn output(module: &str, ports: &[(&str, &str)]) -> ActivationOutput {
    ActivationOutput {
        ports: ports
            .iter()
            .map(|(port, said)| ((*port).to_owned(), text(module, said)))
            .collect(),
        output_text: ports
            .first()
            .map(|(_, said)| (*said).to_owned())
            .unwrap_or_default(),
        ..ActivationOutput::default()
    }
}

pub fn done(output: ActivationOutput) -> Ending {
    Ending::Done(Box::new(Ok(output)))
}

pub fn error(message: &str) -> Ending {
    Ending::Done(Box::new(Err(ActivationError::Failed(message.to_owned()))))
}

/// Plays the shell: starts what the run starts, finishes it when told.
pub struct Stepper {
    pub run: Run,
    pub now: i64,
    /// Activations started and not finished.
    pub in_flight: Vec<StartActivation>,
    /// Every command the run gave, in order.
    pub log: Vec<Command>,
}

impl Stepper {
    pub fn new(graph: Graph) -> Stepper {
        Stepper::with(graph, limits(), None)
    }

    pub fn with(graph: Graph, limits: Limits, resume: Option<Resume>) -> Stepper {
        let input = Arc::new(RunInput {
            text: "the moon".to_owned(),
            files: Vec::new(),
        });
        Stepper::of(Run::new(graph, "r_test", input, limits, resume))
    }

    /// A run from a module, taking from `reuse` what it reuses.
    pub fn reusing(graph: Graph, reuse: crate::reuse::Reuse) -> Stepper {
        let run = Stepper::new(graph).run.reusing(reuse);
        Stepper::of(run)
    }

    fn of(run: Run) -> Stepper {
        Stepper {
            run,
            now: 1_000,
            in_flight: Vec::new(),
            log: Vec::new(),
        }
    }

    /// Keeps what was started, and the log; returns the lines.
    fn took(&mut self, commands: Vec<Command>) -> Vec<String> {
        let lines = commands.iter().map(describe).collect();
        for command in commands {
            if let Command::Start(start) = &command {
                self.in_flight.push(start_copy(start));
            }
            self.log.push(command);
        }
        lines
    }

    pub fn start(&mut self) -> Vec<String> {
        let commands = self.run.start(self.now);
        self.took(commands)
    }

    /// The activation of `module_id` in flight.
    pub fn started(&self, module_id: &str) -> &StartActivation {
        self.in_flight
            .iter()
            .find(|start| start.module.id == module_id)
            .unwrap_or_else(|| panic!("{module_id} is not in flight"))
    }

    /// Where the values `module_id`'s activation in flight runs on came
    /// from.
    pub fn sources(&self, module_id: &str) -> Vec<&str> {
        self.started(module_id)
            .inputs
            .iter()
            .map(|input| input.source_module.as_str())
            .collect()
    }

    /// Takes `module_id`'s activation out of flight, as it ended.
    pub fn finished(&mut self, module_id: &str, ending: Ending) -> Finished {
        let position = self
            .in_flight
            .iter()
            .position(|start| start.module.id == module_id)
            .unwrap_or_else(|| panic!("{module_id} is not in flight"));
        let start = self.in_flight.remove(position);
        Finished {
            module: start.module_index,
            activation: start.activation,
            ending,
            record: start.record,
        }
    }

    /// `module_id`'s activation ended with `ending`.
    pub fn end(&mut self, module_id: &str, ending: Ending) -> Vec<String> {
        self.now += 100;
        let finished = self.finished(module_id, ending);
        let commands = self.run.on_finished(self.now, finished);
        self.took(commands)
    }

    /// `module_id` completed, firing these ports.
    pub fn complete(&mut self, module_id: &str, ports: &[(&str, &str)]) -> Vec<String> {
        self.end(module_id, done(output(module_id, ports)))
    }

    /// `module_id` completed with its text on `data_out`.
    pub fn answer(&mut self, module_id: &str) -> Vec<String> {
        let said = format!("{module_id} says hello");
        self.complete(module_id, &[("data_out", &said)])
    }

    pub fn feed(&mut self, commands: Vec<Command>) -> Vec<String> {
        self.took(commands)
    }

    /// Feeds the run an event from outside (a cancel, a timer, …).
    pub fn step(&mut self, event: impl FnOnce(&mut Run, i64) -> Vec<Command>) -> Vec<String> {
        let commands = event(&mut self.run, self.now);
        self.took(commands)
    }

    /// Drains what is in flight as the shell does when the run is over,
    /// then ends the run.
    pub fn close(&mut self, ending: impl Fn() -> Ending) -> (Vec<String>, super::RunEnding) {
        let mut lines = Vec::new();
        for start in std::mem::take(&mut self.in_flight) {
            let finished = Finished {
                module: start.module_index,
                activation: start.activation,
                ending: ending(),
                record: start.record,
            };
            let commands = self.run.on_drained(self.now, finished);
            lines.extend(self.took(commands));
        }
        let (commands, run_ending) = self.run.finish(self.now);
        lines.extend(self.took(commands));
        (lines, run_ending)
    }

    /// Every event announced so far.
    pub fn events(&self) -> Vec<&RunEvent> {
        self.log
            .iter()
            .filter_map(|command| match command {
                Command::Emit(event) => Some(event),
                _ => None,
            })
            .collect()
    }

    /// The last record saved of `module_id`'s activation `activation`.
    pub fn record(&self, module_id: &str, activation: u32) -> &ActivationRecord {
        self.log
            .iter()
            .rev()
            .find_map(|command| match command {
                Command::SaveActivation { record, .. }
                    if record.module_id == module_id && record.activation == activation =>
                {
                    Some(record.as_ref())
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no record of {module_id}#{activation}"))
    }

    /// The run state as the run last recorded it.
    pub fn state(&self) -> std::collections::BTreeMap<String, String> {
        let mut state = std::collections::BTreeMap::new();
        for command in &self.log {
            if let Command::SaveState(changes) = command {
                state.extend(changes.iter().cloned());
            }
        }
        state
    }

    /// What a resume would start from if the run stopped now: every
    /// activation that ended with its ending, the rest as they started or
    /// as they wait.
    pub fn resume(&self) -> Resume {
        let mut resume = Resume {
            last_seq: self.events().len() as u64,
            started_at: Some(1_000),
            ..Resume::default()
        };
        let mut latest: Vec<(ActivationRecord, Option<String>)> = Vec::new();
        for command in &self.log {
            if let Command::SaveActivation { record, ending } = command {
                let position = latest.iter().position(|(kept, _)| {
                    kept.module_id == record.module_id && kept.activation == record.activation
                });
                let ending = ending
                    .clone()
                    .or_else(|| position.and_then(|at| latest[at].1.clone()));
                let entry = (record.as_ref().clone(), ending);
                match position {
                    Some(at) => latest[at] = entry,
                    None => latest.push(entry),
                }
            }
        }
        for (record, ending) in latest {
            match ending {
                Some(ending) => resume.ended.push((record, ending)),
                None if record.status == wire::ActivationStatus::Waiting => {
                    resume.in_progress.push(record);
                }
                None => {}
            }
        }
        for start in &self.in_flight {
            resume.in_progress.push(start.record.clone());
        }
        resume
    }
}

/// The parts of a start a test reads again (the recovered turns are not
/// copied: they are the run's to hand over once).
fn start_copy(start: &StartActivation) -> StartActivation {
    StartActivation {
        module_index: start.module_index,
        module: start.module.clone(),
        activation: start.activation,
        attempt: start.attempt.clone(),
        inputs: start.inputs.clone(),
        state: Arc::clone(&start.state),
        record: start.record.clone(),
        recovered: None,
        delay_seconds: start.delay_seconds,
        timeout_seconds: start.timeout_seconds,
        reused_earlier: start.reused_earlier.clone(),
    }
}

/// A command as one line: `start a#1`, `module.completed a#1`, `save a#1
/// completed (ending)`, `timer RunDeadline`.
pub fn describe(command: &Command) -> String {
    match command {
        Command::Emit(event) => {
            let payload = event.payload();
            let mut line = event.name().to_owned();
            if let Some(module_id) = event.module_id() {
                line.push_str(&format!(" {module_id}"));
                if let Some(activation) = payload.get("activation") {
                    line.push_str(&format!("#{activation}"));
                }
            }
            if let Some(Value::String(cable_id)) = payload.get("cable_id") {
                line.push_str(&format!(" {cable_id}"));
            }
            line
        }
        Command::SaveActivation { record, ending } => format!(
            "save {}#{} {}{}",
            record.module_id,
            record.activation,
            record.status.as_str(),
            if ending.is_some() { " (ending)" } else { "" }
        ),
        Command::KeepActivation(record) => {
            format!("keep {}#{}", record.module_id, record.activation)
        }
        Command::Start(start) => format!("start {}#{}", start.module.id, start.activation),
        Command::SaveState(_) => "state".to_owned(),
        Command::SetStatus { status, .. } => format!("status {}", status.as_str()),
        Command::ArmTimer { timer, .. } => format!("timer {timer:?}"),
        Command::DisarmTimer(timer) => format!("disarm {timer:?}"),
        Command::RecordWait { waiting_since, .. } => {
            format!(
                "wait {}",
                if waiting_since.is_some() {
                    "begins"
                } else {
                    "ends"
                }
            )
        }
        Command::KeepSession { key, .. } => format!("session {key}"),
        Command::KeepAgentSession { key, .. } => format!("agent session {key}"),
        Command::CountReplayedCost { module_id, .. } => format!("replayed cost {module_id}"),
    }
}

/// The lines that start activations.
pub fn starts(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .filter_map(|line| line.strip_prefix("start "))
        .collect()
}

/// Whether `lines` has `wanted`.
pub fn has(lines: &[String], wanted: &str) -> bool {
    lines.iter().any(|line| line == wanted)
}
