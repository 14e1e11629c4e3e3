//! A resumed run (PRODUCT §8) is the same value fed the record: what had
//! ended is replayed in the order it was handled, without announcing or
//! recording it again and without running it; what was in flight starts
//! again; the log goes on with `run.resumed`.

use serde_json::json;
use wire::activation::{TranscriptEntry, TranscriptRole};
use wire::event::RunStatus;

use super::{Stepper, cable, chain, done, graph, has, limits, module, output, starts, task};
use crate::bundle::Receipt;

#[test]
fn a_resumed_run_replays_what_had_ended_and_starts_again_what_was_in_flight() {
    let mut first = Stepper::new(chain());
    first.start();
    first.answer("in");
    first.answer("a");
    // It stops here, with b in flight.
    let resume = first.resume();
    let mut again = Stepper::with(chain(), limits(), Some(resume));
    let lines = again.start();
    assert_eq!(
        lines,
        [
            "status running",
            "timer RunDeadline",
            "replayed cost in",
            "state",
            "replayed cost a",
            "state",
            "keep b#1",
            "run.resumed",
            "start b#1"
        ],
        "nothing that had ended is announced, recorded or run again"
    );
    assert!(
        again
            .log
            .iter()
            .all(|command| !matches!(command, crate::run::Command::SaveActivation { .. }))
    );
    // b starts on the value a had sent, in the state the run had.
    let b = again.started("b");
    assert_eq!(
        b.inputs[0].value.as_bundle().unwrap().as_text(),
        "a says hello"
    );
    assert_eq!(b.state["a.output"], "a says hello");
    assert_eq!(b.state["in.status"], "completed");
    match again.events()[..] {
        [wire::event::RunEvent::RunResumed { replayed, .. }] => assert_eq!(*replayed, 2),
        ref other => panic!("{other:?}"),
    }
    // From here on it runs as the run that did not stop.
    again.answer("b");
    again.answer("out");
    first.answer("b");
    first.answer("out");
    let (_, resumed) = again.close(|| unreachable!());
    let (_, whole) = first.close(|| unreachable!());
    assert_eq!(resumed.status, RunStatus::Completed);
    assert_eq!(
        again.record("out", 1).outputs,
        first.record("out", 1).outputs
    );
    assert_eq!(whole.activations, 4);
    assert_eq!(resumed.activations, 4, "replayed activations count");
}

#[test]
fn the_turns_an_activation_in_flight_had_answered_are_handed_to_it() {
    let mut first = Stepper::new(chain());
    first.start();
    first.answer("in");
    let mut resume = first.resume();
    resume.in_progress[0].started_at = 42;
    let mut again = Stepper::with(chain(), limits(), Some(resume));
    let commands = again.run.start(again.now);
    let start = commands
        .iter()
        .find_map(|command| match command {
            crate::run::Command::Start(start) => Some(start),
            _ => None,
        })
        .unwrap();
    assert_eq!(start.module.id, "a");
    assert!(start.recovered.is_some());
    assert_eq!(start.record.started_at, 42, "it started when it first did");
}

/// in → "left" and "right" → "first" (joins any).
fn race() -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            task("left", json!({})),
            task("right", json!({})),
            module("first", "step.output", json!({"join": "any"})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("left", "data_in")),
            cable("c2", ("in", "data_out"), ("right", "data_in")),
            cable("c3", ("left", "data_out"), ("first", "data_in")),
            cable("c4", ("right", "data_out"), ("first", "data_in")),
        ],
    )
}

#[test]
fn endings_are_replayed_in_the_order_they_were_handled() {
    let mut first = Stepper::new(race());
    first.start();
    first.answer("in");
    // right ended before left: first ran on right's value.
    first.answer("right");
    first.answer("left");
    let resume = first.resume();
    let mut again = Stepper::with(race(), limits(), Some(resume));
    let lines = again.start();
    assert_eq!(starts(&lines), ["first#1"]);
    assert_eq!(again.sources("first"), ["right"]);
}

