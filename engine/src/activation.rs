//! One module activation: what it is given (inputs, run state, sessions,
//! providers) and how each kind turns that into outputs. The shared pieces
//! — a provider call that streams into the record and the event log, and the
//! re-prompt chain — live here and in `chain`; each kind has its own file.

mod call;
mod chain;
mod command;
mod experiment;
mod judge;
mod panel;
mod poll;
mod review;
pub(crate) mod shell;
mod simple;
pub mod text_stream;
mod tool_loop;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use graph::{Module, ModuleConfig};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc::Sender;

use crate::bundle::{ContextBundle, PortValue, Receipt};
use crate::provider::retry::RetryPolicy;
use crate::provider::{ChatMessage, ChatResponse, ProviderInfo, ProviderRegistry};
use crate::render::RunState;
use crate::session::{Session, SessionStore};
use crate::{EngineSettings, RunInput};
use wire::activation::{ActivationRecord, TranscriptEntry, TranscriptRole};
use wire::event::RunEvent;

/// Why an activation failed: in words for the person running the graph,
/// or a turn's error a caller can tell apart.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ActivationError {
    #[error("{0}")]
    Failed(String),
    #[error(transparent)]
    Turn(#[from] crate::tools::turn::TurnError),
    /// Some of its tool calls wait for a person (PRODUCT §3.17): it stops
    /// here, its record saying which, and the run takes it up when each
    /// is decided. Not a failure.
    #[error("its tool calls wait for a person")]
    WaitsForCalls,
}

/// A value that reached one of the module's inputs, and where from.
#[derive(Clone, Debug)]
pub struct InputValue {
    pub port: String,
    pub source_module: String,
    pub source_label: String,
    /// The output port of the source module it left by.
    pub source_port: String,
    pub value: PortValue,
    /// Arrived since the module's previous activation.
    pub fresh: bool,
}

/// What an activation produced. Kept with its record when it ends, so a
/// resumed run replays it instead of running the activation again.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ActivationOutput {
    /// Values of the ports that fire, by port id.
    pub ports: Vec<(String, PortValue)>,
    /// `<label>.output` in the run state.
    pub output_text: String,
    pub receipt: Option<Receipt>,
    pub session_key: Option<String>,
    /// The coding agent's ACP session its `data_out` names by key
    /// (`source_session_key`), for a downstream coding agent to continue.
    /// Kept with the record, so a resumed run still knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session: Option<(String, crate::session::AgentSessionReference)>,
    /// The intent its structured gate read, with the reply's reason; the
    /// run acts on `repeat` and `abort`.
    pub intent: Option<(graph::intent::Intent, String)>,
    /// Keys a command set (`PATCHBAY_SET:name=value`), which the run state
    /// keeps as `<label>.set.<name>`.
    pub state_set: Vec<(String, String)>,
    /// Each validator run and whether it passed (`<label>.gate.<name>`).
    pub gates: Vec<(String, bool)>,
    /// Its validators still failed when its fix turns were used: why. The
    /// run retries or gives up (PRODUCT §3.11).
    pub checks_failed: Option<String>,
}

/// Everything an activation may use.
pub struct ActivationContext {
    pub run_id: String,
    pub module: Module,
    pub activation: u32,
    /// What the attempt before left, when this is an attempt after the
    /// first of a module that retries, or a repeat (PRODUCT §3.9).
    pub attempt: Option<crate::attempts::Attempt>,
    pub inputs: Vec<InputValue>,
    pub run_input: Arc<RunInput>,
    /// The run state as the activation started: shared, not copied (it
    /// grows with every module of the run).
    pub state: Arc<RunState>,
    pub providers: Arc<ProviderRegistry>,
    pub sessions: Arc<SessionStore>,
    pub settings: Arc<EngineSettings>,
    pub retry: RetryPolicy,
    /// The run's event queue (bounded: a full queue makes `emit` wait).
    pub events: Sender<RunEvent>,
    /// Kept up to date as responses stream, so a cancelled activation still
    /// leaves what it had.
    pub record: Arc<Mutex<ActivationRecord>>,
    pub started: Instant,
    /// Where the record is kept after each answered turn, so that a resumed
    /// run continues from there (PRODUCT §8).
    pub checkpoint: Option<crate::resume::CheckpointSink>,
    /// On a resume, the turns this activation had answered before the run
    /// stopped: they are not asked again.
    pub recovered: Option<crate::resume::Recovered>,
    /// What the run has spent, against its budget and the module's.
    pub spend: Arc<crate::budget::Spend>,
    /// Set while one variant of a module with variants runs (DOC23 §7.2).
    pub variant: Option<VariantScope>,
    /// The module's activation before this one, when it was reused from a
    /// recorded run: a coding module goes on from the work it left.
    pub reused_earlier: Option<Arc<ActivationRecord>>,
    /// The tool servers the run has open (PRODUCT §3.17).
    pub tools: Arc<crate::tools::RunTools>,
}

