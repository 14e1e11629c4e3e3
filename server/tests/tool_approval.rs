//! Tool calls under a person's control (PRODUCT §3.17), through the HTTP
//! API of real `patchbay serve` processes and real MCP servers: the
//! reference filesystem server (`write_file` waits across `kill -9`, then
//! writes exactly the approved file once and the model sees the result; a
//! trusted server's `read_text_file` runs without waiting; a timeout fires
//! after a restart) and the Python SDK's refunds server (`issue_refund`,
//! destructive, logs every call: made once with the person's arguments, a
//! rejection told to the model with its reason, a call nobody decides on
//! in time refused, the first of eight decisions at once wins on SQLite and
//! PostgreSQL, the webhook and the home page hear of it, and no stranger
//! decides — no token, a forged one, another graph's, another run's
//! approver link).

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::mcp::{agent_graph, ask, mark, outcomes, python, refunds_entry};
use support::processes::{Server, decide, run_record, start_run, wait_for_status, webhook};

/// The refunds server as the operator configures it (calls wait unless
/// `more` says otherwise), logging each refund to `log`.
fn refunds(python: &Path, log: &Path, more: &str) -> String {
    refunds_entry(
        python,
        &mark(),
        &format!(
            "folder = \"{}\"\nenv = {{ REFUNDS_LOG = \"{}\" }}\napproval = \"by_annotation\"\n{more}",
            log.parent().unwrap().display(),
            log.display()
        ),
    )
}

/// An agent task whose model asks to refund 20 to acct-7, and then
/// answers with what the tool said.
fn refund_graph(tool: Value) -> Value {
    agent_graph(
        "Refund the customer.\n[sim:tool pay {\"amount\": 20, \"account\": \"acct-7\"}]",
        json!([tool]),
        json!({}),
        Vec::new(),
    )
}

fn pay() -> Value {
    json!({"server": "refunds", "tool": "issue_refund", "as": "pay"})
}

