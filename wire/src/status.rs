//! The states of runs and activations, as the API and events spell them.

use serde::{Deserialize, Serialize};

/// Where a run is.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RunStatus {
    Queued,
    Running,
    /// Nothing runs: an approval waits for a person (PRODUCT §3.14).
    Waiting,
    Completed,
    Failed,
    Cancelled,
    /// The server stopped under the run.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<RunStatus> {
        text.parse().ok()
    }

    pub fn is_finished(self) -> bool {
        matches!(
            self,
            RunStatus::Completed
                | RunStatus::Failed
                | RunStatus::Cancelled
                | RunStatus::Interrupted
        )
    }

    /// Still going: the page follows its events.
    pub fn is_live(self) -> bool {
        !self.is_finished()
    }
}

/// Where one activation of a module is.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ActivationStatus {
    Queued,
    Running,
    /// A poll between two polls (PRODUCT §3.1).
    Waiting,
    Completed,
    Failed,
    Cancelled,
    /// The server stopped while it ran; the record keeps what it had.
    Interrupted,
}

impl ActivationStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_as_serde_writes_them() {
        for status in [
            RunStatus::Queued,
            RunStatus::Running,
            RunStatus::Waiting,
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::Cancelled,
            RunStatus::Interrupted,
        ] {
            let json = serde_json::to_value(status).unwrap_or_default();
            assert_eq!(json.as_str(), Some(status.as_str()));
            assert_eq!(RunStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(RunStatus::parse("done"), None);
        let json = serde_json::to_value(ActivationStatus::Cancelled).unwrap_or_default();
        assert_eq!(json.as_str(), Some(ActivationStatus::Cancelled.as_str()));
    }
}
