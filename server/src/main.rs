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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Validate { file }) => validate_file(&file),
        Some(Command::Serve(args)) => serve(args),
        None => serve(cli.serve),
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
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("patchbay: cannot start the runtime: {error}");
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
        .map_err(|error| format!("cannot open the database {database}: {error}"))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    tracing::info!("Patchbay is serving http://{addr} (database {database})");
    axum::serve(listener, server::router::router(state))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .map_err(|error| format!("server error: {error}"))
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
