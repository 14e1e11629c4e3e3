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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Has the edit token: may change the graph.
    Editor,
    /// Came by the view link.
    Viewer,
}

/// Someone who has the graph open (one per browser tab).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The modules they are dragging and where they are now (graph
    /// coordinates): shown moving before the drop, which is the change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moving: Vec<(String, f64, f64)>,
}

/// A change the server took, as everyone in the room applies it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

/// The first event: this stream's connection, and the secret that proves
/// it in `POST …/presence` and `POST …/changes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Hello {
    pub connection: String,
    pub secret: String,
    pub revision: i64,
}

/// Everyone here, sent when the stream opens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PeopleHere {
    pub people: Vec<Person>,
}

/// Someone came, or changed what they show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PersonNow {
    pub person: Person,
}

/// Someone left.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Left {
    pub connection: String,
}

/// The stream cannot bring the changes since the revision the browser had
/// (too old): the document as it is now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DocumentNow {
    pub revision: i64,
    pub document: serde_json::Value,
}

/// The events of a room's stream. Each SSE event's name is the variant's,
/// its data the fields (and `event`, the name again).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RoomEvent {
    Hello(Hello),
    People(PeopleHere),
    Person(PersonNow),
    Left(Left),
    Change(Change),
    /// Someone started a run of the graph: editors' canvases follow it
    /// (they list the graph's runs with the edit token, as the run's id is
    /// not the view link's to know).
    Run,
    Document(DocumentNow),
}

impl RoomEvent {
    /// The SSE event's name.
    pub fn name(&self) -> &'static str {
        match self {
            RoomEvent::Hello(_) => "hello",
            RoomEvent::People(_) => "people",
            RoomEvent::Person(_) => "person",
            RoomEvent::Left(_) => "left",
            RoomEvent::Change(_) => "change",
            RoomEvent::Run => "run",
            RoomEvent::Document(_) => "document",
        }
    }

    /// The names of every event.
    pub const NAMES: [&'static str; 7] = [
        "hello", "people", "person", "left", "change", "run", "document",
    ];

    /// An event as the stream sent it, by its name: read straight into its
    /// fields (no buffered copy of the data, as reading the tagged enum
    /// would make).
    pub fn read(name: &str, data: &str) -> Option<RoomEvent> {
        Some(match name {
            "hello" => RoomEvent::Hello(serde_json::from_str(data).ok()?),
            "people" => RoomEvent::People(serde_json::from_str(data).ok()?),
            "person" => RoomEvent::Person(serde_json::from_str(data).ok()?),
            "left" => RoomEvent::Left(serde_json::from_str(data).ok()?),
            "change" => RoomEvent::Change(serde_json::from_str(data).ok()?),
            "run" => RoomEvent::Run,
            "document" => RoomEvent::Document(serde_json::from_str(data).ok()?),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_reads_back_by_its_name() {
        let events = [
            RoomEvent::Hello(Hello {
                connection: "c_1".into(),
                secret: "s".into(),
                revision: 3,
            }),
            RoomEvent::People(PeopleHere { people: Vec::new() }),
            RoomEvent::Left(Left {
                connection: "c_1".into(),
            }),
            RoomEvent::Run,
            RoomEvent::Document(DocumentNow {
                revision: 4,
                document: serde_json::json!({"name": "x"}),
            }),
        ];
        for event in events {
            let data = serde_json::to_string(&event).unwrap_or_default();
            assert!(RoomEvent::NAMES.contains(&event.name()));
            assert_eq!(RoomEvent::read(event.name(), &data), Some(event));
        }
        assert_eq!(RoomEvent::read("other", "{}"), None);
    }
}

/// `POST /api/graphs/{id}/presence`: where this connection's person is.
/// With the edit token, they are an editor; without, a viewer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    #[serde(default)]
    pub moving: Vec<(String, f64, f64)>,
}

/// `POST /api/graphs/{id}/changes`: edits made on the graph as it was at
/// `base`, with the edit token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChangeRequest {
    pub connection: String,
    pub secret: String,
    pub base: i64,
    pub edits: Vec<Edit>,
    /// The person's edits have settled (a browser editing alone sends
    /// after a pause, as autosave did): the history keeps this revision.
    /// Otherwise it keeps one every 30 s at most.
    #[serde(default)]
    pub checkpoint: bool,
}

/// The answer to a change: the revision it made (the one the graph was at,
/// when it changed nothing), and the edits that could not apply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ChangeAccepted {
    pub revision: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<NotApplied>,
}
