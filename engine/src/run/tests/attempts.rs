//! Attempts (PRODUCT §3.9): a failed attempt runs again on the same values
//! with what it left (the retry variables), after its backoff; used
//! attempts give up on `give_up_out` or fail the run; a failed check is a
//! failure only to a module that retries; a loop that comes back to a
//! module whose attempts are used gives up without running.

use serde_json::json;
use wire::activation::{ActivationStatus, ResponseRecord};
use wire::event::RunEvent;

use super::routing::work;
use super::{Stepper, cable, done, error, graph, has, module, output, starts, task};
use crate::attempts::NOT_A_FAILURE;

fn retrying(run: &Stepper) -> Vec<(u32, u32, u32)> {
    run.events()
        .into_iter()
        .filter_map(|event| match event {
            RunEvent::ModuleRetrying {
                attempt,
                max_attempts,
                delay_seconds,
                ..
            } => Some((*attempt, *max_attempts, *delay_seconds)),
            _ => None,
        })
        .collect()
}

/// Fails `work`'s attempt in flight, with `answered` as what it had
/// answered before it failed.
fn fail_with_partial(run: &mut Stepper, answered: &str, why: &str) -> Vec<String> {
    let mut finished = run.finished("work", error(why));
    finished.record.responses.push(ResponseRecord {
        text: answered.to_owned(),
        complete: true,
        ..ResponseRecord::default()
    });
    run.now += 100;
    let commands = run.run.on_finished(run.now, finished);
    run.feed(commands)
}

#[test]
fn a_failed_attempt_runs_again_on_the_same_values_with_what_it_left() {
    let mut run = work(json!({"max_attempts": 3, "backoff_seconds": 5}), &[]);
    let lines = fail_with_partial(&mut run, "Half an answer", "the provider timed out");
    assert!(has(&lines, "module.failed work#1"), "{lines:?}");
    assert!(has(&lines, "module.retrying work#1"), "{lines:?}");
    assert_eq!(starts(&lines), ["work#2"]);
    let start = run.started("work");
    assert_eq!(start.delay_seconds, 5);
    let attempt = start.attempt.clone().unwrap();
    assert_eq!(attempt.of, 3);
    assert!(attempt.retried && !attempt.repeat);
    assert_eq!(attempt.error, "the provider timed out");
    assert_eq!(attempt.previous_output, "Half an answer");
    // It runs on the value it had, though nothing new arrived.
    assert_eq!(start.inputs.len(), 1);
    assert!(!start.inputs[0].fresh);
    let retried = run.record("work", 1).retried.clone().unwrap();
    assert_eq!((retried.next_attempt, retried.max_attempts), (2, 3));
    assert_eq!(run.state()["work.status"], "retrying");
    // A failure of a module that retries is not sent on.
    assert!(run.record("work", 1).outputs.is_empty());
}

#[test]
fn the_backoff_doubles_for_each_attempt_after_the_second() {
    let mut run = work(json!({"max_attempts": 4, "backoff_seconds": 5}), &[]);
    for _ in 0..3 {
        run.end("work", error("no"));
    }
    assert_eq!(retrying(&run), [(2, 4, 5), (3, 4, 10), (4, 4, 20)]);
    run.answer("work");
    assert_eq!(run.record("work", 4).status, ActivationStatus::Completed);
    assert!(run.record("work", 4).retried.is_none());
}

#[test]
fn used_attempts_give_up_on_give_up_out_when_it_is_wired() {
    let mut run = work(json!({"max_attempts": 2}), &["give_up_out", "error_out"]);
    run.end("work", error("no"));
    let lines = run.end("work", error("still no"));
    assert!(has(&lines, "module.gave_up work#2"), "{lines:?}");
    // Not error_out: a failure of a module that retries gives up.
    assert_eq!(starts(&lines), ["after_give_up#1"]);
    let record = run.record("work", 2);
    assert_eq!(record.gave_up.as_deref(), Some("still no"));
    let given = record.outputs["give_up_out"].as_bundle().unwrap();
    assert_eq!(
        given.as_text(),
        "\"work\" gave up after 2 attempts: still no"
    );
    assert_eq!(given.meta["give_up"], true);
    assert_eq!(given.meta["attempts"], 2);
    assert_eq!(run.state()["work.status"], "gave_up");
}

#[test]
fn used_attempts_with_nothing_wired_fail_the_run_naming_the_module() {
    let mut run = work(json!({"max_attempts": 2}), &[]);
    run.end("work", error("no"));
    run.end("work", error("still no"));
    assert!(run.run.is_over());
    let (_, ending) = run.close(|| unreachable!());
    assert_eq!(
        ending.error.as_deref(),
        Some("\"work\" gave up after 2 attempts: still no")
    );
}

/// in → test (a command with `max_attempts`), its `fail_out` to "failed".
fn test_command(max_attempts: u32) -> Stepper {
    let mut run = Stepper::new(graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "test",
                "step.command",
                json!({"command": "sh test.sh", "max_attempts": max_attempts}),
            ),
            module("failed", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("test", "data_in")),
            cable("c2", ("test", "fail_out"), ("failed", "data_in")),
        ],
    ));
    run.start();
    run.answer("in");
    run
}

