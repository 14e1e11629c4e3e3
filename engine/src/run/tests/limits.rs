//! What bounds a run: budgets, timeouts (an activation's and the run's),
//! revision loops bounded by `max_rounds`, the activation limit, and the
//! concurrency slots that ready modules queue for.

use std::time::Duration;

use serde_json::json;
use wire::activation::ActivationStatus;
use wire::event::RunStatus;

use super::readiness::review_loop;
use super::routing::work;
use super::{Ending, Stepper, cable, error, graph, has, limits, module, starts, task};
use crate::run::Timer;

#[test]
fn a_spent_budget_fails_the_run_and_stops_what_is_in_flight_keeping_what_it_produced() {
    let mut run = work(json!({}), &[]);
    let reason =
        "budget_exceeded: the run's budget of $0.0100 is spent ($0.0120: \"work\" $0.0120)";
    let lines = run.step(|run, _| run.on_budget_spent(Some(reason.to_owned())));
    assert!(lines.is_empty(), "{lines:?}");
    assert!(run.run.is_over());
    let (lines, ending) = run.close(|| Ending::Cancelled);
    assert_eq!(lines, ["save work#1 cancelled", "run.failed"]);
    assert_eq!(ending.status, RunStatus::Failed);
    assert_eq!(ending.error.as_deref(), Some(reason));
    assert!(run.record("work", 1).finished_at.is_some());
}

#[test]
fn a_module_that_spent_its_budget_is_not_tried_again() {
    let mut run = work(json!({"max_attempts": 3}), &[]);
    let lines = run.end(
        "work",
        error("budget_exceeded: \"work\" spent $0.0025 of its budget of $0.0020"),
    );
    assert!(starts(&lines).is_empty(), "{lines:?}");
    assert!(has(&lines, "module.gave_up work#1"));
    let (_, ending) = run.close(|| unreachable!());
    assert!(
        ending
            .error
            .unwrap()
            .starts_with("\"work\" gave up after 1 attempt: budget_exceeded:")
    );
}

#[test]
fn a_kind_timeout_is_handed_to_the_activation() {
    let run = work(json!({"timeout_seconds": 30}), &[]);
    assert_eq!(run.started("work").timeout_seconds, Some(30));
    // Without one, its kind's default: half an hour for an agent task.
    let run = work(json!({}), &[]);
    assert_eq!(run.started("work").timeout_seconds, Some(1800));
}

#[test]
fn a_timed_out_attempt_goes_to_timeout_out_first_then_to_error_out() {
    let mut run = work(
        json!({"timeout_seconds": 30}),
        &["timeout_out", "error_out"],
    );
    let lines = run.end("work", Ending::TimedOut(30));
    assert_eq!(starts(&lines), ["after_timeout#1"]);
    let record = run.record("work", 1);
    assert_eq!(
        record.error.as_deref(),
        Some("\"work\" timed out after 30 s")
    );
    let sent = record.outputs["timeout_out"].as_bundle().unwrap();
    assert_eq!(sent.meta["timeout"], true);
    assert_eq!(sent.meta["error"], true);

    let mut run = work(json!({"timeout_seconds": 30}), &["error_out"]);
    let lines = run.end("work", Ending::TimedOut(30));
    assert_eq!(starts(&lines), ["after_error#1"]);

    let mut run = work(json!({"timeout_seconds": 30}), &[]);
    run.end("work", Ending::TimedOut(30));
    let (_, ending) = run.close(|| unreachable!());
    assert_eq!(
        ending.error.as_deref(),
        Some("\"work\" timed out after 30 s")
    );
}

#[test]
fn the_run_deadline_fails_the_run_with_its_maximum_duration() {
    let mut run = work(json!({}), &[]);
    let lines = run.step(|run, now| run.on_timer(now, Timer::RunDeadline));
    assert!(lines.is_empty());
    assert!(run.run.is_over());
    let (lines, ending) = run.close(|| Ending::Cancelled);
    assert_eq!(lines, ["save work#1 cancelled", "run.failed"]);
    assert_eq!(
        ending.error.as_deref(),
        Some("the run timed out after 86400 s, its maximum duration (max_run_seconds)")
    );
}