#[test]
fn a_replayed_agent_task_s_session_is_rebuilt_for_the_modules_that_continue_it() {
    let mut first = Stepper::new(chain());
    first.start();
    first.answer("in");
    let mut finished = first.finished("a", done(output("a", &[("data_out", "Hi")])));
    if let crate::run::Ending::Done(result) = &mut finished.ending
        && let Ok(output) = result.as_mut()
    {
        output.session_key = Some("a-session".to_owned());
        output.receipt = Some(Receipt {
            provider: "sim".to_owned(),
            model: "sim-1".to_owned(),
            ..Receipt::default()
        });
    }
    finished.record.transcript = vec![
        TranscriptEntry {
            role: TranscriptRole::User,
            text: "Write".to_owned(),
        },
        TranscriptEntry {
            role: TranscriptRole::Assistant,
            text: "Hi".to_owned(),
        },
    ];
    let commands = first.run.on_finished(first.now, finished);
    let lines = first.feed(commands);
    assert!(
        !lines.iter().any(|line| line.starts_with("session")),
        "live: the session is in the store"
    );
    let mut again = Stepper::with(chain(), limits(), Some(first.resume()));
    let lines = again.start();
    assert!(has(&lines, "session a-session"), "{lines:?}");
    let session = again
        .log
        .iter()
        .find_map(|command| match command {
            crate::run::Command::KeepSession { session, .. } => Some(session),
            _ => None,
        })
        .unwrap();
    assert_eq!(session.messages.len(), 2);
    assert_eq!(session.model, "sim-1");
}

#[test]
fn a_run_stopped_after_its_last_activation_replays_to_the_end_and_completes() {
    let mut first = Stepper::new(chain());
    first.start();
    for id in ["in", "a", "b", "out"] {
        first.answer(id);
    }
    let mut again = Stepper::with(chain(), limits(), Some(first.resume()));
    let lines = again.start();
    assert!(has(&lines, "run.resumed"));
    assert!(starts(&lines).is_empty());
    assert!(again.run.is_over());
    let (lines, ending) = again.close(|| unreachable!());
    assert_eq!(lines, ["run.completed"]);
    assert_eq!(ending.status, RunStatus::Completed);
}

/// The deadline `lines`' run armed.
fn deadline(run: &Stepper) -> Option<std::time::Duration> {
    run.log.iter().find_map(|command| match command {
        crate::run::Command::ArmTimer {
            timer: crate::run::Timer::RunDeadline,
            after,
        } => Some(*after),
        _ => None,
    })
}

#[test]
fn a_resumed_run_has_what_is_left_of_its_maximum_duration_since_it_first_started() {
    const HOUR: i64 = 60 * 60 * 1000;
    let mut first = Stepper::new(chain());
    first.start();
    first.answer("in");
    let mut resume = first.resume();
    // A new stepper's clock starts where the first one's did.
    resume.started_at = Some(1_000 - 23 * HOUR);
    let mut again = Stepper::with(chain(), limits(), Some(resume));
    again.start();
    assert_eq!(deadline(&again), Some(std::time::Duration::from_secs(3600)));
    assert_eq!(
        starts(&again.log.iter().map(super::describe).collect::<Vec<_>>()),
        ["a#1"]
    );
}

#[test]
fn a_resumed_run_whose_maximum_duration_passed_fails_at_once_starting_nothing() {
    const HOUR: i64 = 60 * 60 * 1000;
    let mut first = Stepper::new(chain());
    first.start();
    first.answer("in");
    let mut resume = first.resume();
    resume.started_at = Some(1_000 - 25 * HOUR);
    let mut again = Stepper::with(chain(), limits(), Some(resume));
    let lines = again.start();
    assert!(starts(&lines).is_empty(), "{lines:?}");
    assert_eq!(deadline(&again), None);
    assert!(again.run.is_over());
    let (lines, ending) = again.close(|| unreachable!());
    // What was in flight when it stopped ends interrupted.
    assert_eq!(lines, ["save a#1 interrupted", "run.resumed", "run.failed"]);
    assert_eq!(
        ending.error.as_deref(),
        Some("the run timed out after 86400 s, its maximum duration (max_run_seconds)")
    );
}
