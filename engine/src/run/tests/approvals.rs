//! Approvals (PRODUCT §3.14): the run waits for a person without a task
//! or a slot, other branches go on, a decision (or the timeout) is the
//! approval's ending, the run is `waiting` while only people are waited
//! for and its deadline leaves that time out, and a resume waits again
//! where it waited.

use std::time::Duration;

use serde_json::json;
use wire::activation::ActivationStatus;
use wire::approval::{Decider, Decision, DecisionRecord};
use wire::event::RunStatus;

use super::{Ending, Stepper, cable, graph, has, limits, module, starts, task};
use crate::bundle::{ContextBundle, PortValue};
use crate::run::{Command, Limits, Timer};

fn decision(decision: Decision, feedback: &str, value: Option<&str>) -> DecisionRecord {
    DecisionRecord {
        decision,
        feedback: feedback.to_owned(),
        value: value.map(str::to_owned),
        by: Decider::Editor,
        at: 5_000,
    }
}

/// in → draft → approve; approve's outcomes to modules of their names
/// (those in `wired`), its `revise_out` back to the draft when "revise"
/// is wired; "side" runs beside it from the input.
fn approval_graph(config: serde_json::Value, wired: &[&str]) -> graph::Graph {
    let mut modules = vec![
        module("in", "step.input", json!({})),
        task("draft", json!({"session_persist": true})),
        module("approve", "step.approval", config),
        task("side", json!({})),
    ];
    let mut cables = vec![
        cable("c1", ("in", "data_out"), ("draft", "data_in")),
        cable("c2", ("draft", "data_out"), ("approve", "data_in")),
        cable("c3", ("in", "data_out"), ("side", "data_in")),
    ];
    for port in wired {
        if *port == "revise_out" {
            cables.push(cable(
                "c_revise",
                ("approve", "revise_out"),
                ("draft", "data_in"),
            ));
            continue;
        }
        let target = port.trim_end_matches("_out").to_owned();
        modules.push(module(&target, "step.output", json!({})));
        cables.push(cable(
            &format!("c_{target}"),
            ("approve", port),
            (&target, "data_in"),
        ));
    }
    graph(modules, cables)
}

/// The run up to the approval waiting, with "side" still running.
fn waiting(config: serde_json::Value, wired: &[&str], limits: Limits) -> (Stepper, Vec<String>) {
    let mut run = Stepper::with(approval_graph(config, wired), limits, None);
    run.start();
    run.answer("in");
    let lines = run.answer("draft");
    (run, lines)
}

fn decide(run: &mut Stepper, decided: DecisionRecord) -> Vec<String> {
    run.now += 100;
    run.step(|run, now| run.on_decided(now, "approve", 1, decided))
}

#[test]
fn an_approval_waits_with_no_task_and_no_slot_and_other_branches_go_on() {
    let one_slot = Limits {
        max_concurrency: 1,
        ..limits()
    };
    let mut run = Stepper::with(approval_graph(json!({}), &["approved_out"]), one_slot, None);
    run.start();
    let lines = run.answer("in");
    // draft takes the one slot; side waits for it.
    assert_eq!(starts(&lines), ["draft#1"]);
    let lines = run.answer("draft");
    assert!(has(&lines, "module.waiting approve#1"), "{lines:?}");
    assert!(has(&lines, "save approve#1 waiting"), "{lines:?}");
    assert_eq!(starts(&lines), ["side#1"], "the approval holds no slot");
    let record = run.record("approve", 1);
    let waited = record.waiting.as_ref().unwrap();
    assert_eq!(waited.asked, "Approve this?");
    assert_eq!(waited.value, "draft says hello");
    assert_eq!(waited.shown.len(), 1);
    assert_eq!(waited.shown[0].source_module, "draft");
    // Which output it left by says how the app shows it (a diff, tests).
    assert_eq!(waited.shown[0].source_port, "data_out");
    assert!(!run.run.is_over());
}

#[test]
fn while_only_people_are_waited_for_the_run_waits_and_its_deadline_is_paused() {
    let (mut run, lines) = waiting(json!({}), &["approved_out"], limits());
    assert!(
        !lines.iter().any(|line| line == "status waiting"),
        "side still runs"
    );
    let lines = run.answer("side");
    assert_eq!(
        lines[lines.len() - 3..],
        ["disarm RunDeadline", "wait begins", "status waiting"]
    );
    assert!(!run.run.is_over(), "a person is waited for");
    // An hour later someone approves: the deadline goes on with what it had.
    run.now += 3_600_000;
    let lines = decide(&mut run, decision(Decision::Approve, "", None));
    assert!(has(&lines, "wait ends"), "{lines:?}");
    assert!(has(&lines, "status running"), "{lines:?}");
    let deadline = run.log.iter().rev().find_map(|command| match command {
        Command::ArmTimer {
            timer: Timer::RunDeadline,
            after,
        } => Some(*after),
        _ => None,
    });
    // The run had run for 0.3 s before it waited; the hour does not count.
    assert_eq!(
        deadline,
        Some(Duration::from_secs(24 * 3600) - Duration::from_millis(300))
    );
}

