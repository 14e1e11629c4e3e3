//! The states of runs, activations and variants, and the outcomes of polls
//! and reviews, as the API and events spell them.

use serde::{Deserialize, Serialize};

/// Declares an enum of words as the API spells them (snake_case), with
/// `as_str` and `parse` (the browser's hand-written readers use `parse`).
macro_rules! words {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$doc:meta])* $variant:ident,)+ }) => {
        $(#[$meta])*
        #[derive(
            Clone,
            Copy,
            Debug,
            PartialEq,
            Eq,
            Hash,
            serde::Serialize,
            serde::Deserialize,
            strum::IntoStaticStr,
            strum::EnumString,
            strum::Display,
        )]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum $name {
            $($(#[$doc])* $variant,)+
        }

        impl $name {
            /// As the API spells it.
            pub fn as_str(self) -> &'static str {
                self.into()
            }

            pub fn parse(text: &str) -> Option<$name> {
                text.parse().ok()
            }
        }
    };
}
pub(crate) use words;

words! {
    /// Where a run is.
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
}

impl RunStatus {
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

words! {
    /// Where one activation of a module is.
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
        /// Not run: taken from a recorded run (PRODUCT §3.15).
        Reused,
    }
}

words! {
    /// How a variant of a module with variants ended (DOC23 §7.2).
    pub enum VariantStatus {
        Completed,
        Failed,
    }
}

words! {
    /// What one poll of a poll module found (PRODUCT §3.10).
    pub enum PollOutcome {
        /// Not yet: the next poll comes after the interval.
        Pending,
        /// The next poll came due while this one ran.
        Skipped,
        /// The script reported a declared result.
        Decided,
        Failed,
    }
}

words! {
    /// A reviewer's decision: a review gate's, or a coding module's reviewer's.
    pub enum ReviewDecision {
        Approve,
        Revise,
    }
}

/// What a cancel that reached a running run answers: the run ends with
/// `run.cancelled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CancelStatus {
    Cancelling,
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

    #[test]
    fn outcomes_read_as_serde_writes_them() {
        let spelled = |value: serde_json::Value, text: &str| {
            assert_eq!(value.as_str(), Some(text));
        };
        for status in [VariantStatus::Completed, VariantStatus::Failed] {
            spelled(serde_json::to_value(status).unwrap(), status.as_str());
            assert_eq!(VariantStatus::parse(status.as_str()), Some(status));
        }
        for outcome in [
            PollOutcome::Pending,
            PollOutcome::Skipped,
            PollOutcome::Decided,
            PollOutcome::Failed,
        ] {
            spelled(serde_json::to_value(outcome).unwrap(), outcome.as_str());
            assert_eq!(PollOutcome::parse(outcome.as_str()), Some(outcome));
        }
        for decision in [ReviewDecision::Approve, ReviewDecision::Revise] {
            spelled(serde_json::to_value(decision).unwrap(), decision.as_str());
            assert_eq!(ReviewDecision::parse(decision.as_str()), Some(decision));
        }
        assert_eq!(ReviewDecision::parse("approved"), None);
        spelled(
            serde_json::to_value(CancelStatus::Cancelling).unwrap(),
            "cancelling",
        );
    }
}
