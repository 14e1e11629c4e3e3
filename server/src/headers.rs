//! Security headers. Pages get a Content-Security-Policy that allows the
//! app's own scripts (the hydration script by its per-response nonce, the
//! WebAssembly bundle) and nothing from elsewhere, and that no other site
//! may frame them. Everything else — API answers, files, the small pages
//! the server writes itself — gets a policy that allows no script at all,
//! `nosniff`, and a referrer policy that keeps graph and run links (which
//! are capabilities) from leaking to other sites.

use axum::Router;
use axum::http::HeaderValue;
use axum::http::header::{
    CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use tower_http::set_header::SetResponseHeaderLayer;

/// The policy of a page of the app, whose inline scripts carry `nonce`.
/// Styles may be inline: the canvas positions modules with `style`.
pub fn page_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// Everything that is not a page of the app: no script runs from it.
const DEFAULT_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The headers every response gets, unless its handler set its own.
pub fn apply<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    router
        .layer(SetResponseHeaderLayer::if_not_present(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DEFAULT_POLICY),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
}