/// One variant's part of its module's activation: its responses are
/// numbered and labelled apart from the other variants' (`B · Re-prompt
/// 1`), its events and transcript say whose they are, and its session is
/// its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantScope {
    /// From 0, in the module's order.
    pub index: u32,
    pub name: String,
}

pub use graph::experiment::RESPONSES_PER_VARIANT;

/// The totals of one or more provider calls.
#[derive(Clone, Copy, Debug)]
pub struct Tally {
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// `None` once a call had no price.
    pub cost: Option<f64>,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            tokens_in: 0,
            tokens_out: 0,
            cost: Some(0.0),
        }
    }
}

impl ActivationContext {
    pub async fn emit(&self, event: RunEvent) {
        // A variant's re-prompts say whose they are.
        let event = match (event, &self.variant) {
            (
                RunEvent::RepromptDispatched {
                    module_id,
                    reprompt_index,
                    reprompt_count,
                    ..
                },
                Some(scope),
            ) => RunEvent::RepromptDispatched {
                module_id,
                reprompt_index,
                reprompt_count,
                variant: Some(scope.name.clone()),
            },
            (
                RunEvent::RepromptResponse {
                    module_id,
                    reprompt_index,
                    token_count,
                    ..
                },
                Some(scope),
            ) => RunEvent::RepromptResponse {
                module_id,
                reprompt_index,
                token_count,
                variant: Some(scope.name.clone()),
            },
            (event, _) => event,
        };
        // The writer outlives every activation; a closed channel only means
        // the run is shutting down, and then nothing needs the event.
        let _ = self.events.send(event).await;
    }

    /// This activation as variant `index` (`name`) runs it: the same
    /// inputs, record, run state and spend; a session, numbering and
    /// labels of its own. A resumed experiment takes up the variants that
    /// had finished (`experiment::take_up_finished`).
    pub fn for_variant(&self, index: u32, name: &str) -> ActivationContext {
        ActivationContext {
            run_id: self.run_id.clone(),
            module: self.module.clone(),
            activation: self.activation,
            attempt: self.attempt.clone(),
            inputs: self.inputs.clone(),
            run_input: Arc::clone(&self.run_input),
            state: Arc::clone(&self.state),
            providers: Arc::clone(&self.providers),
            sessions: Arc::clone(&self.sessions),
            settings: Arc::clone(&self.settings),
            retry: self.retry,
            events: self.events.clone(),
            record: Arc::clone(&self.record),
            started: Instant::now(),
            checkpoint: None,
            recovered: None,
            spend: Arc::clone(&self.spend),
            variant: Some(VariantScope {
                index,
                name: name.to_owned(),
            }),
            reused_earlier: self.reused_earlier.clone(),
            tools: Arc::clone(&self.tools),
        }
    }

    /// What names this activation's own things (a workspace, parked
    /// agents): the module's id, and a variant's number after it.
    pub fn own_name(&self) -> String {
        match &self.variant {
            Some(scope) => format!("{}--variant-{}", self.module.id, scope.index + 1),
            None => self.module.id.clone(),
        }
    }

    /// The key of this activation's session: a variant's is its own.
    pub fn session_key(&self, persist: bool) -> String {
        let key = crate::session::SessionStore::key(&self.module.id, self.activation, persist);
        match &self.variant {
            Some(scope) => format!("{key}/{}", scope.name),
            None => key,
        }
    }

