//! How a run ends from outside: a person cancels it, the server stops
//! under it (to be resumed), or an activation's task is lost.

use serde_json::json;
use wire::activation::ActivationStatus;
use wire::event::RunStatus;

use super::routing::work;
use super::{Ending, Stepper, chain, done, output, starts};
use crate::run::Timer;

#[test]
fn cancelling_stops_what_is_in_flight_and_keeps_what_it_produced() {
    let mut run = work(json!({}), &[]);
    let lines = run.step(|run, _| run.on_cancel());
    assert!(lines.is_empty());
    assert!(run.run.is_over() && run.run.is_cancelled());
    // The shell cancels the task; what it had is kept.
    let (lines, ending) = run.close(|| Ending::Cancelled);
    assert_eq!(lines, ["save work#1 cancelled", "run.cancelled"]);
    assert_eq!(ending.status, RunStatus::Cancelled);
    assert_eq!(ending.error, None);
    assert!(run.record("work", 1).finished_at.is_some());
}

#[test]
fn an_activation_that_finished_as_the_run_was_cancelled_keeps_its_result() {
    let mut run = work(json!({}), &[]);
    run.step(|run, _| run.on_cancel());
    let (lines, _) = run.close(|| done(output("work", &[("data_out", "Done in time")])));
    // Said live as it is recorded: completed, not stopped by the cancel.
    assert_eq!(
        lines,
        [
            "module.completed work#1",
            "save work#1 completed",
            "run.cancelled"
        ]
    );
}

/// in → left and in → right: two agent tasks running side by side.
fn side_by_side() -> Stepper {
    use super::{cable, graph, module, task};
    let mut run = Stepper::new(graph(
        vec![
            module("in", "step.input", json!({})),
            task("left", json!({})),
            task("right", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("left", "data_in")),
            cable("c2", ("in", "data_out"), ("right", "data_in")),
        ],
    ));
    run.start();
    run.answer("in");
    run
}

#[test]
fn a_sibling_stopped_by_another_s_failure_is_recorded_cancelled_and_says_nothing_more() {
    let mut run = side_by_side();
    run.end("left", super::error("no"));
    let (lines, ending) = run.close(|| Ending::Cancelled);
    assert_eq!(ending.status, RunStatus::Failed);
    // The live view turns what was running at run.failed into cancelled,
    // as the record says.
    assert_eq!(lines, ["save right#1 cancelled", "run.failed"]);
}

#[test]
fn a_sibling_that_failed_on_its_own_as_the_run_ended_says_so_before_the_run_ends() {
    let mut run = side_by_side();
    run.end("left", super::error("no"));
    let (lines, _) = run.close(|| super::error("also no"));
    assert_eq!(
        lines,
        ["module.failed right#1", "save right#1 failed", "run.failed"]
    );
    assert_eq!(run.record("right", 1).error.as_deref(), Some("also no"));
}

#[test]
fn a_failure_outweighs_a_cancel() {
    let mut run = work(json!({}), &[]);
    run.end("work", super::error("no"));
    run.step(|run, _| run.on_cancel());
    let (lines, ending) = run.close(|| unreachable!());
    assert_eq!(lines, ["run.failed"]);
    assert_eq!(ending.status, RunStatus::Failed);
}

#[test]
fn a_stopping_run_starts_nothing_more_and_ends_unfinished_saying_nothing() {
    let mut run = Stepper::new(chain());
    run.start();
    run.answer("in");
    let lines = run.step(|run, now| run.on_stop(now));
    assert_eq!(lines, ["timer StopGrace"]);
    assert!(!run.run.is_over(), "what is in flight has its grace");
    // a finishes within the grace: kept, and b does not start.
    let lines = run.answer("a");
    assert!(starts(&lines).is_empty(), "{lines:?}");
    assert!(run.run.is_over());
    let (lines, ending) = run.close(|| unreachable!());
    assert!(lines.is_empty(), "no terminal event: {lines:?}");
    assert_eq!(ending.status, RunStatus::Interrupted);
    assert_eq!(
        ending.error.as_deref(),
        Some("the run was stopped, to be resumed")
    );
}

#[test]
fn when_the_stop_grace_is_over_what_is_in_flight_is_kept_as_it_is() {
    let mut run = work(json!({}), &[]);
    run.step(|run, now| run.on_stop(now));
    let lines = run.step(|run, now| run.on_timer(now, Timer::StopGrace));
    assert!(lines.is_empty());
    assert!(run.run.is_over());
    let (lines, ending) = run.close(|| Ending::Cancelled);
    // As it was, to go on from there: running, not finished.
    assert_eq!(lines, ["save work#1 running"]);
    assert_eq!(run.record("work", 1).finished_at, None);
    assert_eq!(run.record("work", 1).status, ActivationStatus::Running);
    assert_eq!(ending.status, RunStatus::Interrupted);
}

#[test]
fn a_cancel_while_stopping_ends_the_run_cancelled() {
    let mut run = work(json!({}), &[]);
    run.step(|run, now| run.on_stop(now));
    run.step(|run, _| run.on_cancel());
    let (lines, ending) = run.close(|| Ending::Cancelled);
    assert_eq!(lines, ["save work#1 cancelled", "run.cancelled"]);
    assert_eq!(ending.status, RunStatus::Cancelled);
}

#[test]
fn a_lost_task_fails_the_run_saying_so() {
    let mut run = work(json!({}), &[]);
    run.in_flight.clear();
    run.step(|run, _| run.on_lost_task("task 7 panicked"));
    assert!(run.run.is_over());
    let (_, ending) = run.close(|| unreachable!());
    assert_eq!(
        ending.error.as_deref(),
        Some("an activation task failed: task 7 panicked")
    );
}
