//! `patchbay`: serve the app (the default), or validate a graph file.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use graph::{Graph, Limits, Severity, has_errors, validate};
use server::settings::{
    Access, DEFAULT_ADDR, DEFAULT_DATABASE_URL, DEFAULT_LEASE_SECONDS, DEFAULT_MAX_RUN_INPUT_BYTES,
    DEFAULT_RUNS_PER_MINUTE, DEFAULT_SITE_ROOT, DEFAULT_STOP_GRACE_SECONDS,
    DEFAULT_WORKSPACE_RETENTION_HOURS, RunLimits, Settings,
};
use tracing_subscriber::EnvFilter;

/// Runs allocate many small strings (events, records, statements' values),
/// freed by another thread than the one that made them: glibc's allocator
/// spent a third of a busy server's time on them, mimalloc a fraction of
/// that (docs/manual/durability.md, "Running several processes").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How `patchbay serve` writes its log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Parser)]
#[command(
    name = "patchbay",
    version,
    about = "Build and run AI agent task graphs",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no subcommand, `patchbay` serves with these options.
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web app and API (the default).
    Serve(ServeArgs),
    /// Print a graph file's validation findings; exit 1 if any is an error.
    Validate {
        /// A graph document (JSON).
        file: PathBuf,
    },
    /// Run a graph file without the server; progress on stderr, outputs as JSON on stdout.
    Run {
        /// A graph document (JSON).
        file: PathBuf,
        /// The run's input text.
        #[arg(long, default_value = "")]
        input: String,
        /// Files given with the input (repeatable).
        #[arg(long = "input-file")]
        input_files: Vec<PathBuf>,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// Serve the built-in simulated coding agent over ACP on stdin/stdout
    /// (what coding modules start; not for people).
    SimAgent,
    /// Serve the built-in MCP tools on stdin/stdout (what a coding agent
    /// given the built-in server starts; not for people).
    Tools {
        /// Serve them over Streamable HTTP at http://ADDRESS/mcp instead
        /// (what `patchbay bench-tools` measures HTTP with).
        #[arg(long, value_name = "ADDRESS")]
        http: Option<std::net::SocketAddr>,
    },
    /// Measure the engine's overhead per activation (simulated provider, zero latency).
    Bench {
        /// Length of the chain of agent tasks.
        #[arg(long, default_value_t = 1000)]
        chain: usize,
        /// Re-prompts of each task in the chain.
        #[arg(long, default_value_t = 3)]
        re_prompts: usize,
        /// Runs of the starter graph started at once.
        #[arg(long, default_value_t = 1000)]
        concurrent_runs: usize,
        /// SSE clients following one run (0: not measured).
        #[arg(long, default_value_t = 1000)]
        subscribers: usize,
        /// A PostgreSQL database to measure beside SQLite.
        #[arg(long, env = "PATCHBAY_BENCH_POSTGRES_URL")]
        postgres_url: Option<String>,
    },
    /// Measure what a tool call costs a run beyond the tool's own time,
    /// over stdio and Streamable HTTP (scripts/bench tools).
    BenchTools {
        /// The reference MCP server's dist/index.js.
        #[arg(long)]
        everything: PathBuf,
        /// Runs at once.
        #[arg(long, default_value_t = 100)]
        runs: usize,
        /// Tool calls of each run.
        #[arg(long, default_value_t = 5)]
        calls: usize,
        /// Only the transport named (stdio, http or built-in).
        #[arg(long)]
        only: Option<String>,
    },
}

/// What runs may use of the host: providers (configuration file),
/// commands, folders, and the sandbox every process of a run starts in.
#[derive(Args)]
struct EngineArgs {
    /// Configuration file: providers, simulator, run limits (see docs/manual/configuration.md).
    #[arg(long, env = "PATCHBAY_CONFIG")]
    config: Option<PathBuf>,
    /// Allow commands: step.command modules, and coding agents executing
    /// things when their profile allows it. Always confined.
    #[arg(long, env = "PATCHBAY_ENABLE_COMMANDS")]
    enable_commands: bool,
    /// Delay per simulated word in milliseconds (0 for instant).
    #[arg(long, env = "PATCHBAY_SIM_LATENCY_MS")]
    sim_latency_ms: Option<u64>,
    /// Where each run gets its folder (coding workspaces, the HOME and
    /// temporary folder of its processes); in the system's temporary folder
    /// by default.
    #[arg(long, env = "PATCHBAY_WORKSPACES")]
    workspaces: Option<PathBuf>,
    /// Folders a coding module's workspace.path may name (comma-separated);
    /// none by default.
    #[arg(long, env = "PATCHBAY_WORKSPACE_ROOTS", value_delimiter = ',')]
    workspace_roots: Vec<PathBuf>,
    /// The most bytes a copy of such a folder may hold.
    #[arg(long, env = "PATCHBAY_WORKSPACE_COPY_MAX_BYTES", default_value_t = coding::DEFAULT_MAX_COPY_BYTES)]
    workspace_copy_max_bytes: u64,
    /// bubblewrap, which confines every process a run starts.
    #[arg(long, env = "PATCHBAY_BWRAP", default_value = "bwrap")]
    bwrap: String,
}

