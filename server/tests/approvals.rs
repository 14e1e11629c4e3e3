//! A person in the loop (PRODUCT §3.14), through the HTTP API of real
//! `patchbay serve` processes and a provider on loopback that counts its
//! calls: a run waits at an approval across a kill -9, and a decision then
//! completes it without asking the provider again; reject and revise go
//! down their own branch, revise in the agent's same session; a timeout
//! fires after a restart, and the time waited for people still does not
//! count towards the run's maximum duration; the first of eight decisions
//! at once wins, on SQLite and PostgreSQL; an approver link
//! decides and does nothing else; a webhook hears that an approval waits;
//! the home page's example sends a coding agent's change back to it.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use support::processes::{
    Server, cable, decide, module, names, provider, run_record, start_run, wait_for_status,
    webhook, whole_log,
};

/// in → draft (an agent task on the provider, keeping its session round
/// after round) → approve; approved to "done", rejected to "rejected",
/// sent back to the draft, and with a timeout, timed out to "late";
/// `approval` is its config.
fn approval_graph(approval: Value) -> Value {
    let mut graph = json!({
        "modules": [
            module("in", "step.input", json!({})),
            module("draft", "step.agent_task", json!({
                "instruction": "Write about tides",
                "agent_config": {"provider": "fixture", "model": "fixture-model"},
                "session_persist": true
            })),
            module("done", "step.output", json!({})),
            module("rejected", "step.output", json!({})),
        ],
        "cables": [
            cable("c1", ("in", "data_out"), ("draft", "data_in")),
            cable("c2", ("draft", "data_out"), ("approve", "data_in")),
            cable("c3", ("approve", "approved_out"), ("done", "data_in")),
            cable("c4", ("approve", "rejected_out"), ("rejected", "data_in")),
            cable("c5", ("approve", "revise_out"), ("draft", "data_in")),
        ]
    });
    if approval.get("timeout_seconds").is_some() {
        graph["modules"]
            .as_array_mut()
            .unwrap()
            .push(module("late", "step.output", json!({})));
        graph["cables"].as_array_mut().unwrap().push(cable(
            "c6",
            ("approve", "timeout_out"),
            ("late", "data_in"),
        ));
    }
    graph["modules"]
        .as_array_mut()
        .unwrap()
        .push(module("approve", "step.approval", approval));
    graph
}

/// Whether `module_id` has no activation in the run's record.
fn never_ran(run: &Value, module_id: &str) -> bool {
    run["modules"][module_id]["activations"]
        .as_array()
        .is_none_or(Vec::is_empty)
}

