//! Running a graph (PRODUCT §3.1): the shell around a run. The run itself
//! is a value (`run.rs`) that decides what happens; the shell owns what it
//! cannot — the activations' tasks, the recorder, the clock, the timers and
//! the event writer — feeds the run what happened and carries out what it
//! answers.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use graph::Graph;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

use crate::activation::{ActivationContext, ActivationError, activate};
use crate::budget::Spend;
use crate::recorder::Recorder;
use crate::resume::{CheckpointSink, PendingDecision, Resume};
use crate::reuse::Reuse;
use crate::run::{
    Command, Ending, Finished, Limits, Paused, Run, RunEnding, StartActivation, Timer,
};
use crate::session::SessionStore;
use crate::{Engine, RunInput, now_millis};
use wire::activation::ActivationRecord;
use wire::event::{EventRecord, RunEvent, RunStatus};

pub use crate::run::TRANSITION_LIMIT;

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
    /// Decisions people take on its approvals while it runs.
    pub decisions: Option<mpsc::UnboundedReceiver<PendingDecision>>,
    /// A run from a module: the recorded run it reuses upstream of it.
    pub reuse: Option<Reuse>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub error: Option<String>,
    pub activations: u32,
    pub events: u64,
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
    let RunControl {
        cancel,
        stop,
        resume,
        decisions,
        reuse,
    } = control;
    let mut decisions = decisions;
    // A run that had logged nothing starts afresh.
    let resume = resume.filter(|resume| resume.last_seq > 0);
    let after = resume.as_ref().map_or(0, |resume| resume.last_seq);
    let input = Arc::new(spec.input);
    let limits = Limits::of(&engine.settings);
    let mut run = Run::new(spec.graph, &spec.run_id, Arc::clone(&input), limits, resume);
    if let Some(reuse) = reuse {
        run = run.reusing(reuse);
    }
    let mut shell = Shell::new(engine, spec.run_id, recorder, input, spec.budget_usd, after);
    // A person's cancel stops every activation in flight at once.
    shell.activation_cancel = cancel.child_token();
    if stop.is_cancelled() {
        shell.carry_out(run.on_stop(now_millis())).await;
    }
    shell.carry_out(run.start(now_millis())).await;
    while !run.is_over() {
        let commands = tokio::select! {
            // With nothing running, only approvals wait: for people, not tasks.
            joined = shell.running.join_next(), if !shell.running.is_empty() => match joined {
                Some(Ok(finished)) => run.on_finished(now_millis(), finished),
                Some(Err(error)) => run.on_lost_task(&error.to_string()),
                None => Vec::new(),
            },
            () = cancel.cancelled(), if !run.is_cancelled() => run.on_cancel(),
            () = shell.spend.reached().cancelled(), if !run.has_failed() => {
                run.on_budget_spent(shell.spend.reason())
            }
            () = stop.cancelled(), if !run.is_stopping() => run.on_stop(now_millis()),
            timer = shell.timers.next() => shell.timer_fired(&mut run, timer).await,
            decided = next_decision(&mut decisions) => run.on_decision(now_millis(), decided),
        };
        shell.carry_out(commands).await;
    }
    if cancel.is_cancelled() {
        shell.carry_out(run.on_cancel()).await;
    }
    // Stop what is still running and keep what it had produced.
    shell.activation_cancel.cancel();
    while let Some(joined) = shell.running.join_next().await {
        if let Ok(finished) = joined {
            shell
                .carry_out(run.on_drained(now_millis(), finished))
                .await;
        }
    }
    let (commands, ending) = run.finish(now_millis());
    shell.carry_out(commands).await;
    shell.end(ending).await
}

/// Events of one run that wait to be written, at most: past that, whoever
/// emits one waits for room (streamed text gathers instead,
/// `activation::text_stream`), so a database that falls behind slows the
/// run down instead of filling memory. Four of the writer's batches.
const EVENTS_WAITING: usize = 1024;

