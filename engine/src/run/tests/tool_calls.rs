//! Tool calls that wait for a person (PRODUCT §3.17): the agent task stops
//! with no task and no slot while people decide, each call is decided
//! once, the last decision takes the activation up from its record with
//! what it started with, a call's deadline is a timer, and a resume waits
//! again where the calls waited.

use std::time::Duration;

use serde_json::json;
use wire::activation::{ActivationStatus, ResponseRecord, ToolCallRecord, ToolOutcome};
use wire::approval::{CallDecision, CallWait, Decider, Decision};
use wire::event::RunStatus;

use super::{Stepper, cable, graph, has, limits, module, starts, task};
use crate::resume::{Decided, PendingDecision};
use crate::run::{Command, Ending, Finished, Limits, Paused, Timer};

/// in → draft → out, and "side" beside the draft.
fn tool_graph() -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            task("draft", json!({})),
            task("side", json!({})),
            module("out", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("draft", "data_in")),
            cable("c2", ("in", "data_out"), ("side", "data_in")),
            cable("c3", ("draft", "data_out"), ("out", "data_in")),
        ],
    )
}

fn waiting_call(id: &str, deadline_at: Option<i64>) -> ToolCallRecord {
    ToolCallRecord {
        call_id: id.to_owned(),
        server: "refunds".to_owned(),
        tool: "pay".to_owned(),
        arguments: json!({"amount": 20}),
        outcome: ToolOutcome::Waiting,
        waits: Some(CallWait {
            reason: "Calls wait for you: it is not marked read-only".to_owned(),
            deadline_at,
        }),
        ..ToolCallRecord::default()
    }
}

/// The draft's activation in flight stops with `calls` waiting.
fn pause(run: &mut Stepper, calls: Vec<ToolCallRecord>) -> Vec<String> {
    run.now += 100;
    let start = run.started("draft");
    let paused = Paused {
        module: start.module.clone(),
        attempt: start.attempt.clone(),
        inputs: start.inputs.clone(),
        state: std::sync::Arc::clone(&start.state),
        timeout_seconds: start.timeout_seconds,
        reused_earlier: None,
    };
    let Finished {
        module,
        activation,
        mut record,
        ..
    } = run.finished("draft", Ending::Cancelled);
    record.responses.push(ResponseRecord {
        index: 0,
        label: "Original".to_owned(),
        text: "Refunding.".to_owned(),
        ..ResponseRecord::default()
    });
    record.tool_calls = calls;
    let finished = Finished {
        module,
        activation,
        ending: Ending::WaitsForCalls(Box::new(paused)),
        record,
    };
    let commands = run.run.on_finished(run.now, finished);
    run.feed(commands)
}

fn by_editor(decision: Decision) -> CallDecision {
    CallDecision {
        decision,
        arguments: None,
        feedback: String::new(),
        by: Some(Decider::Editor),
        at: 5_000,
    }
}

fn decide(run: &mut Stepper, call_id: &str, decision: CallDecision) -> Vec<String> {
    run.now += 100;
    run.step(|run, now| run.on_call_decided(now, "draft", 1, call_id, decision))
}

#[test]
fn waiting_calls_hold_no_slot_and_the_last_decision_takes_the_task_up_with_what_it_started_with() {
    let one_slot = Limits {
        max_concurrency: 1,
        ..limits()
    };
    let mut run = Stepper::with(tool_graph(), one_slot, None);
    run.start();
    run.answer("in");
    let sources = run.sources("draft").join(",");
    let lines = pause(
        &mut run,
        vec![waiting_call("a", None), waiting_call("b", None)],
    );
    assert!(has(&lines, "module.waiting draft#1"), "{lines:?}");
    assert!(has(&lines, "save draft#1 waiting"), "{lines:?}");
    // Its slot went to the module beside it.
    assert_eq!(starts(&lines), ["side#1"]);
    let record = run.record("draft", 1);
    assert_eq!(record.status, ActivationStatus::Waiting);
    let lines = run.answer("side");
    assert!(has(&lines, "status waiting"), "{lines:?}");

    // One call decided: the other still waits, nothing starts.
    let lines = decide(&mut run, "a", by_editor(Decision::Approve));
    assert!(has(&lines, "module.decided draft#1"), "{lines:?}");
    assert!(starts(&lines).is_empty(), "{lines:?}");
    assert!(run.record("draft", 1).tool_calls[0].decision.is_some());
    // A second decision on the same call changes nothing.
    let lines = decide(&mut run, "a", by_editor(Decision::Reject));
    assert!(lines.is_empty(), "{lines:?}");

    // The last: taken up, as it started, with its record to go on from.
    let lines = decide(&mut run, "b", by_editor(Decision::Reject));
    assert_eq!(starts(&lines), ["draft#1"], "{lines:?}");
    assert!(has(&lines, "status running"), "{lines:?}");
    assert_eq!(run.sources("draft").join(","), sources);
    let taken_up = run
        .log
        .iter()
        .rev()
        .find_map(|command| match command {
            Command::Start(start) if start.module.id == "draft" => Some(start),
            _ => None,
        })
        .unwrap();
    assert!(taken_up.recovered.is_some());
    run.answer("draft");
    run.answer("out");
    assert!(run.run.is_over());
    let (_, ending) = run.close(|| unreachable!());
    assert_eq!(ending.status, RunStatus::Completed);
}

