//! One agent's part of an activation: its prompt, then each of its
//! re-prompts as a new turn in its session, streamed into the event log and
//! the record, then its work committed; and what the agents of one
//! activation share while they work.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use engine::activation::text_stream::TextStream;
use engine::activation::{ActivationContext, ActivationError, Tally};
use graph::config::{CodingAgentAssignment, CodingConfig};
use graph::intent::IntentGate;
use wire::activation::{ResponseRecord, TranscriptRole};
use wire::event::RunEvent;

use crate::client::{AgentError, AgentSession, TestRun, TurnEvent};
use crate::workspace::{ChangedFile, Workspace};

/// What one agent did in one phase of the module (its prompt and its
/// re-prompts).
pub(super) struct Phase {
    pub(super) role: String,
    pub(super) agent_name: String,
    /// The reply to the prompt, then one per re-prompt.
    pub(super) responses: Vec<String>,
    pub(super) files: Vec<ChangedFile>,
    pub(super) tests: Vec<TestRun>,
}

impl Phase {
    pub(super) fn summary(&self) -> &str {
        self.responses.last().map_or("", String::as_str)
    }

    pub(super) fn header(&self) -> String {
        format!("═══ {}: {} ═══", self.role, self.agent_name)
    }
}

/// Shared by the agents of one activation, parallel ones included.
pub(super) struct Work<'a> {
    pub(super) context: &'a ActivationContext,
    pub(super) config: &'a CodingConfig,
    pub(super) turns: AtomicU32,
    pub(super) responses: AtomicU32,
    pub(super) re_prompts: AtomicU32,
    pub(super) tally: std::sync::Mutex<Tally>,
    /// Diffs of parallel agents whose work could not be merged.
    pub(super) unmerged: std::sync::Mutex<Vec<String>>,
    /// The reply to the intent gate's question, when the module has one.
    pub(super) decision: std::sync::Mutex<Option<String>>,
    /// Each validator's last verdict (`<label>.gate.<name>`).
    pub(super) gates: std::sync::Mutex<Vec<(String, bool)>>,
    /// Why the validators still failed when the fix turns were used.
    pub(super) checks_failed: std::sync::Mutex<Option<String>>,
    /// The session the module hands on with its `data_out`, once the agent
    /// that holds it is done (`CodingConfig::session_holder`).
    pub(super) handed_on: std::sync::Mutex<Option<engine::session::AgentSessionReference>>,
    /// The agent that took up an upstream module's session, and the key it
    /// was named by, when the output that named it is already in the
    /// conversation.
    pub(super) continued: std::sync::Mutex<Option<(usize, String)>>,
}

impl Work<'_> {
    /// The session key of the input agent `index`'s conversation already
    /// holds, when it continues that session.
    pub(super) fn continued_source(&self, index: usize) -> Option<String> {
        self.continued
            .lock()
            .ok()
            .and_then(|continued| continued.clone())
            .filter(|(agent, _)| *agent == index)
            .map(|(_, source)| source)
    }
}

