//! Decisions on approvals reaching the run (PRODUCT §3.14): one taken on
//! this process goes to the run at once when it runs here; one taken on
//! another process (or while no process ran the run) is read from the
//! database by the process that runs it, at its next lease pass or when it
//! resumes the run.

use engine::resume::{Decided, PendingDecision};
use wire::approval::{CallDecision, Decider, Decision, DecisionRecord};

use super::Runner;
use crate::store::{StoredCallDecision, StoredDecision, TIMED_OUT};

/// A stored decision as the run takes it; `None` when it cannot be read
/// (written by a newer server, say).
pub fn pending(stored: &StoredDecision) -> Option<PendingDecision> {
    Some(PendingDecision {
        module_id: stored.module_id.clone(),
        activation: u32::try_from(stored.activation).ok()?,
        decided: Decided::Approval(DecisionRecord {
            decision: Decision::parse(&stored.decision)?,
            feedback: stored.feedback.clone(),
            value: stored.edited_value.clone(),
            by: Decider::parse(&stored.decided_by)?,
            at: stored.decided_at,
        }),
    })
}

/// A stored decision on a tool call, as its record keeps it; a timeout
/// is a rejection by nobody.
pub fn call_decision(stored: &StoredCallDecision) -> Option<CallDecision> {
    let timed_out = stored.decided_by == TIMED_OUT;
    if timed_out {
        return Some(engine::tools::waiting::timed_out(stored.decided_at));
    }
    Some(CallDecision {
        decision: Decision::parse(&stored.decision)?,
        arguments: match &stored.arguments {
            Some(json) => Some(serde_json::from_str(json).ok()?),
            None => None,
        },
        feedback: stored.feedback.clone(),
        by: Some(Decider::parse(&stored.decided_by)?),
        at: stored.decided_at,
    })
}

/// A stored decision on a tool call as the run takes it.
pub fn pending_call(stored: &StoredCallDecision) -> Option<PendingDecision> {
    Some(PendingDecision {
        module_id: stored.module_id.clone(),
        activation: u32::try_from(stored.activation).ok()?,
        decided: Decided::Call {
            call_id: stored.call_id.clone(),
            decision: call_decision(stored)?,
        },
    })
}

/// Hands the runs this process holds the decisions taken for them
/// elsewhere. A run ignores one it has acted on, so handing one twice (it
/// was taken here too) changes nothing.
pub async fn deliver_pending(runner: &Runner) {
    let decisions = match runner.store.pending_decisions_of(&runner.owner).await {
        Ok(decisions) => decisions,
        Err(error) => {
            tracing::warn!(%error, "decisions could not be read");
            return;
        }
    };
    for stored in decisions {
        if let Some(decision) = pending(&stored) {
            runner.hub.decide(&stored.run_id, decision);
        }
    }
    let calls = match runner.store.pending_call_decisions_of(&runner.owner).await {
        Ok(calls) => calls,
        Err(error) => {
            tracing::warn!(%error, "decisions on tool calls could not be read");
            return;
        }
    };
    for stored in calls {
        if let Some(decision) = pending_call(&stored) {
            runner.hub.decide(&stored.run_id, decision);
        }
    }
}
