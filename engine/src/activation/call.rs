//! Asking the model: one response of an activation (the instruction's, a
//! re-prompt's, a decision's…), streamed into the event log and the record
//! as response `index`, its reply added to the session and the transcript,
//! what it cost counted. With tools offered (PRODUCT §3.17), the response
//! is a turn: the model may ask for tool calls, whose results go back into
//! the same session, and is asked again until it answers
//! (`tool_loop.rs`); the response's text is what it said along the way.

use std::sync::Arc;
use std::time::Instant;

use super::tool_loop::TurnTools;
use super::{ActivationContext, ActivationError, text_stream};
use crate::provider::retry::with_retries;
use crate::provider::{ChatMessage, ChatRequest, ChatResponse, ResponseSchema};
use crate::resume::Taken;
use crate::session::Session;
use crate::tools::turn::{Next, ToolTurn, TurnError};
use wire::activation::{ResponseRecord, ToolCallRecord, TranscriptRole};
use wire::event::RunEvent;

impl ActivationContext {
    /// One response to `session`'s conversation, as response `index`
    /// (`label`), without tools.
    pub async fn call(
        &self,
        provider: &dyn crate::provider::Provider,
        session: &mut Session,
        index: u32,
        label: &str,
        schema: Option<ResponseSchema>,
        settings: &graph::config::AgentConfig,
    ) -> Result<ChatResponse, ActivationError> {
        self.call_with_tools(provider, session, index, label, schema, settings, None)
            .await
    }

    /// One response to `session`'s conversation, as response `index`
    /// (`label`), offering `tools`: the model's calls are made and their
    /// results sent back until it answers. The reply returned has the
    /// turn's text, and its usage and cost summed over every call.
    #[allow(clippy::too_many_arguments)]
    pub async fn call_with_tools(
        &self,
        provider: &dyn crate::provider::Provider,
        session: &mut Session,
        index: u32,
        label: &str,
        schema: Option<ResponseSchema>,
        settings: &graph::config::AgentConfig,
        tools: Option<&TurnTools>,
    ) -> Result<ChatResponse, ActivationError> {
        let (index, label) = self.scoped(index, label);
        // A structured reply answers a gate, not with tool calls.
        let tools = tools.filter(|_| schema.is_none());
        let among_calls = match self
            .recovered
            .as_ref()
            .and_then(|recovered| recovered.take(index, &label))
        {
            Some(Taken::Answered { response, calls }) => {
                return self.recover(session, response, calls, tools).await;
            }
            Some(Taken::AmongCalls { response, calls }) if tools.is_some() => {
                Some((response, calls))
            }
            _ => None,
        };
        let started = Instant::now();
        let mut turn_reply: Option<ChatResponse> = None;
        let mut calls_made = 0_u32;
        let mut earlier_ms = 0;
        match &among_calls {
            Some((response, calls)) => {
                let reply = reply_of(response);
                self.update_record(|record| {
                    record.responses.push(response.clone());
                    record.tool_calls.extend(calls.iter().cloned());
                });
                // Spent before the run stopped: it counts.
                self.spent(&reply).await?;
                turn_reply = Some(reply);
                calls_made = response.calls;
                earlier_ms = response.duration_ms;
            }
            None => self.update_record(|record| {
                record.responses.push(ResponseRecord {
                    index,
                    label: label.clone(),
                    ..ResponseRecord::default()
                });
            }),
        }
        let mut turn =
            tools.map(|tools| ToolTurn::new(self.tool_calls_made(), tools.limit(), tools.names()));
        if let (Some((response, calls)), Some(turn), Some(tools)) = (&among_calls, &mut turn, tools)
        {
            self.take_up(session, &response.text, calls, turn, tools)
                .await;
        }
        loop {
            let reply = self
                .ask(provider, session, index, schema.clone(), settings, tools)
                .await?;
            let (text, calls) = (reply.text.clone(), reply.tool_calls.clone());
            let summed = summed(turn_reply.take(), reply);
            calls_made += 1;
            self.update_record(|record| {
                if let Some(last) = record.responses.last_mut() {
                    last.text.clone_from(&summed.text);
                    last.tokens_in = summed.usage.input_tokens;
                    last.tokens_out = summed.usage.output_tokens;
                    last.duration_ms = earlier_ms
                        + u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    last.cost = summed.cost;
                    last.calls = calls_made;
                }
            });
            turn_reply = Some(summed);
            let next = match &mut turn {
                Some(turn) => turn.on_reply(&calls),
                None => Next::Answered,
            };
            match (next, &mut turn, tools) {
                (Next::Call(to_make), Some(turn), Some(tools)) => {
                    self.exchange(session, index, &text, &calls, to_make, turn, tools)
                        .await?;
                }
                (Next::LimitReached { limit, asked }, Some(turn), _) => {
                    self.not_made(session, index, &text, &calls, turn).await;
                    return Err(TurnError::LimitReached {
                        module: self.module.display_label().to_owned(),
                        asked,
                        limit,
                    }
                    .into());
                }
                _ => {
                    session.messages.push(ChatMessage::assistant(text.clone()));
                    self.transcript(TranscriptRole::Assistant, &text);
                    let reply = turn_reply.unwrap_or_else(|| empty_reply(text));
                    self.update_record(|record| {
                        if let Some(last) = record.responses.last_mut() {
                            last.complete = true;
                        }
                    });
                    return Ok(reply);
                }
            }
        }
    }

