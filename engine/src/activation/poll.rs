//! `step.poll` (Cloche's `poll`): its script, run confined as `shell` says,
//! at once and then `interval_seconds` after each poll ends, until it
//! decides. The seed's table: exit 0 without a `PATCHBAY_RESULT:<name>`
//! line is "not yet"; a marker is the decision whatever the exit status; a
//! non-zero exit without one is a failure (`fail_out`). A poll still
//! running when the next one comes due skips it; the third skip in a row
//! fails the step. Between polls the activation is `waiting`. Its timeout
//! (72 hours unless set) is the scheduler's, like every module's.

use std::time::Duration;

use graph::config::PollConfig;
use graph::kinds::poll::result_port_id;
use graph::ports::{FAIL_OUT, SIGNAL_OUT};
use wire::activation::{ActivationStatus, TranscriptRole};
use wire::content::meta::Polled;
use wire::event::{PollOutcome, RunEvent};

use super::{ActivationContext, ActivationError, ActivationOutput, shell};
use crate::bundle::PortValue;

/// Polls skipped in a row that fail the step (Cloche: an invocation longer
/// than about four intervals).
const SKIPS_THAT_FAIL: u32 = 3;

/// How one poll came out.
enum Outcome {
    Pending,
    Decided(String),
    Failed(String),
}

pub async fn poll(
    context: &ActivationContext,
    config: &PollConfig,
) -> Result<ActivationOutput, ActivationError> {
    let script = shell::script(context, &config.command)?;
    let interval = Duration::from_secs(u64::from(config.interval_seconds.max(1)));
    let declared = config.result_names();
    let mut number = 0u32;
    loop {
        number += 1;
        set_status(context, ActivationStatus::Running, None).await;
        context.transcript(TranscriptRole::User, &format!("(poll {number}) $ {script}"));
        let ran = {
            let environment = [("PATCHBAY_POLL", number.to_string())];
            let invocation = shell::run(context, &script, &environment);
            tokio::pin!(invocation);
            let mut skipped = 0u32;
            loop {
                tokio::select! {
                    ran = &mut invocation => break Some(ran?),
                    () = tokio::time::sleep(interval) => {
                        // The next poll came due while this one runs.
                        skipped += 1;
                        context.emit(polled(context, number, PollOutcome::Skipped, "", 0)).await;
                        if skipped == SKIPS_THAT_FAIL {
                            break None;
                        }
                    }
                }
            }
        };
        let (outcome, text, state_set) = match ran {
            None => (
                Outcome::Failed(format!(
                    "poll {number} was still running after {SKIPS_THAT_FAIL} intervals of {}, so {SKIPS_THAT_FAIL} polls were skipped in a row",
                    graph::attempts::duration_words(config.interval_seconds)
                )),
                String::new(),
                Vec::new(),
            ),
            Some(ran) => {
                let text = ran.text();
                let outcome = match (shell::result_marker(&ran.stdout), ran.success) {
                    (Some(name), _) => Outcome::Decided(name),
                    (None, true) => Outcome::Pending,
                    (None, false) => Outcome::Failed(format!(
                        "poll {number} exited with status {} and reported no decision",
                        ran.exit_code.map_or_else(
                            || "unknown (a signal)".to_owned(),
                            |code| code.to_string()
                        )
                    )),
                };
                (outcome, text, ran.state_set)
            }
        };
        context.transcript(TranscriptRole::Assistant, &text);
        // A decision carries what the script printed; a failure says why
        // first.
        let finish = |port: String, why: Option<&str>, result: &str| {
            let content = match (why, text.trim().is_empty()) {
                (Some(why), true) => why.to_owned(),
                (Some(why), false) => format!("{why}\n\n{text}"),
                (None, true) => result.to_owned(),
                (None, false) => text.clone(),
            };
            let mut bundle = context.text_bundle(content.clone());
            bundle.add_meta(&Polled {
                polls: number,
                result: result.to_owned(),
            });
            ActivationOutput {
                output_text: content,
                ports: vec![
                    (port, PortValue::Bundle(bundle)),
                    (SIGNAL_OUT.to_owned(), context.signal()),
                ],
                receipt: None,
                session_key: None,
                intent: None,
                state_set: state_set.clone(),
                gates: Vec::new(),
                checks_failed: None,
                agent_session: None,
            }
        };
        match outcome {
            Outcome::Pending => {
                context
                    .emit(polled(
                        context,
                        number,
                        PollOutcome::Pending,
                        "",
                        config.interval_seconds,
                    ))
                    .await;
                let next = crate::now_millis() + i64::from(config.interval_seconds.max(1)) * 1000;
                set_status(context, ActivationStatus::Waiting, Some(next)).await;
                tokio::time::sleep(interval).await;
            }
            Outcome::Decided(name) if declared.contains(&name.as_str()) => {
                context
                    .emit(polled(context, number, PollOutcome::Decided, &name, 0))
                    .await;
                return Ok(finish(result_port_id(&name), None, &name));
            }
            Outcome::Decided(name) => {
                let why = format!(
                    "poll {number} reported “{name}”, which \"{}\" does not declare (it declares {})",
                    context.module.display_label(),
                    declared.join(", ")
                );
                context
                    .emit(polled(context, number, PollOutcome::Failed, &name, 0))
                    .await;
                return Ok(finish(FAIL_OUT.to_owned(), Some(&why), ""));
            }
            Outcome::Failed(why) => {
                context
                    .emit(polled(context, number, PollOutcome::Failed, "", 0))
                    .await;
                return Ok(finish(FAIL_OUT.to_owned(), Some(&why), ""));
            }
        }
    }
}

/// Between polls the activation waits: kept in the record as well as said
/// live, so that a reload or the run's page shows the same countdown.
async fn set_status(
    context: &ActivationContext,
    status: ActivationStatus,
    next_poll_at: Option<i64>,
) {
    if let Ok(mut record) = context.record.lock() {
        if record.status == status && record.next_poll_at == next_poll_at {
            return;
        }
        record.status = status;
        record.next_poll_at = next_poll_at;
    }
    context.checkpoint().await;
}

fn polled(
    context: &ActivationContext,
    poll: u32,
    outcome: PollOutcome,
    result: &str,
    next_in_seconds: u32,
) -> RunEvent {
    RunEvent::ModulePolled {
        module_id: context.module.id.clone(),
        activation: context.activation,
        poll,
        outcome,
        result: result.to_owned(),
        next_in_seconds,
    }
}
