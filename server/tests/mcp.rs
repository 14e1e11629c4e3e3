//! Tools from real MCP servers (PRODUCT §3.17), through real `patchbay
//! serve` processes: the reference server `@modelcontextprotocol/server-
//! everything` over stdio (started confined for the run) and over
//! Streamable HTTP, and a server written with the official Python SDK
//! (`tests/mcp/refunds.py`). Listed without a secret, called in one
//! session, a structured result steering a cable, a timeout, a tool's
//! error, a secret taken out of a result, and no server process left after
//! a run completes, fails, is cancelled, times out, or its server is killed
//! with `kill -9` (the call in flight then not made twice unseen).
//!
//! `scripts/test` installs the servers and says where
//! (`PATCHBAY_TEST_MCP_EVERYTHING`, `PATCHBAY_TEST_MCP_PYTHON`); without
//! them these tests say why they skip, unless `PATCHBAY_REQUIRE_MCP=1`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mcp::*;
use support::processes::{Server, run_record, start_run, wait_for_status};

#[tokio::test]
async fn real_servers_are_listed_with_their_tools_and_never_a_command_path_or_secret() {
    let (Some(script), Some(python)) = (everything(), python()) else {
        return;
    };
    let http = HttpServer::start(&script).await;
    let mark = mark();
    let config = format!(
        "{}{}[[mcp_servers]]\nid = \"web\"\nurl = \"{}\"\nheaders_env = {{ \"X-Project\" = \"CARGO_MANIFEST_DIR\" }}\napproval = \"auto\"\n",
        everything_entry(
            "everything",
            &script,
            &mark,
            "env = { EVERYTHING_TOKEN = \"tok-listing-secret\" }"
        ),
        refunds_entry(&python, &mark, ""),
        http.url
    );
    let (server, _folder) = serve(&config).await;
    let response = engine::tls::client()
        .get(format!("{}/api/providers", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let listed: Value = serde_json::from_str(&response).unwrap();
    let servers = listed["tool_servers"].as_array().unwrap();
    let ids: Vec<&str> = servers
        .iter()
        .map(|server| server["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["patchbay", "everything", "refunds", "web"]);
    let tool = |server: usize, name: &str| -> Value {
        servers[server]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {}", servers[server]))
            .clone()
    };
    for server in [1, 3] {
        assert!(servers[server]["problem"].is_null(), "{}", servers[server]);
        assert_eq!(
            tool(server, "echo")["input_schema"]["properties"]["message"]["type"],
            "string"
        );
        assert_eq!(
            tool(server, "get-structured-content")["output_schema"]["properties"]["conditions"]["type"],
            "string"
        );
    }
    assert_eq!(servers[1]["transport"], "stdio");
    assert_eq!(servers[3]["transport"], "http");
    let review = tool(2, "review_refund");
    assert_eq!(review["annotations"]["read_only"], true);
    assert_eq!(
        review["input_schema"]["required"],
        json!(["amount", "reason"])
    );
    assert_eq!(tool(2, "issue_refund")["annotations"]["destructive"], true);
    // Nothing of how the servers are reached or what they are given.
    for never in [
        "node",
        script.to_str().unwrap(),
        python.to_str().unwrap(),
        "refunds.py",
        &mark,
        "tok-listing-secret",
        env!("CARGO_MANIFEST_DIR"),
        &http.url,
    ] {
        assert!(!response.contains(never), "{never} in {response}");
    }
}

#[tokio::test]
async fn an_agent_calls_tools_over_stdio_and_http_in_one_session_and_a_structured_result_steers_a_cable()
 {
    let Some(script) = everything() else {
        return;
    };
    let http = HttpServer::start(&script).await;
    let mark = mark();
    let config = format!(
        "{}[[mcp_servers]]\nid = \"web\"\nurl = \"{}\"\napproval = \"auto\"\n",
        everything_entry("everything", &script, &mark, ""),
        http.url
    );
    let (server, _folder) = serve(&config).await;
    let graph = agent_graph(
        "Greet, add, and tell me the weather.\n[sim:tool echo {\"message\": \"hello tools\"}]\n[sim:tool sum {\"a\": 2, \"b\": 3}]\n[sim:tool weather {\"location\": \"Chicago\"}]",
        json!([
            {"server": "everything", "tool": "echo"},
            {"server": "everything", "tool": "get-sum", "as": "sum"},
            {"server": "web", "tool": "get-structured-content", "as": "weather"}
        ]),
        json!({}),
        vec![
            json!({"to": "rainy", "condition": "get('$.tools.weather.outputs.latest.conditions') == 'Light rain / drizzle'"}),
            json!({"to": "sunny", "condition": "get('$.tools.weather.outputs.latest.conditions') == 'Sunny / Clear'"}),
        ],
    );
    let (_, _, run_id) = start_run(&server, graph).await;
    let run = wait_for_status(&server, &run_id, "completed").await;
    let ask = ask(&run);
    let calls = outcomes(ask);
    assert_eq!(
        calls,
        [("echo", "ok"), ("sum", "ok"), ("weather", "ok")],
        "{ask}"
    );
    let results = &ask["tool_calls"];
    assert_eq!(results[0]["result"], "Echo: hello tools");
    assert_eq!(results[1]["result"], "The sum of 2 and 3 is 5.");
    assert_eq!(results[2]["result"]["conditions"], "Light rain / drizzle");
    assert_eq!(results[2]["result"]["temperature"], 36);
    // The same session: one response, the model asked twice.
    assert_eq!(ask["responses"].as_array().unwrap().len(), 1);
    assert_eq!(ask["responses"][0]["calls"], 2);
    assert!(
        ask["responses"][0]["text"]
            .as_str()
            .unwrap()
            .contains("The sum of 2 and 3 is 5."),
        "{ask}"
    );
    // The structured result took the cable whose condition reads it.
    assert!(reached(&run, "rainy") && !reached(&run, "sunny"), "{run}");
    // Counted per tool on the receipt.
    let receipt = &ask["receipt"];
    assert_eq!(receipt["tools"].as_array().unwrap().len(), 3, "{receipt}");
    // Each call and its result were announced.
    let log = event_log(&server, &run_id).await;
    assert_eq!(log.matches("event: module.tool_call\n").count(), 3, "{log}");
    assert_eq!(log.matches("event: module.tool_result\n").count(), 3);
    no_process_left(&mark, "the run completed").await;
}

#[tokio::test]
async fn each_result_is_told_as_its_call_ends_not_when_the_slowest_of_the_reply_does() {
    let Some(script) = everything() else {
        return;
    };
    let mark = mark();
    let (server, _folder) = serve(&everything_entry("everything", &script, &mark, "")).await;
    // The slow call is asked for first; the quick one ends long before it.
    let graph = agent_graph(
        "Wait, and greet.\n[sim:tool wait {\"duration\": 2, \"steps\": 1}]\n[sim:tool echo {\"message\": \"hi\"}]",
        json!([
            {"server": "everything", "tool": "trigger-long-running-operation", "as": "wait"},
            {"server": "everything", "tool": "echo"}
        ]),
        json!({}),
        Vec::new(),
    );
    let (_, _, run_id) = start_run(&server, graph).await;
    wait_for_status(&server, &run_id, "completed").await;
    let log = event_log(&server, &run_id).await;
    let results: Vec<(String, i64)> = log
        .split("event: module.tool_result\n")
        .skip(1)
        .filter_map(|rest| rest.lines().find_map(|line| line.strip_prefix("data: ")))
        .map(|data| {
            let data: Value = serde_json::from_str(data).unwrap();
            (
                data["tool"].as_str().unwrap().to_owned(),
                data["ts"].as_i64().unwrap(),
            )
        })
        .collect();
    let told: Vec<&str> = results.iter().map(|(tool, _)| tool.as_str()).collect();
    assert_eq!(told, ["echo", "wait"], "{log}");
    assert!(
        results[1].1 - results[0].1 >= 1_500,
        "the quick result was told only when the slow one ended: {results:?}"
    );
    no_process_left(&mark, "the run completed").await;
}

#[tokio::test]
async fn a_call_past_its_timeout_is_cancelled_told_to_the_model_and_a_cancelled_run_leaves_no_server()
 {
    let Some(script) = everything() else {
        return;
    };
    let mark = mark();
    let config = everything_entry("everything", &script, &mark, "timeout_seconds = 1");
    let (server, _folder) = serve(&config).await;
    let slow = |duration: u32| {
        agent_graph(
            &format!("Take your time.\n[sim:tool slow {{\"duration\": {duration}, \"steps\": 2}}]"),
            json!([{"server": "everything", "tool": "trigger-long-running-operation", "as": "slow"}]),
            json!({}),
            Vec::new(),
        )
    };
    let started = Instant::now();
    let (_, _, run_id) = start_run(&server, slow(30)).await;
    let run = wait_for_status(&server, &run_id, "completed").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the timeout of 1 s was kept: {:?}",
        started.elapsed()
    );
    let call = &ask(&run)["tool_calls"][0];
    assert_eq!(call["outcome"], "timed_out", "{call}");
    assert!(
        ask(&run)["responses"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did not answer within 1 s"),
        "the model was told: {}",
        ask(&run)
    );
    assert!(reached(&run, "out"));
    no_process_left(&mark, "a run whose call timed out").await;

    // A run cancelled while its call runs.
    let mark = self::mark();
    let config = everything_entry("everything", &script, &mark, "timeout_seconds = 120");
    let (server, _folder) = serve(&config).await;
    let (_, token, run_id) = start_run(&server, slow(60)).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while processes_with(&mark).is_empty()
        || ask(&run_record(&server, &run_id).await)["tool_calls"]
            .as_array()
            .is_none_or(Vec::is_empty)
    {
        assert!(Instant::now() < deadline, "the call never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let cancelled = engine::tls::client()
        .post(format!("{}/api/runs/{run_id}/cancel", server.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert!(cancelled.status().is_success(), "{cancelled:?}");
    wait_for_status(&server, &run_id, "cancelled").await;
    no_process_left(&mark, "the run was cancelled").await;
}

#[tokio::test]
async fn a_run_that_fails_leaves_no_server_and_a_configured_secret_never_leaves_the_tool() {
    let Some(script) = everything() else {
        return;
    };
    let mark = mark();
    let secret = "s3cret-value-of-the-operator";
    let config = everything_entry(
        "everything",
        &script,
        &mark,
        &format!("env = {{ EVERYTHING_TOKEN = \"{secret}\" }}"),
    );
    let (server, _folder) = serve(&config).await;
    // get-env answers with its whole environment.
    let graph = agent_graph(
        "What is set?\n[sim:tool get-env {}]",
        json!([{"server": "everything", "tool": "get-env"}]),
        json!({}),
        Vec::new(),
    );
    let (_, _, run_id) = start_run(&server, graph).await;
    let run = wait_for_status(&server, &run_id, "completed").await;
    let result = ask(&run)["tool_calls"][0]["result"].to_string();
    assert!(result.contains("EVERYTHING_TOKEN"), "{result}");
    assert!(result.contains("[secret]"), "{result}");
    let log = event_log(&server, &run_id).await;
    for (what, text) in [("the record", run.to_string()), ("the events", log)] {
        assert!(!text.contains(secret), "the secret is in {what}: {text}");
    }

    // A model that keeps calling: past max_tool_calls the activation fails,
    // and with nothing on error_out, so does the run.
    let mut graph = agent_graph(
        "Again and again.\n[sim:tool-forever echo {\"message\": \"again\"}]",
        json!([{"server": "everything", "tool": "echo"}]),
        json!({"max_tool_calls": 2}),
        Vec::new(),
    );
    graph["cables"].as_array_mut().unwrap().remove(1);
    graph["modules"].as_array_mut().unwrap().remove(2);
    let (_, _, run_id) = start_run(&server, graph).await;
    let run = wait_for_status(&server, &run_id, "failed").await;
    assert!(
        ask(&run)["error"]
            .as_str()
            .unwrap()
            .starts_with("tools.limit_reached"),
        "{run}"
    );
    no_process_left(&mark, "the run failed").await;
}

#[tokio::test]
async fn a_python_sdk_server_decides_by_the_seeds_path_and_its_errors_go_back_to_the_model() {
    let Some(python) = python() else {
        return;
    };
    let mark = mark();
    let folder = tempfile::tempdir().unwrap();
    let log = folder.path().join("issued.log");
    let config = refunds_entry(
        &python,
        &mark,
        &format!(
            "folder = \"{}\"\nenv = {{ REFUNDS_LOG = \"{}\" }}",
            folder.path().display(),
            log.display()
        ),
    );
    let (server, _config) = serve(&config).await;
    let graph = agent_graph(
        "Review and pay.\n[sim:tool approval {\"amount\": 40, \"reason\": \"arrived broken\"}]\n[sim:tool pay {\"amount\": 40}]\n[sim:tool fail {\"message\": \"no such order\"}]",
        json!([
            {"server": "refunds", "tool": "review_refund", "as": "approval"},
            {"server": "refunds", "tool": "issue_refund", "as": "pay", "arguments": {"account": "acct-{{ input }}"}},
            {"server": "refunds", "tool": "fail"}
        ]),
        json!({}),
        vec![
            json!({"to": "approved", "condition": "get('$.tools.approval.outputs.latest.decision') == 'approved'"}),
            json!({"to": "other"}),
        ],
    );
    let (_, _, run_id) = start_run(&server, graph).await;
    let run = wait_for_status(&server, &run_id, "completed").await;
    let calls = &ask(&run)["tool_calls"];
    assert_eq!(calls[0]["outcome"], "ok", "{calls}");
    assert_eq!(calls[0]["result"]["decision"], "approved", "{calls}");
    // The locked account was used, and is shown locked.
    assert_eq!(calls[1]["outcome"], "ok");
    // A result in text only is kept as its text.
    let paid: Value = serde_json::from_str(calls[1]["result"].as_str().unwrap()).unwrap();
    assert_eq!(paid["account"], "acct-the moon");
    assert_eq!(calls[1]["arguments"]["account"], "🔒 locked");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "acct-the moon 40.0\n"
    );
    // The tool's error went back to the model, and the run went on.
    assert_eq!(calls[2]["outcome"], "error");
    assert!(
        calls[2]["result"]
            .as_str()
            .unwrap()
            .contains("Error executing tool fail"),
        "{calls}"
    );
    // The seed's routing: the decision's cable, not the catch-all.
    assert!(
        reached(&run, "approved") && !reached(&run, "other"),
        "{run}"
    );
    no_process_left(&mark, "the run completed").await;
}

#[tokio::test]
async fn a_server_killed_mid_call_resumes_without_repeating_a_call_that_may_have_happened() {
    let (Some(script), Some(python)) = (everything(), python()) else {
        return;
    };
    let mark = mark();
    let folder = tempfile::tempdir().unwrap();
    let log = folder.path().join("issued.log");
    let config = format!(
        "{}{}",
        refunds_entry(
            &python,
            &mark,
            &format!(
                "folder = \"{}\"\nenv = {{ REFUNDS_LOG = \"{}\", REFUNDS_DELAY = \"30\" }}",
                folder.path().display(),
                log.display()
            ),
        ),
        // Its read-only marks are believed: the operator trusts it.
        everything_entry("everything", &script, &mark, "trusted = true")
    );
    let (mut first, config_folder) = serve(&config).await;
    // Paying takes 30 s; waiting (read-only) 3 s.
    let graph = agent_graph(
        "Pay, and wait.\n[sim:tool pay {\"amount\": 20, \"account\": \"acct-7\"}]\n[sim:tool wait {\"duration\": 3, \"steps\": 1}]",
        json!([
            {"server": "refunds", "tool": "issue_refund", "as": "pay"},
            {"server": "everything", "tool": "trigger-long-running-operation", "as": "wait"}
        ]),
        json!({}),
        Vec::new(),
    );
    let (_, _, run_id) = start_run(&first, graph).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&log).unwrap_or_default().is_empty() {
        assert!(Instant::now() < deadline, "the refund was never asked for");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Both calls are in flight (the checkpoint before them is written
    // before they are made).
    tokio::time::sleep(Duration::from_millis(300)).await;
    first.kill_9();
    no_process_left(&mark, "the server was killed with kill -9").await;

    let database = format!(
        "sqlite://{}?mode=rwc",
        config_folder.path().join("db.sqlite").display()
    );
    let second = Server::start(
        &database,
        &config_folder
            .path()
            .join("patchbay.toml")
            .display()
            .to_string(),
        &[],
    )
    .await;
    let run = wait_for_status(&second, &run_id, "completed").await;
    let calls = &ask(&run)["tool_calls"];
    let ended = outcomes(ask(&run));
    // The payment may have happened: the model is told, never asked again
    // unseen; the wait, read-only on a server the operator trusts, is
    // simply made again.
    assert_eq!(ended, [("pay", "interrupted"), ("wait", "ok")], "{calls}");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "acct-7 20.0\n",
        "the refund was asked for once"
    );
    assert!(
        ask(&run)["responses"][0]["text"]
            .as_str()
            .unwrap()
            .contains("may or may not have happened"),
        "{}",
        ask(&run)
    );
    drop(second);
    no_process_left(&mark, "the resumed run completed").await;
}

/// `patchbay tools --http` serves the built-in tools over Streamable HTTP
/// (what the benchmark measures HTTP with): an operator's server like any,
/// called by an agent task.
#[tokio::test]
async fn the_built_in_tools_serve_over_streamable_http_as_an_operators_server() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut tools = std::process::Command::new(env!("CARGO_BIN_EXE_patchbay"))
        .args(["tools", "--http", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "patchbay tools --http did not listen"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let config = format!(
        "[[mcp_servers]]\nid = \"calc\"\nurl = \"http://127.0.0.1:{port}/mcp\"\napproval = \"auto\"\n"
    );
    let (server, _folder) = serve(&config).await;
    let graph = agent_graph(
        "Work it out.\n[sim:tool calculate {\"expression\": \"6*7\"}]",
        json!([{"server": "calc", "tool": "calculate"}]),
        json!({}),
        Vec::new(),
    );
    let (_, _, run_id) = start_run(&server, graph).await;
    let run = wait_for_status(&server, &run_id, "completed").await;
    let _ = tools.kill();
    let _ = tools.wait();
    assert_eq!(outcomes(ask(&run)), [("calculate", "ok")], "{run}");
    assert_eq!(
        ask(&run)["tool_calls"][0]["result"]["result"],
        42.0,
        "{run}"
    );
}
