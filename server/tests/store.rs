//! The store on SQLite and PostgreSQL: graphs, revisions, optimistic saves;
//! the run record's writes committed in groups.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use server::capability::{hash_token, new_graph_id};
use server::store::{ChangeOutcome, Keep, NewChange, NewGraph, StoredActivation, StoredEvent};

/// A change renaming the graph, made at `previous`.
fn renamed<'a>(
    id: &'a str,
    previous: i64,
    document: &'a str,
    name: &'a str,
    keep: Keep,
) -> NewChange<'a> {
    NewChange {
        graph_id: id,
        previous,
        name,
        document,
        author: "c_author",
        author_name: "Editor 1",
        edits: r#"[{"op":"set","path":[".name"],"after":"renamed"}]"#,
        replaced: "[]",
        summary: "renamed",
        keep,
        announce: None,
        schedules: &[],
    }
}

fn document(id: &str, revision: i64, name: &str) -> String {
    format!(
        r#"{{"format":"patchbay.graph/1","id":"{id}","name":"{name}","revision":{revision},"modules":[],"cables":[]}}"#
    )
}

#[tokio::test]
async fn a_graph_is_stored_and_read_back() {
    for database in support::databases().await {
        let store = support::store(&database).await;
        let id = new_graph_id();
        store
            .insert_graph(NewGraph {
                id: &id,
                edit_token_hash: &hash_token("secret"),
                name: "First",
                document: &document(&id, 1, "First"),
                forked_from: None,
                schedules: &[],
            })
            .await
            .unwrap();
        let stored = store.graph(&id).await.unwrap().expect(database.name);
        assert_eq!(stored.revision, 1, "{}", database.name);
        assert_eq!(stored.document, document(&id, 1, "First"));
        assert_eq!(
            store.edit_token_hash(&id).await.unwrap().as_deref(),
            Some(hash_token("secret").as_str())
        );
        assert!(store.graph(&new_graph_id()).await.unwrap().is_none());
    }
}

#[tokio::test]
async fn saves_move_the_revision_and_keep_history() {
    for database in support::databases().await {
        let store = support::store(&database).await;
        let id = new_graph_id();
        store
            .insert_graph(NewGraph {
                id: &id,
                edit_token_hash: "x",
                name: "v1",
                document: &document(&id, 1, "v1"),
                forked_from: None,
                schedules: &[],
            })
            .await
            .unwrap();
        let v2 = document(&id, 2, "v2");
        let saved = store
            .store_change(renamed(&id, 1, &v2, "v2", Keep::Always))
            .await
            .unwrap();
        assert_eq!(
            saved,
            ChangeOutcome::Stored {
                revision: 2,
                kept_revision: true
            },
            "{}",
            database.name
        );
        // A writer still at revision 1 applies again to the graph as it is.
        let lost = document(&id, 2, "lost");
        let stale = store
            .store_change(renamed(&id, 1, &lost, "lost", Keep::Always))
            .await
            .unwrap();
        assert_eq!(stale, ChangeOutcome::Stale);
        assert_eq!(store.graph(&id).await.unwrap().unwrap().document, v2);
        assert_eq!(store.revision_count(&id).await.unwrap(), 2);
        assert_eq!(
            store.graph_revision(&id, 1).await.unwrap(),
            Some(document(&id, 1, "v1"))
        );
        // Editing together keeps a revision every so often, not one a change;
        // the log has every change, in order.
        let v3 = document(&id, 3, "v3");
        let edited = store
            .store_change(renamed(&id, 2, &v3, "v3", Keep::Every))
            .await
            .unwrap();
        assert_eq!(
            edited,
            ChangeOutcome::Stored {
                revision: 3,
                kept_revision: false
            }
        );
        assert_eq!(store.revision_count(&id).await.unwrap(), 2);
        let log = store.changes_after(&id, 1, 10).await.unwrap();
        let revisions: Vec<(i64, i64)> = log
            .iter()
            .map(|change| (change.previous, change.revision))
            .collect();
        assert_eq!(revisions, [(1, 2), (2, 3)], "{}", database.name);
        assert_eq!(log[0].author_name, "Editor 1");
        // A run of revision 3 keeps it in the history, once.
        store.keep_revision(&id, 3, &v3).await.unwrap();
        store.keep_revision(&id, 3, &v3).await.unwrap();
        assert_eq!(store.graph_revision(&id, 3).await.unwrap(), Some(v3));
        let missing = store
            .store_change(renamed(&new_graph_id(), 1, "{}", "x", Keep::Always))
            .await
            .unwrap();
        assert_eq!(missing, ChangeOutcome::NotFound);
    }
}