    /// One call of the model, streamed into the record's last response
    /// after what it has (a retried attempt starts this call over), its
    /// cost counted.
    async fn ask(
        &self,
        provider: &dyn crate::provider::Provider,
        session: &Session,
        index: u32,
        schema: Option<ResponseSchema>,
        settings: &graph::config::AgentConfig,
        tools: Option<&TurnTools>,
    ) -> Result<ChatResponse, ActivationError> {
        let request = ChatRequest {
            model: session.model.clone(),
            system: session.system.clone(),
            messages: session.messages.clone(),
            temperature: settings.temperature,
            max_tokens: settings.max_tokens,
            response_schema: schema,
            tools: tools.map(TurnTools::definitions).unwrap_or_default(),
        };
        let before = self
            .record
            .lock()
            .ok()
            .and_then(|record| record.responses.last().map(|last| last.text.len()))
            .unwrap_or(0);
        let module_id = self.module.id.clone();
        let response = with_retries(self.retry, |_| {
            self.update_record(|record| {
                if let Some(last) = record.responses.last_mut() {
                    last.text.truncate(before);
                    if !last.text.is_empty() {
                        // What it says after its tool calls, apart.
                        last.text.push_str("\n\n");
                    }
                }
            });
            let mut stream =
                text_stream::TextStream::new(self.events.clone(), module_id.clone(), index, true);
            let record = Arc::clone(&self.record);
            let request = &request;
            async move {
                let mut on_delta = |text: &str| {
                    if let Ok(mut record) = record.lock()
                        && let Some(last) = record.responses.last_mut()
                    {
                        last.text.push_str(text);
                    }
                    stream.push(text);
                };
                let result = provider.complete(request, &mut on_delta).await;
                stream.finish().await;
                result
            }
        })
        .await
        .map_err(|error| TurnError::Provider {
            module: self.module.display_label().to_owned(),
            message: error.message,
        })?;
        let mut response = response;
        response.cost = self.cost_of(session, &response.usage);
        self.spent(&response).await?;
        Ok(response)
    }

    /// The tool calls this activation has made so far.
    fn tool_calls_made(&self) -> u32 {
        self.record.lock().map_or(0, |record| {
            u32::try_from(record.tool_calls.len()).unwrap_or(u32::MAX)
        })
    }

    /// What a call of `session` cost, from its model's price.
    fn cost_of(&self, session: &Session, usage: &crate::provider::Usage) -> Option<f64> {
        let (info, _) = self.providers.get(&session.provider)?;
        let price = info.price(&session.model)?;
        Some(price.cost(
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens,
        ))
    }

