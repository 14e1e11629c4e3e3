//! The whole HTTP surface, built in one place: the JSON API under `/api`,
//! the new-graph redirect at `/new`, the Leptos pages (the home page at `/`
//! among them), and the built site; in front of all of it the access key
//! and the security headers.

use std::sync::OnceLock;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_SECURITY_POLICY, VARY};
use axum::routing::{MethodRouter, get};
use leptos::prelude::{provide_context, use_context};
use leptos_axum::ResponseOptions;
use leptos_axum::{AxumRouteListing, LeptosRoutes, generate_route_list};
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use crate::error::ApiError;
use crate::state::AppState;
use crate::{access, headers, pages};

/// Attachments and documents; run requests have a limit of their own.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// The largest run request: the input limit in base64, and room for JSON.
pub(crate) fn max_run_request_bytes(state: &AppState) -> usize {
    state.settings.run_limits.max_input_bytes.saturating_mul(4) / 3 + 64 * 1024
}

/// The browser bundle, as `scripts/build` leaves it: each file beside its
/// brotli and gzip forms, the smallest the browser accepts sent (brotli is
/// a quarter smaller than gzip on the WebAssembly). Caches are told the
/// answer depends on `Accept-Encoding`.
fn bundle(pkg: std::path::PathBuf) -> Router {
    Router::new()
        .fallback_service(ServeDir::new(pkg).precompressed_br().precompressed_gzip())
        .layer(SetResponseHeaderLayer::overriding(
            VARY,
            HeaderValue::from_static("accept-encoding"),
        ))
}

/// The API's routes (`api_routes.rs`), each path's methods merged: those
/// under `/api` in one router with the API's fallbacks and body limit, the
/// rest (webhooks, the OpenAI-compatible endpoint, metrics) beside it.
fn api(state: &AppState) -> (Router<AppState>, Router<AppState>) {
    let mut under_api: Vec<(&'static str, MethodRouter<AppState>)> = Vec::new();
    let mut beside: Vec<(&'static str, MethodRouter<AppState>)> = Vec::new();
    for route in crate::api_routes::routes(state) {
        let (list, path) = match route.path.strip_prefix("/api") {
            Some(path) => (&mut under_api, path),
            None => (&mut beside, route.path),
        };
        match list.iter_mut().find(|(known, _)| *known == path) {
            Some((_, methods)) => {
                let merged = std::mem::take(methods).merge(route.serve);
                *methods = merged;
            }
            None => list.push((path, route.serve)),
        }
    }
    let routed = |list: Vec<(&'static str, MethodRouter<AppState>)>| {
        list.into_iter()
            .fold(Router::new(), |router, (path, methods)| {
                router.route(path, methods)
            })
    };
    let api = routed(under_api)
        .fallback(|| async { ApiError::RouteNotFound })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        // Run requests carry input files; documents are held to their own
        // limit when they are read (JsonBody::into_graph).
        .layer(DefaultBodyLimit::max(
            state
                .settings
                .limits
                .max_document_bytes
                .max(MAX_REQUEST_BYTES),
        ));
    (api, routed(beside))
}

/// The app's pages, listed once per process. Listing them renders the app
/// with every resource load held back, in the whole process while it runs
/// (Leptos counts that in one global, `SuppressResourceLoad`): a page
/// rendered meanwhile never loads its graph and never answers. The server
/// builds one router before it serves; tests build one each while others
/// render pages, and a page hung now and then.
fn route_list() -> Vec<AxumRouteListing> {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(app::App)).clone()
}

pub fn router(state: AppState) -> Router {
    let graph_source = pages::graph_source(state.store.clone());
    let context = move || {
        provide_context(graph_source.clone());
        // Leptos gives every page render a fresh nonce and puts it on the
        // inline scripts it writes; the policy allows exactly those.
        if let (Some(nonce), Some(response)) =
            (leptos::nonce::use_nonce(), use_context::<ResponseOptions>())
            && let Ok(policy) = HeaderValue::from_str(&headers::page_policy(&nonce))
        {
            response.insert_header(CONTENT_SECURITY_POLICY, policy);
        }
    };
    let shell_options = state.leptos_options.clone();
    let pkg = state.settings.site_root.join("pkg");
    let key_check = axum::middleware::from_fn_with_state(state.clone(), access::require_key);
    let (api, beside_api) = api(&state);
    let routes = Router::new()
        .route("/new", get(pages::new_graph))
        .merge(beside_api)
        .nest("/api", api)
        .nest_service("/pkg", bundle(pkg))
        .leptos_routes_with_context(&state, route_list(), context.clone(), move || {
            app::shell(shell_options.clone())
        })
        .fallback(leptos_axum::file_and_error_handler_with_context::<
            AppState,
            _,
        >(context, app::shell))
        .layer(key_check);
    headers::apply(routes)
        .layer(CompressionLayer::new())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

#[cfg(test)]
mod tests {
    /// The API's routes come from `api_routes.rs` alone, which the OpenAPI
    /// document describes: a route added here would be served and not
    /// described. `/new` (a page's redirect) is the one route of its own.
    #[test]
    fn every_api_route_comes_from_the_described_list() {
        let source = include_str!("router.rs");
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        let routed: Vec<&str> = code
            .match_indices(".route(")
            .map(|(at, _)| code[at..].lines().next().unwrap_or_default())
            .collect();
        assert_eq!(
            routed,
            [
                ".route(path, methods)",
                ".route(\"/new\", get(pages::new_graph))"
            ]
        );
    }
}