/// What carries out a run's commands.
struct Shell<R: Recorder> {
    run_id: String,
    engine: Engine,
    recorder: Arc<R>,
    input: Arc<RunInput>,
    spend: Arc<Spend>,
    sessions: Arc<SessionStore>,
    /// The tool servers the run has open, closed when it ends.
    tools: Arc<crate::tools::RunTools>,
    checkpoint: CheckpointSink,
    /// Where events go to be numbered and written, in order: at most
    /// `EVENTS_WAITING`, then an emit waits for room.
    events: mpsc::Sender<RunEvent>,
    writer: tokio::task::JoinHandle<u64>,
    running: JoinSet<Finished>,
    /// Cancels every activation in flight.
    activation_cancel: CancellationToken,
    timers: Timers,
}

impl<R: Recorder> Shell<R> {
    fn new(
        engine: &Engine,
        run_id: String,
        recorder: Arc<R>,
        input: Arc<RunInput>,
        budget_usd: Option<f64>,
        after: u64,
    ) -> Shell<R> {
        let (events, receiver) = mpsc::channel(EVENTS_WAITING);
        let writer = tokio::spawn(write_events(
            run_id.clone(),
            Arc::clone(&recorder),
            receiver,
            after,
        ));
        let tools = Arc::new(crate::tools::RunTools::new(
            Arc::clone(&engine.settings.tool_servers),
            engine
                .settings
                .sandbox
                .clone()
                .map_err(|unavailable| unavailable.to_string()),
            engine.settings.run_folder(&run_id),
        ));
        Shell {
            checkpoint: checkpoint_sink(&recorder, &run_id),
            tools,
            run_id,
            engine: engine.clone(),
            recorder,
            input,
            spend: Arc::new(Spend::new(budget_usd)),
            sessions: Arc::new(SessionStore::default()),
            events,
            writer,
            running: JoinSet::new(),
            activation_cancel: CancellationToken::new(),
            timers: Timers::default(),
        }
    }

    /// Does what the run decided, in order.
    async fn carry_out(&mut self, commands: Vec<Command>) {
        for command in commands {
            match command {
                // The writer outlives the run; a closed channel only means
                // it is shutting down, and then nothing needs the event.
                Command::Emit(event) => drop(self.events.send(event).await),
                Command::SaveActivation { record, ending } => {
                    let saved = self
                        .recorder
                        .save_activation(&self.run_id, &record, ending.as_deref())
                        .await;
                    self.log_failure(saved, "activation could not be recorded");
                }
                Command::KeepActivation(record) => {
                    self.recorder.keep_activation(&self.run_id, *record).await;
                }
                Command::Start(start) => self.spawn(*start),
                Command::SaveState(changes) => {
                    let saved = self.recorder.save_state(&self.run_id, &changes).await;
                    self.log_failure(saved, "the run state could not be recorded");
                }
                Command::SetStatus { status, error } => {
                    let saved = self
                        .recorder
                        .set_status(&self.run_id, status, error.as_deref())
                        .await;
                    self.log_failure(saved, "run status could not be recorded");
                }
                Command::ArmTimer { timer, after } => self.timers.arm(timer, after),
                Command::DisarmTimer(timer) => self.timers.disarm(timer),
                Command::RecordWait {
                    waited_ms,
                    waiting_since,
                } => {
                    let saved = self
                        .recorder
                        .record_wait(&self.run_id, waited_ms, waiting_since)
                        .await;
                    self.log_failure(saved, "the run's wait could not be recorded");
                }
                Command::KeepSession { key, session } => self.sessions.put(&key, session),
                Command::KeepAgentSession { key, reference } => {
                    self.sessions.put_agent_session(&key, reference);
                }
                Command::CountReplayedCost {
                    module_id,
                    label,
                    cost,
                } => self.spend.replayed(&module_id, &label, cost),
            }
        }
    }

