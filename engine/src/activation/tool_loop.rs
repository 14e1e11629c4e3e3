//! A turn's tool calls, carried out (PRODUCT §3.17): the tools a turn
//! offers made ready (looked up on their servers, locked arguments filled
//! in and taken out of what the model is shown), and each exchange of a
//! turn — the model's calls made side by side, their results sent back —
//! announced (`module.tool_call`, `module.tool_result`), kept in the record
//! and the transcript, every call paired with its result. What happens next
//! is decided by the plain value in `tools/turn.rs`.

use futures::StreamExt;
use serde_json::{Map, Value};
use wire::activation::{ToolCallRecord, ToolOutcome, TranscriptRole};
use wire::event::RunEvent;

use super::{ActivationContext, ActivationError};
use crate::provider::{ChatMessage, ToolCall, ToolDefinition};
use crate::session::Session;
use crate::tools::turn::{CallEnd, ToolTurn, TurnError};
use graph::tool_approval::{ApprovalVerdict, ServerPolicy, verdict};

mod take_up;
use graph::tools::{self, ToolChoice, ToolProblem};

/// How long a summary of a result an event carries may be.
const SUMMARY_CHARACTERS: usize = 200;

/// The tools a turn offers, ready to be called.
pub struct TurnTools {
    offered: Vec<Offered>,
    limit: u32,
}

struct Offered {
    /// The name the model calls it by.
    name: String,
    server: String,
    tool: String,
    /// Its locked arguments, their templates filled in.
    locked: Map<String, Value>,
    definition: ToolDefinition,
    /// Whether its calls wait for a person, and why.
    approval: ApprovalVerdict,
    /// How long a call of it waits for a person.
    decision_timeout: Option<u32>,
}

impl TurnTools {
    pub fn limit(&self) -> u32 {
        self.limit
    }

    pub fn names(&self) -> Vec<String> {
        self.offered
            .iter()
            .map(|offered| offered.name.clone())
            .collect()
    }

    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.offered
            .iter()
            .map(|offered| offered.definition.clone())
            .collect()
    }

    fn offered(&self, name: &str) -> Option<&Offered> {
        self.offered.iter().find(|offered| offered.name == name)
    }

    /// What the model is never told of a call of tool `name`: its locked
    /// arguments' values, even where the tool repeats them.
    pub fn hidden(&self, name: &str) -> crate::tools::Redaction {
        crate::tools::Redaction::locked(self.offered(name).into_iter().flat_map(|offered| {
            offered
                .locked
                .values()
                .filter_map(|value| value.as_str().map(str::to_owned))
        }))
    }

    /// What the model was told of a call the record has settled.
    pub fn told(&self, call: &ToolCallRecord) -> (String, bool) {
        let (told, is_error) = crate::tools::turn::told_from_record(call);
        (self.hidden(&call.tool).text(&told), is_error)
    }
}

impl ActivationContext {
    /// The module's `tools` a turn may call (narrowed by `allowed`), each
    /// looked up on its server; `None` when it offers none. A tool that is
    /// not there is refused in validation's words.
    pub async fn turn_tools(
        &self,
        choices: &[ToolChoice],
        allowed: Option<&[String]>,
        limit: u32,
    ) -> Result<Option<TurnTools>, ActivationError> {
        let chosen = tools::allowed(choices, allowed);
        if chosen.is_empty() {
            return Ok(None);
        }
        let label = self.module.display_label();
        let mut offered = Vec::with_capacity(chosen.len());
        for choice in chosen {
            if self.tools.servers().server(&choice.server).is_none() {
                let problem = ToolProblem::UnknownServer {
                    server: choice.server.clone(),
                };
                return Err(TurnError::ToolUnavailable(problem.message(label)).into());
            }
            let info = self
                .tools
                .tool(&choice.server, &choice.tool)
                .await
                .map_err(|problem| {
                    TurnError::ToolUnavailable(format!(
                        "\"{label}\" cannot use tool \"{}\" of MCP server \"{}\": {problem}",
                        choice.tool, choice.server
                    ))
                })?;
            if let Some(argument) = choice
                .arguments
                .keys()
                .find(|argument| !info.arguments().contains(argument))
            {
                let problem = ToolProblem::UnknownArgument {
                    name: choice.name().to_owned(),
                    argument: argument.clone(),
                };
                return Err(TurnError::ToolUnavailable(problem.message(label)).into());
            }
            let mut locked = Map::new();
            for (argument, value) in &choice.arguments {
                locked.insert(argument.clone(), self.rendered(value)?);
            }
            let approval = self.tool_approval(choice, &info);
            offered.push(Offered {
                approval,
                decision_timeout: choice.timeout_seconds,
                name: choice.name().to_owned(),
                server: choice.server.clone(),
                tool: choice.tool.clone(),
                definition: ToolDefinition {
                    name: choice.name().to_owned(),
                    description: info.description.clone(),
                    parameters: tools::schema_without(&info.input_schema, &locked),
                },
                locked,
            });
        }
        Ok(Some(TurnTools { offered, limit }))
    }

