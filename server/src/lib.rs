//! The Patchbay server as a library: the binary (`main.rs`) and the tests
//! build the same router from the same parts.

// Rendering the app's deeply nested Leptos views needs more than the default.
#![recursion_limit = "512"]

pub mod access;
pub mod api_routes;
pub mod attachments_api;
pub mod bench;
pub mod body;
pub mod call_decisions_api;
pub mod capability;
pub mod config;
pub mod decisions_api;
pub mod error;
pub mod estimate_api;
pub mod graphs_api;
pub mod headers;
pub mod headless;
pub mod health_api;
pub mod hooks_api;
pub mod invoke_api;
pub mod janitor;
pub mod metrics;
pub mod metrics_api;
pub mod openai_api;
pub mod openapi;
pub mod pages;
pub mod providers;
pub mod rate_limit;
pub mod revisions_api;
pub mod room;
pub mod room_api;
pub mod router;
pub mod run_tokens_api;
pub mod runs;
pub mod runs_api;
pub mod settings;
pub mod state;
pub mod store;
pub mod summaries_api;
pub mod telemetry;
pub mod tool_servers;
pub mod triggers;
pub mod triggers_api;

use std::sync::Arc;

use leptos::config::LeptosOptions;

use config::ConfigFile;
use settings::Settings;
use state::AppState;
use store::{Store, StoreError};

/// The engine this server runs graphs with: providers from `file` (keys from
/// the environment) and the settings' limits.
pub fn build_engine(
    settings: &Settings,
    file: &ConfigFile,
    store: Option<&Store>,
) -> engine::Engine {
    let mut file = file.clone();
    if let Some(latency) = settings.sim_latency_ms {
        file.sim.latency_ms_per_token = Some(latency);
    }
    let providers = providers::registry(&file, &|variable| std::env::var(variable).ok());
    let defaults = engine::EngineSettings::default();
    engine::Engine {
        providers: Arc::new(providers),
        settings: Arc::new(engine::EngineSettings {
            max_activations: file
                .engine
                .max_activations
                .unwrap_or(defaults.max_activations),
            max_concurrency: file
                .engine
                .max_concurrency
                .unwrap_or(defaults.max_concurrency),
            max_run_duration: file
                .engine
                .max_run_seconds
                .map_or(defaults.max_run_duration, std::time::Duration::from_secs),
            commands_enabled: settings.commands_enabled,
            workspace_root: settings.workspace_root.clone(),
            sandbox: engine::sandbox::Sandbox::detect(&settings.bwrap),
            attachments: store.map(|store| {
                Arc::new(attachments_api::StoreAttachments(store.clone()))
                    as Arc<dyn engine::prompt::AttachmentSource>
            }),
            coding: Some(Arc::new(coding::CodingModules::new(
                acp_profiles(settings, &file),
                coding::WorkspaceSources {
                    roots: settings.workspace_roots.clone(),
                    max_copy_bytes: settings.workspace_copy_max_bytes,
                },
            ))),
            stop_grace: settings.stop_grace,
            default_run_budget_usd: file.engine.run_budget_usd,
            tool_servers: Arc::new(tool_servers(&file)),
            ..defaults
        }),
    }
}

/// The MCP servers of `file`, with the built-in one; those whose variables
/// are not set are left out with a warning.
fn tool_servers(file: &ConfigFile) -> engine::tools::ToolServers {
    let (servers, problems) =
        tool_servers::resolve(&file.mcp_servers, &|variable| std::env::var(variable).ok());
    for problem in problems {
        tracing::warn!("{problem}: the server is left out");
    }
    engine::tools::ToolServers::new(servers)
}

/// How long a starting server waits for its MCP servers to list their
/// tools: one that answers later is listed then; until it does, the
/// catalogue and validation say so.
const TOOL_LISTING_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// Lists every MCP server's tools, side by side, waiting at most
/// [`TOOL_LISTING_WAIT`] (the rest goes on in the background).
pub async fn list_tools(engine: &engine::Engine) {
    let settings = Arc::clone(&engine.settings);
    let listing = tokio::spawn(async move {
        // A folder of this process's own: several processes may share a
        // workspace root (PostgreSQL and several processes), and one's
        // clean-up must not pull the folder from under another's servers.
        let scratch = settings
            .workspace_root
            .join(format!(".listing-{}", std::process::id()));
        let sandbox = settings
            .sandbox
            .as_ref()
            .map_err(|unavailable| unavailable.0.as_str());
        settings.tool_servers.list(sandbox, &scratch).await;
    });
    if tokio::time::timeout(TOOL_LISTING_WAIT, listing)
        .await
        .is_err()
    {
        tracing::warn!(
            "some MCP servers had not listed their tools after {} s",
            TOOL_LISTING_WAIT.as_secs()
        );
    }
}

