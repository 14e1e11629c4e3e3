//! Runs that survive the process (PRODUCT §8), with real `patchbay serve`
//! processes and a real OpenAI-compatible provider on loopback that
//! counts its calls: kill -9 mid-chain and restart; two processes on one
//! PostgreSQL, the one running a run killed and the other taking it over;
//! a client on one process following a run another runs; cancel from the
//! process that does not run it; SIGTERM; resume turned off.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::processes::{
    Seen, Server, cable, follow, module, names, provider, run_again, run_record, start_run,
    start_with, wait_for_calls, wait_for_status, whole_log,
};

/// input → "Chain" (original + 3 re-prompts, on the provider) → output
fn chain_graph() -> Value {
    json!({
        "modules": [
            module("in", "step.input", json!({})),
            module("chain", "step.agent_task", json!({
                "instruction": "Write about tides",
                "agent_config": {"provider": "fixture", "model": "fixture-model"},
                "re_prompts": [
                    {"id": "r1", "text": "Shorter"},
                    {"id": "r2", "text": "Add a title"},
                    {"id": "r3", "text": "In French"}
                ]
            })),
            module("out", "step.output", json!({})),
        ],
        "cables": [
            cable("c1", ("in", "data_out"), ("chain", "data_in")),
            cable("c2", ("chain", "data_out"), ("out", "data_in")),
        ]
    })
}

/// Numbered 1…n without gap or duplicate, resumed once, ended once.
fn assert_one_continuous_log(log: &[Seen], ending: &str) {
    let numbers: Vec<u64> = log.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(numbers, (1..=log.len() as u64).collect::<Vec<_>>());
    let names = names(log);
    assert_eq!(
        names.iter().filter(|name| **name == "run.resumed").count(),
        1,
        "{names:?}"
    );
    assert_eq!(*names.last().unwrap(), ending, "{names:?}");
    assert_eq!(
        names
            .iter()
            .filter(|name| name.starts_with("run.")
                && **name != "run.resumed"
                && **name != "run.started")
            .count(),
        1,
        "{names:?}"
    );
}

#[tokio::test]
async fn a_server_killed_after_re_prompt_2_of_3_resumes_the_chain_at_the_next_start() {
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        // Calls 1–3: the original and re-prompts 1 and 2; 4 never answers.
        let (fixture, config) = provider(folder.path(), Some(4)).await;
        let mut first = Server::start(&database.url, &config, &[]).await;
        let (_, _, run_id) = start_run(&first, chain_graph()).await;
        // A client follows from the start.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let following = tokio::spawn(follow(
            first.base.clone(),
            run_id.clone(),
            None,
            Arc::clone(&seen),
        ));
        wait_for_calls(&fixture, 4).await;
        // Re-prompt 2's answer is kept with the writer's next commit (not
        // waited for before re-prompt 3 is asked): time enough for it.
        tokio::time::sleep(Duration::from_millis(200)).await;
        first.kill_9();
        assert!(
            !following.await.unwrap(),
            "the stream broke with the server"
        );
        let last_seen = seen.lock().unwrap().last().map(|(seq, _)| *seq);
        fixture.release();

        let second = Server::start(&database.url, &config, &[]).await;
        // The client comes back, to the new server, with Last-Event-ID.
        assert!(
            follow(
                second.base.clone(),
                run_id.clone(),
                last_seen,
                Arc::clone(&seen)
            )
            .await
        );
        let run = wait_for_status(&second, &run_id, "completed").await;

        // Re-prompt 3 was asked once more, with the whole conversation;
        // the three turns answered before were not asked again.
        assert_eq!(fixture.calls(), 5, "{}", database.name);
        assert_eq!(fixture.messages.lock().unwrap()[4], 7);
        let chain = &run["modules"]["chain"]["activations"];
        assert_eq!(chain.as_array().unwrap().len(), 1, "{run}");
        let texts: Vec<&str> = chain[0]["responses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|response| response["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            [
                "Reply 1 to 1 messages.",
                "Reply 2 to 3 messages.",
                "Reply 3 to 5 messages.",
                "Reply 5 to 7 messages."
            ],
            "{}",
            database.name
        );
        assert_eq!(chain[0]["status"], "completed");
        assert_eq!(
            run["modules"]["out"]["activations"][0]["status"],
            "completed"
        );

        // One log; the client saw each event of it once.
        let log = whole_log(&second, &run_id).await;
        assert_one_continuous_log(&log, "run.completed");
        assert_eq!(*seen.lock().unwrap(), log, "{}", database.name);
    }
}

