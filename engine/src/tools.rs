//! Tools agent tasks call (PRODUCT §3.17): the MCP servers the operator
//! configured (`[[mcp_servers]]`: a graph names one by id, never a command
//! or a URL), always with the built-in one, what each offers, and the
//! connections a run opens to them. A run opens a server when it first
//! calls one of its tools and shares it between its activations; when the
//! run ends the connections close and stdio servers stop (`RunTools`).

mod builtin;
mod connection;
pub mod redact;
mod run_tools;
pub mod turn;
pub mod waiting;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::RwLock;
use std::time::Duration;

use wire::providers::{ToolInfo, ToolServerInfo};

pub use builtin::{BuiltInTools, ID as BUILT_IN_ID, NAME as BUILT_IN_NAME, evaluate};
pub use connection::{Connection, Handshake};
pub use redact::Redaction;
pub use run_tools::RunTools;

use crate::sandbox::{RunFolder, Sandbox};

/// How long one call may take when the server's entry says nothing.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How a stopping server is given time: after its input closes, before
/// SIGTERM, and after SIGTERM, before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(2);

/// Serves the built-in tools over this process's standard input and
/// output (`patchbay tools`): the built-in server as a coding agent starts
/// it, given to its ACP session (PRODUCT §3.17).
pub async fn serve_built_in_on_stdio() -> Result<(), String> {
    use rmcp::ServiceExt;
    let running = builtin::BuiltInTools::default()
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|error| format!("the built-in tools did not start: {error}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|error| format!("the built-in tools stopped: {error}"))
}

/// An MCP server of the operator's.
#[derive(Clone, Debug)]
pub struct ToolServerConfig {
    pub id: String,
    pub name: String,
    pub transport: ServerTransport,
    /// How long one call may take.
    pub timeout: Duration,
    /// Whether the operator believes its tools' annotations: a tool it
    /// marks read-only runs without asking by default, and a call of one
    /// in flight when a run stopped may be made again on resume.
    pub trusted: bool,
    /// Whether its calls wait for a person (the operator's word).
    pub approval: graph::tool_approval::ToolApproval,
}

/// How a server is reached.
#[derive(Clone, Debug)]
pub enum ServerTransport {
    /// In this binary (`builtin.rs`).
    BuiltIn,
    /// A program started for the run, confined.
    Stdio(StdioServer),
    /// Streamable HTTP at `url`, with these headers (their values read from
    /// the server's environment).
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// A program speaking MCP on its standard input and output.
#[derive(Clone, Debug)]
pub struct StdioServer {
    pub command: String,
    pub args: Vec<String>,
    /// Its whole environment (besides PATH, HOME and LANG): the entry's
    /// `env`, and the values of the names in its `pass_env`.
    pub env: BTreeMap<String, String>,
    pub network: bool,
    /// Its own folder, where it works and may write; without one, a folder
    /// of its own in the run's.
    pub folder: Option<PathBuf>,
    /// What else it may read (its install).
    pub read_only: Vec<PathBuf>,
}

impl ToolServerConfig {
    /// The built-in server.
    pub fn built_in() -> ToolServerConfig {
        ToolServerConfig {
            id: BUILT_IN_ID.to_owned(),
            name: BUILT_IN_NAME.to_owned(),
            transport: ServerTransport::BuiltIn,
            timeout: DEFAULT_TIMEOUT,
            trusted: true,
            approval: graph::tool_approval::ToolApproval::ByAnnotation,
        }
    }

    /// The values a tool's answer must never carry on: its environment's
    /// and its headers'.
    fn secrets(&self) -> Vec<String> {
        match &self.transport {
            ServerTransport::BuiltIn => Vec::new(),
            ServerTransport::Stdio(stdio) => stdio.env.values().cloned().collect(),
            ServerTransport::Http { headers, .. } => {
                headers.iter().map(|(_, value)| value.clone()).collect()
            }
        }
    }

    /// What anyone may be told of a server that could not be opened or
    /// listed: never its command, address or what it printed, which go to
    /// the server's log (`unavailable`).
    fn unavailable_words(&self) -> &'static str {
        match &self.transport {
            ServerTransport::BuiltIn => "the built-in tools did not start",
            ServerTransport::Stdio(_) => {
                "it did not start as an MCP server (the Patchbay server's log says why)"
            }
            ServerTransport::Http { .. } => {
                "it did not answer as an MCP server at its address (the Patchbay server's log says why)"
            }
        }
    }

    /// Logs why the server is unavailable (`detail`, for the operator)
    /// and gives the words anyone else is told.
    pub fn unavailable(&self, detail: &str) -> String {
        tracing::warn!(server = %self.id, "MCP server unavailable: {detail}");
        self.unavailable_words().to_owned()
    }

    /// Why it cannot be given to a coding agent (PRODUCT §3.17), when it
    /// cannot: the agent starts it inside its own confinement, and reads
    /// whatever its declaration holds.
    pub fn not_for_agents(&self) -> Option<&'static str> {
        match &self.transport {
            ServerTransport::BuiltIn => None,
            ServerTransport::Stdio(stdio) if !stdio.env.is_empty() => {
                Some("its environment (env, pass_env) would be the agent's to read")
            }
            ServerTransport::Stdio(stdio) if stdio.folder.is_some() => {
                Some("its folder is not writable where the agent works")
            }
            ServerTransport::Stdio(_) => None,
            ServerTransport::Http { .. } => {
                Some("an agent is given stdio servers and the built-in one")
            }
        }
    }

    /// The server as an ACP session declares it to an agent (`session/new`
    /// `mcpServers`, a stdio server: name, command, args, env), with what
    /// else the agent's confinement must let it read; `None` when it is
    /// not given to agents. The built-in server is this binary's `tools`
    /// command.
    pub fn for_agent(&self, binary: &std::path::Path) -> Option<(serde_json::Value, Vec<PathBuf>)> {
        if self.not_for_agents().is_some() {
            return None;
        }
        match &self.transport {
            ServerTransport::BuiltIn => Some((
                serde_json::json!({"name": self.id, "command": binary, "args": ["tools"], "env": []}),
                Vec::new(),
            )),
            ServerTransport::Stdio(stdio) => Some((
                serde_json::json!({"name": self.id, "command": stdio.command, "args": stdio.args, "env": []}),
                stdio.read_only.clone(),
            )),
            ServerTransport::Http { .. } => None,
        }
    }

    fn transport_name(&self) -> &'static str {
        match &self.transport {
            ServerTransport::BuiltIn => "built_in",
            ServerTransport::Stdio(_) => "stdio",
            ServerTransport::Http { .. } => "http",
        }
    }
}

