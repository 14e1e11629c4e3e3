//! A second real coding agent, Qwen Code (`@qwen-code/qwen-code` with
//! `--acp`), driven by coding modules through the HTTP API. Its model calls
//! go to a loopback mock of OpenAI's Chat Completions (the wire the project's
//! own provider speaks), which plays a read of notes.md, an edit of it (tool
//! calls the agent asks permission for and performs through our confined
//! `fs/*` methods), then plain text. A downstream module continues the
//! agent's session (Qwen Code offers `session/load`, and finds a session by
//! the folder it was opened in: the downstream's copy is shown there).
//! Given an operator's MCP server (the reference server) in its ACP session,
//! it starts it and calls its `get-sum` for the model (PRODUCT §3.17).
//!
//! Optional and slower (about ten seconds): scripts/test installs the package
//! in `~/.cache/patchbay/real-agents/qwen-code`; when it is absent the test
//! says why and skips, unless `PATCHBAY_REQUIRE_REAL_AGENT=1`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use graph::Extra;
use graph::config::{SessionMode, WorkspaceConfig};
use serde_json::{Value, json};
use support::coding::{activation_of, agent, coding_chain_graph, config, run_document, setup};
use support::coding::{responses_of, transcript_of};
use support::real_agent;

const NEW_CONTENT: &str = "edited by Qwen Code through Patchbay\n";
/// Prompt tokens the mock reports for every call.
const PROMPT_TOKENS: u64 = 11;

/// The chat requests the mock received, in order.
#[derive(Clone, Default)]
struct MockOpenAi {
    calls: Arc<Mutex<Vec<Value>>>,
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect(),
        _ => String::new(),
    }
}

/// The folder the agent works in, as its first message says it.
fn working_folder(messages: &[Value]) -> String {
    const SAID: &str = "I'm currently working in the directory: ";
    messages
        .iter()
        .map(|message| text_of(&message["content"]))
        .find_map(|text| {
            let start = text.find(SAID)? + SAID.len();
            text[start..].split_whitespace().next().map(str::to_owned)
        })
        .unwrap_or_default()
}

