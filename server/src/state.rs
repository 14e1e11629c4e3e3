//! What every request handler can reach.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;

use crate::settings::Settings;
use crate::store::Store;

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub settings: Arc<Settings>,
    pub leptos_options: LeptosOptions,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> LeptosOptions {
        state.leptos_options.clone()
    }
}