#[test]
fn a_calls_deadline_is_a_timer_and_its_timeout_decides_it() {
    let mut run = Stepper::new(tool_graph());
    run.start();
    run.answer("in");
    run.answer("side");
    let soon = run.now + 60_000;
    let lines = pause(
        &mut run,
        vec![waiting_call("a", Some(soon)), waiting_call("b", None)],
    );
    let timer = run.log.iter().rev().find_map(|command| match command {
        Command::ArmTimer {
            timer: Timer::ToolCalls { .. },
            after,
        } => Some(*after),
        _ => None,
    });
    assert_eq!(timer, Some(Duration::from_millis(59_900)), "{lines:?}");
    run.now = soon;
    assert_eq!(run.run.overdue_calls(1, 1, soon), ["a"]);
    let lines = decide(&mut run, "a", crate::tools::waiting::timed_out(soon));
    // Nobody decided: no one is said to have; the other call waits on,
    // with no deadline and so no timer.
    assert!(!has(&lines, "module.decided draft#1"), "{lines:?}");
    assert!(
        has(&lines, "disarm ToolCalls { module: 1, activation: 1 }"),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|line| line.starts_with("timer ToolCalls")),
        "{lines:?}"
    );
    assert!(run.run.overdue_calls(1, 1, soon + 1).is_empty());
}

#[test]
fn a_resume_waits_again_where_the_calls_waited_and_a_decision_taken_meanwhile_takes_it_up() {
    let mut run = Stepper::new(tool_graph());
    run.start();
    run.answer("in");
    run.answer("side");
    pause(&mut run, vec![waiting_call("a", None)]);
    let mut resume = run.resume();
    // Stopped while waiting: resumed, it waits again without saying so.
    let mut again = Stepper::with(tool_graph(), limits(), Some(resume.clone()));
    let lines = again.start();
    assert!(starts(&lines).is_empty(), "{lines:?}");
    assert!(!has(&lines, "module.waiting draft#1"), "{lines:?}");
    assert!(has(&lines, "status waiting"), "{lines:?}");
    let decided = again.step(|run, now| {
        run.on_decision(
            now,
            PendingDecision {
                module_id: "draft".to_owned(),
                activation: 1,
                decided: Decided::Call {
                    call_id: "a".to_owned(),
                    decision: by_editor(Decision::Approve),
                },
            },
        )
    });
    assert_eq!(starts(&decided), ["draft#1"], "{decided:?}");

    // Decided while no process ran it: taken up once its replay ends.
    resume.decisions.push(PendingDecision {
        module_id: "draft".to_owned(),
        activation: 1,
        decided: Decided::Call {
            call_id: "a".to_owned(),
            decision: by_editor(Decision::Reject),
        },
    });
    let mut later = Stepper::with(tool_graph(), limits(), Some(resume));
    let lines = later.start();
    assert_eq!(starts(&lines), ["draft#1"], "{lines:?}");
    later.answer("draft");
    later.answer("out");
    let (_, ending) = later.close(|| unreachable!());
    assert_eq!(ending.status, RunStatus::Completed);
    assert_eq!(later.record("draft", 1).status, ActivationStatus::Completed);
}