#[test]
fn approving_sends_the_value_on_as_it_came_or_as_the_person_edited_it() {
    let (mut run, _) = waiting(json!({}), &["approved_out"], limits());
    let lines = decide(&mut run, decision(Decision::Approve, "", None));
    assert!(has(&lines, "module.decided approve#1"), "{lines:?}");
    assert!(has(&lines, "module.completed approve#1"), "{lines:?}");
    assert!(
        has(&lines, "save approve#1 completed (ending)"),
        "{lines:?}"
    );
    assert_eq!(starts(&lines), ["approved#1"]);
    let value = run.started("approved").inputs[0].value.as_bundle().unwrap();
    assert_eq!(value.as_text(), "draft says hello");
    assert_eq!(value.source_module, "draft", "passed on as it came");
    assert_eq!(value.meta["decision"], "approve");
    let record = run.record("approve", 1);
    assert_eq!(
        record.decision.as_ref().unwrap().decision,
        Decision::Approve
    );

    let (mut run, _) = waiting(json!({}), &["approved_out"], limits());
    decide(
        &mut run,
        decision(Decision::Approve, "", Some("Hello, edited")),
    );
    let value = run.started("approved").inputs[0].value.as_bundle().unwrap();
    assert_eq!(value.as_text(), "Hello, edited");
}

#[test]
fn a_rejection_goes_down_its_own_branch_or_ends_the_run_with_the_reason() {
    let (mut run, _) = waiting(json!({}), &["approved_out", "rejected_out"], limits());
    let lines = decide(&mut run, decision(Decision::Reject, "Too long", None));
    assert_eq!(
        starts(&lines),
        ["rejected#1"],
        "only the chosen branch runs"
    );
    let sent = run.started("rejected").inputs[0].value.as_bundle().unwrap();
    assert_eq!(sent.as_text(), "Too long");
    assert_eq!(sent.meta["value"], "draft says hello");

    let (mut run, _) = waiting(json!({}), &["approved_out"], limits());
    decide(&mut run, decision(Decision::Reject, "", None));
    run.answer("side");
    let (_, ending) = run.close(|| unreachable!());
    assert_eq!(
        ending.error.as_deref(),
        Some(
            "\"approve\" ended with a rejection (rejected_out), and no cable leads on from that port"
        )
    );
}

#[test]
fn sending_it_back_runs_the_draft_again_on_the_feedback_until_the_rounds_run_out() {
    let config = json!({"max_rounds": 2});
    let (mut run, _) = waiting(config, &["revise_out", "exhausted_out"], limits());
    let lines = decide(
        &mut run,
        decision(Decision::Revise, "Shorter, please", None),
    );
    assert_eq!(starts(&lines), ["draft#2"]);
    let feedback = run
        .started("draft")
        .inputs
        .iter()
        .find(|input| input.fresh)
        .unwrap();
    assert_eq!(feedback.source_module, "approve");
    assert_eq!(
        feedback.value.as_bundle().unwrap().as_text(),
        "Shorter, please"
    );
    // Round 2: its own activation and decision; sent back again, the
    // rounds are used.
    let lines = run.answer("draft");
    assert!(has(&lines, "module.waiting approve#2"), "{lines:?}");
    run.now += 100;
    let lines = run.step(|run, now| {
        run.on_decided(
            now,
            "approve",
            2,
            decision(Decision::Revise, "Still long", None),
        )
    });
    assert_eq!(starts(&lines), ["exhausted#1"]);
}

#[test]
fn a_second_decision_and_one_for_an_approval_that_does_not_wait_change_nothing() {
    let (mut run, _) = waiting(json!({}), &["approved_out", "rejected_out"], limits());
    decide(&mut run, decision(Decision::Approve, "", None));
    assert!(decide(&mut run, decision(Decision::Reject, "No", None)).is_empty());
    let lines =
        run.step(|run, now| run.on_decided(now, "draft", 1, decision(Decision::Approve, "", None)));
    assert!(lines.is_empty());
}

#[test]
fn nobody_deciding_in_time_sends_the_value_to_timeout_out() {
    let (mut run, lines) = waiting(json!({"timeout_seconds": 1800}), &["timeout_out"], limits());
    assert!(
        has(&lines, "timer Approval { module: 2, activation: 1 }"),
        "{lines:?}"
    );
    let deadline_at = run
        .record("approve", 1)
        .waiting
        .as_ref()
        .unwrap()
        .deadline_at;
    assert_eq!(deadline_at, Some(run.now + 1_800_000));
    let lines = run.step(|run, now| {
        run.on_timer(
            now,
            Timer::Approval {
                module: 2,
                activation: 1,
            },
        )
    });
    assert_eq!(starts(&lines), ["timeout#1"]);
    let sent = run.started("timeout").inputs[0].value.as_bundle().unwrap();
    assert_eq!(sent.as_text(), "draft says hello");
    assert_eq!(sent.meta["timeout"], true);
    // A decision that comes after changes nothing.
    assert!(decide(&mut run, decision(Decision::Approve, "", None)).is_empty());
}

