//! `patchbay bench-tools`: what a tool call costs a run beyond the tool's
//! own time (PRODUCT §3.17), over stdio and Streamable HTTP with the
//! reference MCP server's `echo`, and in process with the built-in
//! `calculate` (both do next to nothing, so a call's time is the transport
//! and the engine).
//!
//! Through the engine, `runs` runs at once each make `calls` calls, one per
//! turn, on the simulated provider at zero latency: a call costs the run
//! the time from the model's reply asking for it to the next request to
//! the model, which a provider wrapped around the simulator measures. The
//! same calls made straight on an MCP connection, between the same
//! simulated model turns but with nothing of the engine, give the tool's
//! own time on equally busy cores; the difference is what the engine adds
//! (events, the record, the session). Then what a run pays
//! to open its own server, against the calls of every run shared on one
//! connection (a pool per process). Prints figures; not a test.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use engine::provider::sim::SimProvider;
use engine::provider::{
    ChatMessage, ChatRequest, ContentPart, DeltaSink, Provider, ProviderFuture, ProviderRegistry,
    Role, ToolDefinition,
};
use engine::recorder::MemoryRecorder;
use engine::sandbox::{RunFolder, Sandbox};
use engine::tools::{
    Connection, STOP_GRACE, ServerTransport, StdioServer, ToolServerConfig, ToolServers,
};
use engine::{Engine, EngineSettings};
use graph::config::{AgentConfig, AgentTaskConfig, InputConfig, OutputConfig};
use graph::tools::ToolChoice;
use graph::{Cable, Endpoint, Extra, Graph, Module, ModuleConfig, Position, RePrompt};
use tokio_util::sync::CancellationToken;

use super::{milliseconds, percentile, run_spec};

pub struct Options {
    /// The reference server's `dist/index.js` (scripts/bench installs it).
    pub everything: PathBuf,
    pub runs: usize,
    pub calls: usize,
    /// Only the transport named (`stdio`, `http`, `built-in`).
    pub only: Option<String>,
}

pub async fn run(options: Options) -> Result<(), String> {
    let script = options.everything.clone();
    let install = script
        .ancestors()
        .nth(4)
        .map(PathBuf::from)
        .ok_or("the reference server's path is too short")?;
    let http = HttpServer::start(&script).await?;
    let built_in_http = HttpServer::start_built_in().await?;
    let sandbox = Sandbox::detect("bwrap").map_err(|unavailable| unavailable.0)?;
    let transports = [
        (
            "stdio",
            ServerTransport::Stdio(StdioServer {
                command: "node".to_owned(),
                args: vec![script.display().to_string()],
                env: Default::default(),
                network: false,
                folder: None,
                read_only: vec![install],
            }),
        ),
        (
            "http",
            ServerTransport::Http {
                url: http.url.clone(),
                headers: Vec::new(),
            },
        ),
    ];
    let root = std::env::temp_dir().join(format!("patchbay-bench-tools-{}", std::process::id()));
    println!(
        "tool calls: {} runs at once, {} calls each, one per turn, on the simulated provider at zero latency",
        options.runs, options.calls
    );
    let mut cases: Vec<(&str, ToolServerConfig, Tool)> = transports
        .into_iter()
        .map(|(name, transport)| {
            let config = ToolServerConfig {
                id: "everything".to_owned(),
                name: "Everything".to_owned(),
                transport,
                timeout: Duration::from_secs(60),
                trusted: false,
                approval: graph::tool_approval::ToolApproval::Auto,
            };
            (name, config, Tool::ECHO)
        })
        .collect();
    // The built-in tools as a stdio server (`patchbay tools`): a program
    // that starts in milliseconds, so a hundred of them on a small machine
    // leave the engine's own stdio path to be seen, where a hundred node
    // servers starting bury it in noise.
    if let Ok(binary) = std::env::current_exe() {
        cases.push((
            "stdio patchbay tools",
            ToolServerConfig {
                id: "tools".to_owned(),
                name: "patchbay tools (stdio)".to_owned(),
                transport: ServerTransport::Stdio(StdioServer {
                    command: binary.display().to_string(),
                    args: vec!["tools".to_owned()],
                    env: Default::default(),
                    network: false,
                    folder: None,
                    read_only: vec![binary.clone()],
                }),
                timeout: Duration::from_secs(60),
                trusted: true,
                approval: graph::tool_approval::ToolApproval::Auto,
            },
            Tool::CALCULATE,
        ));
    }
    cases.push((
        "http patchbay tools",
        ToolServerConfig {
            id: "tools".to_owned(),
            name: "patchbay tools (HTTP)".to_owned(),
            transport: ServerTransport::Http {
                url: built_in_http.url.clone(),
                headers: Vec::new(),
            },
            timeout: Duration::from_secs(60),
            trusted: true,
            approval: graph::tool_approval::ToolApproval::Auto,
        },
        Tool::CALCULATE,
    ));
    cases.push((
        "built in (in process)",
        ToolServerConfig::built_in(),
        Tool::CALCULATE,
    ));
    cases.retain(|(name, _, _)| {
        options
            .only
            .as_deref()
            .is_none_or(|only| name.replace(' ', "-").starts_with(only))
    });
    for (name, config, tool) in cases {
        println!("{name}, {} of {}:", tool.name, config.name);
        through_the_engine(&config, tool, &sandbox, &root, &options).await?;
        straight(&config, tool, &sandbox, &root, &options).await?;
    }
    drop(http);
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}