/// Every server a run may call tools of, and what each offers.
#[derive(Debug)]
pub struct ToolServers {
    servers: Vec<ToolServerConfig>,
    /// Each server's tools, or why they could not be listed; a server not
    /// here has not been asked yet.
    listed: RwLock<BTreeMap<String, Result<Vec<ToolInfo>, String>>>,
    /// The handshake each server answered when last opened.
    handshakes: RwLock<BTreeMap<String, Handshake>>,
    redaction: Redaction,
    http: connection::HttpClient,
}

impl Default for ToolServers {
    fn default() -> ToolServers {
        ToolServers::new(Vec::new())
    }
}

impl ToolServers {
    /// The built-in server, then `servers` (one of the built-in's id is
    /// left out: the configuration refuses it before).
    pub fn new(servers: Vec<ToolServerConfig>) -> ToolServers {
        let mut all = vec![ToolServerConfig::built_in()];
        all.extend(
            servers
                .into_iter()
                .filter(|server| server.id != BUILT_IN_ID),
        );
        let redaction = Redaction::new(all.iter().flat_map(ToolServerConfig::secrets));
        ToolServers {
            servers: all,
            listed: RwLock::new(BTreeMap::new()),
            handshakes: RwLock::new(BTreeMap::new()),
            redaction,
            http: connection::HttpClient::default(),
        }
    }

    pub fn server(&self, id: &str) -> Option<&ToolServerConfig> {
        self.servers.iter().find(|server| server.id == id)
    }

    pub fn redaction(&self) -> &Redaction {
        &self.redaction
    }

    /// The handshake `server` answered when last opened, if it has been.
    pub fn known_handshake(&self, server: &str) -> Option<Handshake> {
        self.handshakes
            .read()
            .ok()
            .and_then(|known| known.get(server).copied())
    }

    /// Opens a connection to `server` for a run in `folder`, with the
    /// handshake it answered before when it has, and remembers which.
    pub async fn open(
        &self,
        server: &ToolServerConfig,
        sandbox: Result<&Sandbox, &str>,
        folder: &RunFolder,
    ) -> Result<Connection, String> {
        let known = self.known_handshake(&server.id);
        let connection = Connection::open(server, sandbox, folder, known, &self.http).await?;
        if known.is_none()
            && let Ok(mut handshakes) = self.handshakes.write()
        {
            handshakes.insert(server.id.clone(), connection.handshake());
        }
        Ok(connection)
    }