/// Waits until `module_id`'s activation `activation` waits for a person.
async fn wait_for_waiting(
    server: &Server,
    run_id: &str,
    module_id: &str,
    activation: usize,
) -> Value {
    for _ in 0..1200 {
        let run = run_record(server, run_id).await;
        let activations = &run["modules"][module_id]["activations"];
        if activations
            .get(activation - 1)
            .is_some_and(|record| record["status"] == "waiting")
        {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let run = run_record(server, run_id).await;
    panic!("{module_id} #{activation} of run {run_id} never waited: {run}");
}

#[tokio::test]
async fn a_run_waits_across_a_kill_9_and_a_decision_completes_it_without_asking_again() {
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let (fixture, config) = provider(folder.path(), None).await;
        let mut first = Server::start(&database.url, &config, &[]).await;
        let (graph_id, token, run_id) =
            start_run(&first, approval_graph(json!({"ask": "Publish it?"}))).await;
        let run = wait_for_waiting(&first, &run_id, "approve", 1).await;
        let waiting = &run["modules"]["approve"]["activations"][0]["waiting"];
        assert_eq!(waiting["asked"], "Publish it?", "{run}");
        assert_eq!(waiting["value"], "Reply 1 to 1 messages.", "{run}");
        wait_for_status(&first, &run_id, "waiting").await;
        assert_eq!(fixture.calls(), 1);
        // The home page's list says the graph has a run waiting.
        let summaries: Value = engine::tls::client()
            .post(format!("{}/api/graphs/summaries", first.base))
            .json(&json!({"graphs": [{"id": graph_id, "edit_token": token}]}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            summaries["graphs"][0]["waiting_run"],
            run_id.as_str(),
            "{summaries}"
        );
        first.kill_9();

        let second = Server::start(&database.url, &config, &[]).await;
        // Taken up again, it still waits, and asks nobody anything.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let run = wait_for_status(&second, &run_id, "waiting").await;
        assert_eq!(
            run["modules"]["approve"]["activations"][0]["status"], "waiting",
            "{}: {run}",
            database.name
        );
        let (status, decided) = decide(
            &second,
            &run_id,
            "approve",
            Some(&token),
            json!({"decision": "approve"}),
        )
        .await;
        assert_eq!(status, 200, "{decided}");
        assert_eq!(decided["decision"]["decision"], "approve");
        assert_eq!(decided["decision"]["by"], "editor");
        let run = wait_for_status(&second, &run_id, "completed").await;
        assert_eq!(
            fixture.calls(),
            1,
            "{}: nothing before the approval ran again",
            database.name
        );
        let done = &run["modules"]["done"]["activations"][0];
        assert_eq!(done["status"], "completed", "{run}");
        assert!(never_ran(&run, "rejected"), "{run}");
        let log = whole_log(&second, &run_id).await;
        let names = names(&log);
        assert_eq!(
            names
                .iter()
                .filter(|name| **name == "module.waiting")
                .count(),
            1,
            "{names:?}"
        );
        assert!(names.contains(&"module.decided"), "{names:?}");
    }
}

#[tokio::test]
async fn sending_back_reprompts_the_agent_in_its_session_and_a_rejection_takes_its_own_branch() {
    let database = support::databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    let (fixture, config) = provider(folder.path(), None).await;
    let server = Server::start(&database.url, &config, &[]).await;
    let (_, token, run_id) = start_run(&server, approval_graph(json!({}))).await;
    wait_for_waiting(&server, &run_id, "approve", 1).await;
    let (status, body) = decide(
        &server,
        &run_id,
        "approve",
        Some(&token),
        json!({"decision": "revise", "feedback": "Shorter, and in French"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let run = wait_for_waiting(&server, &run_id, "approve", 2).await;
    // The draft ran again in its session: the feedback is its next turn.
    assert_eq!(fixture.calls(), 2);
    assert_eq!(
        fixture.messages.lock().unwrap()[1],
        3,
        "turn, reply, feedback"
    );
    let second = &run["modules"]["draft"]["activations"][1];
    let transcript: Vec<(&str, &str)> = second["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["role"].as_str().unwrap(),
                entry["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        transcript
            .iter()
            .any(|(role, text)| *role == "user" && text.contains("Shorter, and in French")),
        "{transcript:?}"
    );
    assert!(
        transcript
            .iter()
            .any(|(role, text)| *role == "assistant" && text.starts_with("Reply 1")),
        "the first round's reply is in the session: {transcript:?}"
    );
    // Someone still looking at the first round is told it was decided,
    // and their approval is not taken for the second, which they never saw.
    let (status, body) = decide(
        &server,
        &run_id,
        "approve",
        Some(&token),
        json!({"decision": "approve", "activation": 1}),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("decision.already_taken")),
        "{body}"
    );
    let (status, _) = decide(
        &server,
        &run_id,
        "approve",
        Some(&token),
        json!({"decision": "reject", "feedback": "Not for us", "activation": 2}),
    )
    .await;
    assert_eq!(status, 200);
    let run = wait_for_status(&server, &run_id, "completed").await;
    // Once a decision was acted on, a later one is still "already taken".
    let (status, body) = decide(
        &server,
        &run_id,
        "approve",
        Some(&token),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("decision.already_taken")),
        "{body}"
    );
    let rejected = &run["modules"]["rejected"]["activations"][0];
    assert_eq!(rejected["status"], "completed", "{run}");
    assert!(never_ran(&run, "done"), "{run}");
    assert_eq!(fixture.calls(), 2);
}

#[tokio::test]
async fn an_approval_s_timeout_fires_after_a_restart() {
    let database = support::databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    let (_fixture, config) = provider(folder.path(), None).await;
    let mut first = Server::start(&database.url, &config, &[]).await;
    let (_, _, run_id) = start_run(&first, approval_graph(json!({"timeout_seconds": 2}))).await;
    let run = wait_for_waiting(&first, &run_id, "approve", 1).await;
    assert!(run["modules"]["approve"]["activations"][0]["waiting"]["deadline_at"].is_i64());
    first.kill_9();
    // Its deadline passes while no process runs it.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let second = Server::start(&database.url, &config, &[]).await;
    let run = wait_for_status(&second, &run_id, "completed").await;
    let late = &run["modules"]["late"]["activations"][0];
    assert_eq!(late["status"], "completed", "{run}");
    assert!(never_ran(&run, "done"), "{run}");
}

#[tokio::test]
async fn of_decisions_at_once_the_first_wins_and_the_others_are_told() {
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let (_fixture, config) = provider(folder.path(), None).await;
        let server = Arc::new(Server::start(&database.url, &config, &[]).await);
        let (_, token, run_id) = start_run(&server, approval_graph(json!({}))).await;
        wait_for_waiting(&server, &run_id, "approve", 1).await;
        // Eight people, half approving and half rejecting, at one moment.
        let racing = (0..8).map(|person| {
            let body = if person % 2 == 0 {
                json!({"decision": "approve"})
            } else {
                json!({"decision": "reject", "feedback": format!("No, says {person}")})
            };
            let (server, token, run_id) = (Arc::clone(&server), token.clone(), run_id.clone());
            tokio::spawn(async move {
                let answer = decide(&server, &run_id, "approve", Some(&token), body.clone()).await;
                (body, answer)
            })
        });
        let mut answers = Vec::new();
        for answer in racing.collect::<Vec<_>>() {
            answers.push(answer.await.unwrap());
        }
        let taken: Vec<&Value> = answers
            .iter()
            .filter(|(_, (status, _))| *status == 200)
            .map(|(body, _)| body)
            .collect();
        assert_eq!(taken.len(), 1, "{}: {answers:?}", database.name);
        for (_, (status, body)) in &answers {
            if *status != 200 {
                assert_eq!(
                    (*status, body["error"]["code"].as_str()),
                    (409, Some("decision.already_taken")),
                    "{}",
                    database.name
                );
            }
        }
        // The run acted on the decision its taker was told was taken.
        let run = wait_for_status(&server, &run_id, "completed").await;
        let recorded = &run["modules"]["approve"]["activations"][0]["decision"];
        assert_eq!(recorded["decision"], taken[0]["decision"], "{run}");
        let ended = if taken[0]["decision"] == "approve" {
            "done"
        } else {
            "rejected"
        };
        assert!(!never_ran(&run, ended), "{}: {run}", database.name);
        // A module that waits for nobody.
        let (status, body) = decide(
            &server,
            &run_id,
            "draft",
            Some(&token),
            json!({"decision": "approve"}),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (409, Some("decision.not_waiting"))
        );
        // Sent back with nothing to say.
        let (_, token, run_id) = start_run(&server, approval_graph(json!({}))).await;
        wait_for_waiting(&server, &run_id, "approve", 1).await;
        let (status, body) = decide(
            &server,
            &run_id,
            "approve",
            Some(&token),
            json!({"decision": "revise"}),
        )
        .await;
        assert_eq!(status, 422, "{body}");
    }
}

/// The time a run waited for people is kept across a kill -9: its
/// maximum duration leaves it out after a restart as before one.
#[tokio::test]
async fn a_run_s_wait_for_people_still_does_not_count_after_a_restart() {
    let database = support::databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    let (fixture, config) = provider(folder.path(), None).await;
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[engine]\nmax_run_seconds = 4\n");
    std::fs::write(&config, text).unwrap();
    let mut first = Server::start(&database.url, &config, &[]).await;
    let (_, token, run_id) = start_run(&first, approval_graph(json!({}))).await;
    wait_for_waiting(&first, &run_id, "approve", 1).await;
    wait_for_status(&first, &run_id, "waiting").await;
    // Longer than the run may last, all of it waiting for a person.
    tokio::time::sleep(Duration::from_millis(5000)).await;
    first.kill_9();
    let second = Server::start(&database.url, &config, &[]).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let run = run_record(&second, &run_id).await;
    assert_eq!(run["status"], "waiting", "{run}");
    let (status, body) = decide(
        &second,
        &run_id,
        "approve",
        Some(&token),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let run = wait_for_status(&second, &run_id, "completed").await;
    assert!(!never_ran(&run, "done"), "{run}");
    assert_eq!(fixture.calls(), 1);
}

#[tokio::test]
async fn a_webhook_hears_that_an_approval_waits_and_its_link_decides_nothing_else() {
    let database = support::databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    let (_fixture, config) = provider(folder.path(), None).await;
    let (received, url) = webhook().await;
    // Top-level keys before the tables the file has.
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("public_url = \"https://patchbay.example\"\n{text}\n[[webhooks]]\nid = \"ops\"\nurl = \"{url}\"\n"),
    )
    .unwrap();
    let server = Server::start(&database.url, &config, &[]).await;

    // A webhook the operator did not list is refused before anything runs.
    let client = engine::tls::client();
    let unlisted = approval_graph(json!({"notify": ["somewhere"]}));
    let findings: Value = client
        .post(format!("{}/api/validate", server.base))
        .json(&unlisted)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        findings
            .to_string()
            .contains("validation.webhook_not_allowed"),
        "{findings}"
    );

    let (graph_id, token, run_id) = start_run(
        &server,
        approval_graph(json!({"notify": ["ops"], "ask": "Ship it?"})),
    )
    .await;
    wait_for_waiting(&server, &run_id, "approve", 1).await;
    let mut notice = Value::Null;
    for _ in 0..200 {
        if let Some(first) = received.lock().unwrap().first() {
            notice = first.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(notice["run_id"], run_id.as_str(), "{notice}");
    assert_eq!(notice["module_id"], "approve");
    assert_eq!(notice["asked"], "Ship it?");
    assert!(
        !notice.to_string().contains(&token),
        "no edit token in a notice"
    );
    let approver_url = notice["approver_url"].as_str().unwrap();
    let prefix = format!("https://patchbay.example/g/{graph_id}/runs/{run_id}#approve=");
    let approver = approver_url
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{approver_url}"));

    // The approver link cannot save, cancel, run, list runs or make links.
    let with = |request: reqwest::RequestBuilder| request.bearer_auth(approver).send();
    let graph: Value = engine::tls::client()
        .get(format!("{}/api/graphs/{graph_id}", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let refused = [
        with(
            client
                .put(format!("{}/api/graphs/{graph_id}", server.base))
                .header("if-match", "1")
                .json(&graph),
        )
        .await
        .unwrap(),
        with(client.post(format!("{}/api/runs/{run_id}/cancel", server.base)))
            .await
            .unwrap(),
        with(
            client
                .post(format!("{}/api/graphs/{graph_id}/runs", server.base))
                .json(&json!({})),
        )
        .await
        .unwrap(),
        with(client.get(format!("{}/api/graphs/{graph_id}/runs", server.base)))
            .await
            .unwrap(),
        with(client.post(format!("{}/api/runs/{run_id}/approver-links", server.base)))
            .await
            .unwrap(),
    ];
    for response in refused {
        assert_eq!(response.status(), 403, "{}", response.url());
    }
    // Nor decide on another run's approval, even of the same graph.
    let other = support::processes::run_again(&server, &graph_id, &token).await;
    wait_for_waiting(&server, &other, "approve", 1).await;
    let (status, body) = decide(
        &server,
        &other,
        "approve",
        Some(approver),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("decision.token_invalid"))
    );
    // Without a token, or with a made-up one, nobody decides.
    let (status, body) = decide(
        &server,
        &run_id,
        "approve",
        None,
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("decision.token_required"))
    );
    let (status, _) = decide(
        &server,
        &run_id,
        "approve",
        Some("forged-token-0123456789"),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(status, 403);
    // What it is for, it does.
    let (status, decided) = decide(
        &server,
        &run_id,
        "approve",
        Some(approver),
        json!({"decision": "approve", "value": "Shipped, edited"}),
    )
    .await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["decision"]["by"], "approver_link");
    let run = wait_for_status(&server, &run_id, "completed").await;
    let done = &run["modules"]["done"]["activations"][0];
    assert!(
        done["outputs"].to_string().contains("Shipped, edited"),
        "{run}"
    );
}

/// The home page's example "A person approves the change": a coding
/// agent's change waits for a person, who sends it back with what to
/// change; the agent takes that as its next turn in its same session, and
/// the change it makes then is approved, with its diff, down the approved
/// branch only.
#[tokio::test]
async fn the_example_sends_a_coding_agent_s_change_back_to_it_then_approves_it() {
    let database = support::databases().await.remove(0);
    let folder = tempfile::tempdir().unwrap();
    let (fixture, config) = provider(folder.path(), None).await;
    let server = Server::start(&database.url, &config, &[]).await;
    let example = graph::starter::example("a-person-approves-the-change").unwrap();
    let (_, token, run_id) =
        start_run(&server, serde_json::to_value(&example.graph).unwrap()).await;
    let run = wait_for_waiting(&server, &run_id, "review", 1).await;
    // The person sees the agent's reply and its diff.
    let shown = run["modules"]["review"]["activations"][0]["waiting"]["shown"]
        .as_array()
        .unwrap();
    let diff = shown
        .iter()
        .find(|input| input["source_port"] == "diff_out")
        .unwrap_or_else(|| panic!("no diff shown: {run}"));
    assert!(
        diff["value"]["content"]
            .as_str()
            .unwrap()
            .contains("+++ b/WELCOME.md"),
        "{diff}"
    );
    let (status, body) = decide(
        &server,
        &run_id,
        "review",
        Some(&token),
        json!({"decision": "revise", "feedback": "Also write CONDUCT.md\nwrite CONDUCT.md: Be kind."}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let run = wait_for_waiting(&server, &run_id, "review", 2).await;
    // The feedback is the agent's next turn in its same session (the
    // simulated agent counts the turns of its session), and it acted on it.
    let second = &run["modules"]["build"]["activations"][1];
    assert!(
        second["responses"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Simulated agent, turn 2."),
        "{second}"
    );
    assert!(
        second["transcript"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Also write CONDUCT.md"),
        "{second}"
    );
    let (status, body) = decide(
        &server,
        &run_id,
        "review",
        Some(&token),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let run = wait_for_status(&server, &run_id, "completed").await;
    let approved = &run["modules"]["approved"]["activations"][0]["outputs"]["result_1"];
    assert!(
        approved["content"]
            .as_str()
            .unwrap()
            .contains("+++ b/CONDUCT.md"),
        "the second round's change is approved: {approved}"
    );
    assert_eq!(approved["meta"]["decision"], "approve");
    assert!(never_ran(&run, "rejected"), "{run}");
    for (module, times) in [("task", 1), ("build", 2), ("review", 2)] {
        assert_eq!(
            run["modules"][module]["activations"]
                .as_array()
                .map(Vec::len),
            Some(times),
            "{module}"
        );
    }
    assert_eq!(fixture.calls(), 0, "the example needs no provider");
}

/// Several processes on one PostgreSQL: a decision taken by a process that
/// does not hold the run reaches the one that does, which goes on with it;
/// and when that one is gone, the other takes the run up, decision and all.
#[tokio::test]
async fn on_postgres_any_process_takes_a_decision_and_the_run_goes_on() {
    let Some(database) = support::postgres().await else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let (fixture, config) = provider(folder.path(), None).await;
    let mut holder = Server::start(&database.url, &config, &[]).await;
    let other = Server::start(&database.url, &config, &[]).await;
    let (_, token, run_id) = start_run(&holder, approval_graph(json!({}))).await;
    wait_for_waiting(&holder, &run_id, "approve", 1).await;
    // Decided on the other process, carried out by the holder.
    let (status, body) = decide(
        &other,
        &run_id,
        "approve",
        Some(&token),
        json!({"decision": "revise", "feedback": "Again, shorter"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    wait_for_waiting(&other, &run_id, "approve", 2).await;
    assert_eq!(fixture.calls(), 2, "the draft ran again once");
    // The holder dies; a decision taken meanwhile is not lost: the other
    // process takes the run up and acts on it.
    holder.kill_9();
    let (status, body) = decide(
        &other,
        &run_id,
        "approve",
        Some(&token),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let run = wait_for_status(&other, &run_id, "completed").await;
    assert_eq!(
        run["modules"]["done"]["activations"][0]["status"], "completed",
        "{run}"
    );
    assert_eq!(fixture.calls(), 2, "nothing before the approval ran again");
}

/// in → draft ⇄ approve (sent back to the draft): a run from the approval
/// reuses the draft's first turn, which came before the approval first
/// asked; the provider is called only when the new run sends the draft
/// something down the cable back, in the session the reused turn left.
#[tokio::test]
async fn a_run_from_an_approval_in_a_loop_reuses_what_came_before_it_and_calls_nothing_until_sent_back()
 {
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let (fixture, config) = provider(folder.path(), None).await;
        let server = Server::start(&database.url, &config, &[]).await;
        let (graph_id, token, run_id) = start_run(&server, approval_graph(json!({}))).await;
        wait_for_waiting(&server, &run_id, "approve", 1).await;
        let (status, _) = decide(
            &server,
            &run_id,
            "approve",
            Some(&token),
            json!({"decision": "revise", "feedback": "Shorter"}),
        )
        .await;
        assert_eq!(status, 200);
        wait_for_waiting(&server, &run_id, "approve", 2).await;
        decide(
            &server,
            &run_id,
            "approve",
            Some(&token),
            json!({"decision": "approve"}),
        )
        .await;
        wait_for_status(&server, &run_id, "completed").await;
        assert_eq!(fixture.calls(), 2, "the draft, and again when sent back");

        let again = support::processes::start_with(
            &server,
            &graph_id,
            &token,
            &json!({"from": {"run": run_id, "module": "approve"}}),
        )
        .await;
        let run = wait_for_waiting(&server, &again, "approve", 1).await;
        assert_eq!(
            fixture.calls(),
            2,
            "{}: nothing is asked before the approval waits again",
            database.name
        );
        let draft = &run["modules"]["draft"]["activations"];
        assert_eq!(draft.as_array().map(Vec::len), Some(1), "{run}");
        assert_eq!(draft[0]["status"], "reused", "{run}");
        assert_eq!(draft[0]["reused_from"]["activation"], 1, "{run}");
        // What the approval shows is the first turn's reply, as it was.
        assert_eq!(
            run["modules"]["approve"]["activations"][0]["waiting"]["value"],
            "Reply 1 to 1 messages.",
            "{run}"
        );
        // Sent back in the new run: the draft runs, once, in the session
        // its reused turn left (turn, reply, feedback).
        decide(
            &server,
            &again,
            "approve",
            Some(&token),
            json!({"decision": "revise", "feedback": "Warmer"}),
        )
        .await;
        wait_for_waiting(&server, &again, "approve", 2).await;
        assert_eq!(fixture.calls(), 3, "{}", database.name);
        assert_eq!(fixture.messages.lock().unwrap()[2], 3);
        decide(
            &server,
            &again,
            "approve",
            Some(&token),
            json!({"decision": "approve"}),
        )
        .await;
        let run = wait_for_status(&server, &again, "completed").await;
        assert!(!never_ran(&run, "done"), "{run}");
        assert_eq!(
            run["modules"]["draft"]["activations"][1]["status"],
            "completed"
        );
    }
}
