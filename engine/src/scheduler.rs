//! Running a graph (PRODUCT §3.1): a snapshot of the graph, modules
//! activated as their inputs arrive, independent branches concurrently, and
//! one writer numbering every event in order.
//!
//! Activation rule. Each live cable into a module is a slot holding the last
//! value it carried and whether that value is fresh (arrived since the
//! module last ran). Cables that close a loop (back edges found from the
//! entry modules) do not hold up a first activation. A module runs when
//! every other incoming cable is fresh (join = all), or, in a revision loop,
//! when a loop cable is fresh and the others hold a value from before.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use graph::Graph;
use graph::join::Join;
use graph::topology::Topology;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::activation::{
    ActivationContext, ActivationError, ActivationOutput, InputValue, activate,
};
use crate::attempts::Attempt;
use crate::bundle::{ContextBundle, PortValue};
use crate::recorder::Recorder;
use crate::render::RunState;
use crate::resume::{CheckpointSink, Ended, Replay, Resume};
use crate::routing;
use crate::session::SessionStore;
use crate::{Engine, RunInput, now_millis};
use wire::activation::{ActivationRecord, ActivationStatus, Retried, Route};
use wire::event::{EventRecord, RunEvent, RunStatus};

/// The error a run fails with when it makes more activations than allowed.
pub const TRANSITION_LIMIT: &str = "step_transition_limit_exceeded";

pub struct RunSpec {
    pub run_id: String,
    pub graph: Graph,
    pub input: RunInput,
    /// At most this many US dollars for the whole run.
    pub budget_usd: Option<f64>,
}

/// How a run is steered from outside while it runs.
#[derive(Default)]
pub struct RunControl {
    /// A person cancelled it: it ends `cancelled`.
    pub cancel: CancellationToken,
    /// The server is stopping, or another process took the run over: no
    /// activation starts any more, those in flight get the engine's
    /// `stop_grace` to finish, and the run is left unfinished, with no
    /// terminal event, to be resumed (PRODUCT §8). Never `cancelled`.
    pub stop: CancellationToken,
    /// Where a resumed run stopped.
    pub resume: Option<Resume>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub error: Option<String>,
    pub activations: u32,
    pub events: u64,
}

struct Slot {
    target: usize,
    port: String,
    source: usize,
    /// The output port of `source` the cable leaves.
    source_port: String,
    /// How many values it has carried in the run.
    arrivals: u32,
    loop_cable: bool,
    value: Option<PortValue>,
    fresh: bool,
}

/// Cables (indices into `topology.live`) that close a loop: found by a
/// depth-first walk from the entry modules, a cable to a module still on the
/// walk's path.
fn loop_cables(topology: &Topology<'_>) -> Vec<bool> {
    let count = topology.graph.modules.len();
    let mut outgoing: Vec<Vec<(usize, usize)>> = vec![Vec::new(); count];
    for (index, (_, from, to)) in topology.live.iter().enumerate() {
        outgoing[*from].push((index, *to));
    }
    let mut is_loop = vec![false; topology.live.len()];
    // 0 = not seen, 1 = on the path, 2 = done
    let mut state = vec![0u8; count];
    let mut roots = topology.entries();
    roots.extend(0..count);
    for root in roots {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        let mut stack = vec![(root, 0usize)];
        while let Some(&mut (module, ref mut next)) = stack.last_mut() {
            if let Some(&(cable, target)) = outgoing[module].get(*next) {
                *next += 1;
                match state[target] {
                    0 => {
                        state[target] = 1;
                        stack.push((target, 0));
                    }
                    1 => is_loop[cable] = true,
                    _ => {}
                }
            } else {
                state[module] = 2;
                stack.pop();
            }
        }
    }
    is_loop
}

/// Numbers events and hands them to the recorder in batches, in order,
/// after event `after`. A resumed run's replay emits again what the log
/// has: everything before its `run.resumed` is dropped.
async fn write_events<R: Recorder>(
    run_id: String,
    recorder: Arc<R>,
    mut events: mpsc::UnboundedReceiver<RunEvent>,
    after: u64,
    mut replaying: bool,
) -> u64 {
    let mut seq = after;
    let mut batch = Vec::new();
    while let Some(first) = events.recv().await {
        let mut next = Some(first);
        while let Some(event) = next {
            if replaying {
                if matches!(event, RunEvent::RunResumed { .. }) {
                    replaying = false;
                } else {
                    next = events.try_recv().ok();
                    continue;
                }
            }
            seq += 1;
            batch.push(EventRecord {
                run_id: run_id.clone(),
                seq,
                ts: now_millis(),
                event,
            });
            next = if batch.len() < 256 {
                events.try_recv().ok()
            } else {
                None
            };
        }
        if batch.is_empty() {
            continue;
        }
        if let Err(error) = recorder.append_events(&batch).await {
            tracing::error!(run = %run_id, %error, "events could not be recorded");
        }
        batch.clear();
    }
    seq
}

/// How an activation's task ended.
enum Ending {
    Done(Box<Result<ActivationOutput, ActivationError>>),
    /// Its timeout fired after this many seconds.
    TimedOut(u32),
    Cancelled,
}

struct Finished {
    module: usize,
    activation: u32,
    ending: Ending,
    record: Arc<Mutex<ActivationRecord>>,
    /// Its ending came from the record of a resumed run.
    replayed: bool,
}

/// An activation ready to run while a resumed run is still replaying: it
/// starts when the replay is done (it was in flight when the run stopped).
type Deferred = (
    Arc<Mutex<ActivationRecord>>,
    std::pin::Pin<Box<dyn std::future::Future<Output = Finished> + Send>>,
);

/// How an activation ended, as the record keeps it for a resume: a
/// `RecordedEnding`, written from borrowed parts (an output can be large,
/// and every activation's is written).
fn encode_ending(order: u32, ending: &Ending) -> Option<String> {
    #[derive(serde::Serialize)]
    #[serde(tag = "ended", rename_all = "snake_case")]
    enum EndedRef<'a> {
        Output { output: &'a ActivationOutput },
        Error { error: &'a str },
        TimedOut { seconds: u32 },
        Cancelled,
    }
    #[derive(serde::Serialize)]
    struct RecordedEndingRef<'a> {
        order: u32,
        ended: EndedRef<'a>,
    }
    let ended = match ending {
        Ending::Done(done) => match done.as_ref() {
            Ok(output) => EndedRef::Output { output },
            Err(error) => EndedRef::Error { error: &error.0 },
        },
        Ending::TimedOut(seconds) => EndedRef::TimedOut { seconds: *seconds },
        Ending::Cancelled => EndedRef::Cancelled,
    };
    serde_json::to_string(&RecordedEndingRef { order, ended }).ok()
}

