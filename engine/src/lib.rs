//! The Patchbay run engine: runs a graph snapshot module by module (the
//! run as a value in `run`, carried out by the shell in `scheduler`), each
//! activation by its kind (agent tasks as re-prompt chains
//! in one session; DOC23 §3.1), through providers behind one trait, and
//! writes a typed, numbered event log and activation records to a recorder.
//! The server and the command line drive the same engine.

pub mod activation;
pub mod attempts;
pub mod budget;
pub mod bundle;
pub mod intent;
pub mod named_outputs;
pub mod prompt;
pub mod provider;
pub mod recorder;
pub mod render;
pub mod resume;
pub mod reuse;
pub mod routing;
pub mod run;
pub mod sandbox;
pub mod scheduler;
pub mod session;
pub mod shell_template;
pub mod structured;
pub mod tls;
pub mod tools;
pub mod validators;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use activation::{ActivationContext, ActivationError, ActivationOutput};
use prompt::AttachmentSource;
use provider::ProviderRegistry;
use provider::retry::RetryPolicy;
use sandbox::{Sandbox, SandboxUnavailable};

pub use scheduler::{RunControl, RunOutcome, RunSpec, execute, execute_controlled};
pub use wire::{EventRecord, InputFile, RunEvent, RunInput, RunStatus};

/// Runs coding modules (ACP agents); supplied by the coding module support.
pub trait CodingRunner: Send + Sync {
    fn run<'a>(
        &'a self,
        context: &'a ActivationContext,
    ) -> Pin<Box<dyn Future<Output = Result<ActivationOutput, ActivationError>> + Send + 'a>>;

    /// What the agent of ACP profile `profile_id` offered when a session of
    /// it last opened; `None` until one has.
    fn offers(&self, _profile_id: &str) -> Option<wire::providers::AgentOffers> {
        None
    }
}

pub struct EngineSettings {
    /// A run fails with `step_transition_limit_exceeded` past this many activations.
    pub max_activations: u32,
    /// Activations of one run in flight at once.
    pub max_concurrency: usize,
    /// A run fails when it has not ended after this long.
    pub max_run_duration: Duration,
    /// Whether commands may run: `step.command` modules, and agents' requests
    /// to execute something. The operator's switch (`--enable-commands`).
    pub commands_enabled: bool,
    /// Where each run gets its folder (workspaces, HOME, temporary folder,
    /// commands' work folder): `{workspace_root}/{run_id}`.
    pub workspace_root: PathBuf,
    /// What confines every process a run starts; when it is unavailable,
    /// runs that would start one are refused with the reason.
    pub sandbox: Result<Sandbox, SandboxUnavailable>,
    pub attachments: Option<Arc<dyn AttachmentSource>>,
    pub coding: Option<Arc<dyn CodingRunner>>,
    pub retry: RetryPolicy,
    /// How long activations in flight may go on when a run is stopped
    /// (the server stopping): then they are cut, kept as they are, and
    /// the run is left to be resumed.
    pub stop_grace: Duration,
    /// The budget of a run started without one, in US dollars.
    pub default_run_budget_usd: Option<f64>,
    /// The MCP servers agent tasks may call tools of (PRODUCT §3.17):
    /// the built-in one and the operator's.
    pub tool_servers: Arc<tools::ToolServers>,
}

/// What activations in flight get to finish when a server stops.
pub const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(10);

/// A day: coding runs and waits on outside decisions are long.
pub const DEFAULT_MAX_RUN_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

impl EngineSettings {
    /// The folder of run `run_id`.
    pub fn run_folder(&self, run_id: &str) -> sandbox::RunFolder {
        sandbox::RunFolder::new(&self.workspace_root, run_id)
    }
}

impl Default for EngineSettings {
    fn default() -> EngineSettings {
        EngineSettings {
            max_activations: 500,
            max_concurrency: 8,
            max_run_duration: DEFAULT_MAX_RUN_DURATION,
            commands_enabled: false,
            workspace_root: std::env::temp_dir().join("patchbay-workspaces"),
            sandbox: Err(SandboxUnavailable(
                "no sandbox was set up for this engine".to_owned(),
            )),
            attachments: None,
            coding: None,
            retry: RetryPolicy::default(),
            stop_grace: DEFAULT_STOP_GRACE,
            default_run_budget_usd: None,
            tool_servers: Arc::new(tools::ToolServers::default()),
        }
    }
}

/// The engine: providers and settings shared by every run.
#[derive(Clone)]
pub struct Engine {
    pub providers: Arc<ProviderRegistry>,
    pub settings: Arc<EngineSettings>,
}

impl Engine {
    /// What validation may assume of this engine's providers and tools
    /// (the rest of the context is the server's to add).
    pub fn validation_context(&self) -> graph::ValidationContext {
        graph::ValidationContext {
            providers: Some(self.providers.ids()),
            tool_servers: Some(self.settings.tool_servers.specs()),
            providers_without_tools: Some(
                self.providers
                    .infos()
                    .into_iter()
                    .filter(|info| !info.tool_calling)
                    .map(|info| info.id)
                    .collect(),
            ),
            ..graph::ValidationContext::default()
        }
    }
}

/// Unix milliseconds.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}