impl EngineArgs {
    fn workspace_root(&self) -> PathBuf {
        self.workspaces
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("patchbay-workspaces"))
    }

    /// These arguments over `settings`.
    fn apply(&self, settings: &mut Settings) {
        settings.config_file.clone_from(&self.config);
        settings.commands_enabled = self.enable_commands;
        settings.sim_latency_ms = self.sim_latency_ms;
        settings.workspace_root = self.workspace_root();
        settings.workspace_roots.clone_from(&self.workspace_roots);
        settings.workspace_copy_max_bytes = self.workspace_copy_max_bytes;
        settings.bwrap.clone_from(&self.bwrap);
    }
}

#[derive(Args)]
struct ServeArgs {
    /// How the log is written: `text` for people, `json` for collectors
    /// (one JSON object a line).
    #[arg(long, env = "PATCHBAY_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Address to listen on.
    #[arg(long, env = "PATCHBAY_ADDR", default_value = DEFAULT_ADDR)]
    addr: SocketAddr,
    /// sqlite://path/to/file.db (created on first start) or postgres://…
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL)]
    database_url: String,
    /// Folder holding the built browser bundle (pkg/) and public files.
    #[arg(long, env = "PATCHBAY_SITE_ROOT", default_value = DEFAULT_SITE_ROOT)]
    site_root: PathBuf,
    /// Most modules a graph may have.
    #[arg(long, env = "PATCHBAY_MAX_MODULES", default_value_t = Limits::default().max_modules)]
    max_modules: usize,
    /// Most cables a graph may have.
    #[arg(long, env = "PATCHBAY_MAX_CABLES", default_value_t = Limits::default().max_cables)]
    max_cables: usize,
    /// Largest graph document, in bytes.
    #[arg(long, env = "PATCHBAY_MAX_DOCUMENT_BYTES", default_value_t = Limits::default().max_document_bytes)]
    max_document_bytes: usize,
    /// The key that creating anything on this server needs (graphs, forks,
    /// runs, saves); browsers pass it once as /?key=…. Required to serve on
    /// an address other than loopback, unless --open-access.
    #[arg(long, env = "PATCHBAY_ACCESS_KEY", hide_env_values = true)]
    access_key: Option<String>,
    /// Serve beyond loopback without an access key: anyone who reaches the
    /// server may create graphs and start runs.
    #[arg(long, env = "PATCHBAY_OPEN_ACCESS")]
    open_access: bool,
    /// Largest run input (text and files), in bytes.
    #[arg(long, env = "PATCHBAY_MAX_RUN_INPUT_BYTES", default_value_t = DEFAULT_MAX_RUN_INPUT_BYTES)]
    max_run_input_bytes: usize,
    /// Runs one client address, and one run token, may start per minute.
    #[arg(long, env = "PATCHBAY_RUNS_PER_MINUTE", default_value_t = DEFAULT_RUNS_PER_MINUTE)]
    runs_per_minute: u32,
    /// Hold clients on this machine to the per-minute limit too (behind a
    /// reverse proxy on the same machine, every client looks local).
    #[arg(long, env = "PATCHBAY_LIMIT_LOOPBACK")]
    limit_loopback: bool,
    /// Hours a run's folder (workspaces, HOME, temporary files) is kept
    /// after the run ended; its diff and changed files stay in the record.
    #[arg(long, env = "PATCHBAY_WORKSPACE_RETENTION_HOURS", default_value_t = DEFAULT_WORKSPACE_RETENTION_HOURS)]
    workspace_retention_hours: u64,
    /// Do not resume runs a stopped server left unfinished: they end as
    /// interrupted, keeping what they had produced.
    #[arg(long, env = "PATCHBAY_NO_RESUME")]
    no_resume: bool,
    /// Seconds this process holds a run without renewing its lease (every
    /// second): another process on the same PostgreSQL takes the run over
    /// once it has run out.
    #[arg(long, env = "PATCHBAY_LEASE_SECONDS", default_value_t = DEFAULT_LEASE_SECONDS, value_parser = clap::value_parser!(u64).range(2..=3600))]
    lease_seconds: u64,
    /// Seconds activations in flight may go on when the server is stopped
    /// (SIGTERM, Ctrl+C); the runs are resumed at the next start.
    #[arg(long, env = "PATCHBAY_STOP_GRACE_SECONDS", default_value_t = DEFAULT_STOP_GRACE_SECONDS)]
    stop_grace_seconds: u64,
    #[command(flatten)]
    engine: EngineArgs,
}

