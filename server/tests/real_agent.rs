//! A real coding agent, Gemini CLI (`@google/gemini-cli` with `--acp`), driven
//! by a coding module through the HTTP API. Its model calls go to a loopback
//! mock of the Gemini API that plays back recorded-shape replies: an edit of
//! an existing file (a `write_file` tool call the agent asks permission for
//! and performs through our confined `fs/*` methods), then plain text.
//!
//! Optional and slower (a few seconds): scripts/test installs the package in
//! `~/.cache/patchbay/real-agents`; when it is absent the test says why and
//! skips, unless `PATCHBAY_REQUIRE_REAL_AGENT=1`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use graph::Extra;
use graph::config::WorkspaceConfig;
use serde_json::{Value, json};
use support::coding::{activation, agent, config, responses, run, setup, transcript};
use support::real_agent;

const NEW_CONTENT: &str = "edited by Gemini CLI through Patchbay\n";

/// The model calls the mock received, in order.
#[derive(Clone, Default)]
struct MockGemini {
    calls: Arc<Mutex<Vec<Value>>>,
}

/// The parts of the last message in a `generateContent` request.
fn last_parts(request: &Value) -> Vec<Value> {
    request["contents"]
        .as_array()
        .and_then(|contents| contents.last())
        .and_then(|content| content["parts"].as_array())
        .cloned()
        .unwrap_or_default()
}

/// What the recorded model says next: edit notes.md when told to, confirm once
/// the tool has run, and otherwise answer with how much history it was sent.
fn reply(request: &Value) -> Value {
    let parts = last_parts(request);
    let history = request["contents"].as_array().map_or(0, Vec::len);
    if parts
        .iter()
        .any(|part| part.get("functionResponse").is_some())
    {
        json!([{"text": "I updated notes.md."}])
    } else if parts.iter().any(|part| {
        part["text"]
            .as_str()
            .is_some_and(|text| text.contains("EDIT notes.md"))
    }) {
        json!([{"functionCall": {"name": "write_file", "args": {"file_path": "notes.md", "content": NEW_CONTENT}}}])
    } else {
        json!([{"text": format!("Re-prompt answer, with {history} messages of history.")}])
    }
}

async fn answer(State(mock): State<MockGemini>, uri: Uri, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let usage = json!({"promptTokenCount": 11, "candidatesTokenCount": 7, "totalTokenCount": 18});
    if uri.path().ends_with(":streamGenerateContent") {
        let parts = reply(&request);
        mock.calls.lock().unwrap().push(request);
        let chunk = json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage,
            "modelVersion": "gemini-2.5-flash",
        });
        (
            [(header::CONTENT_TYPE, "text/event-stream")],
            format!("data: {chunk}\r\n\r\n"),
        )
            .into_response()
    } else if uri.path().ends_with(":generateContent") {
        // Side questions (routing, next speaker): a neutral JSON answer.
        let text = r#"{"reasoning": "mock", "model_choice": "flash", "next_speaker": "user"}"#;
        axum::Json(json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage,
        }))
        .into_response()
    } else if uri.path().ends_with(":countTokens") {
        axum::Json(json!({"totalTokens": 11})).into_response()
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

async fn start_mock() -> (MockGemini, String) {
    let mock = MockGemini::default();
    let app = Router::new().fallback(answer).with_state(mock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (mock, format!("http://{address}"))
}

#[tokio::test]
async fn gemini_cli_edits_a_file_and_answers_a_re_prompt_in_the_same_session() {
    let Some(script) = real_agent::or_skip(real_agent::script(
        "PATCHBAY_TEST_GEMINI_CLI",
        ".cache/patchbay/real-agents/node_modules/@google/gemini-cli/bundle/gemini.js",
        "@google/gemini-cli",
    )) else {
        return;
    };
    let (mock, mock_url) = start_mock().await;
    let folder = tempfile::tempdir().unwrap();
    let config_file = folder.path().join("patchbay.toml");
    // The agent may read its own install (the node_modules folder holding
    // the package and what it needs); it keeps the network for its (mock)
    // vendor API.
    let package = real_agent::package_folder(&script);
    std::fs::write(
        &config_file,
        format!(
            "[[acp_profiles]]\nid = \"gemini\"\nname = \"Gemini CLI\"\ncommand = \"node\"\n\
             args = [{:?}, \"--acp\", \"-m\", \"gemini-2.5-flash\"]\n\
             read_only = [{:?}]\n\
             env = {{ GEMINI_API_KEY = \"dummy\", GOOGLE_GEMINI_BASE_URL = {:?} }}\n",
            script.display().to_string(),
            package.display().to_string(),
            mock_url,
        ),
    )
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.md"), "first draft\n").unwrap();

    let setup = setup(Some(&config_file)).await;
    let mut builder = agent("builder", None, &["Summarise what you changed."]);
    builder.acp_profile_id = Some("gemini".to_owned());
    let mut config = config(
        "EDIT notes.md so that it says who edited it.",
        vec![builder],
    );
    config.workspace = WorkspaceConfig {
        path: Some(project.path().display().to_string()),
        extra: Extra::new(),
    };
    let run = run(&setup, config, "notes").await;
    assert_eq!(run["status"], "completed", "{run}");

    let responses = responses(&run);
    let labels: Vec<&str> = responses.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(labels, ["builder · Original", "builder · Re-prompt 1"]);
    assert!(
        responses[0].1.contains("I updated notes.md."),
        "{responses:?}"
    );
    assert!(responses[1].1.contains("Re-prompt answer"), "{responses:?}");

    // Three model calls: the tool call, the answer after it, the re-prompt.
    // The re-prompt's call carries the whole first turn: one session.
    let calls = mock.calls.lock().unwrap().clone();
    let history: Vec<usize> = calls
        .iter()
        .map(|call| call["contents"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(history.len(), 3, "{history:?}");
    assert!(
        history.windows(2).all(|pair| pair[0] < pair[1]),
        "{history:?}"
    );
    assert!(calls[2].to_string().contains("EDIT notes.md"));
    assert!(calls[2].to_string().contains("Summarise what you changed."));

    let text = transcript(&run);
    assert!(text.contains("permission allowed"), "{text}");
    assert!(text.contains("wrote "), "{text}");
    let outputs = &activation(&run)["outputs"];
    let diff = outputs["diff_out"]["content"].as_str().unwrap();
    assert!(diff.contains("-first draft"), "{diff}");
    assert!(
        diff.contains(&format!("+{}", NEW_CONTENT.trim_end())),
        "{diff}"
    );
    let receipt = &activation(&run)["receipt"];
    assert_eq!(receipt["provider"], "acp:gemini");
    assert_eq!(receipt["simulated"], false);
    assert_eq!(
        receipt["tokens_in"], 33,
        "11 prompt tokens for each of the 3 model calls, from the agent's _meta.quota: {receipt}"
    );
    // The configured folder was copied, never edited in place.
    assert_eq!(
        std::fs::read_to_string(project.path().join("notes.md")).unwrap(),
        "first draft\n"
    );
}
