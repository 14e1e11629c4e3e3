//! Editing together (PRODUCT §3.16): what a browser that has a graph open
//! and the server's room for that graph say to each other. One event
//! stream per browser (`GET /api/graphs/{id}/room`, SSE) brings everyone's
//! changes in the server's order and who is here; the browser sends its
//! edits (`POST …/changes`, edit token only) and where its person is and
//! what they look at (`POST …/presence`, anyone who can view).

use graph::edits::{Edit, NotApplied, Replaced};
use serde::{Deserialize, Serialize};

/// A person's part in the room.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Has the edit token: may change the graph.
    Editor,
    /// Came by the view link.
    Viewer,
}

/// Someone who has the graph open (one per browser tab).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Person {
    /// The connection's id, as its changes name their author.
    pub connection: String,
    /// The name they set, or the room's default ("Editor 2").
    pub name: String,
    /// `#rrggbb`.
    pub colour: String,
    pub role: Role,
    /// Where their pointer is on the canvas, in graph coordinates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<(f64, f64)>,
    /// The modules they have selected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selection: Vec<String>,
    /// The module whose details they have open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editing: Option<String>,
}

/// A change the server took, as everyone in the room applies it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The revision the graph is at with this change…
    pub revision: i64,
    /// …and the one it was at before it.
    pub previous: i64,
    /// The connection that made it; empty for a save through the API.
    pub author: String,
    pub author_name: String,
    /// As applied: each `before` is what the document held.
    pub edits: Vec<Edit>,
    /// Values someone else had set that this change replaced (the same
    /// field edited by two people at once: the later one is kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<Replaced>,
}

/// The events of a room's stream. Each SSE event's name is the variant's,
/// its data the fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RoomEvent {
    /// The first event: this stream's connection, and the secret that
    /// proves it in `POST …/presence` and `POST …/changes`.
    Hello {
        connection: String,
        secret: String,
        revision: i64,
    },
    /// Everyone here, sent when the stream opens.
    People {
        people: Vec<Person>,
    },
    /// Someone came, or changed what they show.
    Person {
        person: Person,
    },
    /// Someone left.
    Left {
        connection: String,
    },
    Change(Change),
    /// The stream cannot bring the changes since the revision the browser
    /// had (too old): the document as it is now.
    Document {
        revision: i64,
        document: serde_json::Value,
    },
}

impl RoomEvent {
    /// The SSE event's name.
    pub fn name(&self) -> &'static str {
        match self {
            RoomEvent::Hello { .. } => "hello",
            RoomEvent::People { .. } => "people",
            RoomEvent::Person { .. } => "person",
            RoomEvent::Left { .. } => "left",
            RoomEvent::Change(_) => "change",
            RoomEvent::Document { .. } => "document",
        }
    }
}

/// `POST /api/graphs/{id}/presence`: where this connection's person is.
/// With the edit token, they are an editor; without, a viewer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PresenceUpdate {
    pub connection: String,
    pub secret: String,
    /// Empty: the room's default name.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub colour: String,
    #[serde(default)]
    pub pointer: Option<(f64, f64)>,
    #[serde(default)]
    pub selection: Vec<String>,
    #[serde(default)]
    pub editing: Option<String>,
}

/// `POST /api/graphs/{id}/changes`: edits made on the graph as it was at
/// `base`, with the edit token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangeRequest {
    pub connection: String,
    pub secret: String,
    pub base: i64,
    pub edits: Vec<Edit>,
}

/// The answer to a change: the revision it made (the one the graph was at,
/// when it changed nothing), and the edits that could not apply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangeAccepted {
    pub revision: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<NotApplied>,
}
