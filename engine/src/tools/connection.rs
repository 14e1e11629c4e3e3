//! One open connection to an MCP server, through the official SDK (`rmcp`):
//! the built-in server over an in-process pipe, a stdio server started
//! confined like every process a run starts (its own folder, its listed
//! read-only paths, the network only when its entry says so), or a server
//! over Streamable HTTP. It lists tools and calls them; closed, a stdio
//! server is stopped as the protocol says: its input closed, then SIGTERM
//! to its process group, then SIGKILL.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientServiceExt, ServiceExt};
use tokio::io::AsyncReadExt;
use wire::providers::{ToolHints, ToolInfo};

use super::builtin::BuiltInTools;
use super::{ServerTransport, ToolServerConfig};
use crate::sandbox::{ConfinedChild, Reach, RunFolder, Sandbox};

/// What a server's stderr keeps for an error message: its last words.
const STDERR_KEPT: usize = 2048;

/// An open connection.
pub struct Connection {
    service: RunningService<RoleClient, ()>,
    /// A stdio server's process, stopped when the connection closes.
    child: Option<ConfinedChild>,
    /// The end of what a stdio server printed on stderr.
    stderr: Arc<Mutex<String>>,
}

/// The one HTTP client of every connection to a server over HTTP, made
/// when the first is opened. Making a client reads the system's root
/// certificates, milliseconds of blocking work: a hundred runs opening at
/// once each making its own held both cores of this machine from the calls
/// in flight (a call cost its run 6 ms more at p50). One client also keeps
/// its connections alive from one run to the next. It holds no credential:
/// a server's headers go with each request of its own transport.
#[derive(Debug, Default)]
pub struct HttpClient(OnceLock<Result<reqwest::Client, String>>);

impl HttpClient {
    fn get(&self) -> Result<reqwest::Client, String> {
        self.0
            .get_or_init(|| {
                crate::tls::install();
                // A redirect is not followed: it would carry the server's
                // headers (its credentials) to wherever it points.
                reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|error| format!("no HTTP client: {error}"))
            })
            .clone()
    }
}

/// Which handshake a server answered: the 2026 revision's
/// `server/discover`, or `initialize` (most servers speak only that).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handshake {
    Discover,
    Initialize,
}

/// How a connection is made. A server whose handshake is known gets it
/// straight away; otherwise both are tried, the 2026 one first. That probe
/// gives up after 10 s (the SDK's), and a server still starting then (a
/// hundred starting at once on two cores take longer) answers it late and
/// fails the fallback: so what a server answered once is remembered
/// (`ToolServers::open`).
fn lifecycle(known: Option<Handshake>) -> ClientLifecycleMode {
    match known {
        Some(Handshake::Discover) => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Some(Handshake::Initialize) => ClientLifecycleMode::Initialize,
        None => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        },
    }
}