impl From<Ended> for Ending {
    fn from(ended: Ended) -> Ending {
        match ended {
            Ended::Output { output } => Ending::Done(Box::new(Ok(*output))),
            Ended::Error { error } => Ending::Done(Box::new(Err(ActivationError(error)))),
            Ended::TimedOut { seconds } => Ending::TimedOut(seconds),
            Ended::Cancelled => Ending::Cancelled,
        }
    }
}

/// Keeps records of activations in progress as they are, after each turn,
/// without waiting for them to be stored (`Recorder::keep_activation`).
fn checkpoint_sink<R: Recorder>(recorder: &Arc<R>, run_id: &str) -> CheckpointSink {
    let recorder = Arc::clone(recorder);
    let run_id = run_id.to_owned();
    Arc::new(move |record: &ActivationRecord| recorder.keep_activation(&run_id, record))
}

/// What an attempt came to, as the scheduler acts on it.
enum AttemptEnd {
    Succeeded(ActivationOutput),
    /// Its reply chose `abort` (the intent holds the reason).
    Aborted(ActivationOutput),
    Failed(Failure),
    Cancelled,
}

/// An attempt that failed: why, and what it left for the next one.
struct Failure {
    kind: FailureKind,
    reason: String,
    output: String,
    diff: String,
}

enum FailureKind {
    Error,
    TimedOut,
    /// A failure outcome fired (a failed check) in a module that retries.
    Check(ActivationOutput),
    /// The reply chose `repeat`.
    Repeat(ActivationOutput),
    /// Its validators still failed when its fix turns were used.
    Validators(ActivationOutput),
}

/// Sorts an ending into what the scheduler does next. A failed check is a
/// failure only to a module that retries: otherwise it is a result like
/// any other, which goes where its port is wired.
fn classify(ending: Ending, retries: bool, label: &str, record: &ActivationRecord) -> AttemptEnd {
    // What a failed attempt had answered before it failed.
    let partial = || {
        record
            .responses
            .iter()
            .rev()
            .find(|response| !response.text.trim().is_empty())
            .map(|response| response.text.clone())
            .unwrap_or_default()
    };
    match ending {
        Ending::Cancelled => AttemptEnd::Cancelled,
        Ending::TimedOut(seconds) => AttemptEnd::Failed(Failure {
            kind: FailureKind::TimedOut,
            reason: format!(
                "\"{label}\" timed out after {}",
                graph::attempts::duration_words(seconds)
            ),
            output: partial(),
            diff: String::new(),
        }),
        Ending::Done(done) => match *done {
            Err(error) => AttemptEnd::Failed(Failure {
                kind: FailureKind::Error,
                reason: error.0,
                output: partial(),
                diff: String::new(),
            }),
            Ok(output) => match &output.intent {
                Some((graph::intent::Intent::Abort, _)) => AttemptEnd::Aborted(output),
                Some((graph::intent::Intent::Repeat, reason)) => AttemptEnd::Failed(Failure {
                    reason: reason.clone(),
                    output: output.output_text.clone(),
                    diff: port_text(&output, "diff_out"),
                    kind: FailureKind::Repeat(output),
                }),
                _ if output.checks_failed.is_some() => AttemptEnd::Failed(Failure {
                    reason: output.checks_failed.clone().unwrap_or_default(),
                    output: output.output_text.clone(),
                    diff: port_text(&output, "diff_out"),
                    kind: FailureKind::Validators(output),
                }),
                _ => match failed_check(&output) {
                    Some(reason) if retries => AttemptEnd::Failed(Failure {
                        reason,
                        output: output.output_text.clone(),
                        diff: port_text(&output, "diff_out"),
                        kind: FailureKind::Check(output),
                    }),
                    _ => AttemptEnd::Succeeded(output),
                },
            },
        },
    }
}

/// What the failure outcome an activation's ports fired (`fail_out`, …)
/// carried, which is what the next attempt needs to hear (Gump's
/// `{error}`: the failed gate's output); what it was when it carried
/// nothing.
fn failed_check(output: &ActivationOutput) -> Option<String> {
    output.ports.iter().find_map(|(port, value)| {
        let outcome = graph::ports::failure_outcome(port)?;
        let text = value
            .as_bundle()
            .map(|bundle| bundle.as_text())
            .unwrap_or_default();
        Some(if text.trim().is_empty() {
            format!("it ended with {outcome} ({port})")
        } else {
            text.trim().to_owned()
        })
    })
}

fn port_text(output: &ActivationOutput, port: &str) -> String {
    output
        .ports
        .iter()
        .find(|(id, _)| id == port)
        .and_then(|(_, value)| value.as_bundle())
        .map(|bundle| bundle.as_text())
        .unwrap_or_default()
}

/// Runs one attempt: after its wait, if it has one, and within its
/// timeout, if its kind has one.
async fn attempt_with_limits(
    context: &ActivationContext,
    delay_seconds: u32,
    timeout_seconds: Option<u32>,
) -> Ending {
    if delay_seconds > 0 {
        tokio::time::sleep(Duration::from_secs(u64::from(delay_seconds))).await;
        if let Ok(mut record) = context.record.lock() {
            record.started_at = now_millis();
        }
    }
    context.emit(RunEvent::ModuleActivated {
        module_id: context.module.id.clone(),
        activation: context.activation,
    });
    match timeout_seconds {
        Some(seconds) => {
            match tokio::time::timeout(Duration::from_secs(u64::from(seconds)), activate(context))
                .await
            {
                Ok(result) => Ending::Done(Box::new(result)),
                Err(_) => Ending::TimedOut(seconds),
            }
        }
        None => Ending::Done(Box::new(activate(context).await)),
    }
}

