//! Schedules in real `patchbay serve` processes (PRODUCT §6.5): a schedule
//! every second fires once per tick with two processes on one database,
//! and goes on when the one that fired last is killed with `kill -9`;
//! ticks that fell while no server was up run once at start
//! (`catch_up: "one"`) or not at all (`"none"`), never more.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use graph::starter::starter_graph;
use serde_json::{Value, json};
use support::processes::Server;

fn scheduled(cron: &str, catch_up: &str) -> Value {
    let mut document = serde_json::to_value(starter_graph()).unwrap();
    document["triggers"] = json!([
        {"id": "tick", "kind": "schedule", "cron": cron, "catch_up": catch_up}
    ]);
    document
}

fn config(folder: &std::path::Path, late_after_seconds: u64) -> String {
    let path = folder.join("patchbay.toml");
    std::fs::write(
        &path,
        format!("[schedules]\nlate_after_seconds = {late_after_seconds}\n"),
    )
    .unwrap();
    path.display().to_string()
}

async fn create(server: &Server, document: &Value) -> (String, String) {
    let created: Value = engine::tls::client()
        .post(format!("{}/api/graphs", server.base))
        .json(document)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (
        created["id"]
            .as_str()
            .unwrap_or_else(|| panic!("{created}"))
            .to_owned(),
        created["edit_token"].as_str().unwrap().to_owned(),
    )
}

/// The graph's runs a schedule started: tick → how many runs, and which
/// of them stand for missed ticks.
async fn scheduled_runs(
    server: &Server,
    graph: &str,
    token: &str,
) -> (BTreeMap<i64, usize>, usize) {
    let listed: Value = engine::tls::client()
        .get(format!("{}/api/graphs/{graph}/runs", server.base))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut ticks = BTreeMap::new();
    let mut caught_up = 0;
    for run in listed["runs"].as_array().unwrap() {
        let started_by = &run["started_by"];
        assert_eq!(started_by["how"], "schedule", "{run}");
        assert_eq!(started_by["trigger"], "tick");
        *ticks
            .entry(started_by["tick"].as_i64().unwrap())
            .or_insert(0) += 1;
        if started_by["caught_up"] == true {
            caught_up += 1;
        }
    }
    (ticks, caught_up)
}

async fn pause(server: &Server, graph: &str, token: &str, document: &Value) {
    let mut paused = document.clone();
    paused["triggers"][0]["paused"] = json!(true);
    let current: Value = engine::tls::client()
        .get(format!("{}/api/graphs/{graph}", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let response = engine::tls::client()
        .put(format!("{}/api/graphs/{graph}", server.base))
        .bearer_auth(token)
        .header("If-Match", current["revision"].to_string())
        .json(&paused)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn a_schedule_fires_once_per_tick_with_two_processes_and_a_kill() {
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let config = config(folder.path(), 60);
        let mut first = Server::start(&database.url, &config, &[]).await;
        let second = Server::start(&database.url, &config, &[]).await;
        let document = scheduled("* * * * * *", "one");
        let (graph, token) = create(&first, &document).await;
        tokio::time::sleep(Duration::from_secs(4)).await;
        first.kill_9();
        let killed_at = server::store::now_millis();
        tokio::time::sleep(Duration::from_secs(4)).await;
        pause(&second, &graph, &token, &document).await;
        // A run claimed just before the pause is started after it.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (ticks, caught_up) = scheduled_runs(&second, &graph, &token).await;

        let name = database.name;
        assert!(
            ticks.values().all(|runs| *runs == 1),
            "{name}: a tick ran twice: {ticks:?}"
        );
        assert_eq!(
            caught_up, 0,
            "{name}: no tick was missed while a server was up"
        );
        let ticks: Vec<i64> = ticks.into_keys().collect();
        assert!(ticks.iter().all(|tick| tick % 1_000 == 0), "{ticks:?}");
        // Every second from the first tick to the last: the one killed
        // may have lost a tick it had claimed, no more.
        let span = (ticks.last().unwrap() - ticks.first().unwrap()) / 1_000 + 1;
        assert!(
            usize::try_from(span).unwrap() - ticks.len() <= 1,
            "{name}: ticks missing from {ticks:?}"
        );
        assert!(ticks.len() >= 6, "{name}: {ticks:?}");
        assert!(
            ticks
                .iter()
                .filter(|tick| **tick > killed_at + 1_000)
                .count()
                >= 2,
            "{name}: the second process went on after the first was killed: {ticks:?}"
        );
    }
}

#[tokio::test]
async fn ticks_missed_while_no_server_was_up_run_once_or_not_at_all() {
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let config = config(folder.path(), 1);
        let mut server = Server::start(&database.url, &config, &[]).await;
        // Every 3 seconds: created, then the server dies before most ticks.
        let (caught, caught_token) = create(&server, &scheduled("*/3 * * * * *", "one")).await;
        let (skipped, skipped_token) = create(&server, &scheduled("*/3 * * * * *", "none")).await;
        server.kill_9();
        let before = [
            scheduled_count_at_most_one_tick(&database, &caught).await,
            scheduled_count_at_most_one_tick(&database, &skipped).await,
        ];
        tokio::time::sleep(Duration::from_secs(8)).await;
        let restarted_at = server::store::now_millis();
        let server = Server::start(&database.url, &config, &[]).await;
        // Long enough to see the catch-up, shorter than the next tick can
        // be late: at most one tick more falls meanwhile.
        tokio::time::sleep(Duration::from_millis(2_500)).await;

        let name = database.name;
        let (ticks, caught_up) = scheduled_runs(&server, &caught, &caught_token).await;
        assert_eq!(
            caught_up, 1,
            "{name}: one run stands for the missed ticks: {ticks:?}"
        );
        let since: Vec<i64> = ticks
            .keys()
            .copied()
            .filter(|tick| *tick >= restarted_at)
            .collect();
        assert!(since.len() <= 1, "{name}: {ticks:?}");
        assert!(ticks.values().all(|runs| *runs == 1), "{name}: {ticks:?}");
        assert!(ticks.len() <= before[0] + 2, "{name}: {ticks:?}");

        let (ticks, caught_up) = scheduled_runs(&server, &skipped, &skipped_token).await;
        assert_eq!(caught_up, 0, "{name}: {ticks:?}");
        let missed: Vec<i64> = ticks
            .keys()
            .copied()
            .skip(before[1])
            .filter(|tick| *tick < restarted_at)
            .collect();
        assert!(missed.is_empty(), "{name}: missed ticks ran: {ticks:?}");
    }
}

/// How many runs a schedule started before its server was killed, read
/// from the database (no server is up): at most one tick's.
async fn scheduled_count_at_most_one_tick(database: &support::TestDatabase, graph: &str) -> usize {
    let store = support::store(database).await;
    let runs = store.runs_for_graph(graph, 100).await.unwrap().len();
    store.close().await;
    assert!(runs <= 1, "{graph}: {runs} runs before any tick was due");
    runs
}