fn main() -> ExitCode {
    // Before any HTTP client is made: the OTLP exporter's, providers', MCP
    // servers', webhooks'.
    engine::tls::install();
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Validate { file }) => validate_file(&file),
        Some(Command::Serve(args)) => serve(args),
        Some(Command::Tools { http }) => {
            let served = runtime().map(|runtime| {
                runtime.block_on(async {
                    match http {
                        Some(address) => {
                            server::bench::tools::serve_built_in_on_http(address).await
                        }
                        None => engine::tools::serve_built_in_on_stdio().await,
                    }
                })
            });
            match served {
                Ok(Ok(())) => ExitCode::SUCCESS,
                Ok(Err(message)) | Err(message) => {
                    eprintln!("patchbay tools: {message}");
                    ExitCode::FAILURE
                }
            }
        }
        Some(Command::SimAgent) => {
            match runtime().map(|runtime| runtime.block_on(coding::sim_agent::serve())) {
                Ok(Ok(())) => ExitCode::SUCCESS,
                Ok(Err(error)) => {
                    eprintln!("patchbay sim-agent: {error}");
                    ExitCode::FAILURE
                }
                Err(message) => {
                    eprintln!("patchbay sim-agent: {message}");
                    ExitCode::FAILURE
                }
            }
        }
        Some(Command::Run {
            file,
            input,
            input_files,
            engine,
        }) => run_headless(&file, input, &input_files, &engine),
        Some(Command::BenchTools {
            everything,
            runs,
            calls,
            only,
        }) => {
            // Why a server did not start is in the log.
            tracing_subscriber::fmt()
                .with_env_filter(EnvFilter::new("warn,rmcp=error"))
                .with_writer(std::io::stderr)
                .init();
            bench(server::bench::tools::run(server::bench::tools::Options {
                everything,
                runs,
                calls,
                only,
            }))
        }
        Some(Command::Bench {
            chain,
            re_prompts,
            concurrent_runs,
            subscribers,
            postgres_url,
        }) => bench(server::bench::run(server::bench::Options {
            chain,
            re_prompts,
            concurrent_runs,
            subscribers,
            postgres_url,
        })),
        None => serve(cli.serve),
    }
}

/// Runs a benchmark to its end, saying why it could not.
fn bench(benchmark: impl std::future::Future<Output = Result<(), String>>) -> ExitCode {
    match runtime().and_then(|runtime| runtime.block_on(benchmark)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("patchbay: {message}");
            ExitCode::FAILURE
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Runtime::new().map_err(|error| format!("cannot start the runtime: {error}"))
}

fn run_headless(
    file: &std::path::Path,
    text: String,
    input_files: &[PathBuf],
    args: &EngineArgs,
) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let files = match server::headless::input_files(input_files) {
        Ok(files) => files,
        Err(message) => {
            eprintln!("patchbay: {message}");
            return ExitCode::from(2);
        }
    };
    let config = match &args.config {
        Some(path) => match server::config::ConfigFile::load(path) {
            Ok(config) => config,
            Err(message) => {
                eprintln!("patchbay: {message}");
                return ExitCode::from(2);
            }
        },
        None => server::config::ConfigFile::default(),
    };
    let mut settings = Settings::for_database("sqlite::memory:");
    args.apply(&mut settings);
    // Headless runs default to an instant simulator.
    settings.sim_latency_ms = Some(args.sim_latency_ms.unwrap_or(0));
    let engine = server::build_engine(&settings, &config, None);
    match runtime() {
        Ok(runtime) => ExitCode::from(runtime.block_on(async {
            server::list_tools(&engine).await;
            server::headless::run_file(engine, file, engine::RunInput { text, files }).await
        })),
        Err(message) => {
            eprintln!("patchbay: {message}");
            ExitCode::FAILURE
        }
    }
}

