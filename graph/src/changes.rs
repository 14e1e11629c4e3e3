//! What changed between two versions of a graph: modules and cables added,
//! removed or changed (a module moved and nothing else is only moved), and
//! the name. The history's one-line summary of each save and the History
//! view's comparison both read it.

use std::collections::HashMap;

use crate::{Cable, Graph, Module};

/// The differences from one version (`before`) to another (`after`), as
/// ids in `after`'s order (removed ones in `before`'s).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    pub modules_added: Vec<String>,
    pub modules_removed: Vec<String>,
    /// Its label, settings or anything else but its place changed.
    pub modules_changed: Vec<String>,
    /// Only its place changed.
    pub modules_moved: Vec<String>,
    pub cables_added: Vec<String>,
    pub cables_removed: Vec<String>,
    /// It joins other ports, or its condition changed.
    pub cables_changed: Vec<String>,
    pub renamed: bool,
    /// Notes and groups (PRODUCT §1.6), counted.
    pub notes: Counted,
    pub groups: Counted,
}

/// How many things of a list of the document's kept fields were added,
/// removed or changed (a move is a change).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    pub added: usize,
    pub removed: usize,
    pub changed: usize,
}

/// What changed from `before` to `after`.
pub fn between(before: &Graph, after: &Graph) -> Changes {
    let old_modules: HashMap<&str, &Module> = before
        .modules
        .iter()
        .map(|module| (module.id.as_str(), module))
        .collect();
    let mut changes = Changes {
        renamed: before.name != after.name,
        ..Changes::default()
    };
    for module in &after.modules {
        match old_modules.get(module.id.as_str()) {
            None => changes.modules_added.push(module.id.clone()),
            Some(old) if old.position != module.position && same_but_place(old, module) => {
                changes.modules_moved.push(module.id.clone());
            }
            Some(old) if *old != module => changes.modules_changed.push(module.id.clone()),
            Some(_) => {}
        }
    }
    changes.modules_removed = removed(
        &before.modules,
        |module| &module.id,
        |id| after.module(id).is_some(),
    );
    let old_cables: HashMap<&str, &Cable> = before
        .cables
        .iter()
        .map(|cable| (cable.id.as_str(), cable))
        .collect();
    for cable in &after.cables {
        match old_cables.get(cable.id.as_str()) {
            None => changes.cables_added.push(cable.id.clone()),
            Some(old) if *old != cable => changes.cables_changed.push(cable.id.clone()),
            Some(_) => {}
        }
    }
    let new_cables: std::collections::HashSet<&str> =
        after.cables.iter().map(|cable| cable.id.as_str()).collect();
    changes.cables_removed = removed(
        &before.cables,
        |cable| &cable.id,
        |id| new_cables.contains(id),
    );
    changes.notes = counted(before, after, "notes");
    changes.groups = counted(before, after, "groups");
    changes
}

