//! A run from a module (PRODUCT §3.15): the modules upstream of it are
//! taken from a recorded run — announced as reused, recorded as reused,
//! never started — and what follows runs on the values they had sent.

use wire::activation::ActivationStatus;
use wire::event::{RunEvent, RunStatus};

use super::{Stepper, chain, has, limits, starts};
use crate::reuse::Reuse;

/// The chain run to the end once: the run a later one reuses.
fn recorded_chain() -> Stepper {
    let mut first = Stepper::new(chain());
    first.start();
    for module in ["in", "a", "b", "out"] {
        first.answer(module);
    }
    first
}

fn reusing(recorded: &Stepper, modules: &[&str]) -> Reuse {
    Reuse::new(
        "r_first",
        modules.iter().map(|module| (*module).to_owned()),
        recorded.resume().ended,
    )
}

#[test]
fn a_run_from_a_module_reuses_what_is_upstream_and_runs_the_rest() {
    let recorded = recorded_chain();
    let mut run = Stepper::reusing(chain(), reusing(&recorded, &["in", "a"]));
    let lines = run.start();
    assert_eq!(
        starts(&lines),
        ["b#1"],
        "only the chosen module starts: {lines:?}"
    );
    for module in ["in", "a"] {
        assert!(
            has(&lines, &format!("module.reused {module}#1")),
            "{lines:?}"
        );
        assert!(has(&lines, &format!("save {module}#1 reused (ending)")));
        assert!(!has(&lines, &format!("module.completed {module}#1")));
        let record = run.record(module, 1);
        assert_eq!(record.status, ActivationStatus::Reused);
        let from = record.reused_from.as_ref().unwrap();
        assert_eq!((from.run_id.as_str(), from.activation), ("r_first", 1));
        assert_eq!(record.outputs, recorded.record(module, 1).outputs);
    }
    match run.events()[..] {
        [
            RunEvent::RunStarted { .. },
            RunEvent::ModuleReused {
                from_run,
                from_activation,
                ..
            },
            ..,
        ] => {
            assert_eq!((from_run.as_str(), *from_activation), ("r_first", 1));
        }
        ref other => panic!("{other:?}"),
    }
    // b runs on what a had sent, in the state the recorded run had.
    let b = run.started("b");
    assert_eq!(
        b.inputs[0].value.as_bundle().unwrap().as_text(),
        "a says hello"
    );
    assert_eq!(b.state["a.output"], "a says hello");
    run.answer("b");
    run.answer("out");
    let (_, ending) = run.close(|| unreachable!());
    assert_eq!(ending.status, RunStatus::Completed);
    assert_eq!(run.record("out", 1).status, ActivationStatus::Completed);
}

#[test]
fn a_reused_module_the_record_has_no_activation_of_fails_the_run_saying_so() {
    let mut half = Stepper::new(chain());
    half.start();
    half.answer("in");
    let mut run = Stepper::reusing(chain(), reusing(&half, &["in", "a"]));
    let lines = run.start();
    assert!(starts(&lines).is_empty(), "{lines:?}");
    let (_, ending) = run.close(|| unreachable!());
    assert_eq!(ending.status, RunStatus::Failed);
    assert_eq!(
        ending.error.as_deref(),
        Some("\"a\" was to be reused from run r_first, which has no finished activation 1 of it")
    );
}

#[test]
fn a_resumed_run_from_a_module_does_not_count_what_it_reused_against_its_budget() {
    let recorded = recorded_chain();
    let mut run = Stepper::reusing(chain(), reusing(&recorded, &["in", "a"]));
    run.start();
    // It stops with b in flight, and is resumed.
    let mut again = Stepper::with(chain(), limits(), Some(run.resume()));
    let lines = again.start();
    assert!(
        !lines.iter().any(|line| line.starts_with("replayed cost")),
        "{lines:?}"
    );
    assert_eq!(starts(&lines), ["b#1"]);
}