#[tokio::test]
async fn of_concurrent_saves_from_one_revision_exactly_one_wins() {
    for database in support::databases().await {
        let store = support::store(&database).await;
        let id = new_graph_id();
        store
            .insert_graph(NewGraph {
                id: &id,
                edit_token_hash: "x",
                name: "v1",
                document: &document(&id, 1, "v1"),
                forked_from: None,
                schedules: &[],
            })
            .await
            .unwrap();
        let attempts: Vec<_> = (0..8)
            .map(|writer| {
                let store = store.clone();
                let id = id.clone();
                tokio::spawn(async move {
                    let name = format!("writer {writer}");
                    let text = document(&id, 2, &name);
                    store
                        .store_change(renamed(&id, 1, &text, &name, Keep::Always))
                        .await
                        .unwrap()
                })
            })
            .collect();
        let mut saved = 0;
        for attempt in attempts {
            match attempt.await.unwrap() {
                ChangeOutcome::Stored { revision, .. } => {
                    assert_eq!(revision, 2);
                    saved += 1;
                }
                ChangeOutcome::Stale => {}
                ChangeOutcome::NotFound => panic!("the graph exists"),
            }
        }
        assert_eq!(saved, 1, "{}", database.name);
        assert_eq!(store.revision_count(&id).await.unwrap(), 2);
    }
}

#[tokio::test]
async fn the_sqlite_file_and_its_folder_are_created_in_wal_mode() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("nested/deeper/patchbay.db");
    let store = server::store::Store::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    assert!(path.exists());
    store.close().await;
    // WAL mode leaves its journal beside the file once written to.
    let store = server::store::Store::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    assert_eq!(store.graph_count().await.unwrap(), 0);
    assert!(folder.path().join("nested/deeper/patchbay.db-wal").exists());
}

fn logged(seq: i64) -> StoredEvent {
    StoredEvent {
        seq,
        name: "run.started".to_owned(),
        payload: "{}".to_owned(),
        ts: seq,
    }
}

fn saved<'a>(record: &'a str, status: &'a str, ending: Option<&'a str>) -> StoredActivation<'a> {
    StoredActivation {
        module_id: "m1",
        activation: 1,
        status,
        record,
        started_at: 1,
        finished_at: None,
        ending,
    }
}

