//! The process's TLS cryptography: rustls with *ring*. reqwest's default
//! provider, aws-lc-rs, compiles a C library that took minutes of a first
//! build on two cores; *ring* is the other provider rustls ships. It is
//! installed as the process's default before the first HTTP client is
//! made (reqwest, and the MCP and OpenAI clients built on it, read that
//! default), wherever that happens first.

use std::sync::Once;

/// Installs *ring* as the process's TLS provider, once; a provider that
/// another part of the process installed first is left in place.
pub fn install() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // Err means a provider is already the default: that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A client with reqwest's defaults, made once the provider is installed
/// (a test's or a tool's requests to this server).
pub fn client() -> reqwest::Client {
    install();
    reqwest::Client::new()
}
