//! The Patchbay server as a library: the binary (`main.rs`) and the tests
//! build the same router from the same parts.

pub mod body;
pub mod capability;
pub mod error;
pub mod graphs_api;
pub mod pages;
pub mod router;
pub mod settings;
pub mod state;
pub mod store;

use std::sync::Arc;

use leptos::config::LeptosOptions;

use settings::Settings;
use state::AppState;
use store::{Store, StoreError};

/// Connects the store (applying migrations) and assembles the state the
/// router serves.
pub async fn build_state(settings: Settings) -> Result<AppState, StoreError> {
    let store = Store::connect(&settings.database_url).await?;
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
    })
}