/// Gives up for a module whose attempts are used: records and announces
/// it, and sends why on `give_up_out`. Returns the run's failure when no
/// cable takes it.
fn give_up(
    exits: &Exits<'_, '_>,
    slots: &mut [Slot],
    record: &mut ActivationRecord,
    state: &mut RunState,
    label: &str,
    attempts: u32,
    reason: String,
) -> Option<String> {
    let module_id = record.module_id.clone();
    let plural = if attempts == 1 { "" } else { "s" };
    let message = format!("\"{label}\" gave up after {attempts} attempt{plural}: {reason}");
    record.gave_up = Some(reason.clone());
    state.insert(format!("{label}.status"), "gave_up".to_owned());
    let _ = exits.events.send(RunEvent::ModuleGaveUp {
        module_id: module_id.clone(),
        activation: exits.activation,
        attempts,
        reason,
    });
    let mut bundle = ContextBundle::text(&module_id, message.clone());
    bundle
        .meta
        .insert("give_up".to_owned(), serde_json::Value::Bool(true));
    bundle
        .meta
        .insert("attempts".to_owned(), serde_json::Value::from(attempts));
    let value = PortValue::Bundle(bundle);
    if exits.send(slots, record, state, "give_up_out", value.clone()) {
        record.outputs.insert("give_up_out".to_owned(), value);
        None
    } else {
        Some(message)
    }
}

/// Fresh values on cables into a join-any module that came for an
/// activation it has made already (its cables have carried no more values
/// than it has run), as (module, slot index).
fn late_arrivals(slots: &[Slot], joins: &[Join], activations: &[u32]) -> Vec<(usize, usize)> {
    slots
        .iter()
        .enumerate()
        .filter(|(_, slot)| {
            slot.fresh
                && joins[slot.target] == Join::Any
                && slot.arrivals <= activations[slot.target]
        })
        .map(|(index, slot)| (slot.target, index))
        .collect()
}

/// Modules a fresh value waits for, each once.
fn fresh_targets(slots: &[Slot]) -> Vec<usize> {
    let mut targets: Vec<usize> = slots
        .iter()
        .filter(|slot| slot.fresh)
        .map(|slot| slot.target)
        .collect();
    targets.sort_unstable();
    targets.dedup();
    targets
}

/// Records the state keys of module `label` (its own and its `prev.`
/// ones, the only keys its activation changes) that differ from what was
/// recorded last.
async fn save_changes<R: Recorder>(
    recorder: &R,
    run_id: &str,
    state: &RunState,
    saved: &mut RunState,
    label: &str,
) {
    let mut changes = Vec::new();
    for prefix in [format!("{label}."), format!("prev.{label}.")] {
        for (key, value) in state
            .range(prefix.clone()..)
            .take_while(|(key, _)| key.starts_with(&prefix))
        {
            if saved.get(key) != Some(value) {
                changes.push((key.clone(), value.clone()));
            }
        }
    }
    if changes.is_empty() {
        return;
    }
    saved.extend(changes.iter().cloned());
    if let Err(error) = recorder.save_state(run_id, &changes).await {
        tracing::error!(run = %run_id, %error, "the run state could not be recorded");
    }
}

/// Copies a module's state keys under `prev.` before it runs again
/// (Gump): `prev.<label>.output` is what its last attempt left.
fn keep_as_previous(state: &mut RunState, label: &str) {
    let prefix = format!("{label}.");
    let previous: Vec<(String, String)> = state
        .range(prefix.clone()..)
        .take_while(|(key, _)| key.starts_with(&prefix))
        .map(|(key, value)| (format!("prev.{key}"), value.clone()))
        .collect();
    state.extend(previous);
}

/// Runs `spec` to the end (completed, failed or cancelled).
pub async fn execute<R: Recorder>(
    engine: &Engine,
    spec: RunSpec,
    recorder: Arc<R>,
    cancel: CancellationToken,
) -> RunOutcome {
    let control = RunControl {
        cancel,
        ..RunControl::default()
    };
    execute_controlled(engine, spec, recorder, control).await
}