    /// A timer fired. An approval's timeout is first claimed as the
    /// decision on its activation: a person's stored first is acted on
    /// instead (taken on another process, it may not have reached this
    /// one yet), so that a person told their decision was taken is never
    /// overruled by the clock. A claim that cannot be made now is tried
    /// again in a second.
    async fn timer_fired(&mut self, run: &mut Run, timer: Timer) -> Vec<Command> {
        if let Timer::ToolCalls { module, activation } = timer {
            return self.calls_timed_out(run, module, activation).await;
        }
        if let Timer::Approval { module, activation } = timer {
            let module_id = run.module_id(module).to_owned();
            match self
                .recorder
                .claim_timeout(&self.run_id, &module_id, activation)
                .await
            {
                Ok(None) => {}
                Ok(Some(decision)) => {
                    return run.on_decided(now_millis(), &module_id, activation, decision);
                }
                Err(error) => {
                    tracing::warn!(run = %self.run_id, module = %module_id, %error, "an approval's timeout could not be claimed; trying again");
                    self.timers.arm(timer, Duration::from_secs(1));
                    return Vec::new();
                }
            }
        }
        run.on_timer(now_millis(), timer)
    }

    /// The wait of some tool calls is over: each call's timeout is taken
    /// as the decision on it unless a person's came first, which is acted
    /// on instead (the first decision wins, and a timeout is one).
    async fn calls_timed_out(
        &mut self,
        run: &mut Run,
        module: usize,
        activation: u32,
    ) -> Vec<Command> {
        let module_id = run.module_id(module).to_owned();
        let now = now_millis();
        let mut commands = Vec::new();
        for call_id in run.overdue_calls(module, activation, now) {
            let decision = match self
                .recorder
                .claim_call_timeout(&self.run_id, &module_id, activation, &call_id)
                .await
            {
                Ok(first) => first.unwrap_or_else(|| crate::tools::waiting::timed_out(now)),
                Err(error) => {
                    tracing::warn!(run = %self.run_id, module = %module_id, %error, "a tool call's timeout could not be claimed; trying again");
                    self.timers.arm(
                        Timer::ToolCalls { module, activation },
                        Duration::from_secs(1),
                    );
                    break;
                }
            };
            commands.extend(run.on_call_decided(now, &module_id, activation, &call_id, decision));
        }
        commands
    }

    fn log_failure(&self, result: Result<(), crate::recorder::RecordError>, what: &str) {
        if let Err(error) = result {
            tracing::error!(run = %self.run_id, %error, "{what}");
        }
    }

    /// Runs an activation in a task of its own, which the run's cancel
    /// stops.
    fn spawn(&mut self, start: StartActivation) {
        let StartActivation {
            module_index,
            module,
            activation,
            attempt,
            inputs,
            state,
            record,
            recovered,
            delay_seconds,
            timeout_seconds,
            reused_earlier,
        } = start;
        let settings = Arc::clone(&self.engine.settings);
        let record = Arc::new(Mutex::new(record));
        let context = ActivationContext {
            run_id: self.run_id.clone(),
            module,
            activation,
            attempt,
            inputs,
            run_input: Arc::clone(&self.input),
            state,
            providers: Arc::clone(&self.engine.providers),
            sessions: Arc::clone(&self.sessions),
            retry: settings.retry,
            settings,
            events: self.events.clone(),
            record: Arc::clone(&record),
            started: Instant::now(),
            checkpoint: Some(Arc::clone(&self.checkpoint)),
            recovered,
            spend: Arc::clone(&self.spend),
            variant: None,
            reused_earlier,
            tools: Arc::clone(&self.tools),
        };
        let token = self.activation_cancel.clone();
        self.running.spawn(async move {
            let ending = tokio::select! {
                ending = attempt_with_limits(&context, delay_seconds, timeout_seconds) => ending,
                () = token.cancelled() => Ending::Cancelled,
            };
            let ending = match ending {
                Ending::Done(done) if matches!(*done, Err(ActivationError::WaitsForCalls)) => {
                    Ending::WaitsForCalls(Box::new(Paused {
                        module: context.module,
                        attempt: context.attempt,
                        inputs: context.inputs,
                        state: context.state,
                        timeout_seconds,
                        reused_earlier: context.reused_earlier,
                    }))
                }
                ending => {
                    drop(context);
                    ending
                }
            };
            let record = record
                .lock()
                .map(|record| record.clone())
                .unwrap_or_else(|poisoned| poisoned.into_inner().clone());
            Finished {
                module: module_index,
                activation,
                ending,
                record,
            }
        });
    }

