//! A Streamable HTTP tool server that redirects is not followed
//! (PRODUCT §3.17): the configured headers go to the configured address
//! and nowhere else, and opening it fails, saying so.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use engine::sandbox::RunFolder;
use engine::tools::{ServerTransport, ToolServerConfig, ToolServers};

#[tokio::test]
async fn a_redirect_is_not_followed_and_the_headers_go_nowhere_else() {
    let followed = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&followed);
    let router = Router::new()
        .route(
            "/mcp",
            post(|| async {
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(header::LOCATION, "/elsewhere")],
                )
                    .into_response()
            }),
        )
        .route(
            "/elsewhere",
            post(move |headers: HeaderMap| async move {
                if headers.contains_key(header::AUTHORIZATION) {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
                StatusCode::NOT_FOUND
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });

    let config = ToolServerConfig {
        id: "moved".to_owned(),
        name: "Moved".to_owned(),
        transport: ServerTransport::Http {
            url: format!("http://{address}/mcp"),
            headers: vec![("Authorization".to_owned(), "Bearer secret".to_owned())],
        },
        timeout: Duration::from_secs(10),
        trusted: false,
        approval: graph::tool_approval::ToolApproval::Auto,
    };
    let servers = ToolServers::new(vec![config.clone()]);
    let root = std::env::temp_dir().join(format!("patchbay-redirect-{}", std::process::id()));
    let opened = servers
        .open(&config, Err("not needed"), &RunFolder::new(&root, "run"))
        .await;
    assert!(opened.is_err(), "a redirecting server was opened");
    assert_eq!(
        followed.load(Ordering::SeqCst),
        0,
        "the headers followed the redirect"
    );
}