    /// Whether `choice`'s calls wait for a person: the module's word and
    /// the operator's, the tool's read-only mark believed only from a
    /// server the operator trusts (`graph::tool_approval`).
    fn tool_approval(
        &self,
        choice: &ToolChoice,
        info: &wire::providers::ToolInfo,
    ) -> ApprovalVerdict {
        let server = self.tools.servers().server(&choice.server);
        let policy = ServerPolicy {
            approval: server.map(|server| server.approval).unwrap_or_default(),
            trusted: server.is_some_and(|server| server.trusted),
        };
        verdict(
            choice.approval,
            policy,
            info.annotations.read_only == Some(true),
        )
    }

    /// A locked argument with its `{{ … }}` filled in from the run state.
    fn rendered(&self, value: &Value) -> Result<Value, ActivationError> {
        Ok(match value {
            Value::String(text) => Value::String(self.render(text)?),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.rendered(item))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(fields) => {
                let mut filled = Map::new();
                for (name, item) in fields {
                    filled.insert(name.clone(), self.rendered(item)?);
                }
                Value::Object(filled)
            }
            other => other.clone(),
        })
    }

    /// One exchange of a turn: the model said `text` and asked for
    /// `calls`, of which `to_make` are made, side by side; every call's
    /// result goes back into the session, paired with it. A call that
    /// must wait for a person is not made: the others are, and the
    /// activation stops to wait (`Err(WaitsForCalls)`), to be taken up
    /// when each is decided.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn exchange(
        &self,
        session: &mut Session,
        index: u32,
        text: &str,
        calls: &[ToolCall],
        to_make: Vec<ToolCall>,
        turn: &mut ToolTurn,
        tools: &TurnTools,
    ) -> Result<(), ActivationError> {
        self.asked(session, index, text, calls, tools);
        self.said_not_made(turn).await;
        let (to_wait, to_make): (Vec<ToolCall>, Vec<ToolCall>) =
            to_make.into_iter().partition(|call| {
                tools
                    .offered(&call.name)
                    .is_some_and(|offered| offered.approval.waits)
            });
        // An experiment's variants run side by side, compared as they end:
        // none stops to wait, so a call that would is declined.
        let to_wait = if self.variant.is_some() {
            for call in &to_wait {
                turn.on_result(
                    &call.id,
                    CallEnd::Declined("The call was not made: it needs a person's approval, and an experiment's variant does not wait for one.".to_owned()),
                );
            }
            Vec::new()
        } else {
            to_wait
        };
        self.make_calls(&to_make, turn, tools).await;
        if !to_wait.is_empty() {
            self.wait_for(&to_wait, tools).await;
            return Err(ActivationError::WaitsForCalls);
        }
        self.answered(session, turn);
        self.checkpoint().await;
        Ok(())
    }

    /// Calls that wait for a person: announced as asked for, kept in the
    /// record as waiting (why, and until when), checkpointed. The run
    /// takes it from there (`run/tool_waiting.rs`).
    async fn wait_for(&self, to_wait: &[ToolCall], tools: &TurnTools) {
        let now = crate::now_millis();
        for call in to_wait {
            let Some(offered) = tools.offered(&call.name) else {
                continue;
            };
            self.announce(call, offered).await;
            let waits = wire::approval::CallWait {
                reason: offered.approval.words().to_owned(),
                deadline_at: offered
                    .decision_timeout
                    .map(|seconds| now.saturating_add(i64::from(seconds) * 1000)),
            };
            self.update_call(&call.id, |kept| {
                kept.outcome = ToolOutcome::Waiting;
                kept.waits = Some(waits);
            });
        }
        self.checkpoint().await;
    }

    /// Says a call is asked for (`module.tool_call`), as it is made.
    async fn announce(&self, call: &ToolCall, offered: &Offered) {
        self.emit(RunEvent::ModuleToolCall {
            module_id: self.module.id.clone(),
            activation: self.activation,
            call_id: call.id.clone(),
            server: offered.server.clone(),
            tool: call.name.clone(),
            arguments: shown_arguments(call, offered),
        })
        .await;
    }

    /// Changes the record's call `call_id` (the last by that id).
    fn update_call(&self, call_id: &str, change: impl FnOnce(&mut ToolCallRecord)) {
        self.update_record(|record| {
            if let Some(kept) = record
                .tool_calls
                .iter_mut()
                .rev()
                .find(|kept| kept.call_id == call_id)
            {
                change(kept);
            }
        });
    }

    /// Makes `to_make` side by side, each announced, its end said and
    /// kept in `turn` and the record.
    async fn make_calls(&self, to_make: &[ToolCall], turn: &mut ToolTurn, tools: &TurnTools) {
        for call in to_make {
            let Some(offered) = tools.offered(&call.name) else {
                continue;
            };
            self.announce(call, offered).await;
        }
        // A crash from here leaves these calls in flight in the record: a
        // resume does not make one twice unseen.
        self.checkpoint().await;
        let made = to_make.iter().filter_map(|call| {
            let offered = tools.offered(&call.name)?;
            let arguments = tools::with_locked(&call.arguments, &offered.locked);
            Some(async move {
                let (end, duration_ms) = match &call.arguments {
                    // What the model wrote was not an object of arguments.
                    Value::String(written) => (
                        CallEnd::ToolError(format!(
                            "the arguments are not a JSON object: {written}"
                        )),
                        0,
                    ),
                    _ => {
                        self.tools
                            .call(&offered.server, &offered.tool, arguments)
                            .await
                    }
                };
                (call, end.hiding(&tools.hidden(&call.name)), duration_ms)
            })
        });
        // Each result is said as its call ends, not when the slowest of
        // the reply has: the live view shows a quick call done while a
        // slow one runs.
        let mut ending: futures::stream::FuturesUnordered<_> = made.collect();
        while let Some((call, end, duration_ms)) = ending.next().await {
            self.said_how_it_ended(call, &end, duration_ms).await;
            turn.on_result(&call.id, end);
            self.settle(&call.id, turn, duration_ms);
        }
    }

    /// The calls of a reply that were not made (past the limit, or of a
    /// tool not offered) are announced with how they ended, so the live
    /// view and the events show every call the model asked for.
    async fn said_not_made(&self, turn: &ToolTurn) {
        for (call, end) in turn.ends() {
            if !matches!(end, CallEnd::NotRun(_)) {
                continue;
            }
            self.emit(RunEvent::ModuleToolCall {
                module_id: self.module.id.clone(),
                activation: self.activation,
                call_id: call.id.clone(),
                server: String::new(),
                tool: call.name.clone(),
                arguments: call.arguments.clone(),
            })
            .await;
            self.said_how_it_ended(&call, &end, 0).await;
        }
    }

    async fn said_how_it_ended(&self, call: &ToolCall, end: &CallEnd, duration_ms: u64) {
        self.emit(RunEvent::ModuleToolResult {
            module_id: self.module.id.clone(),
            activation: self.activation,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            ok: end.ok(),
            summary: summary(end),
            duration_ms,
        })
        .await;
    }

    pub(super) fn transcript_call(&self, call: &ToolCallRecord) {
        self.transcript(
            TranscriptRole::ToolCall,
            &format!("{} {}", call.tool, compact(&call.arguments)),
        );
    }

    /// The model asked for more calls than the activation may make: none
    /// is made, and each is told so, paired with its call.
    pub(super) async fn not_made(
        &self,
        session: &mut Session,
        index: u32,
        text: &str,
        calls: &[ToolCall],
        turn: &ToolTurn,
    ) {
        let none = TurnTools {
            offered: Vec::new(),
            limit: 0,
        };
        self.asked(session, index, text, calls, &none);
        self.said_not_made(turn).await;
        self.answered(session, turn);
    }

    /// The model's reply asking for `calls`: into the session, the
    /// transcript and the record (each call in flight until it ends).
    fn asked(
        &self,
        session: &mut Session,
        index: u32,
        text: &str,
        calls: &[ToolCall],
        tools: &TurnTools,
    ) {
        session
            .messages
            .push(ChatMessage::assistant_calling(text, calls));
        if !text.is_empty() {
            self.transcript(TranscriptRole::Assistant, text);
        }
        for call in calls {
            let offered = tools.offered(&call.name);
            let arguments = match offered {
                Some(offered) => shown_arguments(call, offered),
                None => call.arguments.clone(),
            };
            self.transcript(
                TranscriptRole::ToolCall,
                &format!("{} {}", call.name, compact(&arguments)),
            );
            self.update_record(|record| {
                record.tool_calls.push(ToolCallRecord {
                    call_id: call.id.clone(),
                    response_index: index,
                    server: offered
                        .map(|offered| offered.server.clone())
                        .unwrap_or_default(),
                    tool: call.name.clone(),
                    arguments: arguments.clone(),
                    outcome: ToolOutcome::Pending,
                    result: Value::Null,
                    duration_ms: 0,
                    ..ToolCallRecord::default()
                });
            });
        }
    }

    /// Call `call_id` ended as `turn` has it: its record says how.
    fn settle(&self, call_id: &str, turn: &ToolTurn, duration_ms: u64) {
        let Some((_, end)) = turn.ends().into_iter().find(|(call, _)| call.id == call_id) else {
            return;
        };
        self.update_call(call_id, |kept| {
            kept.outcome = outcome(&end);
            kept.result = match &end {
                CallEnd::Done { value, .. } => value.clone(),
                other => Value::String(other.told()),
            };
            kept.duration_ms = duration_ms;
        });
    }

    /// Every call of the last reply ended (or never could): the calls not
    /// settled yet are, the results go into the session and the
    /// transcript, each paired with its call.
    fn answered(&self, session: &mut Session, turn: &ToolTurn) {
        for (call, end) in turn.ends() {
            let pending = self.record.lock().is_ok_and(|record| {
                record
                    .tool_calls
                    .iter()
                    .rev()
                    .find(|kept| kept.call_id == call.id)
                    .is_some_and(|kept| {
                        matches!(kept.outcome, ToolOutcome::Pending | ToolOutcome::Waiting)
                    })
            });
            if pending {
                self.settle(&call.id, turn, 0);
            }
            self.transcript(
                TranscriptRole::ToolResult,
                &format!("{} → {}", call.name, end.told()),
            );
        }
        session.messages.push(turn.results_message());
    }
}

