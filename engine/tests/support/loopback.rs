//! Providers' wires replayed on loopback: an axum router of recorded
//! replies served on a free port, and the server-sent events they stream.

use axum::Router;
use axum::body::Body;
use axum::response::Response;
use serde_json::Value;

/// A stream of server-sent events as a reply.
pub fn sse(body: String) -> Response {
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(body))
        .unwrap()
}

/// One named event of a stream, as Anthropic's wire writes them.
pub fn named_event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// Serves `router` on a free loopback port: its base address.
pub async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    format!("http://{address}")
}