#[test]
fn a_failed_check_is_a_failure_only_to_a_module_that_retries() {
    // Retrying: the check's output is why it runs again.
    let mut run = test_command(2);
    let lines = run.complete("test", &[("fail_out", "3 tests failed")]);
    assert_eq!(starts(&lines), ["test#2"]);
    assert_eq!(
        run.started("test").attempt.as_ref().unwrap().error,
        "3 tests failed"
    );
    // Not retrying: a result like any other, which goes where it is wired.
    let mut run = test_command(1);
    let lines = run.complete("test", &[("fail_out", "3 tests failed")]);
    assert_eq!(starts(&lines), ["failed#1"]);
}

#[test]
fn validators_that_still_fail_give_up_even_without_attempts() {
    let validators = json!([{"name": "json", "command": "jq . out.json"}]);
    let mut run = work(json!({"validators": validators}), &["give_up_out"]);
    let mut checked = output("work", &[("data_out", "An answer")]);
    checked.checks_failed = Some("the answer is not JSON".to_owned());
    let lines = run.end("work", done(checked));
    assert!(has(&lines, "module.completed work#1"), "{lines:?}");
    assert!(has(&lines, "module.gave_up work#1"), "{lines:?}");
    assert_eq!(
        starts(&lines),
        ["after_give_up#1"],
        "not done: nothing is sent on"
    );
}

/// in → write → check (a command); its `fail_out` loops back to write, which has
/// `max_attempts` attempts.
fn check_loop(max_attempts: u32) -> Stepper {
    let mut run = Stepper::new(graph(
        vec![
            module("in", "step.input", json!({})),
            task("write", json!({"max_attempts": max_attempts})),
            module("check", "step.command", json!({"command": "sh test.sh"})),
            module("stuck", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("write", "data_in")),
            cable("c2", ("write", "data_out"), ("check", "data_in")),
            cable("c3", ("check", "fail_out"), ("write", "data_in")),
            cable("c4", ("write", "give_up_out"), ("stuck", "data_in")),
        ],
    ));
    run.start();
    run.answer("in");
    run
}

#[test]
fn a_loop_that_brings_new_input_is_a_later_attempt_with_what_the_one_before_left() {
    let mut run = check_loop(3);
    run.complete("write", &[("data_out", "Version 1")]);
    let lines = run.complete("check", &[("fail_out", "a test failed")]);
    assert_eq!(starts(&lines), ["write#2"]);
    let attempt = run.started("write").attempt.clone().unwrap();
    assert!(!attempt.retried, "new input, not the same values");
    assert_eq!(attempt.error, "a test failed");
    assert_eq!(attempt.previous_output, "Version 1");
    assert_eq!(attempt.of, 3);
}

#[test]
fn a_loop_brought_by_no_failure_says_so_in_its_error() {
    let mut run = Stepper::new(graph(
        vec![
            module("in", "step.input", json!({})),
            task("write", json!({"max_attempts": 3})),
            module(
                "check",
                "step.agent_review_gate",
                json!({"instruction": "Check"}),
            ),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("write", "data_in")),
            cable("c2", ("write", "data_out"), ("check", "data_in")),
            cable("c3", ("check", "data_out"), ("write", "data_in")),
        ],
    ));
    run.start();
    run.answer("in");
    run.answer("write");
    run.answer("check");
    assert_eq!(
        run.started("write").attempt.as_ref().unwrap().error,
        NOT_A_FAILURE
    );
}

#[test]
fn a_loop_back_to_a_module_whose_attempts_are_used_gives_up_without_running() {
    let mut run = check_loop(2);
    run.answer("write");
    run.complete("check", &[("fail_out", "a test failed")]);
    run.answer("write");
    let lines = run.complete("check", &[("fail_out", "it still fails")]);
    // write does not run a third time: it gives up, and the loop ends.
    assert!(has(&lines, "module.gave_up write#2"), "{lines:?}");
    assert_eq!(starts(&lines), ["stuck#1"]);
    let record = run.record("write", 2);
    assert_eq!(
        record.gave_up.as_deref(),
        Some("its 2 attempts are used, and the loop came back to it with: it still fails")
    );
    // Its record is the one of its last attempt, which completed.
    assert_eq!(record.status, ActivationStatus::Completed);
}

#[test]
fn nothing_more_starts_once_a_give_up_on_arrival_has_failed_the_run() {
    // The gate sends its revision back to write, whose attempts are used
    // and whose giving up nothing takes, and its review on to "log".
    let mut run = Stepper::new(graph(
        vec![
            module("in", "step.input", json!({})),
            task("write", json!({"max_attempts": 2})),
            module(
                "gate",
                "step.agent_review_gate",
                json!({"instruction": "Check", "max_rounds": 5}),
            ),
            task("log", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("write", "data_in")),
            cable("c2", ("write", "data_out"), ("gate", "data_in")),
            cable("c3", ("gate", "revise_out"), ("write", "data_in")),
            cable("c4", ("gate", "data_out"), ("log", "data_in")),
        ],
    ));
    run.start();
    run.answer("in");
    run.answer("write");
    run.complete("gate", &[("revise_out", "Again"), ("data_out", "Round 1")]);
    run.answer("log");
    run.answer("write");
    let lines = run.complete("gate", &[("revise_out", "Again"), ("data_out", "Round 2")]);
    assert!(has(&lines, "module.gave_up write#2"), "{lines:?}");
    assert!(run.run.is_over());
    assert!(
        starts(&lines).is_empty(),
        "the run has failed: log must not start again: {lines:?}"
    );
    let (_, ending) = run.close(|| unreachable!("nothing is in flight"));
    assert_eq!(
        ending.error.as_deref(),
        Some(
            "\"write\" gave up after 2 attempts: its 2 attempts are used, and the loop came back to it with: Again"
        )
    );
}
