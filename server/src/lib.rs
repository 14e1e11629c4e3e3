//! The Patchbay server as a library: the binary (`main.rs`) and the tests
//! build the same router from the same parts.

// Rendering the app's deeply nested Leptos views needs more than the default.
#![recursion_limit = "512"]

pub mod attachments_api;
pub mod bench;
pub mod body;
pub mod capability;
pub mod config;
pub mod error;
pub mod graphs_api;
pub mod headless;
pub mod pages;
pub mod providers;
pub mod router;
pub mod runs;
pub mod runs_api;
pub mod settings;
pub mod state;
pub mod store;

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
            command_folder: settings.command_folder.clone(),
            attachments: store.map(|store| {
                Arc::new(attachments_api::StoreAttachments(store.clone()))
                    as Arc<dyn engine::prompt::AttachmentSource>
            }),
            ..defaults
        }),
    }
}

/// Connects the store (applying migrations), marks runs a previous server
/// left unfinished as interrupted, and assembles the state the router serves.
pub async fn build_state(settings: Settings) -> Result<AppState, StoreError> {
    let file = match &settings.config_file {
        Some(path) => ConfigFile::load(path).map_err(StoreError::Configuration)?,
        None => ConfigFile::default(),
    };
    let store = Store::connect(&settings.database_url).await?;
    let interrupted = store.interrupt_unfinished_runs().await?;
    if !interrupted.is_empty() {
        tracing::warn!(
            count = interrupted.len(),
            "runs left unfinished by a previous server are marked interrupted"
        );
    }
    let engine = build_engine(&settings, &file, Some(&store));
    let leptos_options = LeptosOptions::builder()
        .output_name("app")
        .site_root(settings.site_root.to_string_lossy().into_owned())
        .site_pkg_dir("pkg")
        .site_addr(settings.addr)
        .build();
    Ok(AppState {
        store,
        settings: Arc::new(settings),
        leptos_options,
        engine,
        hub: runs::hub::RunHub::default(),
        acp_profiles: Vec::new(),
    })
}