/// Runs `spec` to the end, or until it is stopped (then its outcome is
/// `interrupted` and nothing says the run ended); resumes it where it
/// stopped when `control` says where that was.
pub async fn execute_controlled<R: Recorder>(
    engine: &Engine,
    spec: RunSpec,
    recorder: Arc<R>,
    control: RunControl,
) -> RunOutcome {
    let RunSpec {
        run_id,
        graph,
        input,
        budget_usd,
    } = spec;
    let spend = Arc::new(crate::budget::Spend::new(budget_usd));
    let RunControl {
        cancel,
        stop,
        resume,
    } = control;
    // A run that had logged nothing starts afresh.
    let resume = resume.filter(|resume| resume.last_seq > 0);
    let after = resume.as_ref().map_or(0, |resume| resume.last_seq);
    let mut replay = resume.map(Replay::new);
    let mut replaying = replay.is_some();
    let mut replayed_count = 0u32;
    let topology = Topology::new(&graph);
    let modules = &graph.modules;
    let settings = Arc::clone(&engine.settings);
    let (events, receiver) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_events(
        run_id.clone(),
        Arc::clone(&recorder),
        receiver,
        after,
        replaying,
    ));
    let emit = |event: RunEvent| {
        let _ = events.send(event);
    };
    if !replaying {
        emit(RunEvent::RunStarted {
            status: RunStatus::Running,
        });
    }
    if let Err(error) = recorder.set_status(&run_id, RunStatus::Running, None).await {
        tracing::error!(run = %run_id, %error, "run status could not be recorded");
    }
    let checkpoint = checkpoint_sink(&recorder, &run_id);

    let loops = loop_cables(&topology);
    let mut slots: Vec<Slot> = topology
        .live
        .iter()
        .enumerate()
        .map(|(index, (cable, from, to))| Slot {
            target: *to,
            port: cable.to.port.clone(),
            source: *from,
            source_port: cable.from.port.clone(),
            arrivals: 0,
            loop_cable: loops[index],
            value: None,
            fresh: false,
        })
        .collect();
    let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); modules.len()];
    let mut outgoing: HashMap<(usize, &str), Vec<usize>> = HashMap::new();
    for (index, (cable, from, to)) in topology.live.iter().enumerate() {
        incoming[*to].push(index);
        outgoing
            .entry((*from, cable.from.port.as_str()))
            .or_default()
            .push(index);
    }

    let mut first_state = RunState::new();
    first_state.insert("input".to_owned(), input.text.clone());
    first_state.insert("run_id".to_owned(), run_id.clone());
    let mut saved_state = first_state.clone();
    let initial: Vec<(String, String)> = first_state.clone().into_iter().collect();
    // Shared with the activations in flight; changed in place once none
    // holds it (a chain's, one at a time), copied only while one does.
    let mut state: Arc<RunState> = Arc::new(first_state);
    if !replaying && let Err(error) = recorder.save_state(&run_id, &initial).await {
        tracing::error!(run = %run_id, %error, "the run state could not be recorded");
    }
    let run_input = Arc::new(input);
    let sessions = Arc::new(SessionStore::default());
    let activation_cancel = cancel.child_token();
    let mut activations = vec![0u32; modules.len()];
    let mut in_flight = vec![false; modules.len()];
    let mut queued = vec![false; modules.len()];
    // Modules recorded as queued (waiting for a slot) for their next
    // activation, until it starts or the run ends.
    let mut waiting = vec![false; modules.len()];
    // Modules that run again on the values they had, whatever else arrives
    // (a failed attempt with attempts left, or a reply that chose
    // `repeat`): what the attempt before left, and the wait before it.
    let mut retries: Vec<Option<(Attempt, u32)>> = vec![None; modules.len()];
    // Each module's last activation record, which a later attempt reads
    // and giving up on arrival adds to.
    let mut last_records: Vec<Option<ActivationRecord>> = vec![None; modules.len()];
    let mut ready: VecDeque<usize> = VecDeque::new();
    for entry in topology.entries() {
        queued[entry] = true;
        ready.push_back(entry);
    }
    let mut running: JoinSet<Finished> = JoinSet::new();
    let deadline = tokio::time::sleep(settings.max_run_duration);
    tokio::pin!(deadline);
    // Set when the run is stopped: what is in flight has until then.
    let grace = tokio::time::sleep(settings.max_run_duration);
    tokio::pin!(grace);
    let mut stopping = false;
    let mut started = 0u32;
    let mut failure: Option<String> = None;
    // Endings handled so far; a recorded ending keeps its place.
    let mut handled = 0u32;
    // While replaying: recorded endings of activations started again, by
    // the order they were handled in; activations that had not ended,
    // started when the replay is done.
    let mut to_replay: std::collections::BTreeMap<u32, Finished> =
        std::collections::BTreeMap::new();
    let mut deferred: Vec<Deferred> = Vec::new();

    let joins: Vec<Join> = modules.iter().map(|module| module.config.join()).collect();
    // Cables a join-any module ignored values on, while it ran the
    // activation they came for; its record gets them when it finishes.
    let mut ignored: Vec<Vec<String>> = vec![Vec::new(); modules.len()];
    let is_ready = |slots: &[Slot], module: usize, activations: u32| -> bool {
        if joins[module] == Join::Any {
            // A value for an activation it has not made yet.
            return incoming[module]
                .iter()
                .any(|&index| slots[index].fresh && slots[index].arrivals > activations);
        }
        let (loop_in, forward): (Vec<&Slot>, Vec<&Slot>) = incoming[module]
            .iter()
            .map(|&index| &slots[index])
            .partition(|slot| slot.loop_cable);
        let forward_fresh = !forward.is_empty() && forward.iter().all(|slot| slot.fresh);
        if activations == 0 {
            forward_fresh
        } else {
            forward_fresh
                || (loop_in.iter().any(|slot| slot.fresh)
                    && forward.iter().all(|slot| slot.value.is_some()))
        }
    };
    // What came in on cables from another module's failure outcome, which
    // is why a loop brought a module back.
    let failures_in = |slots: &[Slot], module: usize| -> Option<String> {
        let texts: Vec<String> = incoming[module]
            .iter()
            .map(|&index| &slots[index])
            .filter(|slot| slot.fresh && graph::ports::failure_outcome(&slot.source_port).is_some())
            .filter_map(|slot| slot.value.as_ref()?.as_bundle())
            .map(|bundle| bundle.as_text())
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n\n"))
    };

    loop {
        if cancel.is_cancelled() || failure.is_some() {
            break;
        }
        if stop.is_cancelled() && !stopping {
            stopping = true;
            grace
                .as_mut()
                .reset(tokio::time::Instant::now() + settings.stop_grace);
        }
        // Values a join-any module already ran without: recorded, ignored.
        for (module, index) in late_arrivals(&slots, &joins, &activations) {
            slots[index].fresh = false;
            let cable_id = topology.live[index].0.id.clone();
            emit(RunEvent::CableIgnored {
                module_id: modules[module].id.clone(),
                activation: activations[module],
                cable_id: cable_id.clone(),
            });
            if in_flight[module] {
                ignored[module].push(cable_id);
            } else if let Some(record) = last_records[module].as_mut() {
                record.ignored_inputs.push(cable_id);
                if let Err(error) = recorder.save_activation(&run_id, record, None).await {
                    tracing::error!(run = %run_id, %error, "activation could not be recorded");
                }
            }
        }
        // Replayed and deferred activations were in flight in the run
        // that stopped: they count.
        while !stopping
            && running.len() + to_replay.len() + deferred.len() < settings.max_concurrency.max(1)
        {
            let Some(module) = ready.pop_front() else {
                break;
            };
            queued[module] = false;
            let label = modules[module].display_label().to_owned();
            let max_attempts = modules[module].config.max_attempts();
            let pending = retries[module].take();
            // A loop came back to a module whose attempts are used: it
            // gives up without running (Cloche's max_attempts), which is
            // what ends such a loop.
            if pending.is_none() && max_attempts > 1 && activations[module] >= max_attempts {
                let why = failures_in(&slots, module).map_or_else(
                    || "the loop came back to it".to_owned(),
                    |failures| format!("the loop came back to it with: {failures}"),
                );
                for &index in &incoming[module] {
                    slots[index].fresh = false;
                }
                let reason = format!("its {max_attempts} attempts are used, and {why}");
                let mut record = last_records[module].clone().unwrap_or_else(|| {
                    ActivationRecord::new(&modules[module].id, activations[module], now_millis())
                });
                let exits = Exits {
                    outgoing: &outgoing,
                    live: &topology.live,
                    module,
                    activation: activations[module],
                    run_input: &run_input.text,
                    events: &events,
                };
                if let Some(error) = give_up(
                    &exits,
                    &mut slots,
                    &mut record,
                    Arc::make_mut(&mut state),
                    &label,
                    max_attempts,
                    reason,
                ) {
                    failure.get_or_insert(error);
                }
                if let Err(error) = recorder.save_activation(&run_id, &record, None).await {
                    tracing::error!(run = %run_id, %error, "activation could not be recorded");
                }
                save_changes(&*recorder, &run_id, &state, &mut saved_state, &label).await;
                last_records[module] = Some(record);
                for candidate in fresh_targets(&slots) {
                    if !queued[candidate]
                        && !in_flight[candidate]
                        && (retries[candidate].is_some()
                            || is_ready(&slots, candidate, activations[candidate]))
                    {
                        queued[candidate] = true;
                        ready.push_back(candidate);
                    }
                }
                continue;
            }
            if started >= settings.max_activations {
                failure = Some(format!(
                    "{TRANSITION_LIMIT}: the run reached its limit of {} activations (max_activations); {}",
                    settings.max_activations,
                    the_loop(modules, &activations)
                ));
                break;
            }
            started += 1;
            activations[module] += 1;
            in_flight[module] = true;
            let activation = activations[module];
            waiting[module] = false;
            let (attempt, delay_seconds) = match pending {
                Some((attempt, delay)) => (Some(attempt), delay),
                // A loop brought a module that retries new input: a later
                // attempt too, with what the one before left.
                None if max_attempts > 1 && activation > 1 => {
                    let previous = last_records[module].as_ref();
                    let output_of = |port: &str| {
                        previous
                            .and_then(|record| record.outputs.get(port))
                            .and_then(PortValue::as_bundle)
                            .map(|bundle| bundle.as_text())
                            .unwrap_or_default()
                    };
                    let attempt = Attempt {
                        of: max_attempts,
                        retried: false,
                        repeat: false,
                        error: failures_in(&slots, module)
                            .unwrap_or_else(|| crate::attempts::NOT_A_FAILURE.to_owned()),
                        previous_output: state
                            .get(&format!("{label}.output"))
                            .cloned()
                            .unwrap_or_default(),
                        previous_diff: output_of("diff_out"),
                    };
                    (Some(attempt), 0)
                }
                None => (None, 0),
            };
            if activation > 1 {
                keep_as_previous(Arc::make_mut(&mut state), &label);
            }
            let inputs: Vec<InputValue> = incoming[module]
                .iter()
                // Joining any, it runs on what arrived, not on older values.
                .filter(|&&index| joins[module] == Join::All || slots[index].fresh)
                .filter_map(|&index| {
                    let slot = &slots[index];
                    Some(InputValue {
                        port: slot.port.clone(),
                        source_module: modules[slot.source].id.clone(),
                        source_label: modules[slot.source].display_label().to_owned(),
                        value: slot.value.clone()?,
                        fresh: slot.fresh,
                    })
                })
                .collect();
            for &index in &incoming[module] {
                slots[index].fresh = false;
            }
            let module_id = modules[module].id.clone();
            if replaying
                && let Some(replayed) = replay
                    .as_mut()
                    .and_then(|replay| replay.take_ended(&module_id, activation))
            {
                to_replay.insert(
                    replayed.order,
                    Finished {
                        module,
                        activation,
                        ending: replayed.ended.into(),
                        record: Arc::new(Mutex::new(replayed.record)),
                        replayed: true,
                    },
                );
                continue;
            }
            let recovered = replay
                .as_mut()
                .and_then(|replay| replay.take_in_progress(&module_id, activation));
            let started = ActivationRecord::new(
                &module_id,
                activation,
                recovered
                    .as_ref()
                    .map_or_else(now_millis, |recovered| recovered.started_at),
            );
            // Stored as running from now (PRODUCT §3.1), its queued record
            // if it waited for a slot replaced; not waited for, so starting
            // costs no commit.
            recorder.keep_activation(&run_id, &started);
            let record = Arc::new(Mutex::new(started));
            let timeout_seconds = modules[module].config.effective_timeout_seconds();
            let context = ActivationContext {
                run_id: run_id.clone(),
                module: modules[module].clone(),
                activation,
                attempt,
                inputs,
                run_input: Arc::clone(&run_input),
                state: Arc::clone(&state),
                providers: Arc::clone(&engine.providers),
                sessions: Arc::clone(&sessions),
                settings: Arc::clone(&settings),
                retry: settings.retry,
                events: events.clone(),
                record: Arc::clone(&record),
                started: Instant::now(),
                checkpoint: Some(Arc::clone(&checkpoint)),
                recovered,
                spend: Arc::clone(&spend),
                variant: None,
            };
            let token = activation_cancel.clone();
            let kept = Arc::clone(&record);
            let task = async move {
                let ending = tokio::select! {
                    ending = attempt_with_limits(&context, delay_seconds, timeout_seconds) => ending,
                    () = token.cancelled() => Ending::Cancelled,
                };
                Finished {
                    module,
                    activation,
                    ending,
                    record,
                    replayed: false,
                }
            };
            if replaying {
                deferred.push((kept, Box::pin(task)));
            } else {
                running.spawn(task);
            }
        }
        // What is ready but has no slot is recorded as queued (PRODUCT
        // §3.1), once. One whose attempts are used never runs; a stopping
        // run starts nothing more, so nothing waits on a slot.
        if !replaying && !stopping {
            for &module in &ready {
                let max_attempts = modules[module].config.max_attempts();
                let gives_up = retries[module].is_none()
                    && max_attempts > 1
                    && activations[module] >= max_attempts;
                if waiting[module] || gives_up {
                    continue;
                }
                waiting[module] = true;
                let activation = activations[module] + 1;
                let mut record =
                    ActivationRecord::new(&modules[module].id, activation, now_millis());
                record.status = ActivationStatus::Queued;
                if let Err(error) = recorder.save_activation(&run_id, &record, None).await {
                    tracing::error!(run = %run_id, %error, "activation could not be recorded");
                }
                emit(RunEvent::ModuleQueued {
                    module_id: modules[module].id.clone(),
                    activation,
                });
            }
        }
        if replaying && to_replay.is_empty() && failure.is_none() && !stopping {
            // Nothing more comes from the record: the run goes on from
            // here, and what had not ended starts again.
            replaying = false;
            emit(RunEvent::RunResumed {
                status: RunStatus::Running,
                replayed: replayed_count,
            });
            for (_, task) in deferred.drain(..) {
                running.spawn(task);
            }
            continue;
        }
        if failure.is_some() || (running.is_empty() && to_replay.is_empty()) {
            break;
        }
        let finished = if let Some((_, finished)) = to_replay.pop_first() {
            Some(Ok(finished))
        } else {
            tokio::select! {
            joined = running.join_next() => joined,
            () = cancel.cancelled() => continue,
            () = spend.reached().cancelled(), if failure.is_none() => {
                // Stops what is in flight; what it produced is kept.
                failure = spend.reason();
                continue;
            }
            () = stop.cancelled(), if !stopping => continue,
            () = &mut grace, if stopping => break,
            () = &mut deadline => {
                failure = Some(format!(
                    "the run timed out after {} s, its maximum duration (max_run_seconds)",
                    settings.max_run_duration.as_secs()
                ));
                continue;
            }
            }
        };
        let Some(joined) = finished else { continue };
        let Finished {
            module,
            activation,
            ending,
            record,
            replayed,
        } = match joined {
            Ok(finished) => finished,
            Err(error) => {
                failure = Some(format!("an activation task failed: {error}"));
                continue;
            }
        };
        in_flight[module] = false;
        let label = modules[module].display_label().to_owned();
        let mut record = record
            .lock()
            .map(|record| record.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone());
        if replayed {
            spend.replayed(&modules[module].id, &label, record.cost());
        }
        handled += 1;
        let ending_kept = if replayed {
            replayed_count += 1;
            None
        } else {
            record.finished_at = Some(now_millis());
            encode_ending(handled, &ending)
        };
        // A replayed agent task's session is rebuilt from its transcript,
        // for the modules that continue it.
        let session_key = match (&ending, replayed) {
            (Ending::Done(done), true) => done
                .as_ref()
                .as_ref()
                .ok()
                .and_then(|output| output.session_key.clone()),
            _ => None,
        };
        // A coding agent's session, fresh or replayed, for the coding
        // agents downstream that continue it.
        if let Ending::Done(done) = &ending
            && let Ok(output) = done.as_ref()
            && let Some((key, reference)) = &output.agent_session
        {
            sessions.put_agent_session(key, reference.clone());
        }
        record.ignored_inputs.append(&mut ignored[module]);
        let module_id = modules[module].id.clone();
        let exits = Exits {
            outgoing: &outgoing,
            live: &topology.live,
            module,
            activation,
            run_input: &run_input.text,
            events: &events,
        };
        let retry = modules[module].config.retry().copied().unwrap_or_default();
        match classify(ending, retry.retries(), &label, &record) {
            AttemptEnd::Cancelled => record.status = ActivationStatus::Cancelled,
            AttemptEnd::Aborted(output) => {
                // The model decided the run cannot succeed: no error_out
                // takes this, the run ends with its reason. What it spent
                // is kept.
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
                Arc::make_mut(&mut state).insert(format!("{label}.status"), "failed".to_owned());
                emit(RunEvent::ModuleFailed {
                    module_id: module_id.clone(),
                    activation,
                    error: error.clone(),
                });
                failure = Some(error);
            }
            AttemptEnd::Succeeded(output) => {
                record.status = ActivationStatus::Completed;
                record.receipt.clone_from(&output.receipt);
                for (port, value) in &output.ports {
                    record.outputs.insert(port.clone(), value.clone());
                }
                write_state(
                    Arc::make_mut(&mut state),
                    &label,
                    activation,
                    &record,
                    &output,
                );
                emit(RunEvent::ModuleCompleted {
                    module_id: module_id.clone(),
                    activation,
                });
                for (port, value) in output.ports {
                    let carried = exits.send(&mut slots, &mut record, &state, &port, value);
                    // A failure nobody handles must not end as a completed run.
                    if let Some(outcome) = graph::ports::failure_outcome(&port)
                        && !carried
                    {
                        let why = if outgoing.contains_key(&(module, port.as_str())) {
                            "none of the conditions on its cables held"
                        } else {
                            "no cable leads on from that port"
                        };
                        failure.get_or_insert(format!(
                            "\"{label}\" ended with {outcome} ({port}), and {why}"
                        ));
                    }
                }
            }
            AttemptEnd::Failed(attempt_failure) => {
                let Failure {
                    kind,
                    reason,
                    output,
                    diff,
                } = attempt_failure;
                let repeat = matches!(kind, FailureKind::Repeat(_));
                // Used fix turns give up, attempts to retry or not.
                let checks = matches!(kind, FailureKind::Validators(_));
                let timed_out = matches!(kind, FailureKind::TimedOut);
                match kind {
                    FailureKind::Check(produced)
                    | FailureKind::Repeat(produced)
                    | FailureKind::Validators(produced) => {
                        // What it produced is kept, and nothing is sent on.
                        record.status = ActivationStatus::Completed;
                        record.receipt.clone_from(&produced.receipt);
                        for (port, value) in &produced.ports {
                            record.outputs.insert(port.clone(), value.clone());
                        }
                        write_state(
                            Arc::make_mut(&mut state),
                            &label,
                            activation,
                            &record,
                            &produced,
                        );
                        emit(RunEvent::ModuleCompleted {
                            module_id: module_id.clone(),
                            activation,
                        });
                    }
                    FailureKind::Error | FailureKind::TimedOut => {
                        let error = reason.clone();
                        record.status = ActivationStatus::Failed;
                        record.error = Some(error.clone());
                        Arc::make_mut(&mut state)
                            .insert(format!("{label}.status"), "failed".to_owned());
                        Arc::make_mut(&mut state)
                            .insert(format!("{label}.attempt"), activation.to_string());
                        emit(RunEvent::ModuleFailed {
                            module_id: module_id.clone(),
                            activation,
                            error: error.clone(),
                        });
                        if !retry.retries() {
                            // No attempts to use: the failure goes where
                            // it is wired, a timeout first to its own port.
                            let mut bundle = ContextBundle::text(&module_id, error.clone());
                            bundle
                                .meta
                                .insert("error".to_owned(), serde_json::Value::Bool(true));
                            if timed_out {
                                bundle
                                    .meta
                                    .insert("timeout".to_owned(), serde_json::Value::Bool(true));
                            }
                            let value = PortValue::Bundle(bundle);
                            let mut carried_on = None;
                            for port in ["timeout_out", "error_out"] {
                                if (port == "error_out" || timed_out)
                                    && exits.send(
                                        &mut slots,
                                        &mut record,
                                        &state,
                                        port,
                                        value.clone(),
                                    )
                                {
                                    carried_on = Some(port);
                                    break;
                                }
                            }
                            match carried_on {
                                Some(port) => {
                                    record.outputs.insert(port.to_owned(), value);
                                }
                                None => failure = Some(error),
                            }
                        }
                    }
                }
                // A spent budget is not tried again: it would spend more.
                let spent = reason.starts_with(crate::budget::BUDGET_EXCEEDED);
                if retry.retries() || repeat || checks {
                    if activation < retry.max_attempts && !spent {
                        let next = activation + 1;
                        let delay_seconds = retry.delay_before(next);
                        record.retried = Some(Retried {
                            reason: reason.clone(),
                            next_attempt: next,
                            max_attempts: retry.max_attempts,
                            delay_seconds,
                        });
                        Arc::make_mut(&mut state)
                            .insert(format!("{label}.status"), "retrying".to_owned());
                        emit(RunEvent::ModuleRetrying {
                            module_id: module_id.clone(),
                            activation,
                            attempt: next,
                            max_attempts: retry.max_attempts,
                            delay_seconds,
                            reason: reason.clone(),
                        });
                        retries[module] = Some((
                            Attempt {
                                of: retry.max_attempts,
                                retried: true,
                                repeat,
                                error: reason,
                                previous_output: output,
                                previous_diff: diff,
                            },
                            delay_seconds,
                        ));
                    } else {
                        let reason = if repeat {
                            let said = if reason.trim().is_empty() {
                                "it gave no reason".to_owned()
                            } else {
                                format!("“{}”", reason.trim())
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
                            reason
                        };
                        if let Some(error) = give_up(
                            &exits,
                            &mut slots,
                            &mut record,
                            Arc::make_mut(&mut state),
                            &label,
                            if spent {
                                activation
                            } else {
                                retry.max_attempts
                            },
                            reason,
                        ) {
                            failure.get_or_insert(error);
                        }
                    }
                }
            }
        }
        if !replayed
            && let Err(error) = recorder
                .save_activation(&run_id, &record, ending_kept.as_deref())
                .await
        {
            tracing::error!(run = %run_id, %error, "activation could not be recorded");
        }
        if let Some(key) = session_key
            && let Some(session) = crate::resume::session_from_record(&record)
        {
            sessions.put(&key, session);
        }
        save_changes(&*recorder, &run_id, &state, &mut saved_state, &label).await;
        last_records[module] = Some(record);
        // Whoever got a value may be ready now, this module included (a value
        // may have arrived while it ran).
        let mut candidates = fresh_targets(&slots);
        candidates.push(module);
        candidates.sort_unstable();
        candidates.dedup();
        for candidate in candidates {
            if !queued[candidate]
                && !in_flight[candidate]
                && (retries[candidate].is_some()
                    || is_ready(&slots, candidate, activations[candidate]))
            {
                queued[candidate] = true;
                ready.push_back(candidate);
            }
        }
    }

    // Stopped rather than ended: what is in flight is kept as it is, to
    // go on from there when the run resumes, and nothing says the run ended.
    let stopped = stopping && failure.is_none() && !cancel.is_cancelled();
    // Stop what is still running and keep what it had produced.
    activation_cancel.cancel();
    while let Some(joined) = running.join_next().await {
        if let Ok(Finished { record, ending, .. }) = joined {
            let mut record = record
                .lock()
                .map(|record| record.clone())
                .unwrap_or_else(|poisoned| poisoned.into_inner().clone());
            if stopped {
                if let Err(error) = recorder.save_activation(&run_id, &record, None).await {
                    tracing::error!(run = %run_id, %error, "a checkpoint could not be recorded");
                }
                continue;
            }
            record.finished_at = Some(now_millis());
            record.status = match ending {
                Ending::Done(done) => match *done {
                    Ok(_) => ActivationStatus::Completed,
                    Err(error) => {
                        record.error = Some(error.0);
                        ActivationStatus::Failed
                    }
                },
                Ending::TimedOut(_) | Ending::Cancelled => ActivationStatus::Cancelled,
            };
            if let Err(error) = recorder.save_activation(&run_id, &record, None).await {
                tracing::error!(run = %run_id, %error, "activation could not be recorded");
            }
        }
    }
    if stopped {
        drop(events);
        let event_count = writer.await.unwrap_or(0);
        return RunOutcome {
            status: RunStatus::Interrupted,
            error: Some("the run was stopped, to be resumed".to_owned()),
            activations: started,
            events: event_count,
        };
    }
    // What was waiting for the replay to end, or in flight when the run
    // stopped and never reached again, ended with the run.
    let mut unfinished: Vec<ActivationRecord> = deferred
        .drain(..)
        .map(|(record, _)| {
            record
                .lock()
                .map(|record| record.clone())
                .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
        })
        .collect();
    unfinished.extend(replay.as_mut().map(Replay::left_over).unwrap_or_default());
    for mut record in unfinished {
        record.finished_at = Some(now_millis());
        record.status = if cancel.is_cancelled() {
            ActivationStatus::Cancelled
        } else {
            ActivationStatus::Interrupted
        };
        if let Err(error) = recorder.save_activation(&run_id, &record, None).await {
            tracing::error!(run = %run_id, %error, "activation could not be recorded");
        }
    }
    // What waited for a slot when the run ended never started.
    for module in (0..modules.len()).filter(|&module| waiting[module]) {
        let mut record =
            ActivationRecord::new(&modules[module].id, activations[module] + 1, now_millis());
        record.status = ActivationStatus::Cancelled;
        record.finished_at = record.started_at.into();
        record.error = Some("the run ended before it had a slot to start in".to_owned());
        if let Err(error) = recorder.save_activation(&run_id, &record, None).await {
            tracing::error!(run = %run_id, %error, "activation could not be recorded");
        }
    }
    if replaying {
        emit(RunEvent::RunResumed {
            status: RunStatus::Running,
            replayed: replayed_count,
        });
    }

    let (status, error) = match failure {
        Some(error) => {
            emit(RunEvent::RunFailed {
                status: RunStatus::Failed,
                error: error.clone(),
            });
            (RunStatus::Failed, Some(error))
        }
        None if cancel.is_cancelled() => {
            emit(RunEvent::RunCancelled {
                status: RunStatus::Cancelled,
            });
            (RunStatus::Cancelled, None)
        }
        None => {
            emit(RunEvent::RunCompleted {
                status: RunStatus::Completed,
            });
            (RunStatus::Completed, None)
        }
    };
    drop(events);
    let event_count = writer.await.unwrap_or(0);
    if let Err(record_error) = recorder.set_status(&run_id, status, error.as_deref()).await {
        tracing::error!(run = %run_id, error = %record_error, "run status could not be recorded");
    }
    RunOutcome {
        status,
        error,
        activations: started,
        events: event_count,
    }
}