/// What the record keeps of how a call ended.
fn outcome(end: &CallEnd) -> ToolOutcome {
    match end {
        CallEnd::Done { .. } => ToolOutcome::Ok,
        CallEnd::ToolError(_) => ToolOutcome::Error,
        CallEnd::TimedOut { .. } => ToolOutcome::TimedOut,
        CallEnd::ServerGone(_) => ToolOutcome::ServerGone,
        CallEnd::Interrupted => ToolOutcome::Interrupted,
        CallEnd::NotRun(_) => ToolOutcome::NotRun,
        CallEnd::Declined(_) => ToolOutcome::Declined,
    }
}

/// The arguments of a call as they are shown anywhere: as it is made,
/// the locked ones reading `🔒 locked`.
fn shown_arguments(call: &ToolCall, offered: &Offered) -> Value {
    let made = tools::with_locked(&call.arguments, &offered.locked);
    tools::shown_arguments(&made, &offered.locked)
}

/// A value as one line of JSON.
fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The start of what a call gave back, for its event.
fn summary(end: &CallEnd) -> String {
    let told = end.told();
    let mut short: String = told.chars().take(SUMMARY_CHARACTERS).collect();
    if told.chars().count() > SUMMARY_CHARACTERS {
        short.push('…');
    }
    short
}