/// The tool called, and its arguments.
#[derive(Clone, Copy)]
struct Tool {
    name: &'static str,
    argument: &'static str,
    value: &'static str,
}

impl Tool {
    const ECHO: Tool = Tool {
        name: "echo",
        argument: "message",
        value: "hello",
    };
    const CALCULATE: Tool = Tool {
        name: "calculate",
        argument: "expression",
        value: "6 * 7",
    };

    fn arguments(self) -> serde_json::Value {
        serde_json::json!({ self.argument: self.value })
    }
}

/// `runs` runs at once through the engine: the time each call costs its
/// run, from the reply asking for it to the next request to the model.
async fn through_the_engine(
    config: &ToolServerConfig,
    tool: Tool,
    sandbox: &Sandbox,
    root: &std::path::Path,
    options: &Options,
) -> Result<(), String> {
    let timing = Arc::new(Timing::default());
    let engine = engine(config, sandbox, root, Arc::clone(&timing));
    // As a serving process does when it starts.
    engine
        .settings
        .tool_servers
        .list(Ok(sandbox), &root.join("listing"))
        .await;
    let started = Instant::now();
    let runs = (0..options.runs).map(|index| {
        let engine = engine.clone();
        let graph = calling_graph(&config.id, tool, options.calls);
        async move {
            engine::execute(
                &engine,
                run_spec(crate::runs::new_run_id(), graph, &format!("Run {index}")),
                Arc::new(MemoryRecorder::default()),
                CancellationToken::new(),
            )
            .await
        }
    });
    let outcomes = futures::future::join_all(runs).await;
    let elapsed = started.elapsed();
    let completed = outcomes
        .iter()
        .filter(|outcome| outcome.status == wire::event::RunStatus::Completed)
        .count();
    if completed < options.runs {
        let error = outcomes
            .iter()
            .find_map(|outcome| outcome.error.clone())
            .unwrap_or_default();
        return Err(format!(
            "{} of {} runs completed: {error}",
            completed, options.runs
        ));
    }
    // A run opens its server at its first call: that call is shown apart,
    // as the straight calls show the opening apart.
    let (mut first, mut gaps) = timing.gaps();
    first.sort_unstable();
    gaps.sort_unstable();
    let modelled = timing
        .modelled
        .lock()
        .map(|spent| *spent)
        .unwrap_or_default();
    println!(
        "  through the engine: {} calls in {:.2} s (the simulated model's turns {:.2} s of it, summed); a call costs its run p50 {}, p99 {}, max {}; the first of each run, which opens the server, p50 {}, p99 {}",
        gaps.len() + first.len(),
        elapsed.as_secs_f64(),
        modelled.as_secs_f64(),
        milliseconds(percentile(&gaps, 0.5)),
        milliseconds(percentile(&gaps, 0.99)),
        milliseconds(gaps.last().copied().unwrap_or_default()),
        milliseconds(percentile(&first, 0.5)),
        milliseconds(percentile(&first, 0.99)),
    );
    Ok(())
}