#[tokio::test]
async fn with_resume_off_a_killed_run_ends_interrupted_and_keeps_its_partial_activation() {
    let database = support::databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    let (fixture, config) = provider(folder.path(), Some(3)).await;
    let mut first = Server::start(&database.url, &config, &[]).await;
    let (_, _, run_id) = start_run(&first, chain_graph()).await;
    wait_for_calls(&fixture, 3).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    first.kill_9();
    let second = Server::start(&database.url, &config, &["--no-resume"]).await;
    let run = wait_for_status(&second, &run_id, "interrupted").await;
    assert!(
        run["error"].as_str().unwrap().contains("does not resume"),
        "{run}"
    );
    let kept = &run["modules"]["chain"]["activations"][0];
    assert_eq!(kept["status"], "interrupted", "{run}");
    let texts: Vec<&str> = kept["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|response| response["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts[..2],
        ["Reply 1 to 1 messages.", "Reply 2 to 3 messages."]
    );
    let log = whole_log(&second, &run_id).await;
    assert_eq!(names(&log).last(), Some(&"run.interrupted"));
    assert_eq!(fixture.calls(), 3);
}

#[tokio::test]
async fn a_run_resumed_after_its_maximum_duration_fails_at_once_without_asking_again() {
    let database = support::databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    // The first call never answers while the first server runs.
    let (fixture, config) = provider(folder.path(), Some(1)).await;
    // At most 3 s, counted from when the run first started.
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[engine]\nmax_run_seconds = 3\n");
    std::fs::write(&config, text).unwrap();
    let mut first = Server::start(&database.url, &config, &[]).await;
    let (_, _, run_id) = start_run(&first, chain_graph()).await;
    wait_for_calls(&fixture, 1).await;
    first.kill_9();
    // Its time passes while no process runs it.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    fixture.release();
    let second = Server::start(&database.url, &config, &[]).await;
    let run = wait_for_status(&second, &run_id, "failed").await;
    assert_eq!(
        run["error"], "the run timed out after 3 s, its maximum duration (max_run_seconds)",
        "{run}"
    );
    // It was not given another 3 s: the provider was not asked again.
    assert_eq!(fixture.calls(), 1);
    assert_eq!(
        run["modules"]["chain"]["activations"][0]["status"], "interrupted",
        "{run}"
    );
}

#[tokio::test]
async fn sigterm_mid_run_cancels_nothing_and_the_run_resumes_at_the_next_start() {
    let database = support::databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    let (fixture, config) = provider(folder.path(), Some(2)).await;
    let mut first = Server::start(&database.url, &config, &[]).await;
    let (_, _, run_id) = start_run(&first, chain_graph()).await;
    wait_for_calls(&fixture, 2).await;
    first.terminate();
    // Stopped, not cancelled: nothing in the record says it ended.
    let store = server::store::Store::connect(&database.url).await.unwrap();
    let stored = store.run(&run_id).await.unwrap().unwrap();
    assert_eq!(stored.status, "running");
    let events = store.events_after(&run_id, 0).await.unwrap();
    assert!(
        events
            .iter()
            .all(|event| !event.name.starts_with("run.") || event.name == "run.started"),
        "{:?}",
        events.iter().map(|event| &event.name).collect::<Vec<_>>()
    );
    store.close().await;
    fixture.release();
    let second = Server::start(&database.url, &config, &[]).await;
    let run = wait_for_status(&second, &run_id, "completed").await;
    assert_eq!(
        run["modules"]["chain"]["activations"][0]["responses"][0]["text"],
        "Reply 1 to 1 messages."
    );
    // Re-prompt 1 was cut by the stop and asked again; the original not.
    assert_eq!(fixture.calls(), 5);
    let log = whole_log(&second, &run_id).await;
    assert_one_continuous_log(&log, "run.completed");
    assert!(!names(&log).contains(&"run.cancelled"));
}