impl Connection {
    /// Opens a connection to `config`'s server for a run in `folder`.
    pub async fn open(
        config: &ToolServerConfig,
        sandbox: Result<&Sandbox, &str>,
        folder: &RunFolder,
        known: Option<Handshake>,
        http: &HttpClient,
    ) -> Result<Connection, String> {
        let stderr = Arc::new(Mutex::new(String::new()));
        match &config.transport {
            ServerTransport::BuiltIn => {
                // Messages pass as values, not as JSON written and read
                // back: the protocol's exchange without its wire.
                let (to_server, from_client) = futures::channel::mpsc::unbounded();
                let (to_client, from_server) = futures::channel::mpsc::unbounded();
                tokio::spawn(async move {
                    if let Ok(running) = BuiltInTools::default()
                        .serve((to_client, from_client))
                        .await
                    {
                        let _ = running.waiting().await;
                    }
                });
                let service = ()
                    .serve_with_lifecycle((to_server, from_server), lifecycle(known))
                    .await
                    .map_err(|error| format!("the built-in tools did not start: {error}"))?;
                Ok(Connection {
                    service,
                    child: None,
                    stderr,
                })
            }
            ServerTransport::Http { url, headers } => {
                let mut custom = HashMap::new();
                for (name, value) in headers {
                    let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| format!("header name \"{name}\" cannot be sent"))?;
                    let value = reqwest::header::HeaderValue::from_str(value)
                        .map_err(|_| format!("the value of header \"{name}\" cannot be sent"))?;
                    custom.insert(name, value);
                }
                let transport = StreamableHttpClientTransport::with_client(
                    http.get()?,
                    StreamableHttpClientTransportConfig::with_uri(url.as_str())
                        .custom_headers(custom),
                );
                let service = ()
                    .serve_with_lifecycle(transport, lifecycle(known))
                    .await
                    .map_err(|error| format!("cannot connect to {url}: {error}"))?;
                Ok(Connection {
                    service,
                    child: None,
                    stderr,
                })
            }
            ServerTransport::Stdio(stdio) => {
                let sandbox = sandbox.map_err(str::to_owned)?;
                let working = match &stdio.folder {
                    Some(own) => own.clone(),
                    None => folder
                        .path()
                        .join(".tools")
                        .join(crate::sandbox::folder_name(&config.id)),
                };
                folder
                    .prepare()
                    .await
                    .map_err(|error| format!("cannot make the run's folder: {error}"))?;
                tokio::fs::create_dir_all(&working)
                    .await
                    .map_err(|error| format!("cannot make the server's folder: {error}"))?;
                let reach = Reach {
                    writable: vec![working.clone()],
                    read_only: stdio.read_only.clone(),
                    network: stdio.network,
                    writable_shown_at: Vec::new(),
                };
                let mut command = sandbox.command(
                    folder,
                    &reach,
                    &stdio.command,
                    &stdio.args,
                    &stdio.env,
                    &working,
                )?;
                let mut child = command
                    .piped()
                    .spawn()
                    .map_err(|error| format!("cannot start {}: {error}", stdio.command))?;
                let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                    return Err("the server's input and output could not be opened".to_owned());
                };
                if let Some(mut errors) = child.stderr.take() {
                    let kept = Arc::clone(&stderr);
                    tokio::spawn(async move {
                        let mut buffer = [0_u8; 1024];
                        while let Ok(read) = errors.read(&mut buffer).await {
                            if read == 0 {
                                break;
                            }
                            if let Ok(mut kept) = kept.lock() {
                                kept.push_str(&String::from_utf8_lossy(&buffer[..read]));
                                let over = kept.len().saturating_sub(STDERR_KEPT);
                                if over > 0 {
                                    let mut cut = over;
                                    while !kept.is_char_boundary(cut) {
                                        cut += 1;
                                    }
                                    kept.drain(..cut);
                                }
                            }
                        }
                    });
                }
                let service = match ().serve_with_lifecycle((stdout, stdin), lifecycle(known)).await
                {
                    Ok(service) => service,
                    Err(error) => {
                        let _ = child.kill().await;
                        let said = last_words(&stderr);
                        return Err(format!(
                            "{} did not start as an MCP server: {error}{said}",
                            stdio.command
                        ));
                    }
                };
                Ok(Connection {
                    service,
                    child: Some(child),
                    stderr,
                })
            }
        }
    }

    /// The handshake the server answered.
    pub fn handshake(&self) -> Handshake {
        let modern = self
            .service
            .peer()
            .peer_info()
            .is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28);
        if modern {
            Handshake::Discover
        } else {
            Handshake::Initialize
        }
    }

    /// The server's tools.
    pub async fn tools(&self) -> Result<Vec<ToolInfo>, String> {
        let tools = self.service.list_all_tools().await.map_err(|error| {
            format!(
                "its tools could not be listed: {error}{}",
                last_words(&self.stderr)
            )
        })?;
        Ok(tools
            .into_iter()
            .map(|tool| ToolInfo {
                name: tool.name.to_string(),
                description: tool
                    .description
                    .map(|text| text.to_string())
                    .unwrap_or_default(),
                input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
                output_schema: tool
                    .output_schema
                    .map(|schema| serde_json::Value::Object((*schema).clone())),
                annotations: tool
                    .annotations
                    .map(|hints| ToolHints {
                        read_only: hints.read_only_hint,
                        destructive: hints.destructive_hint,
                        idempotent: hints.idempotent_hint,
                        open_world: hints.open_world_hint,
                    })
                    .unwrap_or_default(),
            })
            .collect())
    }

    /// Calls `tool` with `arguments` (an object). Dropping the future
    /// cancels the call (`notifications/cancelled`).
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Value,
    ) -> Result<CallToolResult, ServiceError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let serde_json::Value::Object(object) = arguments {
            params = params.with_arguments(object);
        }
        self.service.call_tool(params).await
    }

    /// What the server printed last on its stderr, said after an error.
    pub fn last_words(&self) -> String {
        last_words(&self.stderr)
    }

    /// Closes the connection and stops the server: its input closed, and
    /// after `grace` each, SIGTERM and SIGKILL to its process group.
    pub async fn close(mut self, grace: Duration) {
        let _ = self.service.close_with_timeout(grace).await;
        if let Some(mut child) = self.child.take() {
            child.stop(grace).await;
        }
    }
}

fn last_words(stderr: &Mutex<String>) -> String {
    let said = stderr
        .lock()
        .map(|said| said.trim().to_owned())
        .unwrap_or_default();
    if said.is_empty() {
        String::new()
    } else {
        format!(" (it said: {said})")
    }
}
