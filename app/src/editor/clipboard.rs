//! Copy and paste as graph fragments: the selected modules and the cables
//! between them, and the note in hand, as JSON on the system clipboard, so
//! a fragment moves between two graphs (or two browsers). Pasting gives
//! everything fresh ids and puts the fragment's top-left corner at the
//! cursor.
//!
//! Plain Rust: no UI types, tested natively.

use std::collections::{HashMap, HashSet};

use graph::notes::{self, Note};
use graph::{Cable, Graph, Module, Position};
use serde::{Deserialize, Serialize};

pub const FORMAT: &str = "patchbay.fragment/1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fragment {
    pub format: String,
    pub modules: Vec<Module>,
    pub cables: Vec<Cable>,
    /// Notes, as the document holds them (PRODUCT §1.6).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<serde_json::Value>,
}

/// What pasting a fragment adds.
#[derive(Debug, Default)]
pub struct Placed {
    pub modules: Vec<Module>,
    pub cables: Vec<Cable>,
    pub notes: Vec<Note>,
}

/// The modules and notes with these ids, and the cables that join two of
/// the modules.
pub fn copy(graph: &Graph, selected: &HashSet<String>) -> Fragment {
    Fragment {
        format: FORMAT.to_owned(),
        notes: notes::drawn(graph)
            .iter()
            .filter(|note| selected.contains(&note.id))
            .map(Note::to_value)
            .collect(),
        modules: graph
            .modules
            .iter()
            .filter(|module| selected.contains(&module.id))
            .cloned()
            .collect(),
        cables: graph
            .cables
            .iter()
            .filter(|cable| {
                selected.contains(&cable.from.module) && selected.contains(&cable.to.module)
            })
            .cloned()
            .collect(),
    }
}

/// The modules with these ids, and the cables that join two of them, as
/// clipboard text.
pub fn text_of(graph: &Graph, selected: &HashSet<String>) -> String {
    copy(graph, selected).to_text()
}

impl Fragment {
    pub fn to_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A fragment from clipboard text: a fragment, or a whole graph document
    /// (pasting an exported graph pastes all of it). `None` for anything else.
    pub fn parse(text: &str) -> Option<Fragment> {
        let value: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
        if value.get("format").and_then(serde_json::Value::as_str) == Some(FORMAT) {
            return serde_json::from_value(value).ok();
        }
        let graph = Graph::from_value(value).ok()?;
        Some(Fragment {
            format: FORMAT.to_owned(),
            notes: notes::drawn(&graph).iter().map(Note::to_value).collect(),
            modules: graph.modules,
            cables: graph.cables,
        })
    }

