//! Real `patchbay serve` processes for tests that kill and restart them,
//! and a real OpenAI-compatible provider on loopback that counts its calls
//! (and can hang, as a provider would not answer while a server is
//! killed); with the HTTP calls those tests make.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::routing::post;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};

/// The provider: answers in OpenAI's streaming format, and from call
/// `hang_at` on does not answer while it is set (except the calls
/// `released` one by one).
#[derive(Default)]
pub struct Fixture {
    pub calls: AtomicUsize,
    pub hang_at: Mutex<Option<usize>>,
    pub released: Mutex<Vec<usize>>,
    /// How many messages each request carried.
    pub messages: Mutex<Vec<usize>>,
}

impl Fixture {
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    pub fn release(&self) {
        *self.hang_at.lock().unwrap() = None;
    }

    /// Answers call number `call` (counted from 1) alone.
    pub fn release_call(&self, call: usize) {
        self.released.lock().unwrap().push(call);
    }

    pub fn hangs(&self, call: usize) -> bool {
        self.hang_at.lock().unwrap().is_some_and(|at| call >= at)
            && !self.released.lock().unwrap().contains(&call)
    }
}

pub async fn completions(State(fixture): State<Arc<Fixture>>, body: String) -> Response {
    let body: Value = serde_json::from_str(&body).unwrap();
    let messages = body["messages"].as_array().map_or(0, Vec::len);
    let call = fixture.calls.fetch_add(1, Ordering::SeqCst) + 1;
    fixture.messages.lock().unwrap().push(messages);
    while fixture.hangs(call) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "fixture-model",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let mut stream = chunk(
        json!({"role": "assistant", "content": format!("Reply {call} ")}),
        Value::Null,
    );
    stream.push_str(&chunk(
        json!({"content": format!("to {messages} messages.")}),
        Value::Null,
    ));
    stream.push_str(&chunk(json!({}), json!("stop")));
    stream.push_str(&format!(
        "data: {}\n\n",
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "fixture-model",
               "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    ));
    stream.push_str("data: [DONE]\n\n");
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(stream))
        .unwrap()
}

/// Starts the provider; returns it and a configuration file naming it.
pub async fn provider(folder: &std::path::Path, hang_at: Option<usize>) -> (Arc<Fixture>, String) {
    let fixture = Arc::new(Fixture::default());
    *fixture.hang_at.lock().unwrap() = hang_at;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(Arc::clone(&fixture));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let config = folder.join("patchbay.toml");
    std::fs::write(
        &config,
        format!(
            "[[providers]]\nid = \"fixture\"\nkind = \"openai\"\nbase_url = \"http://{address}/v1\"\napi_key_env = \"FIXTURE_KEY\"\nmodels = [\"fixture-model\"]\n"
        ),
    )
    .unwrap();
    (fixture, config.display().to_string())
}

/// A `patchbay serve` process; killed when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
}

