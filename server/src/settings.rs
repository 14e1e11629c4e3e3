//! Server settings from the command line and environment: where to listen,
//! which database, where the built site is, document limits, the
//! configuration file, and what the operator allows graphs to do with the
//! host (commands, workspace folders) and strangers to do with the server
//! (the access key, run limits).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

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
    /// Whether commands may run (`step.command`, agents executing things).
    pub commands_enabled: bool,
    /// Overrides the configuration file's simulator latency.
    pub sim_latency_ms: Option<u64>,
    /// The `patchbay` program that serves the simulated ACP agent
    /// (`patchbay sim-agent`); this program when unset.
    pub sim_agent_program: Option<PathBuf>,
    /// Where each run gets its folder: coding modules' workspaces, the
    /// HOME and temporary folder of its processes.
    pub workspace_root: PathBuf,
    /// Folders a coding module's `workspace.path` may name; none by default.
    pub workspace_roots: Vec<PathBuf>,
    /// The most a copy of such a folder may hold.
    pub workspace_copy_max_bytes: u64,
    /// How long a run's folder is kept after the run ended.
    pub workspace_retention: Duration,
    /// bubblewrap, which confines every process a run starts.
    pub bwrap: String,
    pub access: Access,
    pub run_limits: RunLimits,
    /// Whether runs a stopped process left unfinished are resumed; when
    /// not, they end interrupted (PRODUCT §8).
    pub resume: bool,
    /// How long this process holds a run without renewing its lease:
    /// another process takes it over after that.
    pub lease: Duration,
    /// What activations in flight get to finish when the server stops.
    pub stop_grace: Duration,
}

/// Who may create things on this server.
#[derive(Clone, Debug, Default)]
pub struct Access {
    /// With a key, every request that changes something needs it.
    pub key: Option<String>,
    /// The operator's explicit choice to serve beyond loopback without a key.
    pub open: bool,
}

/// What one client may ask of the runs API.
#[derive(Clone, Copy, Debug)]
pub struct RunLimits {
    /// The largest run input (text and files, decoded).
    pub max_input_bytes: usize,
    /// Runs one client address may start per minute.
    pub per_minute: u32,
    /// Whether clients on this machine are limited too.
    pub limit_loopback: bool,
}

pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/patchbay.db";
pub const DEFAULT_ADDR: &str = "127.0.0.1:3000";
pub const DEFAULT_SITE_ROOT: &str = "target/site";
pub const DEFAULT_MAX_RUN_INPUT_BYTES: usize = 4 * 1024 * 1024;
pub const DEFAULT_RUNS_PER_MINUTE: u32 = 20;
pub const DEFAULT_WORKSPACE_RETENTION_HOURS: u64 = 24;
pub const DEFAULT_LEASE_SECONDS: u64 = 15;
pub const DEFAULT_STOP_GRACE_SECONDS: u64 = 10;

impl Default for RunLimits {
    fn default() -> RunLimits {
        RunLimits {
            max_input_bytes: DEFAULT_MAX_RUN_INPUT_BYTES,
            per_minute: DEFAULT_RUNS_PER_MINUTE,
            limit_loopback: false,
        }
    }
}

impl Settings {
    /// Settings for tests and tools: defaults around a database URL.
    pub fn for_database(database_url: &str) -> Settings {
        Settings {
            addr: ([127, 0, 0, 1], 0).into(),
            database_url: database_url.to_owned(),
            site_root: PathBuf::from(DEFAULT_SITE_ROOT),
            limits: Limits::default(),
            config_file: None,
            commands_enabled: false,
            sim_latency_ms: None,
            sim_agent_program: None,
            workspace_root: std::env::temp_dir().join("patchbay-workspaces"),
            workspace_roots: Vec::new(),
            workspace_copy_max_bytes: coding::DEFAULT_MAX_COPY_BYTES,
            workspace_retention: Duration::from_secs(DEFAULT_WORKSPACE_RETENTION_HOURS * 3600),
            bwrap: "bwrap".to_owned(),
            access: Access::default(),
            run_limits: RunLimits::default(),
            resume: true,
            lease: Duration::from_secs(DEFAULT_LEASE_SECONDS),
            stop_grace: Duration::from_secs(DEFAULT_STOP_GRACE_SECONDS),
        }
    }
}
