//! Every check-then-write of the server holds when requests race (PRODUCT
//! §6): a save with `If-Match` that is told it won has won, on SQLite, on
//! PostgreSQL, and with two server processes on one PostgreSQL database;
//! an editor's change with a base the log cannot move along is refused.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use support::processes::Server;

/// Saves racing per round, and rounds.
const RACERS: usize = 8;
const ROUNDS: usize = 20;

/// A `PUT` of `document` renamed `name`, with `If-Match: revision`:
/// (status, body).
async fn put(
    client: &reqwest::Client,
    server: &Server,
    id: &str,
    token: &str,
    revision: i64,
    document: &Value,
) -> (u16, Value) {
    let response = client
        .put(format!("{}/api/graphs/{id}", server.base))
        .bearer_auth(token)
        .header("If-Match", format!("\"{revision}\""))
        .json(document)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn get_graph(client: &reqwest::Client, server: &Server, id: &str) -> Value {
    client
        .get(format!("{}/api/graphs/{id}", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Twenty rounds of eight saves from one revision at the same moment,
/// spread over `servers`: each round exactly one `200`, seven `409
/// graph.revision_conflict` naming the new revision, and the stored graph
/// is the winner's at revision + 1.
async fn racing_saves(servers: &[Server], what: &str) {
    let client = engine::tls::client();
    let created: Value = client
        .post(format!("{}/api/graphs", servers[0].base))
        .json(&json!({"name": "Raced", "modules": [], "cables": []}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    let token = created["edit_token"].as_str().unwrap().to_owned();
    for (round, revision) in (0..ROUNDS).zip(1..) {
        let saves = (0..RACERS).map(|racer| {
            let server = &servers[racer % servers.len()];
            let document = json!({
                "name": format!("round {round} racer {racer}"),
                "modules": [],
                "cables": []
            });
            let (client, id, token) = (client.clone(), id.clone(), token.clone());
            async move {
                let answer = put(&client, server, &id, &token, revision, &document).await;
                (racer, answer)
            }
        });
        let answers = futures::future::join_all(saves).await;
        let winners: Vec<usize> = answers
            .iter()
            .filter(|(_, (status, _))| *status == 200)
            .map(|(racer, _)| *racer)
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "{what}, round {round}: exactly one save from revision {revision} wins: {answers:?}"
        );
        let mut refusals = BTreeMap::new();
        for (_, (status, body)) in &answers {
            if *status != 200 {
                *refusals
                    .entry((
                        *status,
                        body["error"]["code"].as_str().unwrap_or("").to_owned(),
                    ))
                    .or_insert(0) += 1;
            }
        }
        assert_eq!(
            refusals,
            BTreeMap::from([((409, "graph.revision_conflict".to_owned()), RACERS - 1)]),
            "{what}, round {round}"
        );
        let stored = get_graph(&client, &servers[1 % servers.len()], &id).await;
        assert_eq!(
            (stored["revision"].as_i64(), stored["name"].as_str()),
            (
                Some(revision + 1),
                Some(format!("round {round} racer {}", winners[0]).as_str())
            ),
            "{what}, round {round}: the stored graph is the winner's"
        );
    }
}

fn empty_config(folder: &std::path::Path) -> String {
    let config = folder.join("patchbay.toml");
    std::fs::write(&config, "").unwrap();
    config.display().to_string()
}

#[tokio::test]
async fn of_eight_saves_from_one_revision_exactly_one_wins_on_every_database() {
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let server = Server::start(&database.url, &empty_config(folder.path()), &[]).await;
        racing_saves(&[server], database.name).await;
    }
}

#[tokio::test]
async fn of_saves_racing_on_two_processes_exactly_one_wins() {
    let Some(database) = support::postgres().await else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let config = empty_config(folder.path());
    let first = Server::start(&database.url, &config, &[]).await;
    let second = Server::start(&database.url, &config, &[]).await;
    racing_saves(&[first, second], "two processes on PostgreSQL").await;
}

/// in → approve (timing out after `timeout_seconds`) → approved to "done",
/// timed out to "late".
fn timed_approval(timeout_seconds: u32) -> Value {
    use support::processes::{cable, module};
    json!({
        "name": "Timed approval",
        "modules": [
            module("in", "step.input", json!({})),
            module("approve", "step.approval", json!({"timeout_seconds": timeout_seconds})),
            module("done", "step.output", json!({})),
            module("late", "step.output", json!({})),
        ],
        "cables": [
            cable("c1", ("in", "data_out"), ("approve", "data_in")),
            cable("c2", ("approve", "approved_out"), ("done", "data_in")),
            cable("c3", ("approve", "timeout_out"), ("late", "data_in")),
        ]
    })
}

/// When the approval of a run of [`timed_approval`] stops waiting, in
/// milliseconds since the epoch, once it waits.
async fn deadline_of(server: &Server, run_id: &str) -> i64 {
    for _ in 0..400 {
        let run = support::processes::run_record(server, run_id).await;
        let waiting = &run["modules"]["approve"]["activations"][0]["waiting"];
        if let Some(deadline) = waiting["deadline_at"].as_i64() {
            return deadline;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("run {run_id}'s approval never waited");
}

fn now_millis() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

async fn sleep_until(at: i64) {
    let left = at - now_millis();
    if left > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(left.unsigned_abs())).await;
    }
}

/// Which way a finished run of [`timed_approval`] went: "done" or "late".
fn went(run: &Value) -> &'static str {
    let ran = |module: &str| {
        run["modules"][module]["activations"]
            .as_array()
            .is_some_and(|activations| !activations.is_empty())
    };
    match (ran("done"), ran("late")) {
        (true, false) => "done",
        (false, true) => "late",
        _ => panic!("a run goes one way: {run}"),
    }
}

/// Decisions sent around an approval's deadline, a few milliseconds
/// before and after it, on runs side by side: each person told `200` had
/// their decision taken (the run went to "done", the record says who
/// approved), each told `409 decision.timed_out` had not (it went to
/// "late"), and nothing else is said.
#[tokio::test]
async fn a_decision_at_the_deadline_is_either_taken_or_told_it_came_too_late() {
    // Two runs for each millisecond from 12 ms before the deadline to 12
    // after: the clock's timer and a person's click land in every order.
    const RUNS: i64 = 50;
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let server = Server::start(&database.url, &empty_config(folder.path()), &[]).await;
        let mut started = Vec::new();
        for _ in 0..RUNS {
            let (_, token, run_id) =
                support::processes::start_run(&server, timed_approval(3)).await;
            started.push((token, run_id));
        }
        let client = engine::tls::client();
        let decisions = started.iter().enumerate().map(|(index, (token, run_id))| {
            let (client, server) = (client.clone(), &server);
            async move {
                let deadline = deadline_of(server, run_id).await;
                sleep_until(deadline - 12 + i64::try_from(index).unwrap() / 2).await;
                let response = client
                    .post(format!(
                        "{}/api/runs/{run_id}/modules/approve/decision",
                        server.base
                    ))
                    .bearer_auth(token)
                    .json(&json!({"decision": "approve"}))
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                let body: Value = response.json().await.unwrap();
                (run_id.clone(), status, body)
            }
        });
        let answers = futures::future::join_all(decisions).await;
        let mut seen = BTreeMap::new();
        for (run_id, status, body) in answers {
            let run = support::processes::wait_for_status(&server, &run_id, "completed").await;
            let decided = &run["modules"]["approve"]["activations"][0]["decision"];
            match status {
                200 => {
                    assert_eq!(went(&run), "done", "{}: told 200: {run}", database.name);
                    assert_eq!(decided["decision"], "approve", "{run}");
                }
                409 => {
                    assert_eq!(body["error"]["code"], "decision.timed_out", "{body}");
                    assert_eq!(
                        went(&run),
                        "late",
                        "{}: told too late: {run}",
                        database.name
                    );
                    assert!(decided.is_null(), "{run}");
                }
                other => panic!("{}: {other} {body}", database.name),
            }
            *seen.entry(status).or_insert(0) += 1;
        }
        eprintln!("{}: decisions at the deadline {seen:?}", database.name);
    }
}

/// A decision stored by another process whose word has not reached the
/// process that runs the run when the deadline comes: the run acts on the
/// decision, not on its clock (the person was told it was taken).
#[tokio::test]
async fn a_decision_stored_before_the_deadline_wins_though_it_has_not_reached_the_run() {
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let server = Server::start(&database.url, &empty_config(folder.path()), &[]).await;
        let (_, _, run_id) = support::processes::start_run(&server, timed_approval(2)).await;
        let deadline = deadline_of(&server, &run_id).await;
        // Just before the deadline: no lease pass of the server's (which
        // hands a process the decisions taken elsewhere) is likely to come
        // between; 20 ms was too close on two busy cores, where the sleep
        // overshot the deadline and the timeout was stored first.
        sleep_until(deadline - 150).await;
        // As the decisions API of another process stores it.
        let store = support::store(&database).await;
        let taken = store
            .insert_decision(&server::store::StoredDecision {
                run_id: run_id.clone(),
                module_id: "approve".to_owned(),
                activation: 1,
                decision: "approve".to_owned(),
                feedback: String::new(),
                edited_value: None,
                decided_by: "editor".to_owned(),
                decided_at: now_millis(),
            })
            .await
            .unwrap();
        assert!(taken);
        let run = support::processes::wait_for_status(&server, &run_id, "completed").await;
        assert_eq!(went(&run), "done", "{}: {run}", database.name);
        assert_eq!(
            run["modules"]["approve"]["activations"][0]["decision"]["decision"],
            "approve"
        );
    }
}

/// Thinning the history while saves land and runs start: the first
/// revision, the current one and every revision a run ran are still there
/// to read, and thinning did thin.
#[tokio::test]
async fn thinning_while_saves_land_and_runs_start_keeps_every_revision_it_must() {
    use server::capability::new_graph_id;
    use server::store::{ChangeOutcome, Keep, NewChange, NewGraph, NewRun};
    for database in support::databases().await {
        let store = support::store(&database).await;
        let id = new_graph_id();
        let document = |revision: i64| {
            format!(
                r#"{{"format":"patchbay.graph/1","id":"{id}","name":"r{revision}","revision":{revision},"modules":[],"cables":[]}}"#
            )
        };
        store
            .insert_graph(NewGraph {
                id: &id,
                edit_token_hash: "x",
                name: "r1",
                document: &document(1),
                forked_from: None,
                schedules: &[],
            })
            .await
            .unwrap();
        let save = |previous: i64| {
            let (store, text) = (store.clone(), document(previous + 1));
            let id = id.clone();
            async move {
                store
                    .store_change(NewChange {
                        graph_id: &id,
                        previous,
                        name: "saved",
                        document: &text,
                        author: "",
                        author_name: "A save through the API",
                        edits: "[]",
                        replaced: "[]",
                        summary: "saved",
                        keep: Keep::Always,
                        announce: None,
                        schedules: &[],
                    })
                    .await
                    .unwrap()
            }
        };
        // A day of history: two hundred saves, a few minutes apart.
        for previous in 1..=200 {
            assert!(matches!(save(previous).await, ChangeOutcome::Stored { .. }));
        }
        let pool = sqlx::AnyPool::connect(&database.url).await.unwrap();
        sqlx::query(
            "UPDATE graph_revisions SET created_at = created_at - (201 - revision) * 300000 - 600000 WHERE graph_id = $1",
        )
        .bind(&id)
        .execute(&pool)
        .await
        .unwrap();
        // Runs ran revisions 50 and 120 in that day.
        for (run, revision) in [("r_thinning_050", 50), ("r_thinning_120", 120)] {
            store
                .insert_run(NewRun {
                    id: run,
                    graph_id: Some(&id),
                    graph_revision: Some(revision),
                    snapshot: "{}",
                    input: "{}",
                    budget_usd: None,
                    lease: None,
                    from: None,
                    started_by: None,
                })
                .await
                .unwrap();
        }
        // Now saves land, runs start on what is current, and the history
        // is thinned, all at once.
        let saving = {
            let store = store.clone();
            let id = id.clone();
            async move {
                for previous in 201..=240 {
                    save(previous).await;
                    store.thin_history(&id).await.unwrap();
                }
            }
        };
        let thinning = futures::future::join_all((0..4).map(|_| {
            let (store, id) = (store.clone(), id.clone());
            async move {
                for _ in 0..20 {
                    store.thin_history(&id).await.unwrap();
                }
            }
        }));
        let starting = {
            let (store, id) = (store.clone(), id.clone());
            async move {
                let mut ran = Vec::new();
                for number in 0..10 {
                    let current = store.graph(&id).await.unwrap().unwrap();
                    let run = format!("r_thinning_started_{number}");
                    store
                        .insert_run(NewRun {
                            id: &run,
                            graph_id: Some(&id),
                            graph_revision: Some(current.revision),
                            snapshot: &current.document,
                            input: "{}",
                            budget_usd: None,
                            lease: None,
                            from: None,
                            started_by: None,
                        })
                        .await
                        .unwrap();
                    store
                        .keep_revision(&id, current.revision, &current.document)
                        .await
                        .unwrap();
                    ran.push(current.revision);
                }
                ran
            }
        };
        let ((), _, started) = tokio::join!(saving, thinning, starting);
        let current = store.graph(&id).await.unwrap().unwrap().revision;
        assert_eq!(current, 241, "{}", database.name);
        for must in [1, 50, 120, current].into_iter().chain(started) {
            assert!(
                store.graph_revision(&id, must).await.unwrap().is_some(),
                "{}: revision {must} was thinned away",
                database.name
            );
        }
        let (kept, _) = store.revisions_kept(&id).await.unwrap();
        assert!(
            kept < 200,
            "{}: {kept} of 241 kept: nothing was thinned",
            database.name
        );
        pool.close().await;
    }
}