impl Work<'_> {
    pub(super) fn module_id(&self) -> &str {
        &self.context.module.id
    }

    fn record(&self, change: impl FnOnce(&mut wire::activation::ActivationRecord)) {
        if let Ok(mut record) = self.context.record.lock() {
            change(&mut record);
        }
    }

    /// One turn: the cap checked, the reply streamed into the event log and
    /// the record as response `index`.
    async fn turn(
        &self,
        session: &AgentSession,
        role: &str,
        label: String,
        text: &str,
    ) -> Result<(String, Vec<TestRun>), ActivationError> {
        let limit = self.config.max_iterations;
        let done = self.turns.fetch_add(1, Ordering::SeqCst);
        if limit > 0 && done >= limit {
            return Err(ActivationError::Failed(format!(
                "\"{}\" stopped: its agents reached max_iterations ({limit} turns) before finishing",
                self.context.module.display_label()
            )));
        }
        // A variant's turns are numbered and labelled as its own.
        let (index, label) = self
            .context
            .scoped(self.responses.fetch_add(1, Ordering::SeqCst), &label);
        let started = Instant::now();
        self.record(|record| {
            record.responses.push(ResponseRecord {
                index,
                label,
                ..ResponseRecord::default()
            });
        });
        self.context
            .transcript(TranscriptRole::User, &format!("[{role}] {text}"));
        let mut stream = TextStream::new(
            self.context.events.clone(),
            self.module_id().to_owned(),
            index,
            false,
        );
        let outcome = session
            .prompt(text, |event| match event {
                TurnEvent::Text(text) => {
                    self.record(|record| {
                        if let Some(response) = record
                            .responses
                            .iter_mut()
                            .find(|response| response.index == index)
                        {
                            response.text.push_str(&text);
                        }
                    });
                    stream.push(&text);
                }
                TurnEvent::Note(note) => {
                    self.context
                        .transcript(TranscriptRole::System, &format!("[{role}] {note}"));
                }
            })
            .await;
        // What streamed last goes before anything said after the turn.
        stream.finish().await;
        let outcome = outcome.map_err(|error| match error {
            AgentError::Cancelled => {
                ActivationError::Failed(format!("{role}: the turn was cancelled"))
            }
            AgentError::Failed(message) => ActivationError::Failed(format!("{role}: {message}")),
        })?;
        self.context.transcript(
            TranscriptRole::Assistant,
            &format!("[{role}] {}", outcome.text),
        );
        let cost = session.turn_cost(outcome.session_cost);
        self.record(|record| {
            if let Some(response) = record
                .responses
                .iter_mut()
                .find(|response| response.index == index)
            {
                response.text.clone_from(&outcome.text);
                response.tokens_in = outcome.tokens_in;
                response.tokens_out = outcome.tokens_out;
                response.duration_ms =
                    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                response.complete = true;
                response.cost = cost;
            }
        });
        if let Ok(mut tally) = self.tally.lock() {
            tally.tokens_in += outcome.tokens_in;
            tally.tokens_out += outcome.tokens_out;
            tally.cost = wire::cost::add(tally.cost, cost);
        }
        self.context
            .emit(RunEvent::ModuleUsage {
                module_id: self.module_id().to_owned(),
                activation: self.context.activation,
                tokens_in: outcome.tokens_in,
                tokens_out: outcome.tokens_out,
                cost,
                tokens_cached: 0,
                finish_reason: None,
            })
            .await;
        self.context
            .spend
            .record(
                self.module_id(),
                self.context.module.display_label(),
                self.context.module.config.budget_usd(),
                cost,
            )
            .map_err(ActivationError::Failed)?;
        Ok((outcome.text, outcome.tests))
    }

    /// The intent gate's question as a turn of its own after the agent's
    /// work is committed (its reply is JSON, not a summary of the work);
    /// the reply is kept for the gate to read.
    pub(super) async fn decide(
        &self,
        session: &AgentSession,
        agent: &CodingAgentAssignment,
        gate: &IntentGate,
    ) -> Result<(), ActivationError> {
        let role = role_of(agent);
        let (reply, _) = self
            .turn(
                session,
                &role,
                format!("{role} · Decision"),
                &gate.instruction(),
            )
            .await?;
        if let Ok(mut decision) = self.decision.lock() {
            *decision = Some(reply);
        }
        Ok(())
    }

    /// The module's validators, run in the workspace once the last agent's
    /// work is committed (PRODUCT §3.11); each failure sends its pattern's
    /// prompt to that agent as a new turn in its session (`role · Fix k`),
    /// commits what it did, and runs them again, up to
    /// `on_failure.max_attempts` fixes.
    pub(super) async fn validate(
        &self,
        session: &AgentSession,
        agent: &CodingAgentAssignment,
        workspace: &Workspace,
    ) -> Result<(), ActivationError> {
        let validation = &self.config.validation;
        if validation.is_empty() {
            return Ok(());
        }
        let role = role_of(agent);
        let most = validation.on_failure.max_attempts;
        let mut done = 0u32;
        loop {
            let round =
                engine::validators::check(self.context, validation, Some(&workspace.path)).await?;
            if let Ok(mut gates) = self.gates.lock() {
                *gates = round.gates;
            }
            let Some(failed) = round.failed else {
                return Ok(());
            };
            if done >= most {
                if let Ok(mut checks_failed) = self.checks_failed.lock() {
                    *checks_failed = Some(engine::validators::exhausted(done, &failed));
                }
                return Ok(());
            }
            done += 1;
            self.context
                .emit(RunEvent::ModuleFixDispatched {
                    module_id: self.module_id().to_owned(),
                    activation: self.context.activation,
                    fix: done,
                    of: most,
                    validator: failed.validator.clone(),
                })
                .await;
            self.turn(
                session,
                &role,
                format!("{role} · Fix {done}"),
                &failed.prompt,
            )
            .await?;
            workspace
                .commit(&format!("{role} ({}), fix {done}", session.agent_name))
                .await
                .map_err(ActivationError::Failed)?;
        }
    }

    /// The agent's prompt, then its re-prompts in the same session; then its
    /// work committed. `last_turn_suffix` goes on the phase's last turn (the
    /// reviewer's decision instruction).
    pub(super) async fn phase(
        &self,
        session: &AgentSession,
        agent: &CodingAgentAssignment,
        workspace: &Workspace,
        prompt: String,
        round: u32,
        last_turn_suffix: Option<&str>,
    ) -> Result<Phase, ActivationError> {
        let role = role_of(agent);
        self.context
            .emit(RunEvent::CodingAgentStarted {
                module_id: self.module_id().to_owned(),
                agent_role: role.clone(),
                agent_name: session.agent_name.clone(),
                round,
            })
            .await;
        let round_suffix = if round > 1 {
            format!(" (round {round})")
        } else {
            String::new()
        };
        let count = agent.re_prompts.len();
        let with_suffix = |text: String, last: bool| match (last, last_turn_suffix) {
            (true, Some(suffix)) => format!("{text}\n\n{suffix}"),
            _ => text,
        };
        let before = workspace.head().await.map_err(ActivationError::Failed)?;
        let (first, mut tests) = self
            .turn(
                session,
                &role,
                format!("{role} · Original{round_suffix}"),
                &with_suffix(prompt, count == 0),
            )
            .await?;
        let mut responses = vec![first];
        for (offset, re_prompt) in agent.re_prompts.iter().enumerate() {
            let index = u32::try_from(offset + 1).unwrap_or(u32::MAX);
            self.context
                .emit(RunEvent::CodingRepromptDispatched {
                    module_id: self.module_id().to_owned(),
                    agent_role: role.clone(),
                    reprompt_index: index,
                })
                .await;
            self.re_prompts.fetch_add(1, Ordering::SeqCst);
            let text = self.context.render(&re_prompt.text)?;
            let (response, more_tests) = self
                .turn(
                    session,
                    &role,
                    format!("{role} · Re-prompt {index}{round_suffix}"),
                    &with_suffix(text, offset + 1 == count),
                )
                .await?;
            tests.extend(more_tests);
            responses.push(response);
            self.context
                .emit(RunEvent::CodingRepromptResponse {
                    module_id: self.module_id().to_owned(),
                    agent_role: role.clone(),
                    reprompt_index: index,
                })
                .await;
        }
        let after = workspace
            .commit(&format!("{role} ({}), round {round}", session.agent_name))
            .await
            .map_err(ActivationError::Failed)?;
        let files = workspace
            .changed_files(&before, &after)
            .await
            .map_err(ActivationError::Failed)?;
        self.context
            .emit(RunEvent::CodingAgentFinished {
                module_id: self.module_id().to_owned(),
                agent_role: role.clone(),
                round,
                files_changed: u32::try_from(files.len()).unwrap_or(u32::MAX),
            })
            .await;
        Ok(Phase {
            role,
            agent_name: session.agent_name.clone(),
            responses,
            files,
            tests,
        })
    }
}

pub(super) fn role_of(agent: &CodingAgentAssignment) -> String {
    let role = agent.role.trim();
    if role.is_empty() {
        "agent".to_owned()
    } else {
        role.to_owned()
    }
}
