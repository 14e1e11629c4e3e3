//! What every request handler can reach.

use std::sync::Arc;

use axum::extract::FromRef;
use graph::ValidationContext;
use leptos::config::LeptosOptions;

use crate::rate_limit::RunRateLimiter;
use crate::runs::hub::RunHub;
use crate::settings::Settings;
use crate::store::Store;

pub use wire::providers::AcpProfileInfo;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub settings: Arc<Settings>,
    pub leptos_options: LeptosOptions,
    pub engine: engine::Engine,
    pub hub: RunHub,
    pub acp_profiles: Vec<AcpProfileInfo>,
    /// Runs started per client address.
    pub run_rate: Arc<RunRateLimiter>,
    /// Starts and resumes runs as this process.
    pub runner: crate::runs::Runner,
    /// SSE streams following runs another process runs.
    pub followers: crate::runs::follow::Followers,
    /// Who has each graph open here, and where its streams hear news.
    pub rooms: crate::room::Rooms,
    /// Cancelled when the server stops (or the last copy of this state is
    /// dropped): no run is taken over any more, streams of runs run
    /// elsewhere close.
    pub shutdown: tokio_util::sync::CancellationToken,
    /// How late a schedule's tick may be seen and still be on time
    /// (`triggers::LATE_AFTER_SECONDS`).
    pub schedule_late_after: std::time::Duration,
    pub _shutdown_on_drop: Arc<tokio_util::sync::DropGuard>,
}

impl AppState {
    pub fn schedule_late_after_millis(&self) -> i64 {
        i64::try_from(self.schedule_late_after.as_millis()).unwrap_or(i64::MAX)
    }

    /// What validation may assume this server offers.
    pub fn validation_context(&self) -> ValidationContext {
        ValidationContext {
            acp_profiles: Some(
                self.acp_profiles
                    .iter()
                    .map(|profile| profile.id.clone())
                    .collect(),
            ),
            workspace_roots: Some(self.workspace_roots()),
            webhooks: Some(self.runner.notifier.ids()),
            commands_enabled: Some(self.commands_enabled()),
            sandbox_available: Some(self.engine.settings.sandbox.is_ok()),
            ..self.engine.validation_context()
        }
    }

    /// The folders coding modules may start from, as validation shows them.
    pub fn workspace_roots(&self) -> Vec<String> {
        self.settings
            .workspace_roots
            .iter()
            .map(|root| root.display().to_string())
            .collect()
    }

    pub fn commands_enabled(&self) -> bool {
        self.engine.settings.commands_enabled
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> LeptosOptions {
        state.leptos_options.clone()
    }
}