    /// Says what a call used and cost, and adds it to the run's spend: an
    /// error when that spends the module's budget.
    async fn spent(&self, response: &ChatResponse) -> Result<(), ActivationError> {
        self.emit(RunEvent::ModuleUsage {
            module_id: self.module.id.clone(),
            activation: self.activation,
            tokens_in: response.usage.input_tokens,
            tokens_out: response.usage.output_tokens,
            cost: response.cost,
            tokens_cached: response.usage.cached_input_tokens,
            finish_reason: response.finish_reason.clone(),
        })
        .await;
        self.spend
            .record(
                &self.module.id,
                self.module.display_label(),
                self.module.config.budget_usd(),
                response.cost,
            )
            .map_err(ActivationError::Failed)
    }

    /// A turn answered before the run stopped, taken from the record: into
    /// the record (with the tool calls it made), the session and the
    /// transcript as if just answered, and its text into the log, since a
    /// client following the run saw the activation start again.
    async fn recover(
        &self,
        session: &mut Session,
        answer: ResponseRecord,
        calls: Vec<ToolCallRecord>,
        tools: Option<&TurnTools>,
    ) -> Result<ChatResponse, ActivationError> {
        self.emit(RunEvent::ModuleOutputDelta {
            module_id: self.module.id.clone(),
            response_index: answer.index,
            text: answer.text.clone(),
        })
        .await;
        // The session has the calls and their results, as the model had
        // them (what it said between them is in its answer's text).
        if !calls.is_empty() {
            let mut asked = Vec::with_capacity(calls.len());
            let mut results = Vec::with_capacity(calls.len());
            for call in &calls {
                let (told, is_error) = match tools {
                    Some(tools) => tools.told(call),
                    None => crate::tools::turn::told_from_record(call),
                };
                self.transcript(
                    TranscriptRole::ToolCall,
                    &format!(
                        "{} {}",
                        call.tool,
                        serde_json::to_string(&call.arguments).unwrap_or_default()
                    ),
                );
                self.transcript(
                    TranscriptRole::ToolResult,
                    &format!("{} → {told}", call.tool),
                );
                asked.push(crate::tools::turn::as_asked(call));
                results.push(crate::provider::ContentPart::ToolResult {
                    call_id: call.call_id.clone(),
                    text: told,
                    is_error,
                });
            }
            session
                .messages
                .push(ChatMessage::assistant_calling("", &asked));
            session.messages.push(ChatMessage::tool_results(results));
        }
        session
            .messages
            .push(ChatMessage::assistant(answer.text.clone()));
        self.transcript(TranscriptRole::Assistant, &answer.text);
        let response = reply_of(&answer);
        self.update_record(|record| {
            record.responses.push(answer);
            record.tool_calls.extend(calls);
        });
        // Spent before the run stopped: it counts, and its budget with it.
        self.spent(&response).await?;
        Ok(response)
    }
}

/// A recorded response as the reply it was: its text, tokens and cost.
fn reply_of(answer: &ResponseRecord) -> ChatResponse {
    ChatResponse {
        text: answer.text.clone(),
        usage: crate::provider::Usage {
            input_tokens: answer.tokens_in,
            output_tokens: answer.tokens_out,
            cached_input_tokens: 0,
        },
        finish_reason: None,
        tool_calls: Vec::new(),
        cost: answer.cost,
    }
}

/// `more` added to the turn's reply so far: its text after what was said
/// before, its tokens and cost summed, its tool calls its own.
fn summed(before: Option<ChatResponse>, more: ChatResponse) -> ChatResponse {
    let Some(mut before) = before else {
        return more;
    };
    if !more.text.is_empty() {
        if !before.text.is_empty() {
            before.text.push_str("\n\n");
        }
        before.text.push_str(&more.text);
    }
    before.usage.input_tokens += more.usage.input_tokens;
    before.usage.output_tokens += more.usage.output_tokens;
    before.usage.cached_input_tokens += more.usage.cached_input_tokens;
    before.cost = wire::cost::add(before.cost, more.cost);
    before.finish_reason = more.finish_reason;
    before.tool_calls = more.tool_calls;
    before
}

fn empty_reply(text: String) -> ChatResponse {
    ChatResponse {
        text,
        usage: crate::provider::Usage::default(),
        finish_reason: None,
        tool_calls: Vec::new(),
        cost: None,
    }
}