/// The same calls with nothing of the engine: `runs` connections at once,
/// as each run opens its own, then one connection shared by them all.
async fn straight(
    config: &ToolServerConfig,
    tool: Tool,
    sandbox: &Sandbox,
    root: &std::path::Path,
    options: &Options,
) -> Result<(), String> {
    // One connection per run, opened and then called as a run does, all
    // runs at once (so that one run's calls share the cores with another's
    // opening, as through the engine), each run a task of its own as the
    // engine's activations are. The server is listed first, as a serving
    // process does when it starts.
    let servers = Arc::new(ToolServers::new(vec![config.clone()]));
    servers.list(Ok(sandbox), &root.join("listing")).await;
    let runs = (0..options.runs).map(|index| {
        let (servers, config, sandbox) = (Arc::clone(&servers), config.clone(), sandbox.clone());
        let folder = RunFolder::new(root, &format!("straight-{index}"));
        let calls = options.calls;
        tokio::spawn(async move {
            let begun = Instant::now();
            let connection = servers.open(&config, Ok(&sandbox), &folder).await?;
            connection.tools().await?;
            let opened = begun.elapsed();
            let took = calls_through(&connection, tool, calls).await?;
            Ok::<_, String>((connection, opened, took))
        })
    });
    let mut connections = Vec::new();
    let mut opened = Vec::new();
    let mut own = Vec::new();
    for result in futures::future::join_all(runs).await {
        let (connection, took_to_open, took) =
            result.map_err(|error| format!("a run's task failed: {error}"))??;
        connections.push(connection);
        opened.push(took_to_open);
        own.extend(took);
    }
    opened.sort_unstable();
    own.sort_unstable();
    println!(
        "  a connection per run: opening and listing p50 {}, p99 {} (once per run); a call p50 {}, p99 {}",
        milliseconds(percentile(&opened, 0.5)),
        milliseconds(percentile(&opened, 0.99)),
        milliseconds(percentile(&own, 0.5)),
        milliseconds(percentile(&own, 0.99)),
    );
    let mut connections = connections.into_iter();
    let shared = connections.next().ok_or("no connection was opened")?;
    for connection in connections {
        connection.close(STOP_GRACE).await;
    }
    let pool = (0..options.runs).map(|_| calls_through(&shared, tool, options.calls));
    let mut pooled = Vec::new();
    for took in futures::future::join_all(pool).await {
        pooled.extend(took?);
    }
    pooled.sort_unstable();
    println!(
        "  one connection for every run (a pool): a call p50 {}, p99 {}",
        milliseconds(percentile(&pooled, 0.5)),
        milliseconds(percentile(&pooled, 0.99)),
    );
    shared.close(STOP_GRACE).await;
    Ok(())
}

