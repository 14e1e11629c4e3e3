//! One turn in the agent's session: the prompt sent, the updates read as
//! they stream back (the reply's text, tool calls, test runs) until the
//! agent ends the turn, and its token counts read from the answer.

use std::collections::HashMap;
use std::time::Duration;

use agent_client_protocol::Agent;
use agent_client_protocol::util::MatchDispatch;
use agent_client_protocol::v1::schema::{
    CancelNotification, Content, ContentBlock, ContentChunk, PromptResponse, SessionNotification,
    SessionUpdate, StopReason, ToolCallContent, ToolCallStatus, ToolKind,
};
use agent_client_protocol::v1::{ActiveSession, SessionMessage};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::AgentError;
use super::test_runs::{TestRun, record_test};

/// How long a cancelled turn may take to end before the process is stopped.
pub(super) const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// What streams out of a turn while it runs.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnEvent {
    /// Text of the agent's reply.
    Text(String),
    /// A tool call started or finished, a permission decided, an update
    /// skipped: a line for the transcript.
    Note(String),
}

/// A finished turn.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnOutcome {
    /// The agent's reply: its message chunks, joined.
    pub text: String,
    pub stop_reason: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub tests: Vec<TestRun>,
    /// What the session has cost so far in US dollars, when the agent
    /// reports it (ACP `usage_update`, cumulative for the session).
    pub session_cost: Option<f64>,
}

pub(super) struct TurnRequest {
    pub(super) text: String,
    pub(super) events: mpsc::UnboundedSender<TurnEvent>,
    pub(super) done: oneshot::Sender<Result<TurnOutcome, AgentError>>,
}

/// A tool call seen in this turn, kept until it finishes.
#[derive(Default)]
pub(super) struct ToolCallSeen {
    pub(super) title: String,
    pub(super) kind: ToolKind,
    pub(super) raw_input: Option<Value>,
}

pub(super) async fn run_turn(
    session: &mut ActiveSession<'static, Agent>,
    request: &TurnRequest,
    cancel: &CancellationToken,
) -> Result<TurnOutcome, AgentError> {
    session
        .send_prompt_blocks(vec![ContentBlock::from(request.text.clone())])
        .map_err(|error| AgentError::Failed(format!("could not send the prompt: {error}")))?;
    let mut outcome = TurnOutcome::default();
    let mut tool_calls: HashMap<String, ToolCallSeen> = HashMap::new();
    let mut cancelled = false;
    loop {
        let message = if cancelled {
            match tokio::time::timeout(CANCEL_GRACE, session.read_update()).await {
                Ok(message) => message,
                Err(_) => return Err(AgentError::Cancelled),
            }
        } else {
            tokio::select! {
                message = session.read_update() => message,
                () = cancel.cancelled() => {
                    cancelled = true;
                    let _ = session.connection().send_notification_to(
                        Agent,
                        CancelNotification::new(session.session_id().clone()),
                    );
                    continue;
                }
            }
        };
        let message =
            message.map_err(|error| AgentError::Failed(format!("the session ended: {error}")))?;
        match message {
            SessionMessage::Message(dispatch) => {
                let handled = MatchDispatch::new(dispatch.into_raw())
                    .if_notification(async |notification: SessionNotification| {
                        take_update(
                            notification.update,
                            &mut outcome,
                            &mut tool_calls,
                            &request.events,
                        );
                        Ok(())
                    })
                    .await
                    .otherwise_ignore();
                if let Err(error) = handled {
                    tracing::warn!(%error, "skipped a malformed update from the agent");
                    let _ = request.events.send(TurnEvent::Note(format!(
                        "skipped a malformed update: {error}"
                    )));
                }
            }
            SessionMessage::PromptResponse(response) => {
                let response = response.map_err(|error| {
                    AgentError::Failed(format!("the agent refused the prompt: {error}"))
                })?;
                if cancelled || response.stop_reason == StopReason::Cancelled {
                    return Err(AgentError::Cancelled);
                }
                finish(&mut outcome, &response);
                return Ok(outcome);
            }
            _ => {}
        }
    }
}