/// What the recorded model says next: asked to edit notes.md, it reads the
/// file, then writes it (Qwen Code writes only what it has read), then says
/// so; anything else is answered with how much history it was sent.
enum Reply {
    Tool(&'static str, Value),
    Text(String),
}

fn reply(request: &Value) -> Reply {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let notes = format!("{}/notes.md", working_folder(&messages));
    let last = messages.last().cloned().unwrap_or(Value::Null);
    if last["role"] == "tool" {
        let called = messages
            .iter()
            .rev()
            .find(|message| message["role"] == "assistant")
            .and_then(|message| message["tool_calls"][0]["function"]["name"].as_str());
        return match called {
            Some("read_file") => Reply::Tool(
                "write_file",
                json!({"file_path": notes, "content": NEW_CONTENT}),
            ),
            _ => Reply::Text("I updated notes.md.".to_owned()),
        };
    }
    if last["role"] == "user" && text_of(&last["content"]).contains("EDIT notes.md") {
        return Reply::Tool("read_file", json!({"file_path": notes}));
    }
    Reply::Text(format!(
        "Re-prompt answer, with {} messages of history.",
        messages.len()
    ))
}

/// One streamed chunk of a chat completion.
fn chunk(delta: &Value, finish: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {chunk}\n\n")
}

async fn answer(State(mock): State<MockOpenAi>, uri: Uri, body: Bytes) -> Response {
    if uri.path().ends_with("/models") {
        return axum::Json(json!({"object": "list", "data": [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}]}))
            .into_response();
    }
    if !uri.path().ends_with("/chat/completions") {
        return StatusCode::NOT_FOUND.into_response();
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let reply = reply(&request);
    mock.calls.lock().unwrap().push(request);
    let mut stream = String::new();
    let finish = match reply {
        Reply::Tool(name, arguments) => {
            let call = json!({"index": 0, "id": format!("call_{name}"), "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}});
            stream.push_str(&chunk(
                &json!({"role": "assistant", "content": null, "tool_calls": [call]}),
                None,
            ));
            "tool_calls"
        }
        Reply::Text(text) => {
            stream.push_str(&chunk(&json!({"role": "assistant", "content": text}), None));
            "stop"
        }
    };
    stream.push_str(&chunk(&json!({}), Some(finish)));
    let usage = json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
        "choices": [],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": 7, "total_tokens": PROMPT_TOKENS + 7},
    });
    stream.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    ([(header::CONTENT_TYPE, "text/event-stream")], stream).into_response()
}

async fn start_mock() -> (MockOpenAi, String) {
    let mock = MockOpenAi::default();
    let app = Router::new().fallback(answer).with_state(mock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (mock, format!("http://{address}/v1"))
}

/// The server's configuration: a profile for Qwen Code, asking permission
/// for edits (`--approval-mode default`; its own default writes without
/// asking), its settings turning off telemetry, update checks and the side
/// calls it makes after each turn.
fn write_config(folder: &Path, script: &Path, mock_url: &str) -> PathBuf {
    let package = real_agent::package_folder(script);
    let settings = folder.join("qwen-settings.json");
    std::fs::write(
        &settings,
        json!({
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": "mock-model"},
            "general": {"enableAutoUpdate": false},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "ui": {"enableFollowupSuggestions": false},
            "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false, "enableAutoSkill": false},
        })
        .to_string(),
    )
    .unwrap();
    let config_file = folder.join("patchbay.toml");
    std::fs::write(
        &config_file,
        format!(
            "[[acp_profiles]]\nid = \"qwen\"\nname = \"Qwen Code\"\ncommand = \"node\"\n\
             args = [{:?}, \"--acp\", \"--approval-mode\", \"default\"]\n\
             read_only = [{:?}, {:?}]\n\
             env = {{ OPENAI_API_KEY = \"dummy\", OPENAI_BASE_URL = {:?}, OPENAI_MODEL = \"mock-model\", \
             QWEN_USAGE_STATISTICS_ENABLED = \"false\", QWEN_CODE_SYSTEM_SETTINGS_PATH = {:?} }}\n",
            script.display().to_string(),
            package.display().to_string(),
            settings.display().to_string(),
            mock_url,
            settings.display().to_string(),
        ),
    )
    .unwrap();
    config_file
}

#[tokio::test]
async fn qwen_code_edits_a_file_answers_a_re_prompt_and_is_offered_to_the_next_module() {
    let Some(script) = real_agent::or_skip(real_agent::script(
        "PATCHBAY_TEST_QWEN_CODE",
        ".cache/patchbay/real-agents/qwen-code/node_modules/@qwen-code/qwen-code/cli-entry.js",
        "@qwen-code/qwen-code",
    )) else {
        return;
    };
    let (mock, mock_url) = start_mock().await;
    let folder = tempfile::tempdir().unwrap();
    let config_file = write_config(folder.path(), &script, &mock_url);
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.md"), "first draft\n").unwrap();

    let setup = setup(Some(&config_file)).await;
    let mut builder = agent("builder", None, &["Summarise what you changed."]);
    builder.acp_profile_id = Some("qwen".to_owned());
    let mut build = config(
        "EDIT notes.md so that it says who edited it.",
        vec![builder],
    );
    build.workspace = WorkspaceConfig {
        path: Some(project.path().display().to_string()),
        extra: Extra::new(),
    };
    let mut fixer = agent("fixer", Some("What did you change before?"), &[]);
    fixer.acp_profile_id = Some("qwen".to_owned());
    fixer.session_mode = SessionMode::Continue;
    let document = coding_chain_graph(vec![
        ("build", "Build", build),
        ("fix", "Fix", config("Go on.", vec![fixer])),
    ]);
    let run = run_document(&setup, document, "notes").await;
    assert_eq!(run["status"], "completed", "{run}");

    // Build: the edit, the reply after it, the re-prompt in the same session.
    let responses = responses_of(&run, "build");
    let labels: Vec<&str> = responses.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(labels, ["builder · Original", "builder · Re-prompt 1"]);
    assert!(
        responses[0].1.contains("I updated notes.md."),
        "{responses:?}"
    );
    assert!(responses[1].1.contains("Re-prompt answer"), "{responses:?}");
    let build = activation_of(&run, "build");
    let text = transcript_of(&run, "build");
    assert!(text.contains("permission allowed"), "{text}");
    assert!(text.contains("wrote "), "{text}");
    let diff = build["outputs"]["diff_out"]["content"].as_str().unwrap();
    assert!(diff.contains("-first draft"), "{diff}");
    assert!(
        diff.contains(&format!("+{}", NEW_CONTENT.trim_end())),
        "{diff}"
    );
    // The configured folder was copied, never edited in place.
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes.md")).unwrap(),
        "first draft\n"
    );

    // Four model calls for Build (read, write, the reply, the re-prompt),
    // the re-prompt's carrying the whole first turn: one session. Its
    // tokens come from the empty message chunks Qwen Code reports them on.
    let calls = mock.calls.lock().unwrap().clone();
    let history: Vec<usize> = calls
        .iter()
        .map(|call| call["messages"].as_array().map_or(0, Vec::len))
        .collect();
    assert!(history.len() >= 4, "{history:?}");
    assert!(
        history[..4].windows(2).all(|pair| pair[0] < pair[1]),
        "{history:?}"
    );
    let receipt = &build["receipt"];
    assert_eq!(receipt["provider"], "acp:qwen");
    assert_eq!(receipt["simulated"], false);
    assert_eq!(
        receipt["tokens_in"],
        4 * PROMPT_TOKENS,
        "{PROMPT_TOKENS} prompt tokens for each of Build's 4 model calls: {receipt}"
    );

    // Fix continues Build's session. Qwen Code keeps a session with the
    // folder it was opened in, and Fix works in a copy of Build's folder,
    // shown to the agent at Build's path: there the agent loads it, and
    // Fix's question comes with all of Build's conversation before it.
    let fix = transcript_of(&run, "fix");
    assert!(
        fix.contains("continues the session of \"Build\" (builder)"),
        "the session was taken up: {fix}"
    );
    assert!(!fix.contains("could not"), "{fix}");
    let fix_call = calls
        .iter()
        .find(|call| {
            call["messages"].as_array().is_some_and(|messages| {
                messages.iter().any(|message| {
                    text_of(&message["content"]).contains("What did you change before?")
                })
            })
        })
        .expect("Fix's question reached the model");
    let carried = fix_call["messages"].as_array().map_or(0, Vec::len);
    assert!(
        carried > history[3],
        "Fix's call carries Build's {} messages and more: {carried}",
        history[3]
    );
    let fix_responses = responses_of(&run, "fix");
    assert!(
        fix_responses[0]
            .1
            .contains(&format!("with {carried} messages of history")),
        "{fix_responses:?}"
    );
    assert_eq!(activation_of(&run, "fix")["status"], "completed");

    // What the agent offers is learned from the run: the agent card shows it.
    let (_, catalogue) = support::call(&setup.router, support::get("/api/providers")).await;
    let profile = catalogue["acp_profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|profile| profile["id"] == "qwen")
        .cloned()
        .unwrap();
    let offers = &profile["offers"];
    assert_eq!(offers["load_session"], true, "{profile}");
    assert!(
        offers["models"].as_array().is_some_and(|models| models
            .iter()
            .any(|model| model.as_str().is_some_and(|id| id.contains("mock-model")))),
        "{profile}"
    );
    assert!(
        offers["modes"]
            .as_array()
            .is_some_and(|modes| modes.iter().any(|mode| mode == "default")),
        "{profile}"
    );
}

/// The tool the recorded model calls: the reference server's `get-sum`.
const SUM_TOOL: &str = "get-sum";

/// The name the agent gives the reference server's `get-sum`, in `text`.
fn sum_named_in(text: &str) -> Option<String> {
    if text.starts_with("No tools found") {
        return None;
    }
    // Its full name (server-qualified), not the query said back.
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|word| word.contains(SUM_TOOL))
        .max_by_key(|word| word.len())
        .map(str::to_owned)
}

/// The recorded model of an agent given the operator's reference MCP
/// server: asked to ADD, it calls `get-sum` — offered directly, or found
/// among the agent's deferred tools with `tool_search` and called through
/// `tool_call` — then says what it answered.
async fn answer_with_tools(State(mock): State<MockOpenAi>, uri: Uri, body: Bytes) -> Response {
    if uri.path().ends_with("/models") {
        return axum::Json(json!({"object": "list", "data": [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}]}))
            .into_response();
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    mock.calls.lock().unwrap().push(request.clone());
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let direct = request["tools"].as_array().and_then(|tools| {
        tools
            .iter()
            .filter_map(|tool| tool["function"]["name"].as_str())
            .find(|name| name.contains(SUM_TOOL))
            .map(str::to_owned)
    });
    let called = messages
        .iter()
        .rev()
        .find(|message| message["role"] == "assistant")
        .and_then(|message| message["tool_calls"][0]["function"]["name"].as_str())
        .map(str::to_owned);
    let call = |name: &str, arguments: Value| {
        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": format!("call_{name}"), "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}}]})
    };
    let sum = json!({"a": 6, "b": 36});
    let said = text_of(&last["content"]);
    let delta = match (last["role"].as_str(), called.as_deref()) {
        (Some("tool"), Some("tool_search")) => match sum_named_in(&said) {
            Some(name) => call("tool_call", json!({"name": name, "arguments": sum})),
            None => {
                json!({"role": "assistant", "content": format!("tool_search found no {SUM_TOOL}: {said}")})
            }
        },
        (Some("tool"), _) => {
            json!({"role": "assistant", "content": format!("The tool said: {said}")})
        }
        (Some("user"), _) if said.contains("ADD") => match &direct {
            Some(name) => call(name, sum),
            None => call("tool_search", json!({"query": SUM_TOOL})),
        },
        // The agent starts its MCP servers beside its first turn, and
        // searches the tools it had as a turn began: the model takes its
        // time over the first, and adds in the next.
        _ => {
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            json!({"role": "assistant", "content": "Ready."})
        }
    };
    let finish = if delta.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    let stream = format!(
        "{}{}data: [DONE]\n\n",
        chunk(&delta, None),
        chunk(&json!({}), Some(finish))
    );
    ([(header::CONTENT_TYPE, "text/event-stream")], stream).into_response()
}

