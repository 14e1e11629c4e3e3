//! Server settings from the command line and environment: where to listen,
//! which database, where the built site is, document limits, the
//! configuration file, and whether `step.command` modules may run.

use std::net::SocketAddr;
use std::path::PathBuf;

use graph::Limits;

#[derive(Clone, Debug)]
pub struct Settings {
    pub addr: SocketAddr,
    pub database_url: String,
    /// The built browser bundle (`pkg/`) and public files.
    pub site_root: PathBuf,
    pub limits: Limits,
    /// The configuration file (providers, simulator, run limits).
    pub config_file: Option<PathBuf>,
    /// Where `step.command` modules run; `None` disables them.
    pub command_folder: Option<PathBuf>,
    /// Overrides the configuration file's simulator latency.
    pub sim_latency_ms: Option<u64>,
    /// The `patchbay` program that serves the simulated ACP agent
    /// (`patchbay sim-agent`); this program when unset.
    pub sim_agent_program: Option<PathBuf>,
    /// Where coding modules get their workspaces (one git repository per run
    /// and module).
    pub workspace_root: PathBuf,
}

pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/patchbay.db";
pub const DEFAULT_ADDR: &str = "127.0.0.1:3000";
pub const DEFAULT_SITE_ROOT: &str = "target/site";

impl Settings {
    /// Settings for tests and tools: defaults around a database URL.
    pub fn for_database(database_url: &str) -> Settings {
        Settings {
            addr: ([127, 0, 0, 1], 0).into(),
            database_url: database_url.to_owned(),
            site_root: PathBuf::from(DEFAULT_SITE_ROOT),
            limits: Limits::default(),
            config_file: None,
            command_folder: None,
            sim_latency_ms: None,
            sim_agent_program: None,
            workspace_root: std::env::temp_dir().join("patchbay-workspaces"),
        }
    }
}
