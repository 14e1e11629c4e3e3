//! Attempts, give-up and timeouts (PRODUCT §3.9): a failed attempt runs
//! again while attempts remain, in its session when it persists, with the
//! retry instruction and its variables; then it gives up on
//! `give_up_out`, or fails the run naming the module; a loop that comes
//! back to a module whose attempts are used ends there; a timeout cancels
//! the attempt and goes to its own port.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use support::{cable, graph, module, run, sim_engine};
use wire::ActivationRecord;
use wire::event::{RunEvent, RunStatus};

/// input → "work" (an agent task with `config`) → "done"; "work"'s
/// `give_up_out` to "after_give_up" and `timeout_out` to "after_timeout"
/// when asked, and `error_out` to "after_error" when asked.
fn work(config: Value, wired: &[&str]) -> graph::Graph {
    let mut config = config;
    config["agent_config"] = json!({"provider": "sim", "model": "sim-1"});
    let mut modules = vec![
        module("in", "step.input", json!({})),
        module("work", "step.agent_task", config),
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
    graph(modules, cables)
}

fn attempts_of(recorder: &engine::recorder::MemoryRecorder, id: &str) -> Vec<ActivationRecord> {
    recorder
        .activations()
        .into_iter()
        .filter(|record| record.module_id == id)
        .collect()
}

fn first_turn(record: &ActivationRecord) -> String {
    record
        .transcript
        .iter()
        .find(|entry| entry.role == wire::TranscriptRole::User)
        .map(|entry| entry.text.clone())
        .unwrap_or_default()
}

fn retrying(events: &[wire::EventRecord]) -> Vec<(u32, u32, u32)> {
    events
        .iter()
        .filter_map(|record| match &record.event {
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

#[tokio::test]
async fn a_failed_attempt_runs_again_until_one_succeeds() {
    let (outcome, recorder) = run(
        &sim_engine(),
        work(
            json!({"instruction": "Write. [sim:fail before attempt 3]", "max_attempts": 4}),
            &[],
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let attempts = attempts_of(&recorder, "work");
    assert_eq!(attempts.len(), 3);
    assert_eq!(attempts[0].status, wire::ActivationStatus::Failed);
    let retried = attempts[0].retried.as_ref().unwrap();
    assert_eq!((retried.next_attempt, retried.max_attempts), (2, 4));
    assert!(
        retried
            .reason
            .contains("told to fail before attempt 3, and this is attempt 1"),
        "{}",
        retried.reason
    );
    assert_eq!(attempts[2].status, wire::ActivationStatus::Completed);
    assert!(attempts[2].retried.is_none() && attempts[2].gave_up.is_none());
    assert_eq!(retrying(&recorder.events()), [(2, 4, 0), (3, 4, 0)]);
    // With no retry instruction, the attempt is told why it runs again.
    assert!(
        first_turn(&attempts[1]).contains(
            "## Instruction\n\nThis step runs again (attempt 2 of 4) because the last attempt failed: “"
        ),
        "{}",
        first_turn(&attempts[1])
    );
    // Only the attempt that succeeded sent anything on.
    let done = attempts_of(&recorder, "done");
    assert_eq!(done.len(), 1);
}

#[tokio::test]
async fn used_attempts_give_up_on_give_up_out_or_fail_the_run_naming_the_module() {
    let config = json!({"instruction": "Write. [sim:fail]", "max_attempts": 2});
    let (outcome, recorder) = run(&sim_engine(), work(config.clone(), &[])).await;
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap();
    assert!(
        error.starts_with("\"work\" gave up after 2 attempts: ")
            && error.contains("told to fail ([sim:fail])"),
        "{error}"
    );
    assert_eq!(attempts_of(&recorder, "work").len(), 2);

    // Wired, giving up is a result like any other, and error_out, wired
    // too, is not where a failure of a module that retries goes.
    let (outcome, recorder) = run(&sim_engine(), work(config, &["give_up_out", "error_out"])).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert!(attempts_of(&recorder, "after_error").is_empty());
    let after = attempts_of(&recorder, "after_give_up");
    assert_eq!(after.len(), 1);
    let last = recorder.activation("work", 2).unwrap();
    assert!(last.gave_up.as_deref().unwrap().contains("[sim:fail]"));
    let given = last.outputs["give_up_out"].as_bundle().unwrap();
    assert!(
        given
            .as_text()
            .starts_with("\"work\" gave up after 2 attempts: ")
    );
    assert_eq!(given.meta["attempts"], 2);
    let gave_up: Vec<u32> = recorder
        .events()
        .iter()
        .filter_map(|record| match &record.event {
            RunEvent::ModuleGaveUp { attempts, .. } => Some(*attempts),
            _ => None,
        })
        .collect();
    assert_eq!(gave_up, [2]);
}

#[tokio::test]
async fn the_retry_instruction_gets_the_retry_variables_in_the_same_session() {
    // The re-prompt fails on the first attempt, after the first answer.
    let (outcome, recorder) = run(
        &sim_engine(),
        work(
            json!({
                "instruction": "Write.",
                "re_prompts": ["Polish. [sim:fail before attempt 2]"],
                "retry_instruction": "Try again (attempt {{ attempt }}). It failed: {{ error }}. Before: {{ prev.output }}. Topic: {{ input }}",
                "max_attempts": 3,
                "session_persist": true,
            }),
            &[],
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let first = recorder.activation("work", 1).unwrap();
    let answered = first.responses[0].text.clone();
    let second = recorder.activation("work", 2).unwrap();
    let sent = second
        .transcript
        .iter()
        .filter(|entry| entry.role == wire::TranscriptRole::User)
        .map(|entry| entry.text.clone())
        .collect::<Vec<_>>();
    // The same session, as of its last answer: the first attempt's turn
    // (not the re-prompt that got none), then the retry's, which is the
    // retry instruction alone (no note, no inputs again), then the
    // re-prompt again.
    assert_eq!(sent.len(), 3, "{sent:#?}");
    assert!(sent[0].ends_with("Write."), "{}", sent[0]);
    assert_eq!(
        sent[1],
        format!(
            "Try again (attempt 2). It failed: \"work\": the simulated provider was told to fail before attempt 2, and this is attempt 1. Before: {answered}. Topic: the moon"
        )
    );
    assert_eq!(sent[2], "Polish. [sim:fail before attempt 2]");
    // Without a persisting session a failed first call leaves nothing to
    // continue: the retry is a new session, with the inputs again.
    let (_, recorder) = run(
        &sim_engine(),
        work(
            json!({
                "instruction": "Write. [sim:fail before attempt 2]",
                "retry_instruction": "Try again (attempt {{ attempt }}): {{ error }}",
                "max_attempts": 2,
            }),
            &[],
        ),
    )
    .await;
    let retry = first_turn(&recorder.activation("work", 2).unwrap());
    assert!(
        retry.starts_with("## Input from \"in\"\n\nthe moon")
            && retry.contains("Try again (attempt 2)"),
        "{retry}"
    );
}

#[tokio::test]
async fn a_timeout_cancels_the_attempt_and_goes_to_its_own_port() {
    // Set, the timeout is a port of its own…
    let (outcome, recorder) = run(
        &sim_engine(),
        work(
            json!({"instruction": "Think. [sim:sleep 30]", "timeout_seconds": 1}),
            &["timeout_out", "error_out"],
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(attempts_of(&recorder, "after_timeout").len(), 1);
    assert!(attempts_of(&recorder, "after_error").is_empty());
    let record = recorder.activation("work", 1).unwrap();
    assert_eq!(record.status, wire::ActivationStatus::Failed);
    assert_eq!(
        record.error.as_deref(),
        Some("\"work\" timed out after 1 s")
    );
    let sent = record.outputs["timeout_out"].as_bundle().unwrap();
    assert_eq!(sent.meta["timeout"], true);
    // …unwired it fails the run, naming the module and the time…
    let (outcome, _) = run(
        &sim_engine(),
        work(
            json!({"instruction": "Think. [sim:sleep 30]", "timeout_seconds": 1}),
            &[],
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Failed);
    assert_eq!(
        outcome.error.as_deref(),
        Some("\"work\" timed out after 1 s")
    );
    // …and with attempts, a timed-out attempt is retried like any failure.
    let (outcome, recorder) = run(
        &sim_engine(),
        work(
            json!({"instruction": "Think. [sim:sleep 30]", "timeout_seconds": 1,
                   "max_attempts": 2, "retry_instruction": "Quickly now."}),
            &[],
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(attempts_of(&recorder, "work").len(), 2);
}

#[tokio::test]
async fn the_wait_before_a_retry_doubles() {
    let (outcome, recorder) = run(
        &sim_engine(),
        work(
            json!({"instruction": "Write. [sim:fail before attempt 3]", "max_attempts": 3, "backoff_seconds": 1}),
            &[],
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(retrying(&recorder.events()), [(2, 3, 1), (3, 3, 2)]);
    let attempts = attempts_of(&recorder, "work");
    // Each attempt started no sooner than its wait after the one before
    // ended (a lower bound only: a slow machine only makes it later).
    for (before, after, wait) in [(0, 1, 1000), (1, 2, 2000)] {
        let ended = attempts[before].finished_at.unwrap();
        assert!(
            attempts[after].started_at >= ended + wait,
            "attempt {} started {} ms after the one before",
            after + 1,
            attempts[after].started_at - ended
        );
    }
}

/// input → "fix" (attempts 2) ⇄ a review gate that always asks for a
/// revision (10 rounds), whose revisions come back to "fix".
fn fix_loop() -> graph::Graph {
    graph(
        vec![
            module("in", "step.input", json!({})),
            module(
                "fix",
                "step.agent_task",
                json!({"instruction": "Fix it", "agent_config": {"provider": "sim"},
                       "max_attempts": 2,
                       "retry_instruction": "Attempt {{ attempt }}: the review said {{ error }}"}),
            ),
            module(
                "gate",
                "step.agent_review_gate",
                json!({"instruction": "Review [sim:revise]", "agent_config": {"provider": "sim"}, "max_rounds": 10}),
            ),
            module("escalated", "step.output", json!({})),
        ],
        vec![
            cable("c1", ("in", "data_out"), ("fix", "data_in")),
            cable("c2", ("fix", "data_out"), ("gate", "data_in")),
            cable("c3", ("gate", "revise_out"), ("fix", "context_in")),
            cable("c4", ("fix", "give_up_out"), ("escalated", "data_in")),
        ],
    )
}

#[tokio::test]
async fn a_loop_that_comes_back_to_a_module_whose_attempts_are_used_ends_there() {
    let (outcome, recorder) = run(&sim_engine(), fix_loop()).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    // fix ran twice and the gate after each, asking for a revision; the
    // second revision found no attempt left.
    assert_eq!(attempts_of(&recorder, "fix").len(), 2);
    assert_eq!(attempts_of(&recorder, "gate").len(), 2);
    let escalated = attempts_of(&recorder, "escalated");
    assert_eq!(escalated.len(), 1);
    let last = recorder.activation("fix", 2).unwrap();
    let reason = last.gave_up.unwrap();
    assert!(
        reason.starts_with("its 2 attempts are used, and the loop came back to it with: ")
            && reason.contains("Simulated feedback"),
        "{reason}"
    );
    // The second attempt came from the loop: its retry instruction has the
    // review's feedback as the error.
    let second = first_turn(&recorder.activation("fix", 2).unwrap());
    assert!(
        second.contains("Attempt 2: the review said Simulated feedback"),
        "{second}"
    );
}

#[tokio::test]
async fn every_attempt_writes_the_state_keys_and_the_one_before_stays_under_prev() {
    let (outcome, recorder) = run(
        &sim_engine(),
        work(
            json!({"instruction": "Write. [sim:fail before attempt 2]", "re_prompts": ["Polish"], "max_attempts": 2}),
            &[],
        ),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    let state = recorder.state();
    assert_eq!(state["input"], "the moon");
    assert_eq!(state["run_id"], "r_test");
    assert_eq!(state["work.status"], "completed");
    assert_eq!(state["work.attempt"], "2");
    assert_eq!(state["work.turns"], "2");
    assert_eq!(state["work.re_prompt_count"], "1");
    assert!(state["work.output"].contains("───── Re-prompt 1 ─────"));
    assert!(state["work.tokens_out"].parse::<u64>().unwrap() > 0);
    // The failed first attempt, as it was when the second began.
    assert_eq!(state["prev.work.status"], "retrying");
    assert_eq!(state["prev.work.attempt"], "1");
    assert_eq!(state["done.status"], "completed");
}