/// Items of the list `name` (kept fields, each with an `id`) added,
/// removed and changed.
fn counted(before: &Graph, after: &Graph, name: &str) -> Counted {
    let items = |graph: &Graph| -> HashMap<String, serde_json::Value> {
        graph
            .extra
            .get(name)
            .and_then(serde_json::Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| {
                        let id = item.get("id")?.as_str()?;
                        Some((id.to_owned(), item.clone()))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old, new) = (items(before), items(after));
    let mut counted = Counted::default();
    for (id, item) in &new {
        match old.get(id) {
            None => counted.added += 1,
            Some(previous) if previous != item => counted.changed += 1,
            Some(_) => {}
        }
    }
    counted.removed = old.keys().filter(|id| !new.contains_key(*id)).count();
    counted
}

fn same_but_place(old: &Module, new: &Module) -> bool {
    old.label == new.label && old.config == new.config && old.extra == new.extra
}

fn removed<T>(
    before: &[T],
    id_of: impl Fn(&T) -> &String,
    still_there: impl Fn(&str) -> bool,
) -> Vec<String> {
    before
        .iter()
        .map(id_of)
        .filter(|id| !still_there(id))
        .cloned()
        .collect()
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        *self == Changes::default()
    }

    /// One line for the history: "“Draft” changed, 1 cable added",
    /// "3 modules moved", "renamed", "no change". A module alone is named
    /// by its label (`after`'s, or `before`'s when it was removed).
    pub fn summary(&self, before: &Graph, after: &Graph) -> String {
        let label = |graph: &Graph, id: &str| {
            graph.module(id).map_or_else(
                || id.to_owned(),
                |module| format!("“{}”", module.display_label()),
            )
        };
        let modules = |ids: &[String], graph: &Graph, what: &str| match ids {
            [] => None,
            [only] => Some(format!("{} {what}", label(graph, only))),
            many => Some(format!("{} modules {what}", many.len())),
        };
        let cables = |ids: &[String], what: &str| match ids.len() {
            0 => None,
            1 => Some(format!("1 cable {what}")),
            count => Some(format!("{count} cables {what}")),
        };
        let counted = |count: usize, one: &str, many: &str, what: &str| match count {
            0 => None,
            1 => Some(format!("1 {one} {what}")),
            count => Some(format!("{count} {many} {what}")),
        };
        let parts: Vec<String> = [
            self.renamed.then(|| format!("renamed “{}”", after.name)),
            modules(&self.modules_added, after, "added"),
            modules(&self.modules_removed, before, "removed"),
            modules(&self.modules_changed, after, "changed"),
            modules(&self.modules_moved, after, "moved"),
            cables(&self.cables_added, "added"),
            cables(&self.cables_removed, "removed"),
            cables(&self.cables_changed, "changed"),
            counted(self.notes.added, "note", "notes", "added"),
            counted(self.notes.removed, "note", "notes", "removed"),
            counted(self.notes.changed, "note", "notes", "changed"),
            counted(self.groups.added, "group", "groups", "added"),
            counted(self.groups.removed, "group", "groups", "removed"),
            counted(self.groups.changed, "group", "groups", "changed"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            "no change".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::starter::starter_graph;
    use crate::{Endpoint, Position};

    #[test]
    fn nothing_changed_says_so() {
        let graph = starter_graph();
        let changes = between(&graph, &graph);
        assert!(changes.is_empty());
        assert_eq!(changes.summary(&graph, &graph), "no change");
    }

    #[test]
    fn each_kind_of_change_is_told_apart_and_summed_up() {
        let before = starter_graph();
        let mut after = before.clone();
        // Draft's instruction, Topic moved, the output removed, a module
        // and a cable added, a cable rewired.
        *after.modules[1].config.instruction_mut().unwrap() = "Something else".to_owned();
        after.modules[0].position = Position { x: 5.0, y: 5.0 };
        after.modules.remove(2);
        let mut extra = after.modules[1].clone();
        extra.id = "m9".to_owned();
        extra.label = "Second draft".to_owned();
        after.modules.push(extra);
        after.cables.retain(|cable| cable.id != "c2");
        after.cables.push(Cable::new(
            "c9",
            Endpoint::new("m2", "data_out"),
            Endpoint::new("m9", "data_in"),
        ));
        after.cables[0].to.port = "context_in".to_owned();
        let changes = between(&before, &after);
        assert_eq!(changes.modules_changed, ["m2"]);
        assert_eq!(changes.modules_moved, ["m1"]);
        assert_eq!(changes.modules_removed, ["m3"]);
        assert_eq!(changes.modules_added, ["m9"]);
        assert_eq!(changes.cables_added, ["c9"]);
        assert_eq!(changes.cables_removed, ["c2"]);
        assert_eq!(changes.cables_changed, ["c1"]);
        assert_eq!(
            changes.summary(&before, &after),
            "“Second draft” added, “Final essay” removed, “Draft” changed, “Topic” moved, 1 cable added, 1 cable removed, 1 cable changed"
        );
    }

    #[test]
    fn notes_and_groups_are_counted() {
        let mut before = starter_graph();
        before.extra.insert(
            "notes".to_owned(),
            serde_json::json!([{ "id": "a", "text": "one" }, { "id": "b", "text": "two" }]),
        );
        let mut after = before.clone();
        after.extra.insert(
            "notes".to_owned(),
            serde_json::json!([{ "id": "a", "text": "one, edited" }, { "id": "c", "text": "new" }]),
        );
        after.extra.insert(
            "groups".to_owned(),
            serde_json::json!([{ "id": "g", "title": "Review" }]),
        );
        let changes = between(&before, &after);
        assert_eq!(
            changes.notes,
            Counted {
                added: 1,
                removed: 1,
                changed: 1
            }
        );
        assert_eq!(
            changes.summary(&before, &after),
            "1 note added, 1 note removed, 1 note changed, 1 group added"
        );
    }

    #[test]
    fn many_changes_are_counted_and_a_new_name_is_said() {
        let before = starter_graph();
        let mut after = before.clone();
        for module in &mut after.modules {
            module.position.x += 40.0;
        }
        after.name = "Essays".to_owned();
        assert_eq!(
            between(&before, &after).summary(&before, &after),
            "renamed “Essays”, 3 modules moved"
        );
    }
}
