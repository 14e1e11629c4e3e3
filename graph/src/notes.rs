//! Notes (PRODUCT §1.6): Markdown people write on the canvas beside the
//! modules, `notes: [{ id, text, position, size, colour? }]` in the
//! document. They never take part in a run. Read from the document's kept
//! fields, as triggers are, so that everything that edits the document by
//! its JSON (edits, editing together, the history) carries them as it
//! carries modules.

use serde_json::{Map, Value};

use crate::frame::{self, Colour, Size};
use crate::{Graph, LoadError, Position};

/// The most notes one graph has.
pub const MOST_NOTES: usize = 500;
/// The longest note, in characters.
pub const MOST_NOTE_CHARACTERS: usize = 20_000;
/// A new note's size.
pub const NEW_NOTE_SIZE: Size = Size {
    width: 240.0,
    height: 140.0,
};

#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub id: String,
    /// Markdown ([`crate::markdown`]).
    pub text: String,
    pub position: Position,
    pub size: Size,
    pub colour: Colour,
}

impl Note {
    /// The note as the document holds it.
    pub fn to_value(&self) -> Value {
        let mut fields = Map::new();
        fields.insert("id".to_owned(), Value::String(self.id.clone()));
        fields.insert("text".to_owned(), Value::String(self.text.clone()));
        frame::place_and_size(&mut fields, self.position, self.size);
        if self.colour != Colour::default() {
            fields.insert(
                "colour".to_owned(),
                Value::String(self.colour.as_str().to_owned()),
            );
        }
        Value::Object(fields)
    }
}

/// The graph's notes, or the first thing wrong with them and where. A
/// document without `notes` has none.
pub fn notes(graph: &Graph) -> Result<Vec<Note>, LoadError> {
    let items = frame::list(&graph.extra, "notes", MOST_NOTES)?;
    let mut notes: Vec<Note> = Vec::with_capacity(items.len());
    for (index, value) in items.iter().enumerate() {
        let path = format!("notes[{index}]");
        let note = read(&path, value)?;
        if notes.iter().any(|seen| seen.id == note.id) {
            return Err(frame::duplicate(&path, &note.id, "note"));
        }
        notes.push(note);
    }
    Ok(notes)
}

/// The notes that can be drawn: a note the server would refuse is left
/// out rather than the whole canvas failing (a document saved by an older
/// or newer build).
pub fn drawn(graph: &Graph) -> Vec<Note> {
    graph.extra.get("notes").map(drawn_from).unwrap_or_default()
}

/// The notes of a document's `notes` value that can be drawn.
pub fn drawn_from(notes: &Value) -> Vec<Note> {
    notes
        .as_array()
        .map(|items| {
            items
                .iter()
                .enumerate()
                .filter_map(|(index, value)| read(&format!("notes[{index}]"), value).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn read(path: &str, value: &Value) -> Result<Note, LoadError> {
    let fields = frame::fields(path, value)?;
    Ok(Note {
        id: frame::id(path, fields)?,
        text: frame::text(path, fields, "text", MOST_NOTE_CHARACTERS)?,
        position: frame::position(path, fields)?,
        size: frame::size(path, fields, NEW_NOTE_SIZE)?,
        colour: frame::colour(path, fields)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(notes: Value) -> Graph {
        let mut graph = Graph::default();
        graph.extra.insert("notes".to_owned(), notes);
        graph
    }

    #[test]
    fn notes_are_read_with_their_defaults_and_written_back_the_same() {
        let graph = with(json!([
            { "id": "n1", "text": "# Review\nThe loop.", "position": { "x": 10, "y": -20 },
              "size": { "width": 300, "height": 120 }, "colour": "blue" },
            { "id": "n2" }
        ]));
        let notes = notes(&graph).unwrap_or_default();
        assert_eq!(notes.len(), 2);
        assert_eq!(notes[0].text, "# Review\nThe loop.");
        assert_eq!(notes[0].position, Position { x: 10.0, y: -20.0 });
        assert_eq!(notes[0].colour, Colour::Blue);
        assert_eq!(notes[1].size, NEW_NOTE_SIZE);
        assert_eq!(notes[1].colour, Colour::Yellow);
        let again = with(Value::Array(notes.iter().map(Note::to_value).collect()));
        assert_eq!(super::notes(&again), Ok(notes));
    }

    #[test]
    fn what_is_wrong_is_said_with_where_it_is() {
        let cases = [
            (json!({}), "notes", "an array, not an object"),
            (
                json!([{ "text": "x" }]),
                "notes[0].id",
                "a string id is needed",
            ),
            (
                json!([{ "id": "a", "text": 3 }]),
                "notes[0].text",
                "a string, not a number",
            ),
            (
                json!([{ "id": "a", "size": { "width": 5 } }]),
                "notes[0].size.width",
                "a number from 80 to 8000",
            ),
            (
                json!([{ "id": "a", "colour": "red" }]),
                "notes[0].colour",
                "one of yellow, blue, green, pink, grey, not \"red\"",
            ),
            (
                json!([{ "id": "a" }, { "id": "a" }]),
                "notes[1].id",
                "another note has the id \"a\"",
            ),
        ];
        for (value, path, message) in cases {
            let Err(error) = notes(&with(value.clone())) else {
                panic!("{value} was read");
            };
            assert_eq!(
                (error.path.as_str(), error.message.as_str()),
                (path, message),
                "{value}"
            );
        }
        let long = "x".repeat(MOST_NOTE_CHARACTERS + 1);
        let error = notes(&with(json!([{ "id": "a", "text": long }]))).err();
        assert_eq!(
            error.map(|error| error.path),
            Some("notes[0].text".to_owned())
        );
    }

    #[test]
    fn drawing_leaves_out_only_the_notes_it_cannot_read() {
        let graph = with(json!([{ "id": "a", "colour": "red" }, { "id": "b", "text": "kept" }]));
        let drawn = drawn(&graph);
        assert_eq!(drawn.len(), 1);
        assert_eq!(drawn[0].text, "kept");
        assert!(super::drawn(&Graph::default()).is_empty());
    }
}