/// PRODUCT §3.17: Qwen Code is given an operator's MCP server (the
/// reference server, over stdio) in its ACP session, starts it inside its
/// confinement, and calls the tool its model asks for; what the tool
/// answered reaches the model.
#[tokio::test]
async fn qwen_code_is_given_an_operators_mcp_server_and_calls_its_tool() {
    let Some(everything) = support::mcp::everything() else {
        return;
    };
    let Some(script) = real_agent::or_skip(real_agent::script(
        "PATCHBAY_TEST_QWEN_CODE",
        ".cache/patchbay/real-agents/qwen-code/node_modules/@qwen-code/qwen-code/cli-entry.js",
        "@qwen-code/qwen-code",
    )) else {
        return;
    };
    let mock = MockOpenAi::default();
    let app = Router::new()
        .fallback(answer_with_tools)
        .with_state(mock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let folder = tempfile::tempdir().unwrap();
    let config_file = write_config(folder.path(), &script, &format!("http://{address}/v1"));
    let mut text = std::fs::read_to_string(&config_file).unwrap();
    text.push_str(&support::mcp::everything_entry(
        "everything",
        &everything,
        &support::mcp::mark(),
        "",
    ));
    std::fs::write(&config_file, text).unwrap();
    let setup = setup(Some(&config_file)).await;
    let mut builder = agent("builder", None, &["ADD six and thirty-six with the tool."]);
    builder.acp_profile_id = Some("qwen".to_owned());
    builder.mcp_servers = vec!["everything".to_owned()];
    let document = coding_chain_graph(vec![(
        "build",
        "Build",
        config("Get ready to add.", vec![builder]),
    )]);
    let run = run_document(&setup, document, "x").await;
    assert_eq!(run["status"], "completed", "{run}");
    let responses = responses_of(&run, "build");
    let tool_messages: Vec<String> = mock
        .calls
        .lock()
        .unwrap()
        .iter()
        .filter_map(|call| call["messages"].as_array()?.last().cloned())
        .filter(|message| message["role"] == "tool")
        .map(|message| text_of(&message["content"]))
        .collect();
    assert!(
        responses[1].1.contains("The tool said:") && responses[1].1.contains("42"),
        "{responses:?}\n{tool_messages:?}"
    );
}
