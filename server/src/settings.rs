//! Server settings: where to listen, which database, where the built site
//! is, document limits, and what the server can run (for validation).

use std::net::SocketAddr;
use std::path::PathBuf;

use graph::{Limits, ValidationContext};

#[derive(Clone, Debug)]
pub struct Settings {
    pub addr: SocketAddr,
    pub database_url: String,
    /// The built browser bundle (`pkg/`) and public files.
    pub site_root: PathBuf,
    pub limits: Limits,
}

pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/patchbay.db";
pub const DEFAULT_ADDR: &str = "127.0.0.1:3000";
pub const DEFAULT_SITE_ROOT: &str = "target/site";

impl Settings {
    /// What validation may assume this server offers.
    pub fn validation_context(&self) -> ValidationContext {
        ValidationContext {
            providers: Some(vec!["sim".to_owned()]),
            acp_profiles: Some(vec!["sim-agent".to_owned()]),
        }
    }
}