impl Server {
    pub async fn start(database_url: &str, config: &str, extra: &[&str]) -> Server {
        let port = {
            let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            socket.local_addr().unwrap().port()
        };
        let address: SocketAddr = ([127, 0, 0, 1], port).into();
        let child = Command::new(env!("CARGO_BIN_EXE_patchbay"))
            .arg("serve")
            .args(extra)
            .env("PATCHBAY_ADDR", address.to_string())
            .env("DATABASE_URL", database_url)
            .env("PATCHBAY_CONFIG", config)
            .env("PATCHBAY_SITE_ROOT", "target/site-for-tests")
            .env("PATCHBAY_LEASE_SECONDS", "3")
            .env("PATCHBAY_STOP_GRACE_SECONDS", "1")
            .env("FIXTURE_KEY", "sk-fixture")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let server = Server {
            child,
            base: format!("http://{address}"),
        };
        let client = engine::tls::client();
        for _ in 0..600 {
            if let Ok(response) = client
                .get(format!("{}/api/providers", server.base))
                .send()
                .await
                && response.status() == 200
            {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the server did not start");
    }

    pub fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Freezes the process (SIGSTOP), as a machine that stalls or is cut
    /// off: it holds its runs' leases no longer, and does nothing.
    pub fn freeze(&self) {
        self.signal("-STOP");
    }

    /// Wakes a frozen process (SIGCONT): it goes on where it stopped.
    pub fn thaw(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn terminate(&mut self) {
        self.signal("-TERM");
        for _ in 0..400 {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the server did not stop after SIGTERM");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn module(id: &str, kind: &str, config: Value) -> Value {
    json!({"id": id, "kind": kind, "label": id, "position": {"x": 0, "y": 0}, "config": config})
}

pub fn cable(id: &str, from: (&str, &str), to: (&str, &str)) -> Value {
    json!({"id": id, "from": {"module": from.0, "port": from.1}, "to": {"module": to.0, "port": to.1}})
}

/// Creates the graph and starts a run of it on `server`; returns the
/// graph's id and edit token, and the run's id.
pub async fn start_run(server: &Server, graph: Value) -> (String, String, String) {
    let created: Value = engine::tls::client()
        .post(format!("{}/api/graphs", server.base))
        .json(&graph)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let graph_id = created["id"].as_str().unwrap().to_owned();
    let token = created["edit_token"].as_str().unwrap().to_owned();
    let run_id = run_again(server, &graph_id, &token).await;
    (graph_id, token, run_id)
}

/// Starts another run of a graph on `server`; returns its id.
pub async fn run_again(server: &Server, graph_id: &str, token: &str) -> String {
    start_with(
        server,
        graph_id,
        token,
        &json!({"input": {"text": "the moon"}}),
    )
    .await
}

/// Starts a run of a graph on `server` with `body`; returns its id.
pub async fn start_with(server: &Server, graph_id: &str, token: &str, body: &Value) -> String {
    let started: Value = engine::tls::client()
        .post(format!("{}/api/graphs/{graph_id}/runs", server.base))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    started["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_owned()
}

pub async fn run_record(server: &Server, run_id: &str) -> Value {
    engine::tls::client()
        .get(format!("{}/api/runs/{run_id}", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

pub async fn wait_for_status(server: &Server, run_id: &str, wanted: &str) -> Value {
    for _ in 0..1200 {
        let run = run_record(server, run_id).await;
        if run["status"] == wanted {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {run_id} never became {wanted}");
}

/// One SSE event: its id and name.
pub type Seen = (u64, String);

/// Follows a run's events from `base`, from after `last` (when given),
/// into `seen`, until the stream ends; says whether it ended with the run.
pub async fn follow(
    base: String,
    run_id: String,
    last: Option<u64>,
    seen: Arc<Mutex<Vec<Seen>>>,
) -> bool {
    let mut request = engine::tls::client()
        .get(format!("{base}/api/runs/{run_id}/events"))
        .header("accept", "text/event-stream");
    if let Some(last) = last {
        request = request.header("last-event-id", last.to_string());
    }
    let Ok(response) = request.send().await else {
        return false;
    };
    let mut stream = response.bytes_stream().eventsource();
    while let Some(Ok(event)) = stream.next().await {
        let terminal = matches!(
            event.event.as_str(),
            "run.completed" | "run.failed" | "run.cancelled" | "run.interrupted"
        );
        seen.lock()
            .unwrap()
            .push((event.id.parse().unwrap(), event.event));
        if terminal {
            return true;
        }
    }
    false
}

/// The whole log of a run, as a client that reads it from the start sees it.
pub async fn whole_log(server: &Server, run_id: &str) -> Vec<Seen> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    assert!(
        follow(
            server.base.clone(),
            run_id.to_owned(),
            None,
            Arc::clone(&seen)
        )
        .await
    );
    seen.lock().unwrap().clone()
}

pub fn names(log: &[Seen]) -> Vec<&str> {
    log.iter().map(|(_, name)| name.as_str()).collect()
}

pub async fn wait_for_calls(fixture: &Fixture, calls: usize) {
    for _ in 0..1200 {
        if fixture.calls() >= calls {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "the provider was called {} times, not {calls}",
        fixture.calls()
    );
}

/// Posts a decision with `token`; the status and the body.
pub async fn decide(
    server: &Server,
    run_id: &str,
    module_id: &str,
    token: Option<&str>,
    body: Value,
) -> (u16, Value) {
    let mut request = engine::tls::client()
        .post(format!(
            "{}/api/runs/{run_id}/modules/{module_id}/decision",
            server.base
        ))
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A webhook receiver on loopback: the notices it got.
pub async fn webhook() -> (std::sync::Arc<std::sync::Mutex<Vec<Value>>>, String) {
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .route(
            "/notify",
            axum::routing::post(
                |axum::extract::State(received): axum::extract::State<
                    std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
                >,
                 axum::Json(notice): axum::Json<Value>| async move {
                    received.lock().unwrap().push(notice);
                    "ok"
                },
            ),
        )
        .with_state(std::sync::Arc::clone(&received));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (received, format!("http://{address}/notify"))
}
