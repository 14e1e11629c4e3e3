//! When modules run: entry modules first, a module when its inputs
//! arrive, joins of all and of any (late values recorded and ignored), a
//! loop cable that does not hold up the first activation, and the end of a
//! run with nothing left in flight.

use serde_json::json;
use wire::activation::ActivationStatus;
use wire::event::RunStatus;

use super::{Stepper, cable, chain, graph, has, module, starts, task};

#[test]
fn a_run_announces_itself_and_starts_its_entry_modules_only() {
    let mut run = Stepper::new(chain());
    assert_eq!(
        run.start(),
        [
            "run.started",
            "status running",
            "state",
            "timer RunDeadline",
            "keep in#1",
            "start in#1"
        ]
    );
    assert_eq!(run.state()["input"], "the moon");
    assert_eq!(run.state()["run_id"], "r_test");
}

#[test]
fn a_module_runs_when_its_input_arrives_on_the_value_that_came() {
    let mut run = Stepper::new(chain());
    run.start();
    let lines = run.answer("in");
    assert_eq!(
        lines,
        [
            "module.completed in#1",
            "save in#1 completed (ending)",
            "state",
            "keep a#1",
            "start a#1"
        ]
    );
    let inputs = &run.started("a").inputs;
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0].port, "data_in");
    assert_eq!(inputs[0].source_module, "in");
    assert!(inputs[0].fresh);
    assert_eq!(
        inputs[0].value.as_bundle().unwrap().as_text(),
        "in says hello"
    );
    // What it ran on is in the run state it starts with.
    assert_eq!(run.started("a").state["in.output"], "in says hello");
    assert_eq!(run.state()["in.status"], "completed");
}

#[test]
fn a_run_with_nothing_left_in_flight_completes() {
    let mut run = Stepper::new(chain());
    run.start();
    for id in ["in", "a", "b"] {
        assert!(!run.run.is_over());
        run.answer(id);
    }
    let lines = run.answer("out");
    assert_eq!(starts(&lines), Vec::<&str>::new());
    assert!(run.run.is_over());
    let (lines, ending) = run.close(|| unreachable!("nothing is in flight"));
    assert_eq!(lines, ["run.completed"]);
    assert_eq!(ending.status, RunStatus::Completed);
    assert_eq!(ending.activations, 4);
}

/// "left" and "right" both from the input into "both", which joins `join`.
fn two_into_one(join: &str) -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            task("left", json!({})),
            task("right", json!({})),
            module("both", "step.output", json!({"join": join})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("left", "data_in")),
            cable("c2", ("in", "data_out"), ("right", "data_in")),
            cable("c3", ("left", "data_out"), ("both", "data_in")),
            cable("c4", ("right", "data_out"), ("both", "data_in")),
        ],
    )
}

#[test]
fn joining_all_waits_for_every_cable_in() {
    let mut run = Stepper::new(two_into_one("all"));
    run.start();
    assert_eq!(starts(&run.answer("in")), ["left#1", "right#1"]);
    assert!(starts(&run.answer("right")).is_empty(), "left has not come");
    assert_eq!(starts(&run.answer("left")), ["both#1"]);
    assert_eq!(run.sources("both"), ["left", "right"]);
}

#[test]
fn joining_any_runs_on_the_first_value_and_records_a_late_one_it_ignored_while_running() {
    let mut run = Stepper::new(two_into_one("any"));
    run.start();
    run.answer("in");
    assert_eq!(starts(&run.answer("right")), ["both#1"]);
    assert_eq!(run.sources("both"), ["right"], "only what arrived");
    // The other value comes for the same activation while it runs.
    let lines = run.answer("left");
    assert!(has(&lines, "cable.ignored both#1 c3"), "{lines:?}");
    assert!(starts(&lines).is_empty());
    run.answer("both");
    assert_eq!(run.record("both", 1).ignored_inputs, ["c3"]);
    assert!(run.run.is_over());
}

#[test]
fn a_late_value_for_a_join_any_module_that_has_finished_is_added_to_its_record() {
    let mut run = Stepper::new(two_into_one("any"));
    run.start();
    run.answer("in");
    run.answer("left");
    run.answer("both");
    assert!(run.record("both", 1).ignored_inputs.is_empty());
    let lines = run.answer("right");
    assert!(has(&lines, "cable.ignored both#1 c4"), "{lines:?}");
    assert!(has(&lines, "save both#1 completed"), "{lines:?}");
    assert_eq!(run.record("both", 1).ignored_inputs, ["c4"]);
    assert!(starts(&lines).is_empty(), "it does not run again");
}

/// in → draft → gate; the gate's `revise_out` back to the draft (a loop
/// cable), `approved_out` to "out".
pub fn review_loop(max_rounds: u32) -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            task("draft", json!({})),
            module(
                "gate",
                "step.agent_review_gate",
                json!({"instruction": "Review", "max_rounds": max_rounds, "agent_config": {"provider": "sim"}}),
            ),
            module("out", "step.output", json!({})),
            module("gave_up", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("draft", "data_in")),
            cable("c2", ("draft", "data_out"), ("gate", "data_in")),
            cable("c3", ("gate", "revise_out"), ("draft", "data_in")),
            cable("c4", ("gate", "approved_out"), ("out", "data_in")),
            cable("c5", ("gate", "exhausted_out"), ("gave_up", "data_in")),
        ],
    )
}

#[test]
fn a_loop_cable_does_not_hold_up_the_first_activation_and_brings_the_module_back() {
    let mut run = Stepper::new(review_loop(3));
    run.start();
    assert_eq!(starts(&run.answer("in")), ["draft#1"], "no revision yet");
    assert_eq!(starts(&run.answer("draft")), ["gate#1"]);
    let lines = run.complete("gate", &[("revise_out", "Make it shorter")]);
    assert_eq!(starts(&lines), ["draft#2"]);
    let draft = run.started("draft");
    // It runs on the revision and on the input it had.
    let fresh: Vec<(&str, bool)> = draft
        .inputs
        .iter()
        .map(|input| (input.source_module.as_str(), input.fresh))
        .collect();
    assert_eq!(fresh, [("in", false), ("gate", true)]);
    // What its first activation left is kept as `prev.`.
    assert_eq!(draft.state["prev.draft.output"], "draft says hello");
}

#[test]
fn a_module_that_is_not_reached_never_runs_and_the_run_completes() {
    let mut run = Stepper::new(review_loop(3));
    run.start();
    run.answer("in");
    run.answer("draft");
    let lines = run.complete("gate", &[("approved_out", "Fine")]);
    assert_eq!(starts(&lines), ["out#1"]);
    run.answer("out");
    assert!(run.run.is_over());
    let (lines, ending) = run.close(|| unreachable!());
    assert_eq!(lines, ["run.completed"]);
    assert_eq!(ending.status, RunStatus::Completed);
    assert_eq!(run.record("gate", 1).status, ActivationStatus::Completed);
}