#[tokio::test]
async fn two_processes_on_postgresql_follow_cancel_and_take_over_each_others_runs() {
    let Some(database) = support::postgres().await else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let (fixture, config) = provider(folder.path(), Some(4)).await;
    let mut a = Server::start(&database.url, &config, &[]).await;
    let b = Server::start(&database.url, &config, &[]).await;

    // A runs it; a client on B follows it from the start.
    let (graph_id, token, run_id) = start_run(&a, chain_graph()).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let following = tokio::spawn(follow(
        b.base.clone(),
        run_id.clone(),
        None,
        Arc::clone(&seen),
    ));
    wait_for_calls(&fixture, 4).await;
    // B's client has what A stored so far, through B.
    for _ in 0..100 {
        if names(&seen.lock().unwrap()).contains(&"task.agent_task.reprompt_response") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(names(&seen.lock().unwrap()).contains(&"module.activated"));

    // A dies; B takes the run over once A's lease (3 s) runs out.
    a.kill_9();
    let killed = Instant::now();
    fixture.release();
    let mut resumed_after = None;
    for _ in 0..400 {
        if names(&seen.lock().unwrap()).contains(&"run.resumed") {
            resumed_after = Some(killed.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let resumed_after = resumed_after.expect("B never resumed the run");
    assert!(
        resumed_after <= Duration::from_secs(3 + 10),
        "resumed {resumed_after:?} after the kill"
    );
    assert!(following.await.unwrap(), "B's client saw the run end");
    wait_for_status(&b, &run_id, "completed").await;
    assert_eq!(fixture.calls(), 5);
    let log = whole_log(&b, &run_id).await;
    assert_one_continuous_log(&log, "run.completed");
    assert_eq!(
        *seen.lock().unwrap(),
        log,
        "B's client saw every event once, in order"
    );

    // Cancel asked of a process that does not run the run.
    let c = Server::start(&database.url, &config, &[]).await;
    *fixture.hang_at.lock().unwrap() = Some(fixture.calls() + 1);
    let second_run = run_again(&b, &graph_id, &token).await;
    wait_for_calls(&fixture, 6).await;
    let cancelled = engine::tls::client()
        .post(format!("{}/api/runs/{second_run}/cancel", c.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(cancelled.status(), 202);
    // Without the graph's token, nobody may.
    let refused = engine::tls::client()
        .post(format!("{}/api/runs/{second_run}/cancel", c.base))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    wait_for_status(&c, &second_run, "cancelled").await;
    fixture.release();
}

/// input → "Ask" (one call to the provider) → output
fn one_call_graph() -> Value {
    json!({
        "modules": [
            module("in", "step.input", json!({})),
            module("ask", "step.agent_task", json!({
                "instruction": "Write about tides",
                "agent_config": {"provider": "fixture", "model": "fixture-model"}
            })),
            module("out", "step.output", json!({})),
        ],
        "cables": [
            cable("c1", ("in", "data_out"), ("ask", "data_in")),
            cable("c2", ("ask", "data_out"), ("out", "data_in")),
        ]
    })
}

/// A process frozen mid-call past its lease (a stalled machine) wakes
/// with its reply after another process took the run over and finished
/// it: what the second process recorded stays, the woken one's late
/// activation record, state and events are refused (PRODUCT §8, fencing).
#[tokio::test]
async fn a_process_frozen_past_its_lease_cannot_overwrite_the_run_another_took_over() {
    let Some(database) = support::postgres().await else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let (fixture, config) = provider(folder.path(), Some(1)).await;
    let a = Server::start(&database.url, &config, &[]).await;
    let b = Server::start(&database.url, &config, &[]).await;
    let (_, _, run_id) = start_run(&a, one_call_graph()).await;
    wait_for_calls(&fixture, 1).await;
    a.freeze();
    // B takes the run over once A's lease (3 s) runs out, and asks again.
    wait_for_calls(&fixture, 2).await;
    fixture.release_call(2);
    let finished = wait_for_status(&b, &run_id, "completed").await;
    let reply = &finished["modules"]["ask"]["activations"][0]["outputs"]["data_out"];
    assert!(reply.to_string().contains("Reply 2"), "{finished}");
    let log = whole_log(&b, &run_id).await;

    // A wakes with its answer to call 1, which it would record as the
    // module's, and finds out (within a lease tick) that it lost the run.
    fixture.release_call(1);
    a.thaw();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = run_record(&b, &run_id).await;
    assert_eq!(
        after["modules"], finished["modules"],
        "A's late writes landed"
    );
    assert_eq!(after["status"], "completed");
    assert_eq!(whole_log(&b, &run_id).await, log);
    assert_eq!(fixture.calls(), 2);
}

/// input → "Chain" (original + 3 re-prompts, on the simulated provider) →
/// output
fn simulated_chain_graph() -> Value {
    let mut graph = chain_graph();
    graph["modules"][1]["config"]["agent_config"] = json!({"provider": "sim", "model": "sim-1"});
    graph
}

#[tokio::test]
async fn every_event_a_client_saw_survives_a_kill_9_in_the_middle_of_many_runs_writes() {
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let config = folder.path().join("patchbay.toml");
        std::fs::write(&config, "").unwrap();
        let config = config.display().to_string();
        let mut first = Server::start(&database.url, &config, &["--sim-latency-ms", "4"]).await;
        let (graph_id, token, run_id) = start_run(&first, simulated_chain_graph()).await;
        let mut runs = vec![run_id];
        for _ in 1..12 {
            runs.push(run_again(&first, &graph_id, &token).await);
        }
        // A client follows each run: their events are committed in groups.
        let seen: Vec<Arc<Mutex<Vec<Seen>>>> = runs
            .iter()
            .map(|_| Arc::new(Mutex::new(Vec::new())))
            .collect();
        let following: Vec<_> = runs
            .iter()
            .zip(&seen)
            .map(|(run_id, seen)| {
                tokio::spawn(follow(
                    first.base.clone(),
                    run_id.clone(),
                    None,
                    Arc::clone(seen),
                ))
            })
            .collect();
        let total = || {
            seen.iter()
                .map(|seen| seen.lock().unwrap().len())
                .sum::<usize>()
        };
        for _ in 0..1200 {
            if total() >= 300 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(total() >= 300, "the runs made {} events", total());
        first.kill_9();
        for stream in following {
            stream.await.unwrap();
        }

        // Not resumed: the logs stay as the kill left them, plus their end.
        let second = Server::start(&database.url, &config, &["--no-resume"]).await;
        let mut unfinished = 0;
        for (run_id, seen) in runs.iter().zip(&seen) {
            let seen = seen.lock().unwrap().clone();
            let log = whole_log(&second, run_id).await;
            assert!(
                log.len() >= seen.len() && log[..seen.len()] == seen[..],
                "{}: run {run_id}: a client saw {seen:?}, the log after the kill has {log:?}",
                database.name
            );
            unfinished += usize::from(log.last().unwrap().1 == "run.interrupted");
        }
        assert!(
            unfinished > 0,
            "{}: the kill came after every run had ended",
            database.name
        );
    }
}

/// in → "A" → "B" → out, both on the provider.
fn two_step_graph() -> Value {
    let task = |id: &str| {
        module(
            id,
            "step.agent_task",
            json!({"instruction": format!("Step {id}"), "agent_config": {"provider": "fixture", "model": "fixture-model"}}),
        )
    };
    json!({
        "modules": [module("in", "step.input", json!({})), task("a"), task("b"), module("out", "step.output", json!({}))],
        "cables": [
            cable("c1", ("in", "data_out"), ("a", "data_in")),
            cable("c2", ("a", "data_out"), ("b", "data_in")),
            cable("c3", ("b", "data_out"), ("out", "data_in")),
        ]
    })
}

#[tokio::test]
async fn a_run_from_a_module_killed_mid_run_resumes_reusing_what_it_reused() {
    let database = support::databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    let (fixture, config) = provider(folder.path(), None).await;
    let mut first = Server::start(&database.url, &config, &[]).await;
    let (graph_id, token, recorded) = start_run(&first, two_step_graph()).await;
    wait_for_status(&first, &recorded, "completed").await;
    assert_eq!(fixture.calls(), 2);
    // The run from B hangs in B's call, and its server is killed.
    *fixture.hang_at.lock().unwrap() = Some(3);
    let run_id = start_with(
        &first,
        &graph_id,
        &token,
        &json!({"from": {"run": recorded, "module": "b"}}),
    )
    .await;
    wait_for_calls(&fixture, 3).await;
    first.kill_9();
    fixture.release();

    let second = Server::start(&database.url, &config, &[]).await;
    let run = wait_for_status(&second, &run_id, "completed").await;
    // B was asked again; A never was: it is still the recorded run's.
    assert_eq!(fixture.calls(), 4);
    let a = &run["modules"]["a"]["activations"];
    assert_eq!(a.as_array().unwrap().len(), 1, "{run}");
    assert_eq!(a[0]["status"], "reused");
    assert_eq!(a[0]["reused_from"]["run_id"], recorded.as_str());
    assert_eq!(run["modules"]["b"]["activations"][0]["status"], "completed");
    assert_eq!(run["from"]["run"], recorded.as_str());
    let log = whole_log(&second, &run_id).await;
    assert_one_continuous_log(&log, "run.completed");
    assert_eq!(
        names(&log)
            .iter()
            .filter(|name| **name == "module.reused")
            .count(),
        2,
        "in and A, once each: {:?}",
        names(&log)
    );
}
