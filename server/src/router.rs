//! The whole HTTP surface, built in one place: the JSON API under `/api`,
//! the new-graph redirect at `/new`, the Leptos pages (the home page at `/`
//! among them), and the built site; in front of all of it the access key
//! and the security headers.

use std::sync::OnceLock;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_SECURITY_POLICY, VARY};
use axum::routing::{get, post};
use leptos::prelude::{provide_context, use_context};
use leptos_axum::ResponseOptions;
use leptos_axum::{AxumRouteListing, LeptosRoutes, generate_route_list};
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use crate::error::ApiError;
use crate::state::AppState;
use crate::{
    access, attachments_api, decisions_api, estimate_api, graphs_api, headers, invoke_api, pages,
    revisions_api, room_api, run_tokens_api, runs_api, summaries_api, triggers_api,
};

/// Attachments and documents; run requests have a limit of their own.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// The largest run request: the input limit in base64, and room for JSON.
fn max_run_request_bytes(state: &AppState) -> usize {
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

fn api(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/graphs", post(graphs_api::create))
        .route("/graphs/summaries", post(summaries_api::summaries))
        .route("/graphs/{id}", get(graphs_api::get).put(graphs_api::update))
        .route("/graphs/{id}/fork", post(graphs_api::fork))
        .route("/graphs/{id}/room", get(room_api::stream))
        .route("/graphs/{id}/presence", post(room_api::presence))
        .route("/graphs/{id}/changes", post(room_api::changes))
        .route("/graphs/{id}/attachments", post(attachments_api::upload))
        .route("/attachments/{id}", get(attachments_api::download))
        .route(
            "/graphs/{id}/runs",
            post(runs_api::start)
                .layer(DefaultBodyLimit::max(max_run_request_bytes(state)))
                .get(runs_api::list),
        )
        .route(
            "/graphs/{id}/invoke",
            post(invoke_api::invoke).layer(DefaultBodyLimit::max(max_run_request_bytes(state))),
        )
        .route(
            "/graphs/{id}/run-tokens",
            post(run_tokens_api::make).get(run_tokens_api::list),
        )
        .route(
            "/graphs/{id}/run-tokens/{token_id}",
            axum::routing::delete(run_tokens_api::revoke),
        )
        .route("/graphs/{id}/triggers", get(triggers_api::list))
        .route(
            "/graphs/{id}/triggers/{trigger_id}/secret",
            post(triggers_api::make_secret),
        )
        .route("/schedules/next", post(triggers_api::next_times))
        .route("/graphs/{id}/estimate", get(estimate_api::estimate))
        .route("/graphs/{id}/revisions", get(revisions_api::list))
        .route("/graphs/{id}/revisions/{revision}", get(revisions_api::get))
        .route("/runs/{id}", get(runs_api::get))
        .route("/runs/{id}/cancel", post(runs_api::cancel))
        .route(
            "/runs/{id}/modules/{module_id}/decision",
            post(decisions_api::decide),
        )
        .route(
            "/runs/{id}/approver-links",
            post(decisions_api::approver_link),
        )
        .route("/runs/{id}/events", get(runs_api::events))
        .route("/providers", get(runs_api::providers))
        .route("/validate", post(graphs_api::validate_document))
        .route("/health", get(crate::health_api::health))
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
        ))
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
    let routes = Router::new()
        .route("/new", get(pages::new_graph))
        .route("/metrics", get(crate::metrics_api::metrics))
        .route(
            "/hooks/{trigger_id}",
            post(crate::hooks_api::deliver)
                .layer(DefaultBodyLimit::max(max_run_request_bytes(&state))),
        )
        .route(
            "/v1/chat/completions",
            post(crate::openai_api::chat_completions)
                .layer(DefaultBodyLimit::max(max_run_request_bytes(&state))),
        )
        .nest("/api", api(&state))
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
