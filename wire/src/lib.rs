//! The vocabulary the Patchbay server and browser share: every body the API
//! sends or takes and every event of a run, as typed Rust. The engine emits
//! these types, the server serializes them, and the app decodes them, so a
//! new event or field is a compile error wherever it is not handled.
//! No I/O (serde and strum derives), so the browser bundle can depend on it.

pub mod activation;
pub mod approval;
pub mod bundle;
pub mod content;
pub mod cost;
pub mod error;
pub mod event;
mod fields;
pub mod graphs;
pub mod health;
pub mod invoke;
pub mod providers;
pub mod room;
pub mod run;
pub mod run_tokens;
pub mod status;
pub mod triggers;

pub use activation::{
    ActivationRecord, IntentChoice, ResponseRecord, Route, TranscriptEntry, TranscriptRole,
};
pub use bundle::{ContextBundle, PortValue, Receipt};
pub use event::{EventRecord, RunEvent};
pub use run::{InputFile, RunInput, RunRecord, RunSummary};
pub use status::{
    ActivationStatus, CancelStatus, PollOutcome, ReviewDecision, RunStatus, VariantStatus,
};
