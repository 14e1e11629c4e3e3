//! A graph as an OpenAI-compatible model (PRODUCT §6.4), through a real
//! `patchbay serve` process and the official OpenAI Python client: its
//! run token as the API key and `graph:<id>` as the model, answered and
//! streamed; a forged key is refused as OpenAI refuses one, and a graph
//! that waits for a person answers with the approver link.
//!
//! `scripts/test` installs the client and says where
//! (`PATCHBAY_TEST_OPENAI_PYTHON`); without it this test says why it
//! skips, unless `PATCHBAY_REQUIRE_OPENAI=1`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use support::processes::{Server, cable, module};

/// The Python with the `openai` package, or `None` (saying why).
fn python() -> Option<String> {
    match std::env::var("PATCHBAY_TEST_OPENAI_PYTHON") {
        Ok(python) if !python.is_empty() => Some(python),
        _ if std::env::var("PATCHBAY_REQUIRE_OPENAI").as_deref() == Ok("1") => {
            panic!("PATCHBAY_TEST_OPENAI_PYTHON is not set, and PATCHBAY_REQUIRE_OPENAI=1")
        }
        _ => {
            eprintln!(
                "skipped: PATCHBAY_TEST_OPENAI_PYTHON does not name a Python with the openai package (scripts/test installs it)"
            );
            None
        }
    }
}

/// What the client does, as a program that uses a graph as a model would.
const CLIENT: &str = r#"
import json, sys, openai
base, graph, token = sys.argv[1:4]
client = openai.OpenAI(base_url=base + "/v1", api_key=token, max_retries=0)
said = [{"role": "system", "content": "ignored"}, {"role": "user", "content": "Tides"}]
reply = client.chat.completions.create(model="graph:" + graph, messages=said)
streamed = client.chat.completions.create(model="graph:" + graph, messages=said, stream=True)
pieces = [chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices]
try:
    openai.OpenAI(base_url=base + "/v1", api_key="pbr_forged", max_retries=0).chat.completions.create(
        model="graph:" + graph, messages=said)
    refused = None
except openai.PermissionDeniedError as error:
    refused = error.status_code
print(json.dumps({
    "text": reply.choices[0].message.content,
    "finish": reply.choices[0].finish_reason,
    "model": reply.model,
    "tokens": reply.usage.total_tokens,
    "streamed": "".join(pieces),
    "refused": refused,
}))
"#;

async fn make_graph(server: &Server, graph: Value) -> (String, String) {
    let client = engine::tls::client();
    let created: Value = client
        .post(format!("{}/api/graphs", server.base))
        .json(&graph)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    let made: Value = client
        .post(format!("{}/api/graphs/{id}/run-tokens", server.base))
        .bearer_auth(created["edit_token"].as_str().unwrap())
        .json(&json!({"name": "OpenAI client"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (id, made["token"].as_str().unwrap().to_owned())
}

/// What the client script printed, run with `arguments`.
async fn client(python: &str, script: &std::path::Path, arguments: [&String; 3]) -> Value {
    let output = tokio::process::Command::new(python)
        .arg(script)
        .args(arguments)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the client failed: {stderr}");
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn the_official_openai_client_talks_to_a_graph_as_a_model() {
    let Some(python) = python() else {
        return;
    };
    let folder = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}/patchbay.db?mode=rwc", folder.path().display());
    let config = folder.path().join("patchbay.toml");
    std::fs::write(&config, "").unwrap();
    let server = Server::start(&database, config.to_str().unwrap(), &[]).await;
    let starter = serde_json::to_value(graph::starter::starter_graph()).unwrap();
    let (graph, token) = make_graph(&server, starter).await;
    let approval = json!({
        "modules": [module("in", "step.input", json!({})), module("approve", "step.approval", json!({})), module("done", "step.output", json!({}))],
        "cables": [
            cable("c1", ("in", "data_out"), ("approve", "data_in")),
            cable("c2", ("approve", "approved_out"), ("done", "data_in")),
        ]
    });
    let (waiting, waiting_token) = make_graph(&server, approval).await;
    let script = folder.path().join("client.py");
    std::fs::write(&script, CLIENT).unwrap();
    let said = client(&python, &script, [&server.base, &graph, &token]).await;
    let text = said["text"].as_str().unwrap();
    assert!(
        text.starts_with("Simulated reply 1 (sim-1, 1 message in session) to \"Tides\""),
        "{said}"
    );
    assert!(
        text.contains("Re-prompt 2"),
        "the output is the whole merged reply: {text}"
    );
    assert_eq!(said["finish"], "stop");
    assert_eq!(said["model"], format!("graph:{graph}"));
    assert!(said["tokens"].as_u64().unwrap() > 0, "{said}");
    let streamed = said["streamed"].as_str().unwrap();
    assert!(
        streamed.starts_with("Simulated reply 1 (sim-1, 1 message in session) to \"Tides\""),
        "{said}"
    );
    assert_eq!(said["refused"], 403);

    // A graph that waits for a person answers with the link to decide.
    let said = client(&python, &script, [&server.base, &waiting, &waiting_token]).await;
    let waits = said["text"].as_str().unwrap();
    assert!(
        waits.contains(&format!("/g/{waiting}/runs/")) && waits.contains("#approve="),
        "{waits}"
    );
}