    /// Waits for every event to be written, then records how the run ended
    /// (a stopped run is left as it is, to be resumed).
    async fn end(self, ending: RunEnding) -> RunOutcome {
        let RunEnding {
            status,
            error,
            activations,
        } = ending;
        drop(self.events);
        // No activation needs them now: a stdio server outlives no run.
        self.tools.close().await;
        let events = self.writer.await.unwrap_or(0);
        if status != RunStatus::Interrupted
            && let Err(record_error) = self
                .recorder
                .set_status(&self.run_id, status, error.as_deref())
                .await
        {
            tracing::error!(run = %self.run_id, error = %record_error, "run status could not be recorded");
        }
        RunOutcome {
            status,
            error,
            activations,
            events,
        }
    }
}

/// The run's armed timers: when each fires, and one sleep until the first.
struct Timers {
    armed: std::collections::BTreeMap<Timer, tokio::time::Instant>,
    sleep: Pin<Box<Sleep>>,
}

impl Default for Timers {
    fn default() -> Timers {
        Timers {
            armed: std::collections::BTreeMap::new(),
            sleep: Box::pin(tokio::time::sleep(Duration::ZERO)),
        }
    }
}

impl Timers {
    fn arm(&mut self, timer: Timer, after: Duration) {
        self.armed
            .insert(timer, tokio::time::Instant::now() + after);
    }

    fn disarm(&mut self, timer: Timer) {
        self.armed.remove(&timer);
    }

    /// The next timer to fire, which is then disarmed; never, when none is
    /// armed.
    async fn next(&mut self) -> Timer {
        let Some((&timer, &at)) = self.armed.iter().min_by_key(|(_, at)| **at) else {
            return std::future::pending().await;
        };
        self.sleep.as_mut().reset(at);
        self.sleep.as_mut().await;
        self.armed.remove(&timer);
        timer
    }
}

/// The next decision taken on the run's approvals; never, when nobody can
/// take one (the channel is closed, or there is none).
async fn next_decision(
    decisions: &mut Option<mpsc::UnboundedReceiver<PendingDecision>>,
) -> PendingDecision {
    if let Some(receiver) = decisions
        && let Some(decided) = receiver.recv().await
    {
        return decided;
    }
    std::future::pending().await
}

/// Numbers events and hands them to the recorder in batches, in order,
/// after event `after` (a resumed run's events follow its log).
async fn write_events<R: Recorder>(
    run_id: String,
    recorder: Arc<R>,
    mut events: mpsc::Receiver<RunEvent>,
    after: u64,
) -> u64 {
    let mut seq = after;
    let mut batch = Vec::new();
    while let Some(first) = events.recv().await {
        let mut next = Some(first);
        while let Some(event) = next {
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
        if let Err(error) = recorder.append_events(&batch).await {
            tracing::error!(run = %run_id, %error, "events could not be recorded");
        }
        batch.clear();
    }
    seq
}

/// Keeps records of activations in progress as they are, after each turn,
/// without waiting for them to be stored (`Recorder::keep_activation`).
fn checkpoint_sink<R: Recorder>(recorder: &Arc<R>, run_id: &str) -> CheckpointSink {
    let recorder = Arc::clone(recorder);
    let run_id: Arc<str> = Arc::from(run_id);
    Arc::new(move |record: ActivationRecord| {
        let (recorder, run_id) = (Arc::clone(&recorder), Arc::clone(&run_id));
        Box::pin(async move { recorder.keep_activation(&run_id, record).await })
    })
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
    context
        .emit(RunEvent::ModuleActivated {
            module_id: context.module.id.clone(),
            activation: context.activation,
        })
        .await;
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
