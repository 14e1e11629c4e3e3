//! Groups (PRODUCT §1.6): titled, coloured frames on the canvas,
//! `groups: [{ id, title, position, size, colour?, collapsed? }]` in the
//! document. What is inside a group is what lies in its frame (a module
//! or note whose top-left corner is in it), so a module dragged in joins
//! it and one dragged out leaves it, and no list of members can disagree
//! with the canvas. Read from the document's kept fields, as notes are.

use serde_json::{Map, Value};

use crate::frame::{self, Colour, Size};
use crate::{Graph, LoadError, Position};

/// The most groups one graph has.
pub const MOST_GROUPS: usize = 200;
/// The longest title, in characters.
pub const MOST_TITLE_CHARACTERS: usize = 200;
/// A new group's size, when it is not drawn around a selection.
pub const NEW_GROUP_SIZE: Size = Size {
    width: 480.0,
    height: 320.0,
};

#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub id: String,
    pub title: String,
    pub position: Position,
    /// Its frame expanded; collapsed, only its title bar shows.
    pub size: Size,
    pub colour: Colour,
    pub collapsed: bool,
}

impl Group {
    /// Whether a point (a module's or note's top-left corner) is inside
    /// the frame.
    pub fn holds(&self, point: Position) -> bool {
        point.x >= self.position.x
            && point.y >= self.position.y
            && point.x < self.position.x + self.size.width
            && point.y < self.position.y + self.size.height
    }

    /// The ids of the modules in the frame, in document order.
    pub fn modules<'a>(&self, graph: &'a Graph) -> Vec<&'a str> {
        graph
            .modules
            .iter()
            .filter(|module| self.holds(module.position))
            .map(|module| module.id.as_str())
            .collect()
    }

    /// The group as the document holds it.
    pub fn to_value(&self) -> Value {
        let mut fields = Map::new();
        fields.insert("id".to_owned(), Value::String(self.id.clone()));
        fields.insert("title".to_owned(), Value::String(self.title.clone()));
        frame::place_and_size(&mut fields, self.position, self.size);
        if self.colour != Colour::default() {
            fields.insert(
                "colour".to_owned(),
                Value::String(self.colour.as_str().to_owned()),
            );
        }
        if self.collapsed {
            fields.insert("collapsed".to_owned(), Value::Bool(true));
        }
        Value::Object(fields)
    }
}

/// The graph's groups, or the first thing wrong with them and where.
pub fn groups(graph: &Graph) -> Result<Vec<Group>, LoadError> {
    let items = frame::list(&graph.extra, "groups", MOST_GROUPS)?;
    let mut groups: Vec<Group> = Vec::with_capacity(items.len());
    for (index, value) in items.iter().enumerate() {
        let path = format!("groups[{index}]");
        let group = read(&path, value)?;
        if groups.iter().any(|seen| seen.id == group.id) {
            return Err(frame::duplicate(&path, &group.id, "group"));
        }
        groups.push(group);
    }
    Ok(groups)
}

/// The groups that can be drawn (see [`crate::notes::drawn`]).
pub fn drawn(graph: &Graph) -> Vec<Group> {
    frame::list(&graph.extra, "groups", usize::MAX)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter_map(|(index, value)| read(&format!("groups[{index}]"), value).ok())
        .collect()
}

fn read(path: &str, value: &Value) -> Result<Group, LoadError> {
    let fields = frame::fields(path, value)?;
    Ok(Group {
        id: frame::id(path, fields)?,
        title: frame::text(path, fields, "title", MOST_TITLE_CHARACTERS)?,
        position: frame::position(path, fields)?,
        size: frame::size(path, fields, NEW_GROUP_SIZE)?,
        colour: frame::colour(path, fields)?,
        collapsed: frame::flag(path, fields, "collapsed")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Module, ModuleKind};
    use serde_json::json;

    #[test]
    fn a_group_holds_what_lies_in_its_frame() {
        let mut graph = Graph::default();
        graph.extra.insert(
            "groups".to_owned(),
            json!([{ "id": "review", "title": "Review", "position": { "x": 100, "y": 100 },
                     "size": { "width": 400, "height": 200 }, "collapsed": true }]),
        );
        for (id, x, y) in [
            ("in", 150.0, 150.0),
            ("edge", 100.0, 100.0),
            ("out", 500.0, 150.0),
        ] {
            graph
                .modules
                .push(Module::new(id, ModuleKind::Output, Position { x, y }));
        }
        let groups = groups(&graph).unwrap_or_default();
        assert_eq!(groups.len(), 1);
        assert!(groups[0].collapsed);
        assert_eq!(groups[0].colour, Colour::Yellow);
        assert_eq!(groups[0].modules(&graph), vec!["in", "edge"]);
        assert_eq!(
            super::groups(&{
                let mut again = Graph::default();
                again
                    .extra
                    .insert("groups".to_owned(), json!([groups[0].to_value()]));
                again
            }),
            Ok(groups)
        );
    }

    #[test]
    fn a_bad_group_is_refused_with_where() {
        let mut graph = Graph::default();
        graph.extra.insert(
            "groups".to_owned(),
            json!([{ "id": "g", "collapsed": "yes" }]),
        );
        let error = groups(&graph).err();
        assert_eq!(
            error.map(|error| (error.path, error.message)),
            Some((
                "groups[0].collapsed".to_owned(),
                "true or false, not a string".to_owned()
            ))
        );
        assert!(drawn(&graph).is_empty());
    }
}