/// Qwen Code reports each model call's tokens on an empty message chunk
/// (`_meta.usage {inputTokens, outputTokens}`) and none on the prompt's
/// response: a turn's figure is their sum.
fn count_chunk_usage(meta: Option<&serde_json::Map<String, Value>>, outcome: &mut TurnOutcome) {
    let Some(usage) = meta.and_then(|meta| meta.get("usage")) else {
        return;
    };
    let number = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    outcome.tokens_in += number("inputTokens");
    outcome.tokens_out += number("outputTokens");
}

fn finish(outcome: &mut TurnOutcome, response: &PromptResponse) {
    outcome.stop_reason = serde_json::to_value(response.stop_reason)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default();
    if let Some(usage) = &response.usage {
        outcome.tokens_in = usage.input_tokens;
        outcome.tokens_out = usage.output_tokens;
    } else if let Some(count) = response
        .meta
        .as_ref()
        .and_then(|meta| meta.get("quota"))
        .and_then(|quota| quota.get("token_count"))
    {
        // Gemini CLI reports its counts here.
        let number = |key: &str| count.get(key).and_then(Value::as_u64).unwrap_or(0);
        outcome.tokens_in = number("input_tokens").max(number("prompt_tokens"));
        outcome.tokens_out = number("output_tokens").max(number("candidates_tokens"));
    }
}

fn take_update(
    update: SessionUpdate,
    outcome: &mut TurnOutcome,
    tool_calls: &mut HashMap<String, ToolCallSeen>,
    events: &mpsc::UnboundedSender<TurnEvent>,
) {
    match update {
        // Another currency than dollars cannot be added to the run's.
        SessionUpdate::UsageUpdate(usage) => {
            if let Some(cost) = usage.cost
                && cost.currency.eq_ignore_ascii_case("USD")
                && cost.amount.is_finite()
            {
                outcome.session_cost = Some(cost.amount);
            }
        }
        SessionUpdate::AgentMessageChunk(ContentChunk {
            content: ContentBlock::Text(text),
            meta,
            ..
        }) => {
            count_chunk_usage(meta.as_ref(), outcome);
            if !text.text.is_empty() {
                outcome.text.push_str(&text.text);
                let _ = events.send(TurnEvent::Text(text.text));
            }
        }
        SessionUpdate::ToolCall(call) => {
            let id = call.tool_call_id.to_string();
            let _ = events.send(TurnEvent::Note(format!("tool: {}", call.title)));
            let seen = ToolCallSeen {
                title: call.title,
                kind: call.kind,
                raw_input: call.raw_input,
            };
            if matches!(
                call.status,
                ToolCallStatus::Completed | ToolCallStatus::Failed
            ) {
                record_test(&seen, call.status, call.raw_output.as_ref(), outcome);
            }
            tool_calls.insert(id, seen);
        }
        SessionUpdate::ToolCallUpdate(update) => {
            let id = update.tool_call_id.to_string();
            let seen = tool_calls.entry(id).or_default();
            let fields = update.fields;
            if let Some(title) = fields.title {
                seen.title = title;
            }
            if let Some(kind) = fields.kind {
                seen.kind = kind;
            }
            if fields.raw_input.is_some() {
                seen.raw_input = fields.raw_input;
            }
            if let Some(status @ (ToolCallStatus::Completed | ToolCallStatus::Failed)) =
                fields.status
            {
                let note = if status == ToolCallStatus::Completed {
                    format!("tool done: {}", seen.title)
                } else {
                    // Why it failed is what a person reading the transcript needs.
                    let reason = fields
                        .content
                        .iter()
                        .flatten()
                        .filter_map(|content| match content {
                            ToolCallContent::Content(Content {
                                content: ContentBlock::Text(text),
                                ..
                            }) => Some(text.text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join(" ");
                    if reason.is_empty() {
                        format!("tool failed: {}", seen.title)
                    } else {
                        format!("tool failed: {}: {reason}", seen.title)
                    }
                };
                let _ = events.send(TurnEvent::Note(note));
                record_test(seen, status, fields.raw_output.as_ref(), outcome);
            }
        }
        _ => {}
    }
}