/// The modules that repeated most, which is where a run that hit the
/// activation limit went round: "the loop went through "Draft" (10 times)
/// and "Review" (10 times)".
fn the_loop(modules: &[graph::Module], activations: &[u32]) -> String {
    let mut repeated: Vec<(u32, usize)> = activations
        .iter()
        .enumerate()
        .filter(|(_, count)| **count > 1)
        .map(|(module, count)| (*count, module))
        .collect();
    // Most first; ties in document order.
    repeated.sort_by(|left, right| right.0.cmp(&left.0).then(left.1.cmp(&right.1)));
    let Some(&(most, _)) = repeated.first() else {
        return "no module repeated, so the graph is too large for the limit".to_owned();
    };
    // What ran about as often as the busiest module is on its loop.
    let names: Vec<String> = repeated
        .iter()
        .filter(|(count, _)| count * 2 >= most)
        .take(5)
        .map(|(count, module)| format!("\"{}\" ({count} times)", modules[*module].display_label()))
        .collect();
    format!("the loop went through {}", names.join(", "))
}

/// The cables leaving a finished activation's module, and what sending a
/// value down them records.
struct Exits<'a, 'b> {
    outgoing: &'a HashMap<(usize, &'b str), Vec<usize>>,
    live: &'a [(&'b graph::Cable, usize, usize)],
    module: usize,
    activation: u32,
    run_input: &'a str,
    events: &'a mpsc::UnboundedSender<RunEvent>,
}