#[tokio::test]
async fn writes_committed_together_fail_alone_and_keep_each_activation_s_last_record_and_ending() {
    for database in support::databases().await {
        let store = support::store(&database).await;
        let runs: Vec<String> = (0..20).map(|_| server::runs::new_run_id()).collect();
        for id in &runs {
            support::insert_bare_run(&store, id).await;
        }
        store
            .append_events(&runs[0], vec![logged(1)], None)
            .await
            .unwrap();

        // Sent at once, so the writer takes them in one group: every run's
        // event 2, and run 0's event 1 again (refused: it is in the log).
        let appended = futures::future::join_all(runs.iter().enumerate().map(|(index, run)| {
            let seq = if index == 5 { 1 } else { 2 };
            let run = if index == 5 { &runs[0] } else { run };
            store.append_events(run, vec![logged(seq)], None)
        }))
        .await;
        for (index, outcome) in appended.iter().enumerate() {
            assert_eq!(
                outcome.is_err(),
                index == 5,
                "{}: write {index}: {outcome:?}",
                database.name
            );
        }
        // Three saves of one activation in one group: the last record, the
        // last ending given.
        let saved_all = futures::future::join_all([
            store.save_activation(
                &runs[1],
                saved(r#"{"turn":1}"#, "running", Some("kept")),
                None,
            ),
            store.save_activation(&runs[1], saved(r#"{"turn":2}"#, "running", None), None),
            store.save_activation(&runs[1], saved(r#"{"turn":3}"#, "completed", None), None),
        ])
        .await;
        assert!(saved_all.iter().all(Result::is_ok), "{}", database.name);
        for (index, run) in runs.iter().enumerate() {
            let seqs: Vec<i64> = store
                .events_after(run, 0)
                .await
                .unwrap()
                .iter()
                .map(|event| event.seq)
                .collect();
            let expected: &[i64] = match index {
                0 => &[1, 2],
                5 => &[],
                _ => &[2],
            };
            assert_eq!(seqs, expected, "{}: run {index}", database.name);
        }
        let rows = store.activation_rows(&runs[1]).await.unwrap();
        assert_eq!(rows.len(), 1, "{}", database.name);
        assert_eq!(rows[0].record, r#"{"turn":3}"#, "{}", database.name);
        assert_eq!(rows[0].ending.as_deref(), Some("kept"), "{}", database.name);
    }
}

#[tokio::test]
async fn writes_longer_than_one_statement_keep_every_row_and_value_in_place() {
    for database in support::databases().await {
        let store = support::store(&database).await;
        let run = server::runs::new_run_id();
        support::insert_bare_run(&store, &run).await;
        // More rows than any one statement takes, on either database, so
        // the values of later statements must land in their own rows.
        let events: Vec<StoredEvent> = (1..=300)
            .map(|seq| StoredEvent {
                seq,
                name: format!("event.{seq}"),
                payload: format!(r#"{{"n":{seq}}}"#),
                ts: 1_000 + seq,
            })
            .collect();
        store.append_events(&run, events, None).await.unwrap();
        let stored = store.events_after(&run, 0).await.unwrap();
        assert_eq!(stored.len(), 300, "{}", database.name);
        for (index, event) in stored.iter().enumerate() {
            let seq = i64::try_from(index).unwrap() + 1;
            assert_eq!(
                (
                    event.seq,
                    event.name.as_str(),
                    event.payload.as_str(),
                    event.ts
                ),
                (
                    seq,
                    format!("event.{seq}").as_str(),
                    format!(r#"{{"n":{seq}}}"#).as_str(),
                    1_000 + seq
                ),
                "{}",
                database.name
            );
        }

        let changes: Vec<(String, String)> = (0..200)
            .map(|key| (format!("key{key}"), format!("value{key}")))
            .collect();
        store.save_state(&run, &changes, None).await.unwrap();
        let state = store.state(&run).await.unwrap();
        assert_eq!(state.len(), 200, "{}", database.name);
        assert!(
            changes
                .iter()
                .all(|(key, value)| state.get(key) == Some(value)),
            "{}",
            database.name
        );

        let records: Vec<(String, String)> = (0..150)
            .map(|module| (format!("m{module}"), format!(r#"{{"module":{module}}}"#)))
            .collect();
        let saves = futures::future::join_all(records.iter().map(|(module_id, record)| {
            store.save_activation(
                &run,
                StoredActivation {
                    module_id,
                    activation: 1,
                    status: "completed",
                    record,
                    started_at: 1,
                    finished_at: Some(2),
                    ending: Some(record),
                },
                None,
            )
        }))
        .await;
        assert!(saves.iter().all(Result::is_ok), "{}", database.name);
        let rows = store.activation_rows(&run).await.unwrap();
        assert_eq!(rows.len(), 150, "{}", database.name);
        assert!(
            rows.iter()
                .all(|row| row.ending.as_deref() == Some(row.record.as_str())),
            "{}",
            database.name
        );
        let mut kept: Vec<&str> = rows.iter().map(|row| row.record.as_str()).collect();
        kept.sort_unstable();
        let mut given: Vec<&str> = records.iter().map(|(_, record)| record.as_str()).collect();
        given.sort_unstable();
        assert_eq!(kept, given, "{}", database.name);
    }
}

#[tokio::test]
async fn an_old_history_thins_out_keeping_the_first_the_current_and_what_runs_ran() {
    for database in support::databases().await {
        let store = support::store(&database).await;
        let id = new_graph_id();
        store
            .insert_graph(NewGraph {
                id: &id,
                edit_token_hash: "x",
                name: "v1",
                document: &document(&id, 1, "v1"),
                forked_from: None,
                schedules: &[],
            })
            .await
            .unwrap();
        for revision in 2..=30 {
            let name = format!("v{revision}");
            let text = document(&id, revision, &name);
            store
                .store_change(renamed(&id, revision - 1, &text, &name, Keep::Always))
                .await
                .unwrap();
        }
        // A run ran revision 10.
        store
            .insert_run(server::store::NewRun {
                id: &server::capability::new_run_id(),
                graph_id: Some(&id),
                graph_revision: Some(10),
                snapshot: "{}",
                input: "{}",
                budget_usd: None,
                lease: None,
                from: None,
                started_by: None,
            })
            .await
            .unwrap();
        // Young, nothing goes.
        assert_eq!(
            store.thin_history(&id).await.unwrap(),
            0,
            "{}",
            database.name
        );
        // Two hours on, one revision of those ten minutes stays, with the
        // first, the run's and the current one.
        let pool = sqlx::AnyPool::connect(&database.url).await.unwrap();
        // Saved a second apart, inside one ten-minute span two hours ago.
        let now = i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap();
        let span_start = (now - 7_200_000) / 600_000 * 600_000;
        sqlx::query(
            "UPDATE graph_revisions SET created_at = $2 + revision * 1000 WHERE graph_id = $1 AND revision < 30",
        )
        .bind(&id)
        .bind(span_start)
        .execute(&pool)
        .await
        .unwrap();
        assert_eq!(
            store.thin_history(&id).await.unwrap(),
            26,
            "{}",
            database.name
        );
        let kept: Vec<i64> = store
            .revisions(&id, None, 50)
            .await
            .unwrap()
            .iter()
            .map(|revision| revision.revision)
            .collect();
        assert_eq!(kept, [30, 29, 10, 1], "{}", database.name);
    }
}

/// Two processes on one PostgreSQL: A held a run, froze past its lease,
/// and B took it over. Whatever A still had in flight when it woke — an
/// activation's record saved or queued, state, status, how long it waited,
/// events — is refused as a lost lease and changes nothing of B's run.
#[tokio::test]
async fn a_process_that_lost_a_run_s_lease_can_write_nothing_of_it() {
    let Some(database) = support::postgres().await else {
        return;
    };
    let a = support::store(&database).await;
    let b = support::store(&database).await;
    let run = server::capability::new_run_id();
    a.insert_run(server::store::NewRun {
        id: &run,
        graph_id: None,
        graph_revision: None,
        snapshot: "{}",
        input: "{}",
        budget_usd: None,
        lease: Some(server::store::Lease {
            owner: "process-a",
            until: 1_000,
        }),
        from: None,
        started_by: None,
    })
    .await
    .unwrap();
    a.set_run_status(&run, "running", None, Some("process-a"))
        .await
        .unwrap();
    let claimed = b
        .claim_runs(
            server::store::Lease {
                owner: "process-b",
                until: i64::MAX,
            },
            2_000,
            10,
        )
        .await
        .unwrap();
    assert!(claimed.iter().any(|claimed| claimed.id == run));

    let record = |text: &'static str| StoredActivation {
        module_id: "m1",
        activation: 1,
        status: "completed",
        record: text,
        started_at: 1,
        finished_at: Some(2),
        ending: Some(text),
    };
    b.save_activation(&run, record(r#"{"by":"b"}"#), Some("process-b"))
        .await
        .unwrap();
    b.save_state(
        &run,
        &[("m1.status".to_owned(), "completed".to_owned())],
        Some("process-b"),
    )
    .await
    .unwrap();
    b.record_wait(&run, 5, None, Some("process-b"))
        .await
        .unwrap();
    b.set_run_status(&run, "completed", None, Some("process-b"))
        .await
        .unwrap();

    let lost = |outcome: Result<(), server::store::StoreError>, what: &str| {
        assert!(
            matches!(outcome, Err(server::store::StoreError::LeaseLost(_))),
            "A's {what} was not refused: {outcome:?}"
        );
    };
    a.queue_activation(&run, record(r#"{"by":"a, queued"}"#), Some("process-a"))
        .await
        .unwrap();
    lost(
        a.save_activation(&run, record(r#"{"by":"a"}"#), Some("process-a"))
            .await,
        "activation record",
    );
    lost(
        a.save_state(
            &run,
            &[("m1.status".to_owned(), "failed".to_owned())],
            Some("process-a"),
        )
        .await,
        "state",
    );
    lost(
        a.record_wait(&run, 99, Some(7), Some("process-a")).await,
        "wait",
    );
    lost(
        a.append_events(&run, vec![logged(1)], Some("process-a"))
            .await,
        "events",
    );
    // A status on a run that B has not finished yet.
    let second = server::capability::new_run_id();
    a.insert_run(server::store::NewRun {
        id: &second,
        graph_id: None,
        graph_revision: None,
        snapshot: "{}",
        input: "{}",
        budget_usd: None,
        lease: Some(server::store::Lease {
            owner: "process-b",
            until: i64::MAX,
        }),
        from: None,
        started_by: None,
    })
    .await
    .unwrap();
    lost(
        a.set_run_status(&second, "failed", Some("A's"), Some("process-a"))
            .await,
        "status",
    );

    let rows = b.activation_rows(&run).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].record, r#"{"by":"b"}"#);
    assert_eq!(rows[0].ending.as_deref(), Some(r#"{"by":"b"}"#));
    assert_eq!(b.state(&run).await.unwrap()["m1.status"], "completed");
    assert_eq!(b.run_wait(&run).await.unwrap(), (5, None));
    assert!(b.events_after(&run, 0).await.unwrap().is_empty());
    assert_eq!(b.run(&second).await.unwrap().unwrap().status, "queued");
    // Without a fence (the API's own writes), a write is stored.
    b.set_run_status(&second, "cancelled", None, None)
        .await
        .unwrap();
    assert_eq!(b.run(&second).await.unwrap().unwrap().status, "cancelled");
}

/// The run record's write queue is bounded: while the database does not
/// take writes (here another connection holds SQLite's write lock), a
/// checkpoint queued past the bound waits for room instead of piling up in
/// memory; once the database takes writes again every queued write is
/// stored.
#[tokio::test]
async fn a_stalled_database_makes_writes_past_the_bound_wait_for_room_and_loses_none() {
    use sqlx::{Connection, Executor};
    let database = support::databases().await.remove(0);
    let store = support::store(&database).await;
    support::insert_bare_run(&store, "r_stalled").await;
    let mut holder = sqlx::AnyConnection::connect(&database.url).await.unwrap();
    holder.execute("BEGIN IMMEDIATE").await.unwrap();

    let bound = server::store::MOST_WRITES_WAITING;
    let modules: Vec<String> = (0..bound * 2).map(|index| format!("m{index}")).collect();
    let mut queued = 0;
    for module_id in &modules {
        let queue = store.queue_activation(
            "r_stalled",
            StoredActivation {
                module_id,
                activation: 1,
                status: "running",
                record: "{}",
                started_at: 1,
                finished_at: None,
                ending: None,
            },
            None,
        );
        match tokio::time::timeout(std::time::Duration::from_millis(300), queue).await {
            Ok(outcome) => outcome.unwrap(),
            Err(_) => break,
        }
        queued += 1;
    }
    // The bound, and the group the writer took before the database
    // stalled it (512 at most).
    assert!(
        queued >= bound && queued <= bound + 512,
        "{queued} writes were queued with the database stalled"
    );

    holder.execute("ROLLBACK").await.unwrap();
    let outcome = store
        .save_activation(
            "r_stalled",
            StoredActivation {
                module_id: "after",
                activation: 1,
                status: "completed",
                record: "{}",
                started_at: 2,
                finished_at: Some(3),
                ending: Some("{}"),
            },
            None,
        )
        .await;
    outcome.unwrap();
    let rows = store.activation_rows("r_stalled").await.unwrap();
    assert_eq!(rows.len(), queued + 1);
}
