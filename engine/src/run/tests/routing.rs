//! Where values go: conditions on cables (the first that holds, the
//! catch-all, a branch that ends saying why), failure outcomes that nothing
//! takes, errors to `error_out`, and intents that abort or repeat.

use serde_json::json;
use wire::activation::ActivationStatus;
use wire::event::{RunEvent, RunStatus};

use super::{Stepper, cable, conditional, done, error, graph, has, module, output, starts, task};

const SALES: &str = "get('$.output.intent') == 'sales'";
const SUPPORT: &str = "get('$.output.intent') == 'support'";

/// in → classify, whose `data_out` goes to "sales", "support" and
/// "other" on cables with these conditions (`None`: the catch-all).
fn triage(conditions: [Option<&str>; 3]) -> graph::Graph {
    let mut cables = vec![cable("c0", ("in", "data_out"), ("classify", "data_in"))];
    for (position, (target, condition)) in ["sales", "support", "other"]
        .iter()
        .zip(conditions)
        .enumerate()
    {
        let id = format!("c{}", position + 1);
        cables.push(match condition {
            Some(condition) => conditional(
                &id,
                ("classify", "data_out"),
                (target, "data_in"),
                condition,
            ),
            None => cable(&id, ("classify", "data_out"), (target, "data_in")),
        });
    }
    graph(
        vec![
            module("in", "step.input", json!({})),
            task("classify", json!({})),
            task("sales", json!({})),
            task("support", json!({})),
            task("other", json!({})),
        ],
        cables,
    )
}

fn classified(conditions: [Option<&str>; 3], reply: &str) -> (Stepper, Vec<String>) {
    let mut run = Stepper::new(triage(conditions));
    run.start();
    run.answer("in");
    let lines = run.complete("classify", &[("data_out", reply)]);
    (run, lines)
}

#[test]
fn the_first_condition_that_holds_takes_the_value_and_only_that_branch_runs() {
    let (run, lines) = classified(
        [Some(SALES), Some(SUPPORT), None],
        r#"{"intent": "support"}"#,
    );
    assert!(has(&lines, "cable.taken classify#1 c2"), "{lines:?}");
    assert_eq!(starts(&lines), ["support#1"]);
    let route = &run.record("classify", 1).routes[0];
    assert_eq!(route.cable_id.as_deref(), Some("c2"));
    assert!(
        route.reason.starts_with("condition 2 held"),
        "{}",
        route.reason
    );
}

#[test]
fn order_decides_when_two_conditions_hold() {
    let (_, lines) = classified(
        [Some(SUPPORT), Some(SUPPORT), None],
        r#"{"intent": "support"}"#,
    );
    assert_eq!(starts(&lines), ["sales#1"]);
}