impl Exits<'_, '_> {
    /// Puts `value` on the cables from `port` that take it (all of them,
    /// or the one its cables' conditions choose), records and announces the
    /// way it went when there were conditions, and says whether any cable
    /// took it.
    fn send(
        &self,
        slots: &mut [Slot],
        record: &mut ActivationRecord,
        state: &RunState,
        port: &str,
        value: PortValue,
    ) -> bool {
        let Some(cables) = self.outgoing.get(&(self.module, port)) else {
            return false;
        };
        let exits: Vec<routing::Exit<'_>> = cables
            .iter()
            .map(|&index| routing::Exit {
                cable_id: &self.live[index].0.id,
                condition: self.live[index].0.condition(),
            })
            .collect();
        let choice = routing::choose(port, &exits, || {
            routing::context(&value, record, self.run_input, state)
        });
        for &position in &choice.taken {
            let slot = &mut slots[cables[position]];
            slot.value = Some(value.clone());
            slot.fresh = true;
            slot.arrivals += 1;
        }
        if let Some(route) = choice.route {
            let _ = self
                .events
                .send(route_event(&record.module_id, self.activation, &route));
            record.routes.push(route);
        }
        !choice.taken.is_empty()
    }
}

/// The event that says which way a port with conditions went.
fn route_event(module_id: &str, activation: u32, route: &Route) -> RunEvent {
    match &route.cable_id {
        Some(cable_id) => RunEvent::CableTaken {
            module_id: module_id.to_owned(),
            activation,
            port: route.port.clone(),
            cable_id: cable_id.clone(),
        },
        None => RunEvent::CableNoneTaken {
            module_id: module_id.to_owned(),
            activation,
            port: route.port.clone(),
            reason: route.reason.clone(),
        },
    }
}