    /// A response's number and label as the record and the log keep them.
    pub fn scoped(&self, index: u32, label: &str) -> (u32, String) {
        match &self.variant {
            Some(scope) => (
                (scope.index + 1) * RESPONSES_PER_VARIANT + index,
                format!("{} · {label}", scope.name),
            ),
            None => (index, label.to_owned()),
        }
    }

    fn update_record(&self, change: impl FnOnce(&mut ActivationRecord)) {
        if let Ok(mut record) = self.record.lock() {
            change(&mut record);
        }
    }

    pub fn transcript(&self, role: TranscriptRole, text: &str) {
        let text = match &self.variant {
            Some(scope) => format!("[{}] {text}", scope.name),
            None => text.to_owned(),
        };
        self.update_record(|record| {
            record.transcript.push(TranscriptEntry { role, text });
        });
    }

    /// Inputs that arrived on `port`, in cable order.
    pub fn inputs_on<'a>(&'a self, port: &'a str) -> impl Iterator<Item = &'a InputValue> + 'a {
        self.inputs.iter().filter(move |input| input.port == port)
    }

    pub fn bundles_on(&self, port: &str) -> Vec<(&InputValue, ContextBundle)> {
        self.inputs
            .iter()
            .filter(|input| input.port == port)
            .filter_map(|input| input.value.as_bundle().map(|bundle| (input, bundle)))
            .collect()
    }

    /// Renders a prompt text's template variables against the run state.
    pub fn render(&self, text: &str) -> Result<String, ActivationError> {
        crate::render::render(text, &self.state).map_err(|problem| {
            ActivationError::Failed(format!("\"{}\": {problem}", self.module.display_label()))
        })
    }

    /// The retry instruction, when this attempt is given it instead of the
    /// instruction: an attempt after the first of a module that has one.
    pub fn retry_instruction(&self) -> Option<&str> {
        self.attempt.as_ref()?;
        self.module
            .config
            .retry_instruction()
            .filter(|text| !text.trim().is_empty())
    }

    /// The instruction this attempt is given, rendered: the retry
    /// instruction with its retry variables filled, or `instruction`.
    pub fn render_instruction(&self, instruction: &str) -> Result<String, ActivationError> {
        match (self.retry_instruction(), &self.attempt) {
            (Some(retry), Some(attempt)) => {
                crate::render::render(retry, &attempt.variables(self.activation, &self.state))
                    .map_err(|problem| {
                        ActivationError::Failed(format!(
                            "\"{}\" (retry instruction): {problem}",
                            self.module.display_label()
                        ))
                    })
            }
            _ => self.render(instruction),
        }
    }

    pub fn provider(
        &self,
        agent_provider: &str,
    ) -> Result<(ProviderInfo, Arc<dyn crate::provider::Provider>), ActivationError> {
        self.providers
            .get(agent_provider)
            .map(|(info, provider)| (info.clone(), provider))
            .ok_or_else(|| {
                ActivationError::Failed(if agent_provider.is_empty() {
                    "no provider is configured on this server".to_owned()
                } else {
                    format!("provider \"{agent_provider}\" is not configured on this server")
                })
            })
    }

    /// The module's provider and the model to ask: the module's own, or the
    /// provider's first model when it names none.
    pub fn provider_and_model(
        &self,
        agent: &graph::config::AgentConfig,
    ) -> Result<(ProviderInfo, Arc<dyn crate::provider::Provider>, String), ActivationError> {
        let (info, provider) = self.provider(&agent.provider)?;
        let model = if agent.model.is_empty() {
            info.models.first().cloned().unwrap_or_default()
        } else {
            agent.model.clone()
        };
        Ok((info, provider, model))
    }

    /// Keeps the record as it is now, so that a resume continues after the
    /// turns it has answered. Not waited for: the next turn is asked at
    /// once, and the record is stored before anything the activation
    /// stores later (a crash in between asks this turn again).
    pub async fn checkpoint(&self) {
        let Some(sink) = &self.checkpoint else {
            return;
        };
        let record = match self.record.lock() {
            Ok(record) => record.clone(),
            Err(_) => return,
        };
        sink(record).await;
    }

    /// Opens a new session (or continues one) and records its system prompt.
    pub fn open_session(
        &self,
        base: Option<Session>,
        model: &str,
        provider_id: &str,
        system: Option<String>,
    ) -> Session {
        let mut session = base.unwrap_or_default();
        session.model = model.to_owned();
        session.provider = provider_id.to_owned();
        if system.is_some() {
            session.system = system;
        }
        if let Some(system) = &session.system {
            self.transcript(TranscriptRole::System, system);
        }
        for message in &session.messages {
            self.transcript(message.role.into(), &message.text());
        }
        session
    }

    /// Adds a user turn to the session and the transcript.
    pub fn say(&self, session: &mut Session, message: ChatMessage) {
        self.transcript(TranscriptRole::User, &message.text());
        session.messages.push(message);
    }

    pub fn receipt(
        &self,
        info: &ProviderInfo,
        model: &str,
        tally: Tally,
        re_prompt_count: u32,
    ) -> Receipt {
        Receipt {
            module_id: self.module.id.clone(),
            activation: self.activation,
            provider: info.id.clone(),
            model: model.to_owned(),
            simulated: info.simulated,
            tokens_in: tally.tokens_in,
            tokens_out: tally.tokens_out,
            duration_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            cost: tally.cost,
            re_prompt_count,
            tools: self.tools_used(),
        }
    }

    /// The tools this activation called, in the order first called, with
    /// how many calls each and their time.
    fn tools_used(&self) -> Vec<wire::bundle::ToolUse> {
        self.record
            .lock()
            .map(|record| wire::bundle::ToolUse::tally(&record.tool_calls))
            .unwrap_or_default()
    }

    /// A plain-text bundle from this module.
    pub fn text_bundle(&self, text: impl Into<String>) -> ContextBundle {
        ContextBundle::text(&self.module.id, text)
    }

    pub fn signal(&self) -> PortValue {
        PortValue::Signal {
            source_module: self.module.id.clone(),
        }
    }
}