/// The ACP profiles coding modules can use: the built-in simulated agent and
/// the configured ones, the default first.
pub fn acp_profiles(settings: &Settings, file: &ConfigFile) -> Vec<coding::AcpProfile> {
    let program = settings
        .sim_agent_program
        .clone()
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| std::path::PathBuf::from("patchbay"));
    let mut simulated = coding::AcpProfile::simulated(&program);
    let pace = settings
        .sim_latency_ms
        .unwrap_or_else(|| providers::sim_latency_ms(file));
    simulated.env.insert(
        coding::sim_agent::LATENCY_VARIABLE.to_owned(),
        pace.to_string(),
    );
    if let Some(permissions) = file.sim.agent_permissions {
        simulated.permissions = permissions;
    }
    let mut profiles = vec![simulated];
    for profile in &file.acp_profiles {
        if profile.id == coding::SIMULATED_PROFILE_ID {
            tracing::warn!(
                "ACP profile \"sim-agent\" is the built-in simulated agent; the configured one is ignored (set [sim] agent_permissions to change what it may do)"
            );
        } else {
            profiles.push(profile.clone());
        }
    }
    if let Some(default) = &file.default_acp_profile
        && let Some(position) = profiles.iter().position(|profile| &profile.id == default)
    {
        let chosen = profiles.remove(position);
        profiles.insert(0, chosen);
    }
    profiles
}

/// Connects the store (applying migrations), takes up the runs a stopped
/// process left unfinished (resumed, or interrupted when resume is off),
/// starts keeping leases, and assembles the state the router serves.
pub async fn build_state(settings: Settings) -> Result<AppState, StoreError> {
    let file = match &settings.config_file {
        Some(path) => ConfigFile::load(path).map_err(StoreError::Configuration)?,
        None => ConfigFile::default(),
    };
    let store = Store::connect(&settings.database_url).await?;
    let engine = build_engine(&settings, &file, Some(&store));
    list_tools(&engine).await;
    let hub = runs::hub::RunHub::default();
    let metrics = Arc::new(metrics::Metrics::new(
        engine
            .providers
            .infos()
            .into_iter()
            .flat_map(|info| {
                info.models
                    .into_iter()
                    .map(move |model| (info.id.clone(), model))
            })
            .collect(),
    ));
    let telemetry = telemetry::Telemetry::start(&file.telemetry, metrics.spans_dropped())
        .map_err(StoreError::Configuration)?;
    let runner = runs::Runner {
        store: store.clone(),
        hub: hub.clone(),
        engine: engine.clone(),
        owner: format!(
            "{}-{}",
            std::process::id(),
            runs::new_run_id().trim_start_matches("r_")
        )
        .into(),
        lease: settings.lease,
        notifier: Arc::new(runs::notify::Notifier::new(
            file.webhooks.clone(),
            file.public_url.clone(),
            store.clone(),
        )),
        metrics: Arc::clone(&metrics),
        telemetry,
    };
    let shutdown = tokio_util::sync::CancellationToken::new();
    let followers = runs::follow::Followers::default();
    if store.backend() == store::Backend::Postgres {
        runs::follow::listen(
            settings.database_url.clone(),
            followers.clone(),
            shutdown.clone(),
        );
    }
    let rooms = room::Rooms::default();
    room::spawn_forgetting(rooms.clone(), shutdown.clone());
    if store.backend() == store::Backend::Postgres {
        room::listen(
            settings.database_url.clone(),
            rooms.clone(),
            shutdown.clone(),
        );
    }
    runs::lease::pass(&runner, settings.resume, true).await;
    runs::lease::spawn(runner.clone(), settings.resume, shutdown.clone());
    if let Err(unavailable) = &engine.settings.sandbox {
        tracing::warn!("runs with coding modules or commands will be refused: {unavailable}");
    }
    let leptos_options = LeptosOptions::builder()
        .output_name("app")
        .site_root(settings.site_root.to_string_lossy().into_owned())
        .site_pkg_dir("pkg")
        .site_addr(settings.addr)
        .build();
    let profiles = acp_profiles(&settings, &file);
    let run_rate = Arc::new(rate_limit::RunRateLimiter::new(settings.run_limits));
    Ok(AppState {
        store,
        run_rate,
        settings: Arc::new(settings),
        leptos_options,
        engine,
        hub,
        runner,
        followers,
        rooms,
        _shutdown_on_drop: Arc::new(shutdown.clone().drop_guard()),
        schedule_late_after: std::time::Duration::from_secs(
            file.schedules
                .late_after_seconds
                .unwrap_or(triggers::LATE_AFTER_SECONDS),
        ),
        shutdown,
        acp_profiles: profiles
            .into_iter()
            .map(|profile| state::AcpProfileInfo {
                id: profile.id,
                name: profile.name,
                simulated: profile.simulated,
                modes: profile.modes,
                offers: None,
            })
            .collect(),
    })
}