/// The flat state keys an activation writes (PRODUCT §3.5).
fn write_state(
    state: &mut RunState,
    label: &str,
    activation: u32,
    record: &ActivationRecord,
    output: &ActivationOutput,
) {
    let mut set = |key: &str, value: String| {
        state.insert(format!("{label}.{key}"), value);
    };
    set("output", output.output_text.clone());
    set("status", "completed".to_owned());
    set("attempt", activation.to_string());
    let duration = record.finished_at.unwrap_or(record.started_at) - record.started_at;
    set("duration_ms", duration.to_string());
    let receipt = output.receipt.clone().unwrap_or_default();
    set("tokens_in", receipt.tokens_in.to_string());
    set("tokens_out", receipt.tokens_out.to_string());
    // A module that called no model cost nothing; one whose model has no
    // price has no cost, and says so.
    let cost = output
        .receipt
        .as_ref()
        .map_or(Some(0.0), |receipt| receipt.cost);
    set(
        "cost",
        cost.map_or_else(
            || "no price configured".to_owned(),
            |cost| format!("{cost:.6}"),
        ),
    );
    set("re_prompt_count", receipt.re_prompt_count.to_string());
    set("session_id", output.session_key.clone().unwrap_or_default());
    set("turns", record.responses.len().to_string());
    for (name, value) in &output.state_set {
        set(&format!("set.{name}"), value.clone());
    }
    for (name, passed) in &output.gates {
        set(&format!("gate.{name}"), passed.to_string());
    }
    if let Some(diff) = output
        .ports
        .iter()
        .find(|(port, _)| port == "diff_out")
        .and_then(|(_, value)| value.as_bundle())
    {
        set("diff", diff.as_text());
    }
}
