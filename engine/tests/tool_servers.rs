//! A server's handshake is remembered (PRODUCT §3.17): the first opening
//! finds which one it answers, and later ones (each run opens its own)
//! use it straight away rather than probing again, in-process for the
//! built-in server and over stdio for the reference server.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::Duration;

use engine::sandbox::{RunFolder, Sandbox};
use engine::tools::{STOP_GRACE, ServerTransport, StdioServer, ToolServerConfig, ToolServers};

/// Opens `server` twice: the handshake the first found is remembered and
/// the second connection answers it and lists the same tools.
async fn opened_twice(servers: &ToolServers, id: &str, sandbox: Result<&Sandbox, &str>) {
    let root = std::env::temp_dir().join(format!("patchbay-handshake-{id}-{}", std::process::id()));
    let server = servers.server(id).unwrap().clone();
    assert_eq!(servers.known_handshake(id), None, "not opened yet");
    let first = servers
        .open(&server, sandbox, &RunFolder::new(&root, "first"))
        .await
        .unwrap();
    let answered = first.handshake();
    assert_eq!(servers.known_handshake(id), Some(answered));
    let listed = first.tools().await.unwrap();
    first.close(STOP_GRACE).await;

    let second = servers
        .open(&server, sandbox, &RunFolder::new(&root, "second"))
        .await
        .unwrap();
    assert_eq!(second.handshake(), answered);
    let again = second.tools().await.unwrap();
    let names = |tools: &[wire::providers::ToolInfo]| -> Vec<String> {
        tools.iter().map(|tool| tool.name.clone()).collect()
    };
    assert_eq!(names(&again), names(&listed));
    assert!(!again.is_empty());
    second.close(STOP_GRACE).await;
    let _ = std::fs::remove_dir_all(&root);
}

#[tokio::test]
async fn the_built_in_servers_handshake_is_found_once_and_used_after() {
    let servers = ToolServers::new(Vec::new());
    opened_twice(&servers, engine::tools::BUILT_IN_ID, Err("not needed")).await;
}

#[tokio::test]
async fn a_stdio_servers_handshake_is_found_once_and_used_after() {
    let script = match std::env::var_os("PATCHBAY_TEST_MCP_EVERYTHING").map(PathBuf::from) {
        Some(script) if script.exists() => script,
        _ if std::env::var("PATCHBAY_REQUIRE_MCP").as_deref() == Ok("1") => {
            panic!("PATCHBAY_TEST_MCP_EVERYTHING does not name the reference MCP server")
        }
        _ => {
            eprintln!(
                "skipped: PATCHBAY_TEST_MCP_EVERYTHING is not set (scripts/test installs it)"
            );
            return;
        }
    };
    let sandbox = Sandbox::detect("bwrap").unwrap();
    let install = script.ancestors().nth(4).unwrap().to_path_buf();
    let servers = ToolServers::new(vec![ToolServerConfig {
        id: "everything".to_owned(),
        name: "Everything".to_owned(),
        transport: ServerTransport::Stdio(StdioServer {
            command: "node".to_owned(),
            args: vec![script.display().to_string()],
            env: Default::default(),
            network: false,
            folder: None,
            read_only: vec![install],
        }),
        timeout: Duration::from_secs(60),
        trusted: false,
        approval: graph::tool_approval::ToolApproval::Auto,
    }]);
    opened_twice(&servers, "everything", Ok(&sandbox)).await;
}
