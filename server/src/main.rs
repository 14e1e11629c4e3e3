//! `patchbay`: serve the app (the default), or validate a graph file.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use graph::{Graph, Limits, Severity, has_errors, validate};
use server::settings::{DEFAULT_ADDR, DEFAULT_DATABASE_URL, DEFAULT_SITE_ROOT, Settings};
use tracing_subscriber::EnvFilter;

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
    /// Measure the engine's overhead per activation (simulated provider, zero latency).
    Bench {
        /// Length of the chain of agent tasks.
        #[arg(long, default_value_t = 1000)]
        chain: usize,
        /// Re-prompts of each task in the chain.
        #[arg(long, default_value_t = 3)]
        re_prompts: usize,
        /// Runs of the starter graph started at once.
        #[arg(long, default_value_t = 200)]
        concurrent_runs: usize,
    },
}

/// What runs may use: providers (configuration file) and commands.
#[derive(Args)]
struct EngineArgs {
    /// Configuration file: providers, simulator, run limits (see README).
    #[arg(long, env = "PATCHBAY_CONFIG")]
    config: Option<PathBuf>,
    /// Allow step.command modules; they run in a folder under this one.
    #[arg(long, env = "PATCHBAY_ENABLE_COMMANDS")]
    enable_commands: bool,
    /// Delay per simulated word in milliseconds (0 for instant).
    #[arg(long, env = "PATCHBAY_SIM_LATENCY_MS")]
    sim_latency_ms: Option<u64>,
    /// Where coding modules' workspaces are made (a git repository per run
    /// and module); a folder in the system's temporary folder by default.
    #[arg(long, env = "PATCHBAY_WORKSPACES")]
    workspaces: Option<PathBuf>,
}

impl EngineArgs {
    fn workspace_root(&self) -> PathBuf {
        self.workspaces
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("patchbay-workspaces"))
    }

    fn command_folder(&self) -> Option<PathBuf> {
        self.enable_commands
            .then(|| std::env::temp_dir().join("patchbay-commands"))
    }
}

#[derive(Args)]
struct ServeArgs {
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
    #[command(flatten)]
    engine: EngineArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Validate { file }) => validate_file(&file),
        Some(Command::Serve(args)) => serve(args),
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
        Some(Command::Bench {
            chain,
            re_prompts,
            concurrent_runs,
        }) => match runtime()
            .map(|runtime| runtime.block_on(server::bench::run(chain, re_prompts, concurrent_runs)))
        {
            Ok(Ok(())) => ExitCode::SUCCESS,
            Ok(Err(message)) | Err(message) => {
                eprintln!("patchbay: {message}");
                ExitCode::FAILURE
            }
        },
        None => serve(cli.serve),
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
    settings.command_folder = args.command_folder();
    // Headless runs default to an instant simulator.
    settings.sim_latency_ms = Some(args.sim_latency_ms.unwrap_or(0));
    settings.workspace_root = args.workspace_root();
    let engine = server::build_engine(&settings, &config, None);
    match runtime() {
        Ok(runtime) => ExitCode::from(runtime.block_on(server::headless::run_file(
            engine,
            file,
            engine::RunInput { text, files },
        ))),
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
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn")),
        )
        .init();
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(message) => {
            eprintln!("patchbay: {message}");
            return ExitCode::FAILURE;
        }
    };
    let settings = Settings {
        addr: args.addr,
        database_url: args.database_url,
        site_root: args.site_root,
        limits: Limits {
            max_modules: args.max_modules,
            max_cables: args.max_cables,
            max_document_bytes: args.max_document_bytes,
        },
        config_file: args.engine.config.clone(),
        command_folder: args.engine.command_folder(),
        sim_latency_ms: args.engine.sim_latency_ms,
        sim_agent_program: None,
        workspace_root: args.engine.workspace_root(),
    };
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
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    tracing::info!("Patchbay is serving http://{addr} (database {database})");
    let served = axum::serve(listener, server::router::router(state))
        .with_graceful_shutdown({
            let hub = hub.clone();
            async move {
                shutdown_signal().await;
                // Runs end as cancelled rather than being cut off unrecorded.
                hub.cancel_all();
            }
        })
        .await
        .map_err(|error| format!("server error: {error}"));
    // Let cancelled runs write their last events.
    for _ in 0..50 {
        if hub.live_count() == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
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
