//! `GET /api/health`: whether the server answers, for probes and scripts.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    pub status: HealthStatus,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    Ok,
}

impl Health {
    pub const OK: Health = Health {
        status: HealthStatus::Ok,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_reads_as_it_always_did() {
        assert_eq!(
            serde_json::to_string(&Health::OK).unwrap(),
            r#"{"status":"ok"}"#
        );
    }
}