    /// Asks every server for its tools (starting a stdio server confined
    /// in a folder under `scratch`, and stopping it), for the catalogue
    /// and validation. Servers are asked side by side.
    pub async fn list(&self, sandbox: Result<&Sandbox, &str>, scratch: &std::path::Path) {
        let asked = self.servers.iter().map(|server| async move {
            let folder = RunFolder::new(scratch, &format!("listing-{}", server.id));
            let listed = match self.open(server, sandbox, &folder).await {
                Ok(connection) => {
                    let tools = connection.tools().await;
                    connection.close(STOP_GRACE).await;
                    tools
                }
                Err(problem) => Err(problem),
            };
            let _ = tokio::fs::remove_dir_all(folder.path()).await;
            (
                server.id.clone(),
                listed.map_err(|problem| server.unavailable(&self.redaction.text(&problem))),
            )
        });
        let listed = futures::future::join_all(asked).await;
        if let Ok(mut known) = self.listed.write() {
            known.extend(listed);
        }
    }

    /// What `GET /api/providers` says of the servers.
    pub fn catalogue(&self) -> Vec<ToolServerInfo> {
        let listed = self
            .listed
            .read()
            .map(|listed| listed.clone())
            .unwrap_or_default();
        self.servers
            .iter()
            .map(|server| {
                let (tools, problem) = match listed.get(&server.id) {
                    Some(Ok(tools)) => (tools.clone(), None),
                    Some(Err(problem)) => (Vec::new(), Some(problem.clone())),
                    None => (
                        Vec::new(),
                        Some("its tools have not been listed yet".to_owned()),
                    ),
                };
                ToolServerInfo {
                    id: server.id.clone(),
                    name: server.name.clone(),
                    transport: server.transport_name().to_owned(),
                    trusted: server.trusted,
                    approval: server.approval,
                    not_for_agents: server.not_for_agents().map(str::to_owned),
                    tools,
                    problem,
                }
            })
            .collect()
    }

    /// The tools of each server as validation knows them (a server whose
    /// tools could not be listed says why).
    pub fn specs(&self) -> graph::tools::ToolCatalogue {
        self.catalogue()
            .into_iter()
            .map(|server| (server.id.clone(), server.spec()))
            .collect()
    }

    /// Keeps `tools` as `server`'s: a run opened it and it listed them (a
    /// server that could not be listed when this server started, say).
    pub fn remember(&self, server: &str, tools: &[ToolInfo]) {
        if let Ok(mut listed) = self.listed.write() {
            listed.insert(server.to_owned(), Ok(tools.to_vec()));
        }
    }

    /// Tool `tool` of server `server`, as last listed.
    pub fn tool(&self, server: &str, tool: &str) -> Option<ToolInfo> {
        let listed = self.listed.read().ok()?;
        listed
            .get(server)?
            .as_ref()
            .ok()?
            .iter()
            .find(|known| known.name == tool)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(env: &[(&str, &str)], folder: Option<&str>) -> ToolServerConfig {
        ToolServerConfig {
            id: "files".to_owned(),
            name: "Files".to_owned(),
            transport: ServerTransport::Stdio(StdioServer {
                command: "node".to_owned(),
                args: vec!["server.js".to_owned()],
                env: env
                    .iter()
                    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                    .collect(),
                network: false,
                folder: folder.map(PathBuf::from),
                read_only: vec![PathBuf::from("/opt/files")],
            }),
            timeout: DEFAULT_TIMEOUT,
            trusted: false,
            approval: graph::tool_approval::ToolApproval::ByAnnotation,
        }
    }

    #[test]
    fn an_agent_is_given_a_server_only_when_nothing_of_its_configuration_is_a_secret() {
        let binary = std::path::Path::new("/usr/bin/patchbay");
        let (declared, reads) = ToolServerConfig::built_in().for_agent(binary).unwrap();
        assert_eq!(
            declared,
            serde_json::json!({"name": "patchbay", "command": "/usr/bin/patchbay", "args": ["tools"], "env": []})
        );
        assert!(reads.is_empty());
        let (declared, reads) = stdio(&[], None).for_agent(binary).unwrap();
        assert_eq!(declared["command"], "node");
        assert_eq!(reads, [PathBuf::from("/opt/files")]);
        // An environment value (a token, say) would be the agent's to read.
        let secret = stdio(&[("TOKEN", "s3cret-value")], None);
        assert!(secret.for_agent(binary).is_none());
        assert_eq!(
            secret.not_for_agents(),
            Some("its environment (env, pass_env) would be the agent's to read")
        );
        assert!(stdio(&[], Some("/srv/files")).for_agent(binary).is_none());
        let http = ToolServerConfig {
            transport: ServerTransport::Http {
                url: "https://tools.example/mcp".to_owned(),
                headers: Vec::new(),
            },
            ..stdio(&[], None)
        };
        assert!(http.for_agent(binary).is_none());
    }
}
