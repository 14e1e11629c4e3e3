//! The Patchbay graph model, shared by the browser (compiled to WebAssembly)
//! and the server: the document, the module kinds (one file each under
//! `kinds/`) and their configs, the ports each config gives, validation,
//! conditions on cables, the DOC23 R3.1 migration and the size limits.
//! It depends on serde (and strum for its name tables), never on UI, HTTP
//! or database crates.

pub mod attempts;
pub mod changes;
pub mod condition;
pub mod config;
pub mod document;
pub mod edits;
pub mod experiment;
pub mod frame;
pub mod groups;
pub mod intent;
pub mod join;
pub mod json_schema;
pub mod kinds;
pub mod limits;
pub mod markdown;
pub mod migrate;
pub mod names;
pub mod notes;
pub mod order;
pub mod port_moves;
pub mod ports;
pub mod reprompt;
pub mod reuse;
pub mod routing;
pub mod shell_places;
pub mod starter;
pub mod template;
pub mod tool_approval;
pub mod tools;
pub mod topology;
pub mod triggers;
pub mod typing;
pub mod validate;
pub mod validators;
pub mod wiring;
pub mod workspace_roots;

/// Fields a type does not know, kept so they are written back unchanged.
pub type Extra = serde_json::Map<String, serde_json::Value>;

pub use document::{Cable, Endpoint, FORMAT, Graph, LoadError, LoadErrorKind, Module, Position};
pub use kinds::{ModuleConfig, ModuleKind};
pub use limits::Limits;
pub use migrate::MigrationNote;
pub use ports::{Direction, ModulePorts, Port, PortType, ports};
pub use reprompt::{Attachment, AttachmentKind, RePrompt, attachment_kind};
pub use validate::{Code, Finding, Severity, ValidationContext, has_errors, validate};
pub use wiring::{Connection, check_connection};
