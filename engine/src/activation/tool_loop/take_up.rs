//! A turn taken up among its tool calls (PRODUCT §3.17, §8): after the
//! server running it stopped, or once people decided on the calls it
//! waited on. The calls that had ended go back to the model with their
//! results; each other is made, or told what came of it, as
//! [`Resumption`] says: never made twice unseen, never made unapproved.

use wire::activation::{ToolCallRecord, ToolOutcome, TranscriptRole};

use super::{TurnTools, shown_arguments};
use crate::activation::ActivationContext;
use crate::provider::{ChatMessage, ContentPart, ToolCall};
use crate::session::Session;
use crate::tools::turn::{CallEnd, Next, Resumption, ToolTurn};
use crate::tools::waiting::Outcome;

impl ActivationContext {
    /// Takes up a turn the activation's last run stopped in, among its
    /// tool calls (`calls`, from the record, already back in it): the
    /// session gets what the model had said, the calls that had ended with
    /// their results, then the calls in flight, of which a read-only tool
    /// is made again and any other is told it was interrupted. The model
    /// is asked next, as after any exchange.
    pub(in crate::activation) async fn take_up(
        &self,
        session: &mut Session,
        text: &str,
        calls: &[ToolCallRecord],
        turn: &mut ToolTurn,
        tools: &TurnTools,
    ) {
        let (settled, pending): (Vec<&ToolCallRecord>, Vec<&ToolCallRecord>) = calls
            .iter()
            .partition(|call| !matches!(call.outcome, ToolOutcome::Pending | ToolOutcome::Waiting));
        if !text.is_empty() {
            self.transcript(TranscriptRole::Assistant, text);
        }
        let mut said = text;
        if !settled.is_empty() {
            let asked: Vec<ToolCall> = settled
                .iter()
                .map(|call| crate::tools::turn::as_asked(call))
                .collect();
            session
                .messages
                .push(ChatMessage::assistant_calling(said, &asked));
            said = "";
            let mut results = Vec::with_capacity(settled.len());
            for call in &settled {
                let (told, is_error) = tools.told(call);
                self.transcript_call(call);
                self.transcript(
                    TranscriptRole::ToolResult,
                    &format!("{} → {told}", call.tool),
                );
                results.push(ContentPart::ToolResult {
                    call_id: call.call_id.clone(),
                    text: told,
                    is_error,
                });
            }
            session.messages.push(ChatMessage::tool_results(results));
        }
        if pending.is_empty() {
            return;
        }
        let in_flight: Vec<(ToolCall, Resumption)> = pending
            .iter()
            .map(|call| {
                (
                    crate::tools::turn::as_asked(call),
                    self.resumption(call, tools),
                )
            })
            .collect();
        self.made_as_decided(&in_flight, tools);
        let asked: Vec<ToolCall> = in_flight.iter().map(|(call, _)| call.clone()).collect();
        session
            .messages
            .push(ChatMessage::assistant_calling(said, &asked));
        for call in &pending {
            self.transcript_call(call);
        }
        let Next::Call(to_make) = turn.resume(in_flight) else {
            return;
        };
        for (call, end) in turn.ends() {
            if matches!(end, CallEnd::Interrupted | CallEnd::Declined(_)) {
                self.said_how_it_ended(&call, &end, 0).await;
            }
        }
        self.make_calls(&to_make, turn, tools).await;
        self.answered(session, turn);
        self.checkpoint().await;
    }

    /// What comes of a call the turn is taken up with: one that waited
    /// for a person, as they decided; one in flight when the server
    /// stopped, made again only when that is harmless.
    fn resumption(&self, call: &ToolCallRecord, tools: &TurnTools) -> Resumption {
        if call.outcome == ToolOutcome::Waiting {
            return match crate::tools::waiting::outcome(call) {
                Outcome::Approved { arguments } => {
                    let mut made = crate::tools::turn::as_asked(call);
                    if let Some(arguments) = arguments {
                        made.arguments = arguments;
                    }
                    Resumption::Approved(made)
                }
                Outcome::Declined(told) => Resumption::Declined(told),
            };
        }
        if self.may_call_again(call, tools) {
            Resumption::Again
        } else {
            Resumption::Interrupted
        }
    }

    /// Approved calls are in flight again as they are made: a crash from
    /// here does not make one twice unseen. The record shows the
    /// arguments they are made with.
    fn made_as_decided(&self, taken_up: &[(ToolCall, Resumption)], tools: &TurnTools) {
        for (_, resumption) in taken_up {
            let Resumption::Approved(made) = resumption else {
                continue;
            };
            let shown = tools
                .offered(&made.name)
                .map(|offered| shown_arguments(made, offered));
            self.update_call(&made.id, |kept| {
                kept.outcome = ToolOutcome::Pending;
                if let Some(shown) = shown {
                    kept.arguments = shown;
                }
            });
        }
    }

    /// Whether a call in flight when the server stopped may be made
    /// twice: a server the operator trusts marks its tool read-only (a
    /// server's own word is only a claim).
    fn may_call_again(&self, call: &ToolCallRecord, tools: &TurnTools) -> bool {
        let Some(offered) = tools.offered(&call.tool) else {
            return false;
        };
        let servers = self.tools.servers();
        servers
            .server(&offered.server)
            .is_some_and(|server| server.trusted)
            && servers
                .tool(&offered.server, &offered.tool)
                .is_some_and(|info| info.annotations.read_only == Some(true))
    }
}