impl Tally {
    pub fn add(&mut self, response: &ChatResponse) {
        self.tokens_in += response.usage.input_tokens;
        self.tokens_out += response.usage.output_tokens;
        self.cost = wire::cost::add(self.cost, response.cost);
    }
}

/// Runs the activation for the module's kind.
pub async fn activate(context: &ActivationContext) -> Result<ActivationOutput, ActivationError> {
    match &context.module.config {
        ModuleConfig::Input(_) => Ok(simple::input(context)),
        ModuleConfig::Output(_) => Ok(simple::output(context)),
        ModuleConfig::AgentTask(config) if !config.variants.is_empty() => {
            experiment::experiment(context, &config.variants, config.re_prompts.len()).await
        }
        ModuleConfig::Coding(config) if !config.variants.is_empty() => {
            experiment::experiment(context, &config.variants, 0).await
        }
        ModuleConfig::AgentTask(config) => chain::agent_task(context, config).await,
        ModuleConfig::ReviewGate(config) => review::review_gate(context, config).await,
        ModuleConfig::RedTeam(config) => chain::red_team(context, config).await,
        ModuleConfig::Transform(config) => simple::transform(context, config).await,
        ModuleConfig::ClaimExtractor(config) => simple::claim_extractor(context, config).await,
        ModuleConfig::Judge(config) => judge::judge(context, config).await,
        ModuleConfig::Panel(config) => panel::panel(context, config).await,
        ModuleConfig::Command(config) => command::command(context, config).await,
        ModuleConfig::Poll(config) => poll::poll(context, config).await,
        // The run waits for a person there, with no task (`run/waiting.rs`).
        ModuleConfig::Approval(_) => Err(ActivationError::Failed(
            "an approval waits for a person: it is never run as a task".to_owned(),
        )),
        ModuleConfig::Coding(_) => match &context.settings.coding {
            Some(runner) => runner.run(context).await,
            None => Err(ActivationError::Failed(
                "coding modules need an ACP agent, and none is configured on this server"
                    .to_owned(),
            )),
        },
        ModuleConfig::Unknown { kind, .. } => Err(ActivationError::Failed(format!(
            "\"{}\" is of kind \"{kind}\", which this server cannot run",
            context.module.display_label()
        ))),
    }
}

/// Parses a JSON reply leniently: the whole text, or the first `{…}` in it.
pub fn parse_json_reply(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok().or_else(|| {
        let start = text.find('{')?;
        let end = text.rfind('}')?;
        serde_json::from_str(text.get(start..=end)?).ok()
    })
}