    /// Whether pasting it would add nothing.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty() && self.notes.is_empty()
    }

    /// The fragment's modules, cables and notes with ids free in `graph`,
    /// moved so that its top-left corner is at `at`. Notes' ids count on
    /// from `seed` (random in the browser: two people pasting at once must
    /// not make the same one).
    pub fn place(&self, graph: &Graph, at: Position, seed: u32) -> Placed {
        let pasted_notes = notes::drawn_from(&serde_json::Value::Array(self.notes.clone()));
        let corners = self
            .modules
            .iter()
            .map(|module| module.position)
            .chain(pasted_notes.iter().map(|note| note.position));
        let (left, top) = corners.fold((f64::INFINITY, f64::INFINITY), |(left, top), corner| {
            (left.min(corner.x), top.min(corner.y))
        });
        let (left, top) = if left.is_finite() {
            (left, top)
        } else {
            (0.0, 0.0)
        };
        let mut taken = graph.clone();
        let mut renamed: HashMap<&str, String> = HashMap::new();
        let mut modules = Vec::with_capacity(self.modules.len());
        for module in &self.modules {
            let id = taken.next_module_id();
            renamed.insert(module.id.as_str(), id.clone());
            let mut copy = module.clone();
            copy.id = id;
            copy.position = Position {
                x: at.x + (module.position.x - left),
                y: at.y + (module.position.y - top),
            };
            taken.modules.push(copy.clone());
            modules.push(copy);
        }
        let mut cables = Vec::new();
        for cable in &self.cables {
            let (Some(from), Some(to)) = (
                renamed.get(cable.from.module.as_str()),
                renamed.get(cable.to.module.as_str()),
            ) else {
                continue;
            };
            let mut copy = cable.clone();
            copy.id = taken.next_cable_id();
            copy.from.module = from.clone();
            copy.to.module = to.clone();
            taken.cables.push(copy.clone());
            cables.push(copy);
        }
        let taken_notes: HashSet<String> = notes::drawn(graph)
            .into_iter()
            .map(|note| note.id)
            .collect();
        let mut next = seed;
        let notes = pasted_notes
            .into_iter()
            .map(|note| {
                let mut id = format!("note-{:06x}", next & 0xff_ffff);
                while taken_notes.contains(&id) {
                    next = next.wrapping_add(1);
                    id = format!("note-{:06x}", next & 0xff_ffff);
                }
                next = next.wrapping_add(1);
                Note {
                    id,
                    position: Position {
                        x: at.x + (note.position.x - left),
                        y: at.y + (note.position.y - top),
                    },
                    ..note
                }
            })
            .collect();
        Placed {
            modules,
            cables,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::starter::starter_graph;

    fn ids(ids: &[&str]) -> HashSet<String> {
        ids.iter().map(|id| (*id).to_owned()).collect()
    }

    #[test]
    fn copying_takes_the_cables_inside_the_selection_only() {
        let fragment = copy(&starter_graph(), &ids(&["m1", "m2"]));
        assert_eq!(fragment.modules.len(), 2);
        assert_eq!(fragment.cables.len(), 1);
        assert_eq!(fragment.cables[0].id, "c1");
    }

    #[test]
    fn pasting_gives_fresh_ids_and_lands_at_the_cursor() {
        let graph = starter_graph();
        let fragment = Fragment::parse(&copy(&graph, &ids(&["m1", "m2"])).to_text()).unwrap();
        let Placed {
            modules, cables, ..
        } = fragment.place(
            &graph,
            Position {
                x: 1000.0,
                y: 500.0,
            },
            0,
        );
        let module_ids: Vec<&str> = modules.iter().map(|module| module.id.as_str()).collect();
        assert_eq!(module_ids, ["m4", "m5"]);
        assert_eq!(
            modules[0].position,
            Position {
                x: 1000.0,
                y: 500.0
            }
        );
        assert_eq!(
            modules[1].position,
            Position {
                x: 1280.0,
                y: 500.0
            },
            "relative layout kept"
        );
        assert_eq!(cables.len(), 1);
        assert_eq!(cables[0].id, "c3");
        assert_eq!(
            (cables[0].from.module.as_str(), cables[0].to.module.as_str()),
            ("m4", "m5")
        );
        assert_eq!(
            modules[1].config, graph.modules[1].config,
            "configs come along"
        );
    }

    #[test]
    fn a_note_is_copied_with_the_modules_and_pasted_with_a_free_id_in_place() {
        let mut graph = starter_graph();
        graph.extra.insert(
            "notes".to_owned(),
            serde_json::json!([
                { "id": "note-000001", "text": "# Why", "position": { "x": 40.0, "y": 20.0 }, "size": { "width": 200.0, "height": 100.0 }, "colour": "blue" },
                { "id": "note-000002", "text": "left out", "position": { "x": 0.0, "y": 0.0 }, "size": { "width": 200.0, "height": 100.0 } }
            ]),
        );
        let fragment =
            Fragment::parse(&copy(&graph, &ids(&["m1", "note-000001"])).to_text()).unwrap();
        assert_eq!(fragment.modules.len(), 1);
        assert_eq!(fragment.notes.len(), 1);
        // The seed would make an id the graph has: the next one is taken.
        let placed = fragment.place(&graph, Position { x: 500.0, y: 500.0 }, 1);
        assert_eq!(placed.notes.len(), 1);
        let note = &placed.notes[0];
        assert_eq!(note.id, "note-000003");
        assert_eq!(note.text, "# Why");
        assert_eq!(note.colour.as_str(), "blue");
        // The note was the fragment's top-left corner (y 20 above m1's 120).
        assert_eq!(note.position, Position { x: 500.0, y: 500.0 });
        assert_eq!(placed.modules[0].position, Position { x: 540.0, y: 600.0 });

        // A note alone is a fragment too.
        let alone = Fragment::parse(&copy(&graph, &ids(&["note-000002"])).to_text()).unwrap();
        assert!(alone.modules.is_empty() && !alone.is_empty());
        let empty = Fragment::parse(&copy(&graph, &ids(&["nothing"])).to_text()).unwrap();
        assert!(empty.is_empty());
    }

    #[test]
    fn a_whole_graph_document_pastes_as_a_fragment_and_junk_does_not() {
        let text = starter_graph().to_json().unwrap();
        let fragment = Fragment::parse(&text).unwrap();
        assert_eq!(fragment.modules.len(), 3);
        assert!(Fragment::parse("hello").is_none());
        assert!(Fragment::parse("{\"format\": \"patchbay.fragment/1\", \"modules\": 3}").is_none());
    }
}