fn validate_file(file: &std::path::Path) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("patchbay: cannot read {}: {error}", file.display());
            return ExitCode::from(2);
        }
    };
    let graph = match Graph::load(&text) {
        Ok(graph) => graph,
        Err(error) => {
            eprintln!("{}: {} ({})", file.display(), error, error.code());
            return ExitCode::from(2);
        }
    };
    let context = graph::ValidationContext::default();
    let findings = validate(&graph, &context);
    for finding in &findings {
        let severity = match finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let place = finding
            .path
            .as_deref()
            .or(finding.cable_id.as_deref())
            .unwrap_or("graph");
        println!(
            "{severity} {} at {place}: {}",
            finding.code.as_str(),
            finding.message
        );
    }
    if findings.is_empty() {
        println!("{}: no findings", file.display());
    }
    if has_errors(&findings) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,rmcp=warn"));
    match args.log_format {
        LogFormat::Text => tracing_subscriber::fmt().with_env_filter(filter).init(),
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_env_filter(filter)
            .init(),
    }
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(message) => {
            eprintln!("patchbay: {message}");
            return ExitCode::FAILURE;
        }
    };
    let mut settings = Settings::for_database(&args.database_url);
    settings.addr = args.addr;
    settings.site_root = args.site_root;
    settings.limits = Limits {
        max_modules: args.max_modules,
        max_cables: args.max_cables,
        max_document_bytes: args.max_document_bytes,
    };
    args.engine.apply(&mut settings);
    settings.access = Access {
        key: args.access_key.filter(|key| !key.is_empty()),
        open: args.open_access,
    };
    settings.run_limits = RunLimits {
        max_input_bytes: args.max_run_input_bytes,
        per_minute: args.runs_per_minute,
        limit_loopback: args.limit_loopback,
    };
    settings.workspace_retention =
        std::time::Duration::from_secs(args.workspace_retention_hours.saturating_mul(3600));
    settings.resume = !args.no_resume;
    settings.lease = std::time::Duration::from_secs(args.lease_seconds);
    settings.stop_grace = std::time::Duration::from_secs(args.stop_grace_seconds);
    if let Err(refusal) = server::access::check_exposure(&settings) {
        eprintln!("patchbay: {refusal}");
        return ExitCode::FAILURE;
    }
    match runtime.block_on(run(settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("patchbay: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(settings: Settings) -> Result<(), String> {
    let bundle = settings.site_root.join("pkg").join("app.wasm");
    if !bundle.exists() {
        tracing::warn!(
            "no browser bundle at {}: pages will render without interaction; build it with scripts/build",
            bundle.display()
        );
    }
    let addr = settings.addr;
    let database = redact(&settings.database_url);
    let state = server::build_state(settings)
        .await
        .map_err(|error| format!("cannot start with database {database}: {error}"))?;
    let hub = state.hub.clone();
    let shutdown = state.shutdown.clone();
    let store = state.store.clone();
    let owner = state.runner.owner.clone();
    let grace = state.settings.stop_grace;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    if state.settings.access.key.is_some() {
        tracing::info!(
            "Patchbay is serving http://{addr} (database {database}); creating anything needs the access key: open http://{addr}/?key=<PATCHBAY_ACCESS_KEY> once in a browser"
        );
    } else {
        tracing::info!("Patchbay is serving http://{addr} (database {database})");
    }
    server::janitor::spawn(state.clone());
    server::triggers::ticker::spawn(state.clone());
    let app = server::router::router(state).into_make_service_with_connect_info::<SocketAddr>();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown({
            let hub = hub.clone();
            async move {
                shutdown_signal().await;
                // No run is taken over any more; those running here start
                // nothing new, and what is in flight gets the grace. They
                // are not cancelled: that is a person's decision.
                shutdown.cancel();
                hub.stop_all();
            }
        })
        .await
        .map_err(|error| format!("server error: {error}"));
    // Let runs finish what is in flight and keep it.
    let waited = std::time::Instant::now();
    while hub.live_count() > 0 && waited.elapsed() < grace + std::time::Duration::from_secs(5) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // The next process (or another one) takes them over at once.
    match store.release_leases(&owner).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "runs left to be resumed by the next start"),
        Err(error) => {
            tracing::warn!(%error, "leases could not be released; they run out by themselves")
        }
    }
    served
}

/// The database URL without a password, for logs.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_never_reach_the_log() {
        assert_eq!(
            redact("postgres://patchbay:s3cret@localhost/patchbay"),
            "postgres://patchbay:***@localhost/patchbay"
        );
        assert_eq!(
            redact("sqlite://data/patchbay.db"),
            "sqlite://data/patchbay.db"
        );
    }
}