#[test]
fn a_revision_loop_runs_each_round_on_the_next_activation_until_the_gate_is_exhausted() {
    let mut run = Stepper::new(review_loop(3));
    run.start();
    run.answer("in");
    for round in 1..=3 {
        run.answer("draft");
        // The gate's activation is its round: what `max_rounds` is held to.
        assert_eq!(run.started("gate").activation, round);
        if round < 3 {
            let lines = run.complete("gate", &[("revise_out", "Again")]);
            assert_eq!(starts(&lines), [format!("draft#{}", round + 1)]);
        }
    }
    let lines = run.complete("gate", &[("exhausted_out", "Not approved after 3 rounds.")]);
    assert_eq!(starts(&lines), ["gave_up#1"]);
    run.answer("gave_up");
    let (lines, ending) = run.close(|| unreachable!());
    assert_eq!(lines, ["run.completed"]);
    assert_eq!(ending.activations, 1 + 3 + 3 + 1);
}

#[test]
fn a_loop_that_never_ends_stops_at_the_activation_limit_naming_the_loop() {
    let mut run = Stepper::with(
        review_loop(100),
        crate::run::Limits {
            max_activations: 6,
            ..limits()
        },
        None,
    );
    run.start();
    run.answer("in");
    for _ in 0..3 {
        run.answer("draft");
        if run.in_flight.is_empty() {
            break;
        }
        run.complete("gate", &[("revise_out", "Again")]);
    }
    assert!(run.run.is_over());
    let (_, ending) = run.close(|| unreachable!());
    assert_eq!(
        ending.error.as_deref(),
        Some(
            "step_transition_limit_exceeded: the run reached its limit of 6 activations (max_activations); the loop went through \"draft\" (3 times), \"gate\" (2 times)"
        )
    );
    assert_eq!(ending.activations, 6);
}

/// in → "a", "b" and "c" side by side.
fn fan_out() -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            task("a", json!({})),
            task("b", json!({})),
            task("c", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("a", "data_in")),
            cable("c2", ("in", "data_out"), ("b", "data_in")),
            cable("c3", ("in", "data_out"), ("c", "data_in")),
        ],
    )
}

fn one_slot() -> Stepper {
    let mut run = Stepper::with(
        fan_out(),
        crate::run::Limits {
            max_concurrency: 1,
            ..limits()
        },
        None,
    );
    run.start();
    run
}

#[test]
fn what_has_no_slot_is_recorded_queued_once_and_starts_when_one_frees() {
    let mut run = one_slot();
    let lines = run.answer("in");
    assert_eq!(
        lines[lines.len() - 6..],
        [
            "keep a#1",
            "start a#1",
            "save b#1 queued",
            "module.queued b#1",
            "save c#1 queued",
            "module.queued c#1"
        ]
    );
    let lines = run.answer("a");
    assert_eq!(starts(&lines), ["b#1"]);
    assert!(
        !lines.iter().any(|line| line.contains("queued")),
        "{lines:?}"
    );
    assert_eq!(starts(&run.answer("b")), ["c#1"]);
    run.answer("c");
    assert!(run.run.is_over());
}

#[test]
fn what_waits_for_a_slot_when_the_run_ends_is_recorded_as_never_started() {
    let mut run = one_slot();
    run.answer("in");
    run.step(|run, _| run.on_cancel());
    let (lines, ending) = run.close(|| Ending::Cancelled);
    assert_eq!(
        lines,
        [
            "save a#1 cancelled",
            "save b#1 cancelled",
            "save c#1 cancelled",
            "run.cancelled"
        ]
    );
    assert_eq!(ending.status, RunStatus::Cancelled);
    assert_eq!(
        run.record("b", 1).error.as_deref(),
        Some("the run ended before it had a slot to start in")
    );
    assert_eq!(run.record("b", 1).status, ActivationStatus::Cancelled);
}

#[test]
fn the_deadline_and_the_stop_grace_are_the_engine_s() {
    let mut run = Stepper::with(
        fan_out(),
        crate::run::Limits {
            max_run_duration: Duration::from_secs(60),
            stop_grace: Duration::from_secs(3),
            ..limits()
        },
        None,
    );
    run.start();
    let deadline = run.log.iter().find_map(|command| match command {
        crate::run::Command::ArmTimer {
            timer: Timer::RunDeadline,
            after,
        } => Some(*after),
        _ => None,
    });
    assert_eq!(deadline, Some(Duration::from_secs(60)));
    let commands = run.run.on_stop(run.now);
    assert!(matches!(
        commands.as_slice(),
        [crate::run::Command::ArmTimer {
            timer: Timer::StopGrace,
            after
        }] if *after == Duration::from_secs(3)
    ));
}
