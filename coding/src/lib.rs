//! Coding modules (PRODUCT §3.3, DOC23 §3.2): real coding agents driven
//! over the Agent Client Protocol, each in an ACP session of its own in a
//! git workspace of the run, with per-agent re-prompts and the three
//! coordination modes; plus the simulated ACP agent that ships built in.

pub mod activation;
pub mod client;
pub mod confine;
pub mod profile;
pub mod sim_agent;
pub mod workspace;

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::CodingRunner;
use engine::activation::{ActivationContext, ActivationError, ActivationOutput};

use client::AgentSession;
pub use profile::{AcpProfile, PermissionPolicy, SIMULATED_PROFILE_ID};

/// How long a session waits for its next turn before its agent is stopped
/// (a parked session between activations, a builder during a long review).
const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Which of the host's folders coding modules may start from: the
/// operator's choice, never a graph's.
#[derive(Clone, Debug, Default)]
pub struct WorkspaceSources {
    /// Folders a module's `workspace.path` may name (`--workspace-roots`);
    /// none by default.
    pub roots: Vec<PathBuf>,
    /// The most a copy of such a folder may hold.
    pub max_copy_bytes: u64,
}

/// 256 MiB.
pub const DEFAULT_MAX_COPY_BYTES: u64 = 256 * 1024 * 1024;

/// Runs the coding modules of every run on this server.
pub struct CodingModules {
    profiles: Vec<AcpProfile>,
    /// Used by agents whose `acp_profile_id` is null.
    default_profile: String,
    sources: WorkspaceSources,
    idle_timeout: Duration,
    /// Sessions of `session_style: park` modules, by run, module and agent.
    parked: Mutex<HashMap<String, Arc<AgentSession>>>,
    /// What each profile's agent offered when a session of it last opened.
    offers: Mutex<HashMap<String, wire::providers::AgentOffers>>,
}

impl CodingModules {
    /// `profiles` must not be empty; the first is the default.
    pub fn new(profiles: Vec<AcpProfile>, sources: WorkspaceSources) -> CodingModules {
        let default_profile = profiles
            .first()
            .map(|profile| profile.id.clone())
            .unwrap_or_default();
        CodingModules {
            profiles,
            default_profile,
            sources,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            parked: Mutex::new(HashMap::new()),
            offers: Mutex::new(HashMap::new()),
        }
    }

    pub fn profiles(&self) -> &[AcpProfile] {
        &self.profiles
    }
}

impl CodingRunner for CodingModules {
    fn run<'a>(
        &'a self,
        context: &'a ActivationContext,
    ) -> Pin<Box<dyn Future<Output = Result<ActivationOutput, ActivationError>> + Send + 'a>> {
        Box::pin(self.activate(context))
    }

    fn offers(&self, profile_id: &str) -> Option<wire::providers::AgentOffers> {
        self.offers.lock().ok()?.get(profile_id).cloned()
    }
}