/// Waits until the agent task's first activation waits on its calls; its
/// waiting call's id.
async fn waiting_call(server: &Server, run_id: &str) -> (Value, String) {
    for _ in 0..1200 {
        let run = run_record(server, run_id).await;
        if ask(&run)["status"] == "waiting" {
            let id = ask(&run)["tool_calls"][0]["call_id"]
                .as_str()
                .unwrap()
                .to_owned();
            return (run, id);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the agent task of run {run_id} never waited");
}

async fn serve(database: &str, folder: &Path, config: &str) -> Server {
    let file = folder.join("patchbay.toml");
    std::fs::write(&file, config).unwrap();
    Server::start(database, &file.display().to_string(), &[]).await
}

fn sqlite(folder: &Path) -> String {
    format!("sqlite://{}?mode=rwc", folder.join("db.sqlite").display())
}

#[tokio::test]
async fn a_waiting_call_is_made_once_as_approved_with_edited_arguments_and_no_stranger_decides() {
    let Some(python) = python() else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let log = folder.path().join("refunds.log");
    let (received, url) = webhook().await;
    let config = format!(
        "{}\n[[webhooks]]\nid = \"ops\"\nurl = \"{url}\"\n",
        refunds(&python, &log, "")
    );
    let server = serve(&sqlite(folder.path()), folder.path(), &config).await;
    let mut graph = refund_graph(pay());
    graph["modules"][1]["config"]["notify"] = json!(["ops"]);
    let (graph_id, token, run_id) = start_run(&server, graph).await;
    let (run, call_id) = waiting_call(&server, &run_id).await;
    wait_for_status(&server, &run_id, "waiting").await;
    // The home page lists the graph's run as waiting for a person.
    let summaries: Value = engine::tls::client()
        .post(format!("{}/api/graphs/summaries", server.base))
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
    // The webhook the module notifies hears it, as it hears an approval.
    let mut notice = Value::Null;
    for _ in 0..200 {
        if let Some(first) = received.lock().unwrap().first() {
            notice = first.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(notice["event"], "tool_call.waiting", "{notice}");
    assert_eq!(notice["run_id"], run_id.as_str(), "{notice}");
    assert_eq!(notice["asked"], "May it call pay?", "{notice}");
    assert!(
        !notice.to_string().contains(&token),
        "no edit token in a notice"
    );
    let call = &ask(&run)["tool_calls"][0];
    assert_eq!(call["outcome"], "waiting", "{run}");
    assert_eq!(
        call["arguments"],
        json!({"amount": 20, "account": "acct-7"})
    );
    assert_eq!(
        call["waits"]["reason"], "Calls wait for you: it is not marked read-only",
        "{run}"
    );
    assert!(
        !log.exists(),
        "nothing is refunded before a person approves"
    );

    // Strangers: no token, a forged one, another graph's, an approver
    // link of another run.
    let approve = json!({"call": call_id, "decision": "approve"});
    let (status, body) = decide(&server, &run_id, "ask", None, approve.clone()).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("decision.token_required"))
    );
    let forged = "e".repeat(token.len());
    assert_eq!(
        decide(&server, &run_id, "ask", Some(&forged), approve.clone())
            .await
            .0,
        403
    );
    let (_, other_token, other_run) = start_run(&server, refund_graph(pay())).await;
    assert_eq!(
        decide(&server, &run_id, "ask", Some(&other_token), approve.clone())
            .await
            .0,
        403
    );
    let other_link: Value = engine::tls::client()
        .post(format!(
            "{}/api/runs/{other_run}/approver-links",
            server.base
        ))
        .bearer_auth(&other_token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let other_approver = other_link["token"].as_str().unwrap();
    assert_eq!(
        decide(
            &server,
            &run_id,
            "ask",
            Some(other_approver),
            approve.clone()
        )
        .await
        .0,
        403
    );
    // Bad input: a call it does not wait on, a locked argument, a revise.
    let (status, body) = decide(
        &server,
        &run_id,
        "ask",
        Some(&token),
        json!({"call": "nope", "decision": "approve"}),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("decision.not_waiting"))
    );
    let (status, body) = decide(
        &server,
        &run_id,
        "ask",
        Some(&token),
        json!({"call": call_id, "decision": "revise", "feedback": "again"}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["details"]["path"], "decision", "{body}");
    assert!(!log.exists());

    // An approver link of this run decides, with edited arguments.
    let link: Value = engine::tls::client()
        .post(format!("{}/api/runs/{run_id}/approver-links", server.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let approver = link["token"].as_str().unwrap();
    let (status, decided) = decide(&server, &run_id, "ask",
        Some(approver),
        json!({"call": call_id, "decision": "approve", "arguments": {"amount": 15, "account": "acct-7"}}),
    )
    .await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["tool_calls"][0]["decision"]["by"], "approver_link");
    let (status, body) = decide(&server, &run_id, "ask", Some(&token), approve).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("decision.already_taken")),
        "{body}"
    );

    let run = wait_for_status(&server, &run_id, "completed").await;
    assert_eq!(outcomes(ask(&run)), [("pay", "ok")], "{run}");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "acct-7 15.0\n",
        "made once, with the person's amount"
    );
    let result = ask(&run)["tool_calls"][0]["result"].to_string();
    assert!(result.contains("issued"), "{result}");
    let said = run["modules"]["out"]["activations"][0]["outputs"].to_string();
    assert!(
        said.contains("The tools said: pay →"),
        "the session went on: {said}"
    );
}

#[tokio::test]
async fn a_rejected_call_tells_the_model_why_and_one_nobody_decides_on_in_time_is_refused() {
    let Some(python) = python() else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let log = folder.path().join("refunds.log");
    let server = serve(
        &sqlite(folder.path()),
        folder.path(),
        &refunds(&python, &log, ""),
    )
    .await;
    let (_, token, run_id) = start_run(&server, refund_graph(pay())).await;
    let (_, call_id) = waiting_call(&server, &run_id).await;
    let (status, body) = decide(&server, &run_id, "ask",
        Some(&token),
        json!({"call": call_id, "decision": "reject", "feedback": "Refunds over 10 go through finance."}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let run = wait_for_status(&server, &run_id, "completed").await;
    let call = &ask(&run)["tool_calls"][0];
    assert_eq!(call["outcome"], "declined", "{run}");
    assert_eq!(
        call["result"],
        "A person declined this call. Their reason: Refunds over 10 go through finance."
    );
    let said = run["modules"]["out"]["activations"][0]["outputs"].to_string();
    assert!(
        said.contains("go through finance"),
        "the session went on: {said}"
    );
    assert!(!log.exists(), "a rejected call is never made");

    // Nobody decides within a second.
    let mut timed = pay();
    timed["timeout_seconds"] = json!(1);
    let (_, _, run_id) = start_run(&server, refund_graph(timed)).await;
    let run = wait_for_status(&server, &run_id, "completed").await;
    let call = &ask(&run)["tool_calls"][0];
    assert_eq!(call["outcome"], "declined", "{run}");
    assert_eq!(
        call["result"],
        "The call was not made: nobody approved it in time."
    );
    assert!(call["decision"]["by"].is_null(), "{run}");
    assert!(!log.exists());
}

#[tokio::test]
async fn a_call_waits_across_a_kill_9_and_the_first_of_eight_decisions_wins_on_both_stores() {
    let Some(python) = python() else {
        return;
    };
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let log = folder.path().join("refunds.log");
        let config = refunds(&python, &log, "");
        let mut first = serve(&database.url, folder.path(), &config).await;
        let (_, token, run_id) = start_run(&first, refund_graph(pay())).await;
        let (_, call_id) = waiting_call(&first, &run_id).await;
        first.kill_9();
        let second = serve(&database.url, folder.path(), &config).await;
        // Still waiting, and decided there by the first of eight at once.
        let (_, again) = waiting_call(&second, &run_id).await;
        assert_eq!(again, call_id);
        let decisions = (0..8).map(|at| {
            let body = if at % 2 == 0 {
                json!({"call": call_id, "decision": "approve"})
            } else {
                json!({"call": call_id, "decision": "reject", "feedback": format!("no {at}")})
            };
            decide(&second, &run_id, "ask", Some(&token), body)
        });
        let answers = futures::future::join_all(decisions).await;
        let statuses: Vec<u16> = answers.iter().map(|(status, _)| *status).collect();
        assert_eq!(
            statuses.iter().filter(|status| **status == 200).count(),
            1,
            "{statuses:?} on {}",
            database.name
        );
        assert!(statuses.iter().all(|status| matches!(status, 200 | 409)));
        let winner = &answers.iter().find(|(status, _)| *status == 200).unwrap().1["tool_calls"][0]
            ["decision"]["decision"];
        let run = wait_for_status(&second, &run_id, "completed").await;
        let call = &ask(&run)["tool_calls"][0];
        assert_eq!(&call["decision"]["decision"], winner, "{run}");
        let made = std::fs::read_to_string(&log).unwrap_or_default();
        if winner == "approve" {
            assert_eq!(call["outcome"], "ok");
            assert_eq!(made, "acct-7 20.0\n", "made once");
        } else {
            assert_eq!(call["outcome"], "declined");
            assert_eq!(made, "", "never made");
        }
    }
}

/// An agent task with the filesystem server's `write_file` and
/// `read_text_file`, whose model asks for the call `asked` (a
/// `[sim:tool …]` line).
fn files_graph(asked: &str, write_file: Value) -> Value {
    agent_graph(
        &format!("Keep the notes.\n{asked}"),
        json!([write_file, {"server": "files", "tool": "read_text_file"}]),
        json!({}),
        Vec::new(),
    )
}

#[tokio::test]
async fn write_file_waits_across_a_kill_9_and_writes_exactly_the_approved_file_once() {
    let Some(script) = support::mcp::filesystem() else {
        return;
    };
    for database in support::databases().await {
        let folder = tempfile::tempdir().unwrap();
        let files = folder.path().join("files");
        std::fs::create_dir(&files).unwrap();
        let config = support::mcp::filesystem_entry(&script, &files, "");
        let mut first = serve(&database.url, folder.path(), &config).await;
        let asked = format!(
            "[sim:tool write_file {{\"path\": \"{}\", \"content\": \"a draft\"}}]",
            files.join("draft.md").display()
        );
        let (_, token, run_id) = start_run(
            &first,
            files_graph(&asked, json!({"server": "files", "tool": "write_file"})),
        )
        .await;
        let (run, call_id) = waiting_call(&first, &run_id).await;
        assert_eq!(
            ask(&run)["tool_calls"][0]["waits"]["reason"],
            "Calls wait for you: it is not marked read-only"
        );
        first.kill_9();
        let second = serve(&database.url, folder.path(), &config).await;
        let (_, again) = waiting_call(&second, &run_id).await;
        assert_eq!(again, call_id, "the same call still waits");
        assert!(
            std::fs::read_dir(&files).unwrap().next().is_none(),
            "nothing written yet"
        );
        let notes = files.join("notes.md");
        let (status, body) = decide(
            &second,
            &run_id,
            "ask",
            Some(&token),
            json!({"call": call_id, "decision": "approve", "arguments": {"path": notes.display().to_string(), "content": "as approved"}}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let run = wait_for_status(&second, &run_id, "completed").await;
        assert_eq!(outcomes(ask(&run)), [("write_file", "ok")], "{run}");
        // Exactly the approved file, with the approved text.
        let written: Vec<String> = std::fs::read_dir(&files)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(written, ["notes.md"], "on {}", database.name);
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "as approved");
        // The model's next turn saw what the tool said.
        let said = run["modules"]["out"]["activations"][0]["outputs"].to_string();
        assert!(
            said.contains("The tools said: write_file → Successfully wrote"),
            "{said}"
        );
    }
}

#[tokio::test]
async fn a_trusted_servers_read_only_tool_runs_without_waiting_and_a_timeout_fires_after_a_restart()
{
    let Some(script) = support::mcp::filesystem() else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let files = folder.path().join("files");
    std::fs::create_dir(&files).unwrap();
    std::fs::write(files.join("seed.md"), "the seed").unwrap();
    let config = support::mcp::filesystem_entry(&script, &files, "");
    let database = sqlite(folder.path());
    let mut first = serve(&database, folder.path(), &config).await;
    let read = format!(
        "[sim:tool read_text_file {{\"path\": \"{}\"}}]",
        files.join("seed.md").display()
    );
    let (_, _, run_id) = start_run(
        &first,
        files_graph(&read, json!({"server": "files", "tool": "write_file"})),
    )
    .await;
    let run = wait_for_status(&first, &run_id, "completed").await;
    let call = &ask(&run)["tool_calls"][0];
    assert_eq!(call["outcome"], "ok", "{run}");
    assert!(call.get("waits").is_none(), "it never waited: {call}");

    // A call that waits 3 s, with the server down when its time comes.
    let asked = format!(
        "[sim:tool write_file {{\"path\": \"{}\", \"content\": \"late\"}}]",
        files.join("late.md").display()
    );
    let (_, _, run_id) = start_run(
        &first,
        files_graph(
            &asked,
            json!({"server": "files", "tool": "write_file", "timeout_seconds": 3}),
        ),
    )
    .await;
    waiting_call(&first, &run_id).await;
    first.kill_9();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let second = serve(&database, folder.path(), &config).await;
    let run = wait_for_status(&second, &run_id, "completed").await;
    let call = &ask(&run)["tool_calls"][0];
    assert_eq!(call["outcome"], "declined", "{run}");
    assert_eq!(
        call["result"],
        "The call was not made: nobody approved it in time."
    );
    assert!(!files.join("late.md").exists());
}