#[test]
fn what_is_asked_is_filled_from_the_run_state_and_a_variable_that_cannot_be_fails_it() {
    let (run, _) = waiting(
        json!({"ask": "Publish the text on {{ input }}?"}),
        &["approved_out"],
        limits(),
    );
    assert_eq!(
        run.record("approve", 1).waiting.as_ref().unwrap().asked,
        "Publish the text on the moon?"
    );
    let (mut run, lines) = waiting(json!({"ask": "Merge {{ nowhere.output }}?"}), &[], limits());
    assert!(has(&lines, "module.failed approve#1"), "{lines:?}");
    run.answer("side");
    let (_, ending) = run.close(|| unreachable!());
    assert!(ending.error.unwrap().starts_with("what \"approve\" asks:"));
}

#[test]
fn a_run_ended_while_someone_was_to_decide_says_so_in_the_approval_s_record() {
    let (mut run, _) = waiting(json!({}), &["approved_out"], limits());
    run.step(|run, _| run.on_cancel());
    let (lines, ending) = run.close(|| Ending::Cancelled);
    assert_eq!(ending.status, RunStatus::Cancelled);
    assert!(has(&lines, "save approve#1 cancelled"), "{lines:?}");
    assert_eq!(
        run.record("approve", 1).error.as_deref(),
        Some("the run ended before anyone decided")
    );
}

#[test]
fn a_stopping_server_does_not_wait_for_people_and_leaves_the_approval_waiting() {
    let (mut run, _) = waiting(json!({}), &["approved_out"], limits());
    run.answer("side");
    run.step(|run, now| run.on_stop(now));
    assert!(run.run.is_over());
    let (lines, ending) = run.close(|| unreachable!());
    assert!(lines.is_empty(), "{lines:?}");
    assert_eq!(ending.status, RunStatus::Interrupted);
}

#[test]
fn a_resumed_run_waits_again_without_saying_so_twice_and_acts_on_a_decision_taken_meanwhile() {
    let (mut first, _) = waiting(json!({"timeout_seconds": 60}), &["approved_out"], limits());
    first.answer("side");
    let mut resume = first.resume();
    resume.waiting_since = Some(first.now);
    let mut again = Stepper::with(
        approval_graph(json!({"timeout_seconds": 60}), &["approved_out"]),
        limits(),
        Some(resume.clone()),
    );
    let lines = again.start();
    assert!(
        !lines.iter().any(|line| line.starts_with("module.waiting")),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|line| line.starts_with("save")),
        "{lines:?}"
    );
    assert!(has(&lines, "status waiting"), "{lines:?}");
    assert!(
        has(&lines, "timer Approval { module: 2, activation: 1 }"),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|line| line == "timer RunDeadline"),
        "still paused"
    );
    assert!(!again.run.is_over());

    // Decided while no process ran it: acted on once the replay is done.
    resume.decisions.push(crate::resume::PendingDecision {
        module_id: "approve".to_owned(),
        activation: 1,
        decided: crate::resume::Decided::Approval(decision(Decision::Approve, "", None)),
    });
    let mut again = Stepper::with(
        approval_graph(json!({"timeout_seconds": 60}), &["approved_out"]),
        limits(),
        Some(resume),
    );
    let lines = again.start();
    assert!(has(&lines, "run.resumed"), "{lines:?}");
    let decided = lines
        .iter()
        .position(|line| line == "module.decided approve#1")
        .unwrap();
    let resumed = lines.iter().position(|line| line == "run.resumed").unwrap();
    assert!(resumed < decided, "{lines:?}");
    assert_eq!(starts(&lines), ["approved#1"]);
    assert!(has(&lines, "status running"), "{lines:?}");
    assert_eq!(
        again.record("approve", 1).status,
        ActivationStatus::Completed
    );
}

#[test]
fn an_unedited_approval_keeps_the_session_its_value_names() {
    let (mut run, _) = waiting(json!({}), &["approved_out"], limits());
    // The value that came names a coding agent's session.
    if let Some(record) = run.run.progress[2].waiting_record.as_mut()
        && let Some(waiting) = record.waiting.as_mut()
    {
        let mut bundle = ContextBundle::text("draft", "the diff");
        bundle.source_session_key = Some("draft#1/builder".to_owned());
        waiting.passes_on = Some(PortValue::Bundle(bundle));
    }
    decide(&mut run, decision(Decision::Approve, "", None));
    let passed = run.started("approved").inputs[0].value.as_bundle().unwrap();
    assert_eq!(
        passed.source_session_key.as_deref(),
        Some("draft#1/builder")
    );
}
