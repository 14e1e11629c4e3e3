//! The tool servers one run has open (PRODUCT §3.17): a server is opened
//! when the run first calls one of its tools, shared by the run's
//! activations after that (the SDK sends their calls side by side), and
//! closed when the run ends — a stdio server stopped then, so none is left
//! running after a run completes, fails or is cancelled. One that dies is
//! opened again at the next call. What comes back is cut to size and has
//! the configuration's secrets taken out before anything else sees it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::CallToolResult;
use rmcp::service::ServiceError;
use serde_json::Value;
use wire::providers::ToolInfo;

use super::turn::CallEnd;
use super::{Connection, STOP_GRACE, ToolServers};
use crate::sandbox::{RunFolder, Sandbox};

/// The most of a result a model and the record are given: a larger one is
/// cut, saying so.
pub const MOST_RESULT_BYTES: usize = 64 * 1024;

/// An open server, with its tools as it listed them.
struct Open {
    connection: Arc<Connection>,
    tools: Arc<[ToolInfo]>,
}

/// One run's open tool servers.
pub struct RunTools {
    servers: Arc<ToolServers>,
    sandbox: Result<Sandbox, String>,
    folder: RunFolder,
    open: tokio::sync::Mutex<BTreeMap<String, Open>>,
}

impl RunTools {
    pub fn new(
        servers: Arc<ToolServers>,
        sandbox: Result<Sandbox, String>,
        folder: RunFolder,
    ) -> RunTools {
        RunTools {
            servers,
            sandbox,
            folder,
            open: tokio::sync::Mutex::new(BTreeMap::new()),
        }
    }

    pub fn servers(&self) -> &ToolServers {
        &self.servers
    }

    /// Server `server`'s connection and tools, opened if it is not open.
    async fn opened(&self, server: &str) -> Result<(Arc<Connection>, Arc<[ToolInfo]>), String> {
        let mut open = self.open.lock().await;
        if let Some(known) = open.get(server) {
            return Ok((Arc::clone(&known.connection), Arc::clone(&known.tools)));
        }
        let config = self
            .servers
            .server(server)
            .ok_or_else(|| format!("this server has no MCP server \"{server}\""))?;
        let connection = self
            .servers
            .open(
                config,
                self.sandbox.as_ref().map_err(String::as_str),
                &self.folder,
            )
            .await
            .map_err(|problem| config.unavailable(&self.servers.redaction().text(&problem)))?;
        let tools = match connection.tools().await {
            Ok(tools) => tools,
            Err(problem) => {
                connection.close(STOP_GRACE).await;
                return Err(config.unavailable(&self.servers.redaction().text(&problem)));
            }
        };
        self.servers.remember(server, &tools);
        let connection = Arc::new(connection);
        let tools: Arc<[ToolInfo]> = tools.into();
        open.insert(
            server.to_owned(),
            Open {
                connection: Arc::clone(&connection),
                tools: Arc::clone(&tools),
            },
        );
        Ok((connection, tools))
    }

    /// Tool `tool` of server `server`, as the open server lists it.
    pub async fn tool(&self, server: &str, tool: &str) -> Result<ToolInfo, String> {
        let (_, tools) = self.opened(server).await?;
        tools
            .iter()
            .find(|known| known.name == tool)
            .cloned()
            .ok_or_else(|| format!("MCP server \"{server}\" has no tool \"{tool}\""))
    }

    /// Calls `tool` of `server` with `arguments`, within the server's
    /// timeout: how it ended, and how long it took (milliseconds).
    pub async fn call(&self, server: &str, tool: &str, arguments: Value) -> (CallEnd, u64) {
        let started = Instant::now();
        let timeout = self
            .servers
            .server(server)
            .map_or(super::DEFAULT_TIMEOUT, |config| config.timeout);
        let end = match self.opened(server).await {
            Err(problem) => CallEnd::ServerGone(problem),
            Ok((connection, _)) => {
                match tokio::time::timeout(timeout, connection.call(tool, arguments)).await {
                    Err(_) => CallEnd::TimedOut {
                        seconds: timeout.as_secs(),
                    },
                    Ok(Ok(result)) => self.ended(result),
                    Ok(Err(error)) => {
                        let gone = matches!(
                            error,
                            ServiceError::TransportClosed | ServiceError::TransportSend(_)
                        );
                        if gone {
                            // Opened again at the next call.
                            self.forget(server, &connection).await;
                            let detail = self
                                .servers
                                .redaction()
                                .text(&format!("{error}{}", connection.last_words()));
                            tracing::warn!(server, "an MCP server stopped during a call: {detail}");
                            CallEnd::ServerGone(
                                "it stopped during the call (the Patchbay server's log says why)"
                                    .to_owned(),
                            )
                        } else {
                            CallEnd::ToolError(self.servers.redaction().text(&error.to_string()))
                        }
                    }
                }
            }
        };
        let duration = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        (end, duration)
    }

    async fn forget(&self, server: &str, connection: &Arc<Connection>) {
        let mut open = self.open.lock().await;
        if open
            .get(server)
            .is_some_and(|known| Arc::ptr_eq(&known.connection, connection))
        {
            open.remove(server);
        }
    }

    /// A result as the model is told it and the record keeps it.
    fn ended(&self, result: CallToolResult) -> CallEnd {
        let redaction = self.servers.redaction();
        let text: String = result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        if result.is_error == Some(true) {
            return CallEnd::ToolError(cut(&redaction.text(&text)));
        }
        let value = match &result.structured_content {
            Some(structured) => redaction.value(structured),
            None => Value::String(cut(&redaction.text(&text))),
        };
        let told = if text.is_empty() {
            value.to_string()
        } else {
            redaction.text(&text)
        };
        CallEnd::Done {
            text: cut(&told),
            value: if value.to_string().len() > MOST_RESULT_BYTES {
                Value::String(cut(&value.to_string()))
            } else {
                value
            },
        }
    }

    /// Closes every open server: its input closed, a stdio server stopped.
    pub async fn close(&self) {
        let open = std::mem::take(&mut *self.open.lock().await);
        let closing = open.into_values().map(|known| async move {
            // A call still in flight holds it: its task is gone with the
            // run, so this is the last holder, or the process goes when
            // that call's future is dropped.
            if let Ok(connection) = Arc::try_unwrap(known.connection) {
                connection.close(STOP_GRACE).await;
            }
        });
        futures::future::join_all(closing).await;
    }
}

/// `text` cut to [`MOST_RESULT_BYTES`], saying so.
fn cut(text: &str) -> String {
    if text.len() <= MOST_RESULT_BYTES {
        return text.to_owned();
    }
    let mut end = MOST_RESULT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[… cut: the result was {} bytes, of which the first {end} are here]",
        &text[..end],
        text.len()
    )
}
