//! A server with a priced OpenAI-compatible provider (`paid`): a fixture
//! that streams `Reply <n>.` for its n-th call, reports 1000 tokens in and
//! 500 out (at $2 and $8 per million for `priced`: $0.006 a call; no price
//! for `unpriced`), and keeps the messages each call sent.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};

#[derive(Default)]
pub struct Calls {
    count: AtomicUsize,
    /// The messages each call sent, in order.
    sent: Mutex<Vec<Vec<Value>>>,
}

async fn completions(State(calls): State<Arc<Calls>>, body: String) -> Response {
    let call = calls.count.fetch_add(1, Ordering::SeqCst) + 1;
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    calls.sent.lock().unwrap().push(messages);
    tokio::time::sleep(Duration::from_millis(30)).await;
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "priced",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let mut stream = chunk(
        json!({"role": "assistant", "content": format!("Reply {call}.")}),
        Value::Null,
    );
    stream.push_str(&chunk(json!({}), json!("stop")));
    stream.push_str(&format!(
        "data: {}\n\n",
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "priced",
               "choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}})
    ));
    stream.push_str("data: [DONE]\n\n");
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(stream))
        .unwrap()
}

pub struct Priced {
    pub router: Router,
    calls: Arc<Calls>,
    _folder: tempfile::TempDir,
    _database: super::TestDatabase,
}

impl Priced {
    /// How many calls reached the provider.
    pub fn calls(&self) -> usize {
        self.calls.count.load(Ordering::SeqCst)
    }

    /// What each call asked last (its last user message), in order.
    pub fn asked(&self) -> Vec<String> {
        self.sent()
            .iter()
            .map(|messages| {
                messages
                    .iter()
                    .rev()
                    .find(|message| message["role"] == "user")
                    .and_then(|message| message["content"].as_str())
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    }

    /// The messages each call sent, in order.
    pub fn sent(&self) -> Vec<Vec<Value>> {
        self.calls.sent.lock().unwrap().clone()
    }
}

/// A server on SQLite with the priced provider.
pub async fn priced_server() -> Priced {
    priced_server_on(super::databases().await.remove(0)).await
}

pub async fn priced_server_on(database: super::TestDatabase) -> Priced {
    let calls = Arc::new(Calls::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(Arc::clone(&calls));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("patchbay.toml");
    std::fs::write(
        &file,
        format!(
            r#"[[providers]]
id = "paid"
kind = "openai"
base_url = "http://{address}/v1"
models = ["priced", "unpriced"]

[providers.prices.priced]
input_per_million = 2.0
output_per_million = 8.0
"#
        ),
    )
    .unwrap();
    let mut settings = super::settings(&database, graph::Limits::default());
    settings.config_file = Some(file);
    let state = server::build_state(settings).await.unwrap();
    Priced {
        router: server::router::router(state),
        calls,
        _folder: folder,
        _database: database,
    }
}