#[test]
fn a_cable_without_a_condition_is_the_catch_all() {
    let (run, lines) = classified([Some(SALES), Some(SUPPORT), None], r#"{"intent": "legal"}"#);
    assert!(has(&lines, "cable.taken classify#1 c3"), "{lines:?}");
    assert_eq!(starts(&lines), ["other#1"]);
    assert!(
        run.record("classify", 1).routes[0]
            .reason
            .contains("the catch-all")
    );
}

#[test]
fn when_no_condition_holds_the_branch_ends_and_says_why() {
    let (mut run, lines) = classified(
        [Some(SALES), Some(SUPPORT), Some(SALES)],
        r#"{"intent": "legal"}"#,
    );
    assert!(has(&lines, "cable.none_taken classify#1"), "{lines:?}");
    assert!(starts(&lines).is_empty());
    let route = &run.record("classify", 1).routes[0];
    assert_eq!(route.cable_id, None);
    assert!(
        route
            .reason
            .starts_with("no condition held and no cable is without one"),
        "{}",
        route.reason
    );
    // Not a failure: the run ends with nothing else to do.
    assert!(run.run.is_over());
    let (lines, ending) = run.close(|| unreachable!());
    assert_eq!(lines, ["run.completed"]);
    assert_eq!(ending.status, RunStatus::Completed);
}

/// in → check (a review gate), with these cables from it to "fixed"
/// (which is there only when a cable leads to it: else it would be an
/// entry module of its own).
fn gate_with(cables: Vec<serde_json::Value>) -> Stepper {
    let mut modules = vec![
        module("in", "step.input", json!({})),
        module(
            "check",
            "step.agent_review_gate",
            json!({"instruction": "Check"}),
        ),
    ];
    if !cables.is_empty() {
        modules.push(module("fixed", "step.output", json!({})));
    }
    let mut all = vec![cable("c0", ("in", "data_out"), ("check", "data_in"))];
    all.extend(cables);
    Stepper::new(graph(modules, all))
}

#[test]
fn a_failure_outcome_that_no_cable_leads_on_from_fails_the_run_naming_the_module() {
    let mut run = gate_with(Vec::new());
    run.start();
    run.answer("in");
    run.complete("check", &[("revise_out", "Too long")]);
    assert!(run.run.is_over());
    let (lines, ending) = run.close(|| unreachable!());
    assert_eq!(lines, ["run.failed"]);
    assert_eq!(
        ending.error.as_deref(),
        Some(
            "\"check\" ended with a request for revision (revise_out), and no cable leads on from that port"
        )
    );
}

#[test]
fn a_failure_outcome_whose_conditions_all_fail_fails_the_run_too() {
    let mut run = gate_with(vec![conditional(
        "c1",
        ("check", "revise_out"),
        ("fixed", "data_in"),
        "get('$.output.severity') == 'high'",
    )]);
    run.start();
    run.answer("in");
    let lines = run.complete("check", &[("revise_out", r#"{"severity": "low"}"#)]);
    assert!(has(&lines, "cable.none_taken check#1"), "{lines:?}");
    let (_, ending) = run.close(|| unreachable!());
    assert!(
        ending
            .error
            .unwrap()
            .ends_with("and none of the conditions on its cables held")
    );
}

/// in → work; `work`'s ports in `wired` lead to modules of their names.
pub fn work(config: serde_json::Value, wired: &[&str]) -> Stepper {
    let mut modules = vec![
        module("in", "step.input", json!({})),
        task("work", config),
        module("done", "step.output", json!({})),
    ];
    let mut cables = vec![
        cable("c1", ("in", "data_out"), ("work", "data_in")),
        cable("c2", ("work", "data_out"), ("done", "data_in")),
    ];
    for port in wired {
        let target = format!("after_{}", port.trim_end_matches("_out"));
        modules.push(module(&target, "step.output", json!({})));
        cables.push(cable(
            &format!("c_{target}"),
            ("work", port),
            (&target, "data_in"),
        ));
    }
    let mut run = Stepper::new(graph(modules, cables));
    run.start();
    run.answer("in");
    run
}

#[test]
fn an_error_goes_to_error_out_when_it_is_wired_and_fails_the_run_when_not() {
    let mut run = work(json!({}), &["error_out"]);
    let lines = run.end("work", error("the provider said no"));
    assert!(has(&lines, "module.failed work#1"), "{lines:?}");
    assert_eq!(starts(&lines), ["after_error#1"]);
    let record = run.record("work", 1);
    assert_eq!(record.status, ActivationStatus::Failed);
    let sent = record.outputs["error_out"].as_bundle().unwrap();
    assert_eq!(sent.as_text(), "the provider said no");
    assert_eq!(sent.meta["error"], true);
    assert_eq!(run.state()["work.status"], "failed");

    let mut run = work(json!({}), &[]);
    run.end("work", error("the provider said no"));
    let (lines, ending) = run.close(|| unreachable!());
    assert_eq!(lines, ["run.failed"]);
    assert_eq!(ending.error.as_deref(), Some("the provider said no"));
}

#[test]
fn an_intent_to_abort_ends_the_run_with_its_reason_and_no_error_out_takes_it() {
    let mut run = work(json!({}), &["error_out"]);
    let mut aborted = output("work", &[("data_out", "I cannot do this")]);
    aborted.intent = Some((
        graph::intent::Intent::Abort,
        "the request is out of scope".to_owned(),
    ));
    let lines = run.end("work", done(aborted));
    assert!(has(&lines, "module.failed work#1"), "{lines:?}");
    assert!(starts(&lines).is_empty());
    let (_, ending) = run.close(|| unreachable!());
    assert_eq!(
        ending.error.as_deref(),
        Some("\"work\" chose to abort the run: the request is out of scope")
    );
}

#[test]
fn an_intent_to_repeat_runs_the_module_again_with_its_reason_as_the_error() {
    let mut run = work(json!({"max_attempts": 3}), &[]);
    let mut again = output("work", &[("data_out", "A first go")]);
    again.intent = Some((
        graph::intent::Intent::Repeat,
        "the tests still fail".to_owned(),
    ));
    let lines = run.end("work", done(again));
    // What it produced is kept and sent nowhere.
    assert!(has(&lines, "module.completed work#1"), "{lines:?}");
    assert!(has(&lines, "module.retrying work#1"), "{lines:?}");
    assert_eq!(starts(&lines), ["work#2"]);
    let attempt = run.started("work").attempt.clone().unwrap();
    assert!(attempt.repeat && attempt.retried);
    assert_eq!(attempt.error, "the tests still fail");
    assert_eq!(attempt.previous_output, "A first go");
}

#[test]
fn an_intent_to_repeat_without_attempts_gives_up_saying_how_to_allow_it() {
    let mut run = work(json!({}), &[]);
    let mut again = output("work", &[("data_out", "A first go")]);
    again.intent = Some((graph::intent::Intent::Repeat, "not good enough".to_owned()));
    let lines = run.end("work", done(again));
    assert!(has(&lines, "module.gave_up work#1"), "{lines:?}");
    let events = run.events();
    let reason = events
        .iter()
        .find_map(|event| match event {
            RunEvent::ModuleGaveUp { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        reason,
        "its reply chose to repeat it, and it has no attempts left (give it 2 or more in Attempts to let it run again); the reply's reason: “not good enough”"
    );
    let (_, ending) = run.close(|| unreachable!());
    assert!(
        ending
            .error
            .unwrap()
            .starts_with("\"work\" gave up after 1 attempt: its reply chose to repeat it")
    );
}