/// `calls` calls of `tool`, one after the other, on `connection`: how
/// long each took. Between them the simulated model is asked as a run asks
/// it (for the call, then with its result), on the same cores, so that the
/// engine is the only difference.
async fn calls_through(
    connection: &Connection,
    tool: Tool,
    calls: usize,
) -> Result<Vec<Duration>, String> {
    let model = SimProvider::default();
    let mut request = ChatRequest {
        model: "sim-1".to_owned(),
        system: None,
        messages: Vec::new(),
        temperature: None,
        max_tokens: None,
        response_schema: None,
        tools: vec![ToolDefinition {
            name: tool.name.to_owned(),
            description: String::new(),
            parameters: serde_json::json!({"type": "object"}),
        }],
    };
    let mut took = Vec::with_capacity(calls);
    for turn in 1..=calls {
        request
            .messages
            .push(ChatMessage::user(turn_text(tool, turn)));
        let asking = ask(&model, &request).await?;
        if asking.tool_calls.is_empty() {
            return Err("the simulated model did not call the tool".to_owned());
        }
        request.messages.push(ChatMessage::assistant_calling(
            asking.text,
            &asking.tool_calls,
        ));
        let mut results = Vec::new();
        for call in &asking.tool_calls {
            let begun = Instant::now();
            let result = connection
                .call(tool.name, tool.arguments())
                .await
                .map_err(|error| format!("{} failed: {error}", tool.name))?;
            took.push(begun.elapsed());
            results.push(ContentPart::ToolResult {
                call_id: call.id.clone(),
                text: serde_json::to_string(&result.content).unwrap_or_default(),
                is_error: false,
            });
        }
        request.messages.push(ChatMessage::tool_results(results));
        let answer = ask(&model, &request).await?;
        request.messages.push(ChatMessage::assistant(answer.text));
    }
    Ok(took)
}

async fn ask(
    model: &SimProvider,
    request: &ChatRequest,
) -> Result<engine::provider::ChatResponse, String> {
    model
        .complete(request, &mut |_| {})
        .await
        .map_err(|error| format!("the simulated model failed: {error}"))
}

/// What turn `turn` of a benchmark run says: call `tool` once.
fn turn_text(tool: Tool, turn: usize) -> String {
    format!(
        "Turn {turn}.\n[sim:tool {} {}]",
        tool.name,
        tool.arguments()
    )
}

/// input → an agent task whose instruction and `calls - 1` re-prompts each
/// call `tool` of `server` once → output.
fn calling_graph(server: &str, tool: Tool, calls: usize) -> Graph {
    let call = |turn: usize| turn_text(tool, turn);
    let module = |id: &str, label: &str, config| Module {
        id: id.to_owned(),
        label: label.to_owned(),
        position: Position::default(),
        config,
        extra: Extra::new(),
    };
    let task = AgentTaskConfig {
        instruction: call(1),
        agent_config: AgentConfig::simulated(),
        re_prompts: (2..=calls).map(|turn| RePrompt::new(call(turn))).collect(),
        tools: vec![ToolChoice {
            server: server.to_owned(),
            tool: tool.name.to_owned(),
            ..ToolChoice::default()
        }],
        max_tool_calls: Some(u32::try_from(calls).unwrap_or(u32::MAX).max(1)),
        ..AgentTaskConfig::default()
    };
    let cable = |id: &str, from: &str, to: &str| {
        Cable::new(
            id.to_owned(),
            Endpoint::new(from.to_owned(), graph::ports::DATA_OUT),
            Endpoint::new(to.to_owned(), graph::ports::DATA_IN),
        )
    };
    Graph {
        name: "Benchmark tool calls".to_owned(),
        modules: vec![
            module("m1", "Input", ModuleConfig::Input(InputConfig::default())),
            module("m2", "Ask", ModuleConfig::AgentTask(task)),
            module(
                "m3",
                "Output",
                ModuleConfig::Output(OutputConfig::default()),
            ),
        ],
        cables: vec![cable("c1", "m1", "m2"), cable("c2", "m2", "m3")],
        ..Graph::default()
    }
}

fn engine(
    config: &ToolServerConfig,
    sandbox: &Sandbox,
    root: &std::path::Path,
    timing: Arc<Timing>,
) -> Engine {
    let mut registry = ProviderRegistry::new();
    registry.add(
        super::simulated(),
        Arc::new(Timed {
            inner: SimProvider::default(),
            timing,
        }),
    );
    Engine {
        providers: Arc::new(registry),
        settings: Arc::new(EngineSettings {
            max_activations: u32::MAX,
            workspace_root: root.to_path_buf(),
            sandbox: Ok(sandbox.clone()),
            tool_servers: Arc::new(ToolServers::new(vec![config.clone()])),
            ..EngineSettings::default()
        }),
    }
}

/// When each conversation's last reply came, and the gaps from a reply
/// to the request that brings its tool results.
#[derive(Default)]
struct Timing {
    replied: Mutex<HashMap<String, Instant>>,
    /// Each conversation's gaps, in order.
    gaps: Mutex<HashMap<String, Vec<Duration>>>,
    /// What the simulated model's own turns took, which a real provider
    /// spends on another machine.
    modelled: Mutex<Duration>,
}

impl Timing {
    /// The first gap of every conversation, and all the others.
    fn gaps(&self) -> (Vec<Duration>, Vec<Duration>) {
        let (mut first, mut later) = (Vec::new(), Vec::new());
        if let Ok(gaps) = self.gaps.lock() {
            for conversation in gaps.values() {
                if let Some((opening, rest)) = conversation.split_first() {
                    first.push(*opening);
                    later.extend_from_slice(rest);
                }
            }
        }
        (first, later)
    }
}

/// The simulator, timed: conversations are told apart by their first
/// message (the run's input).
struct Timed {
    inner: SimProvider,
    timing: Arc<Timing>,
}

impl Provider for Timed {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> ProviderFuture<'a> {
        let asked = Instant::now();
        let conversation = request
            .messages
            .first()
            .map(engine::provider::ChatMessage::text)
            .unwrap_or_default();
        let with_results = request
            .messages
            .last()
            .is_some_and(|message| message.role == Role::Tool);
        if with_results
            && let Ok(replied) = self.timing.replied.lock()
            && let Some(then) = replied.get(&conversation)
            && let Ok(mut gaps) = self.timing.gaps.lock()
        {
            gaps.entry(conversation.clone())
                .or_default()
                .push(asked - *then);
        }
        Box::pin(async move {
            let reply = self.inner.complete(request, on_delta).await;
            let now = Instant::now();
            if let Ok(mut modelled) = self.timing.modelled.lock() {
                *modelled += now - asked;
            }
            if let Ok(mut replied) = self.timing.replied.lock() {
                replied.insert(conversation, now);
            }
            reply
        })
    }
}

/// Serves the built-in tools over Streamable HTTP at `address`, path
/// `/mcp` (`patchbay tools --http`): a server that answers in microseconds,
/// so the benchmark sees the engine's HTTP path rather than a saturated
/// node server's.
pub async fn serve_built_in_on_http(address: std::net::SocketAddr) -> Result<(), String> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let service = StreamableHttpService::new(
        || Ok(engine::tools::BuiltInTools::default()),
        std::sync::Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| format!("cannot listen on {address}: {error}"))?;
    axum::serve(listener, router)
        .await
        .map_err(|error| format!("the HTTP server stopped: {error}"))
}

/// The reference server over Streamable HTTP on a port of its own,
/// stopped when dropped.
struct HttpServer {
    child: tokio::process::Child,
    url: String,
}

impl HttpServer {
    async fn start(script: &std::path::Path) -> Result<HttpServer, String> {
        let port = free_port()?;
        let mut command = tokio::process::Command::new("node");
        command
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string());
        HttpServer::listening(command, port).await
    }

    /// The built-in tools over HTTP (`patchbay tools --http`), from this
    /// program.
    async fn start_built_in() -> Result<HttpServer, String> {
        let port = free_port()?;
        let binary = std::env::current_exe()
            .map_err(|error| format!("cannot find this program: {error}"))?;
        let mut command = tokio::process::Command::new(binary);
        command
            .arg("tools")
            .arg("--http")
            .arg(format!("127.0.0.1:{port}"));
        HttpServer::listening(command, port).await
    }

    async fn listening(
        mut command: tokio::process::Command,
        port: u16,
    ) -> Result<HttpServer, String> {
        let child = command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| format!("cannot start the HTTP tool server: {error}"))?;
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Ok(HttpServer {
                    child,
                    url: format!("http://127.0.0.1:{port}/mcp"),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err("the HTTP tool server did not listen within 10 s".to_owned())
    }
}

fn free_port() -> Result<u16, String> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|error| format!("no free port: {error}"))?
        .port())
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
