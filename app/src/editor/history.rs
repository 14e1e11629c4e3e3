//! Editing a graph document with undo and redo. Every edit records the
//! modules and cables it touched as they were before and after, so undo and
//! redo put back exactly those, and the canvas refreshes exactly those.
//! Consecutive edits of one field (typing) coalesce into one step.
//!
//! Plain Rust: no UI types, tested natively.

use graph::{Cable, Graph, MigrationNote, Module};

/// What a change touched, in one state (before or after).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Touched {
    /// Module id → the module and its place in the document, or `None` when
    /// it does not exist in this state.
    pub modules: Vec<(String, Option<(usize, Module)>)>,
    pub cables: Vec<(String, Option<(usize, Cable)>)>,
    pub name: Option<String>,
    pub migrations: Option<Vec<MigrationNote>>,
    /// The document's `triggers` (PRODUCT §1.5), kept with the fields it
    /// does not read: `Some(None)` when it had none.
    pub triggers: Option<Option<serde_json::Value>>,
    /// Notes and groups (PRODUCT §1.6), lists of the document's kept
    /// fields: the list, the item's id, and the item with its place.
    pub items: Vec<TouchedItem>,
}

/// A note or group touched: its list, its id, and it with its place
/// (`None` when it does not exist in this state).
pub type TouchedItem = (&'static str, String, Option<(usize, serde_json::Value)>);

/// One undoable step.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub label: String,
    pub before: Touched,
    pub after: Touched,
    /// Edits with the same key in a row merge into this step.
    pub coalesce: Option<String>,
}

impl Change {
    /// Ids of the modules this change touched.
    pub fn module_ids(&self) -> impl Iterator<Item = &str> {
        self.after.modules.iter().map(|(id, _)| id.as_str())
    }

    pub fn cable_ids(&self) -> impl Iterator<Item = &str> {
        self.after.cables.iter().map(|(id, _)| id.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.before == self.after
    }
}

/// Puts back a before-state. Each entry's index is where it was when the
/// edit first touched it, so walking the entries backwards undoes the edit
/// step by step, whatever it removed or moved in between.
fn restore_before(graph: &mut Graph, state: &Touched) {
    for (id, slot) in state.modules.iter().rev() {
        graph.modules.retain(|module| &module.id != id);
        if let Some((index, module)) = slot {
            graph
                .modules
                .insert((*index).min(graph.modules.len()), module.clone());
        }
    }
    for (id, slot) in state.cables.iter().rev() {
        graph.cables.retain(|cable| &cable.id != id);
        if let Some((index, cable)) = slot {
            graph
                .cables
                .insert((*index).min(graph.cables.len()), cable.clone());
        }
    }
    for (list, id, slot) in state.items.iter().rev() {
        if let Some(items) = kept_list(graph, list) {
            items.retain(|item| item_id(item) != Some(id));
            if let Some((index, item)) = slot {
                items.insert((*index).min(items.len()), item.clone());
            }
        }
        drop_if_empty(graph, list);
    }
    restore_fields(graph, state);
}

/// Puts back an after-state, whose indices are those of the finished edit.
fn restore_after(graph: &mut Graph, state: &Touched) {
    for (id, _) in &state.modules {
        graph.modules.retain(|module| &module.id != id);
    }
    let mut modules: Vec<&(usize, Module)> = state
        .modules
        .iter()
        .filter_map(|(_, slot)| slot.as_ref())
        .collect();
    graph::order::by_rank(&mut modules, |(index, _)| *index);
    for (index, module) in modules {
        graph
            .modules
            .insert((*index).min(graph.modules.len()), module.clone());
    }
    for (id, _) in &state.cables {
        graph.cables.retain(|cable| &cable.id != id);
    }
    let mut cables: Vec<&(usize, Cable)> = state
        .cables
        .iter()
        .filter_map(|(_, slot)| slot.as_ref())
        .collect();
    graph::order::by_rank(&mut cables, |(index, _)| *index);
    for (index, cable) in cables {
        graph
            .cables
            .insert((*index).min(graph.cables.len()), cable.clone());
    }
    for (list, id, _) in &state.items {
        if let Some(items) = kept_list(graph, list) {
            items.retain(|item| item_id(item) != Some(id));
        }
    }
    let mut items: Vec<&TouchedItem> = state
        .items
        .iter()
        .filter(|(_, _, slot)| slot.is_some())
        .collect();
    graph::order::by_rank(&mut items, |(_, _, slot)| {
        slot.as_ref().map_or(usize::MAX, |(index, _)| *index)
    });
    for (list, _, slot) in items {
        if let (Some((index, item)), Some(items)) = (slot, kept_list(graph, list)) {
            items.insert((*index).min(items.len()), item.clone());
        }
    }
    for list in KEPT_LISTS {
        drop_if_empty(graph, list);
    }
    restore_fields(graph, state);
}

/// The document's lists of notes and groups.
const KEPT_LISTS: [&str; 2] = ["notes", "groups"];

/// The kept list `name`, made an empty list when it is missing or not one
/// (so always `Some`).
fn kept_list<'a>(graph: &'a mut Graph, name: &str) -> Option<&'a mut Vec<serde_json::Value>> {
    let slot = graph
        .extra
        .entry(name.to_owned())
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    if !slot.is_array() {
        *slot = serde_json::Value::Array(Vec::new());
    }
    slot.as_array_mut()
}

/// A list left empty goes, so a graph without notes has no `notes`.
fn drop_if_empty(graph: &mut Graph, name: &str) {
    if graph
        .extra
        .get(name)
        .and_then(serde_json::Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        graph.extra.remove(name);
    }
}

fn item_id(item: &serde_json::Value) -> Option<&str> {
    item.get("id").and_then(serde_json::Value::as_str)
}

/// Where item `id` of kept list `name` is, and the item.
fn kept_slot(graph: &Graph, name: &str, id: &str) -> Option<(usize, serde_json::Value)> {
    let items = graph.extra.get(name)?.as_array()?;
    let index = items.iter().position(|item| item_id(item) == Some(id))?;
    Some((index, items[index].clone()))
}

fn restore_fields(graph: &mut Graph, state: &Touched) {
    if let Some(name) = &state.name {
        graph.name.clone_from(name);
    }
    if let Some(migrations) = &state.migrations {
        graph.migrations.clone_from(migrations);
    }
    match &state.triggers {
        Some(Some(triggers)) => {
            graph.extra.insert(TRIGGERS.to_owned(), triggers.clone());
        }
        Some(None) => {
            graph.extra.remove(TRIGGERS);
        }
        None => {}
    }
}

const TRIGGERS: &str = "triggers";

/// An edit in progress: records the before-state of everything it touches.
pub struct Edit<'a> {
    graph: &'a mut Graph,
    before: Touched,
}

impl Edit<'_> {
    fn note_module(&mut self, id: &str) {
        if self.before.modules.iter().any(|(touched, _)| touched == id) {
            return;
        }
        let slot = self
            .graph
            .modules
            .iter()
            .position(|module| module.id == id)
            .map(|index| (index, self.graph.modules[index].clone()));
        self.before.modules.push((id.to_owned(), slot));
    }

    fn note_cable(&mut self, id: &str) {
        if self.before.cables.iter().any(|(touched, _)| touched == id) {
            return;
        }
        let slot = self
            .graph
            .cables
            .iter()
            .position(|cable| cable.id == id)
            .map(|index| (index, self.graph.cables[index].clone()));
        self.before.cables.push((id.to_owned(), slot));
    }

    pub fn graph(&self) -> &Graph {
        self.graph
    }

    pub fn module_mut(&mut self, id: &str) -> Option<&mut Module> {
        self.note_module(id);
        self.graph.modules.iter_mut().find(|module| module.id == id)
    }

    pub fn cable_mut(&mut self, id: &str) -> Option<&mut Cable> {
        self.note_cable(id);
        self.graph.cables.iter_mut().find(|cable| cable.id == id)
    }

    pub fn add_module(&mut self, module: Module) {
        self.note_module(&module.id);
        self.graph
            .modules
            .retain(|existing| existing.id != module.id);
        self.graph.modules.push(module);
    }

    pub fn add_cable(&mut self, cable: Cable) {
        self.note_cable(&cable.id);
        self.graph.cables.retain(|existing| existing.id != cable.id);
        self.graph.cables.push(cable);
    }

    /// Removes a module and the cables attached to it.
    pub fn remove_module(&mut self, id: &str) {
        self.note_module(id);
        self.graph.modules.retain(|module| module.id != id);
        let attached: Vec<String> = self
            .graph
            .cables
            .iter()
            .filter(|cable| cable.from.module == id || cable.to.module == id)
            .map(|cable| cable.id.clone())
            .collect();
        for cable in attached {
            self.remove_cable(&cable);
        }
    }

    /// Moves a cable one place earlier or later among its port's cables
    /// (the order conditions are tried in); false when it cannot move.
    pub fn move_cable(&mut self, id: &str, earlier: bool) -> bool {
        let Some(cable) = self.graph.cables.iter().find(|cable| cable.id == id) else {
            return false;
        };
        let siblings: Vec<String> = graph::routing::port_cables(self.graph, cable)
            .map(|other| other.id.clone())
            .collect();
        for sibling in &siblings {
            self.note_cable(sibling);
        }
        graph::routing::move_cable(self.graph, id, earlier)
    }

    pub fn remove_cable(&mut self, id: &str) {
        self.note_cable(id);
        self.graph.cables.retain(|cable| cable.id != id);
    }

    pub fn set_name(&mut self, name: &str) {
        if self.before.name.is_none() {
            self.before.name = Some(self.graph.name.clone());
        }
        self.graph.name = name.to_owned();
    }

    pub fn set_migrations(&mut self, migrations: Vec<MigrationNote>) {
        if self.before.migrations.is_none() {
            self.before.migrations = Some(self.graph.migrations.clone());
        }
        self.graph.migrations = migrations;
    }

    /// The document's triggers become `triggers` (an empty list removes
    /// the field).
    pub fn set_triggers(&mut self, triggers: Vec<serde_json::Value>) {
        if self.before.triggers.is_none() {
            self.before.triggers = Some(self.graph.extra.get(TRIGGERS).cloned());
        }
        if triggers.is_empty() {
            self.graph.extra.remove(TRIGGERS);
        } else {
            self.graph
                .extra
                .insert(TRIGGERS.to_owned(), serde_json::Value::Array(triggers));
        }
    }

    fn note_item(&mut self, list: &'static str, id: &str) {
        if self
            .before
            .items
            .iter()
            .any(|(touched_list, touched, _)| *touched_list == list && touched == id)
        {
            return;
        }
        let slot = kept_slot(self.graph, list, id);
        self.before.items.push((list, id.to_owned(), slot));
    }

    /// Puts `item` (a note's or group's JSON, with its `id`) in kept list
    /// `list` (`notes`, `groups`): in its place when it is there, last
    /// when it is new.
    pub fn set_item(&mut self, list: &'static str, item: serde_json::Value) {
        let Some(id) = item_id(&item).map(str::to_owned) else {
            return;
        };
        self.note_item(list, &id);
        let Some(items) = kept_list(self.graph, list) else {
            return;
        };
        match items
            .iter_mut()
            .find(|existing| item_id(existing) == Some(&id))
        {
            Some(existing) => *existing = item,
            None => items.push(item),
        }
    }

    pub fn remove_item(&mut self, list: &'static str, id: &str) {
        self.note_item(list, id);
        if let Some(items) = kept_list(self.graph, list) {
            items.retain(|item| item_id(item) != Some(id));
        }
        drop_if_empty(self.graph, list);
    }

    /// Makes the graph `target` (a past revision restored): every module
    /// and cable it has, as it has them, in its order; the rest removed;
    /// its name. One undoable step, touching only what differs.
    pub fn restore(&mut self, target: &Graph) {
        let changes = graph::changes::between(self.graph, target);
        for id in &changes.cables_removed {
            self.remove_cable(id);
        }
        for id in &changes.modules_removed {
            self.remove_module(id);
        }
        for id in changes
            .modules_added
            .iter()
            .chain(&changes.modules_changed)
            .chain(&changes.modules_moved)
        {
            self.note_module(id);
        }
        for id in changes.cables_added.iter().chain(&changes.cables_changed) {
            self.note_cable(id);
        }
        self.graph.modules = target.modules.clone();
        self.graph.cables = target.cables.clone();
        for list in KEPT_LISTS {
            let ids = |graph: &Graph| -> Vec<String> {
                graph
                    .extra
                    .get(list)
                    .and_then(serde_json::Value::as_array)
                    .map(|items| {
                        items
                            .iter()
                            .filter_map(item_id)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            for id in ids(self.graph).into_iter().chain(ids(target)) {
                self.note_item(list, &id);
            }
            match target.extra.get(list) {
                Some(items) => {
                    self.graph.extra.insert(list.to_owned(), items.clone());
                }
                None => {
                    self.graph.extra.remove(list);
                }
            }
        }
        if changes.renamed {
            self.set_name(&target.name);
        }
    }

    fn after(&self) -> Touched {
        let module = |id: &String| {
            self.graph
                .modules
                .iter()
                .position(|module| &module.id == id)
                .map(|index| (index, self.graph.modules[index].clone()))
        };
        let cable = |id: &String| {
            self.graph
                .cables
                .iter()
                .position(|cable| &cable.id == id)
                .map(|index| (index, self.graph.cables[index].clone()))
        };
        Touched {
            modules: self
                .before
                .modules
                .iter()
                .map(|(id, _)| (id.clone(), module(id)))
                .collect(),
            cables: self
                .before
                .cables
                .iter()
                .map(|(id, _)| (id.clone(), cable(id)))
                .collect(),
            name: self.before.name.as_ref().map(|_| self.graph.name.clone()),
            migrations: self
                .before
                .migrations
                .as_ref()
                .map(|_| self.graph.migrations.clone()),
            triggers: self
                .before
                .triggers
                .as_ref()
                .map(|_| self.graph.extra.get(TRIGGERS).cloned()),
            items: self
                .before
                .items
                .iter()
                .map(|(list, id, _)| (*list, id.clone(), kept_slot(self.graph, list, id)))
                .collect(),
        }
    }
}

/// How long two edits of one field may be apart and still be one step.
pub const COALESCE_WINDOW_MS: f64 = 1500.0;

/// The document being edited and its history.
pub struct Document {
    pub graph: Graph,
    undo: Vec<Change>,
    redo: Vec<Change>,
    /// When the last step was made, for coalescing.
    last_edit_ms: f64,
    /// Steps kept; older ones are forgotten.
    pub depth: usize,
}

impl Document {
    pub fn new(graph: Graph) -> Document {
        Document {
            graph,
            undo: Vec::new(),
            redo: Vec::new(),
            last_edit_ms: f64::NEG_INFINITY,
            depth: 200,
        }
    }

    /// Makes one edit. `coalesce`: edits with the same key within the window
    /// join the previous step (typing in one field). `now_ms` is the time of
    /// the edit. Returns the change to refresh the view with, or `None` when
    /// the edit changed nothing.
    pub fn edit(
        &mut self,
        label: &str,
        coalesce: Option<&str>,
        now_ms: f64,
        apply: impl FnOnce(&mut Edit<'_>),
    ) -> Option<Change> {
        let mut edit = Edit {
            graph: &mut self.graph,
            before: Touched::default(),
        };
        apply(&mut edit);
        let after = edit.after();
        let change = Change {
            label: label.to_owned(),
            before: edit.before,
            after,
            coalesce: coalesce.map(str::to_owned),
        };
        if change.is_empty() {
            return None;
        }
        self.redo.clear();
        let joins = coalesce.is_some()
            && now_ms - self.last_edit_ms <= COALESCE_WINDOW_MS
            && self
                .undo
                .last()
                .is_some_and(|last| last.coalesce.as_deref() == coalesce);
        self.last_edit_ms = now_ms;
        if joins && let Some(last) = self.undo.last_mut() {
            // Keep the oldest before-state, take the newest after-state.
            merge(&mut last.before, &change.before, false);
            merge(&mut last.after, &change.after, true);
        } else {
            self.undo.push(change.clone());
            if self.undo.len() > self.depth {
                self.undo.remove(0);
            }
        }
        Some(change)
    }

    /// Breaks coalescing, so the next edit is a step of its own.
    pub fn seal(&mut self) {
        self.last_edit_ms = f64::NEG_INFINITY;
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// Undoes the last step; returns it (its `after` is what is now gone).
    /// Only what the step changed goes back, and only where it is still as
    /// the step left it: others' edits since (editing together) stay.
    pub fn undo(&mut self) -> Option<Change> {
        let change = self.undo.pop()?;
        let current = self.graph.clone();
        restore_before(&mut self.graph, &change.before);
        self.graph = only_own(&current, &self.graph, |made| {
            restore_after(made, &change.after);
        });
        self.redo.push(change.clone());
        self.seal();
        Some(change)
    }

    pub fn redo(&mut self) -> Option<Change> {
        let change = self.redo.pop()?;
        let current = self.graph.clone();
        restore_after(&mut self.graph, &change.after);
        self.graph = only_own(&current, &self.graph, |undone| {
            restore_before(undone, &change.before);
        });
        self.undo.push(change.clone());
        self.seal();
        Some(change)
    }

    /// Replaces the whole document (loading another revision); history is
    /// cleared because its steps no longer apply.
    pub fn replace(&mut self, graph: Graph) {
        self.graph = graph;
        self.undo.clear();
        self.redo.clear();
        self.seal();
    }
}

/// `target` (what undo or redo makes of `current`, whole modules and
/// cables put back) narrowed to what the step itself changed: `left` puts
/// the step's touched modules and cables as the step left them, and only
/// the values that differ from there to `target` and are still so in
/// `current` change (`graph::edits::apply_strictly`).
fn only_own(current: &Graph, target: &Graph, left: impl FnOnce(&mut Graph)) -> Graph {
    let mut as_left = current.clone();
    left(&mut as_left);
    let (Some(as_left), Some(wanted), Some(mut now)) =
        (as_left.to_value(), target.to_value(), current.to_value())
    else {
        return target.clone();
    };
    graph::edits::apply_strictly(&mut now, &graph::edits::diff(&as_left, &wanted));
    Graph::from_value(now).unwrap_or_else(|_| target.clone())
}

/// Adds `newer`'s entries to `state`; with `replace`, newer values win.
fn merge(state: &mut Touched, newer: &Touched, replace: bool) {
    for (id, slot) in &newer.modules {
        match state
            .modules
            .iter_mut()
            .find(|(existing, _)| existing == id)
        {
            Some(entry) if replace => entry.1.clone_from(slot),
            Some(_) => {}
            None => state.modules.push((id.clone(), slot.clone())),
        }
    }
    for (id, slot) in &newer.cables {
        match state.cables.iter_mut().find(|(existing, _)| existing == id) {
            Some(entry) if replace => entry.1.clone_from(slot),
            Some(_) => {}
            None => state.cables.push((id.clone(), slot.clone())),
        }
    }
    if newer.name.is_some() && (replace || state.name.is_none()) {
        state.name.clone_from(&newer.name);
    }
    if newer.migrations.is_some() && (replace || state.migrations.is_none()) {
        state.migrations.clone_from(&newer.migrations);
    }
    if newer.triggers.is_some() && (replace || state.triggers.is_none()) {
        state.triggers.clone_from(&newer.triggers);
    }
    for (list, id, slot) in &newer.items {
        match state
            .items
            .iter_mut()
            .find(|(existing_list, existing, _)| *existing_list == *list && existing == id)
        {
            Some(entry) if replace => entry.2.clone_from(slot),
            Some(_) => {}
            None => state.items.push((*list, id.clone(), slot.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::config::AgentTaskConfig;
    use graph::starter::starter_graph;
    use graph::{Endpoint, ModuleConfig, ModuleKind, Position};

    fn instruction(graph: &Graph, id: &str) -> String {
        match &graph.module(id).unwrap().config {
            ModuleConfig::AgentTask(config) => config.instruction.clone(),
            _ => panic!("not an agent task"),
        }
    }

    fn set_instruction(edit: &mut Edit<'_>, id: &str, text: &str) {
        if let Some(ModuleConfig::AgentTask(AgentTaskConfig { instruction, .. })) =
            edit.module_mut(id).map(|module| &mut module.config)
        {
            *instruction = text.to_owned();
        }
    }

    #[test]
    fn a_triggers_edit_is_undone_to_none_and_typing_in_one_is_one_step() {
        let mut document = Document::new(starter_graph());
        let schedule =
            |cron: &str| serde_json::json!({"id": "daily", "kind": "schedule", "cron": cron});
        document.edit("Add a schedule", None, 0.0, |edit| {
            edit.set_triggers(vec![schedule("0 9 * * *")]);
        });
        document.seal();
        for (at, cron) in [(10.0, "0 8 * * *"), (20.0, "0 7 * * *")] {
            document.edit("Edit a schedule", Some("cron daily"), at, |edit| {
                edit.set_triggers(vec![schedule(cron)]);
            });
        }
        assert_eq!(document.graph.extra["triggers"][0]["cron"], "0 7 * * *");
        document.undo().unwrap();
        assert_eq!(document.graph.extra["triggers"][0]["cron"], "0 9 * * *");
        document.undo().unwrap();
        assert!(!document.graph.extra.contains_key("triggers"));
        document.redo().unwrap();
        assert_eq!(document.graph.extra["triggers"][0]["cron"], "0 9 * * *");
        document.edit("Remove a schedule", None, 99.0, |edit| {
            edit.set_triggers(Vec::new())
        });
        assert!(!document.graph.extra.contains_key("triggers"));
    }

    #[test]
    fn notes_are_added_edited_removed_and_undone_one_at_a_time() {
        let mut document = Document::new(starter_graph());
        let note = |id: &str, text: &str| serde_json::json!({"id": id, "text": text});
        document.edit("Add note", None, 0.0, |edit| {
            edit.set_item("notes", note("a", ""))
        });
        document.seal();
        document.edit("Add note", None, 1.0, |edit| {
            edit.set_item("notes", note("b", "B"))
        });
        document.seal();
        for (at, text) in [(10.0, "# R"), (20.0, "# Review")] {
            document.edit("Write in note", Some("note:a:text"), at, |edit| {
                edit.set_item("notes", note("a", text));
            });
        }
        assert_eq!(document.graph.extra["notes"][0]["text"], "# Review");
        assert_eq!(document.graph.extra["notes"][1]["id"], "b");
        // Typing was one step; the note keeps its place.
        document.undo().unwrap();
        assert_eq!(document.graph.extra["notes"][0]["text"], "");
        assert_eq!(document.graph.extra["notes"][1]["text"], "B");
        document.redo().unwrap();
        document.edit("Delete note", None, 99.0, |edit| {
            edit.remove_item("notes", "a")
        });
        assert_eq!(
            document.graph.extra["notes"].as_array().map(Vec::len),
            Some(1)
        );
        document.undo().unwrap();
        assert_eq!(
            document.graph.extra["notes"][0]["id"], "a",
            "back in its place"
        );
        assert_eq!(document.graph.extra["notes"][0]["text"], "# Review");
        // Undoing both adds leaves no notes field at all.
        document.undo().unwrap();
        document.undo().unwrap();
        document.undo().unwrap();
        assert!(
            !document.graph.extra.contains_key("notes"),
            "{:?}",
            document.graph.extra
        );
    }

    #[test]
    fn undoing_ones_note_leaves_a_note_someone_else_added_since() {
        let mut document = Document::new(starter_graph());
        document.edit("Add note", None, 0.0, |edit| {
            edit.set_item("notes", serde_json::json!({"id": "mine", "text": "mine"}));
        });
        // Someone else's note arrives (editing together).
        let mut theirs = document.graph.clone();
        if let Some(serde_json::Value::Array(notes)) = theirs.extra.get_mut("notes") {
            notes.push(serde_json::json!({"id": "theirs", "text": "theirs"}));
        }
        document.graph = theirs;
        document.undo().unwrap();
        assert_eq!(
            document.graph.extra["notes"],
            serde_json::json!([{"id": "theirs", "text": "theirs"}])
        );
    }

    #[test]
    fn restoring_a_revision_is_one_step_that_undo_takes_back() {
        let revision = starter_graph();
        let mut document = Document::new(revision.clone());
        document.edit("Edits", None, 0.0, |edit| {
            set_instruction(edit, "m2", "Something else");
            edit.remove_module("m3");
            let mut extra = edit.graph().modules[0].clone();
            extra.id = "m9".to_owned();
            edit.add_module(extra);
            edit.module_mut("m1").unwrap().position = Position { x: 9.0, y: 9.0 };
            edit.set_name("Renamed");
        });
        document.seal();
        let edited = document.graph.clone();
        document.edit("Restore revision 1", None, 1.0, |edit| {
            edit.restore(&revision)
        });
        assert_eq!(document.graph.modules, revision.modules);
        assert_eq!(document.graph.cables, revision.cables);
        assert_eq!(document.graph.name, revision.name);
        let change = document.undo().unwrap();
        assert_eq!(change.label, "Restore revision 1");
        assert_eq!(document.graph.modules, edited.modules);
        assert_eq!(document.graph.cables, edited.cables);
        assert_eq!(document.graph.name, "Renamed");
        document.redo().unwrap();
        assert_eq!(document.graph.modules, revision.modules);
    }

    #[test]
    fn undo_takes_back_ones_own_edit_only_and_leaves_what_others_changed_since() {
        let mut document = Document::new(starter_graph());
        document.edit("Rename", None, 0.0, |edit| {
            edit.module_mut("m2").unwrap().label = "Essay draft".to_owned();
        });
        // Someone else, editing together, then changes the same module's
        // instruction and moves it (their change, not a step of ours).
        let mut theirs = document.graph.clone();
        if let Some(module) = theirs.modules.iter_mut().find(|module| module.id == "m2") {
            module.position = Position { x: 900.0, y: 40.0 };
            if let ModuleConfig::AgentTask(config) = &mut module.config {
                config.instruction = "Their instruction".to_owned();
            }
        }
        document.graph = theirs;
        document.undo().unwrap();
        let module = document.graph.module("m2").unwrap();
        assert_eq!(module.label, "Draft");
        assert_eq!(module.position, Position { x: 900.0, y: 40.0 });
        assert_eq!(instruction(&document.graph, "m2"), "Their instruction");
        document.redo().unwrap();
        assert_eq!(document.graph.module("m2").unwrap().label, "Essay draft");
        assert_eq!(instruction(&document.graph, "m2"), "Their instruction");
    }

    #[test]
    fn undo_and_redo_put_back_exactly_what_changed() {
        let mut document = Document::new(starter_graph());
        let original = document.graph.clone();
        document.edit("Move", None, 0.0, |edit| {
            edit.module_mut("m2").unwrap().position = Position { x: 500.0, y: 10.0 };
        });
        let moved = document.graph.clone();
        let change = document.undo().unwrap();
        assert_eq!(document.graph, original);
        assert_eq!(change.module_ids().collect::<Vec<_>>(), ["m2"]);
        document.redo().unwrap();
        assert_eq!(document.graph, moved);
        assert!(!document.can_redo());
    }

    #[test]
    fn deleting_a_module_takes_its_cables_and_undo_restores_both_in_place() {
        let mut document = Document::new(starter_graph());
        let original = document.graph.clone();
        document.edit("Delete", None, 0.0, |edit| edit.remove_module("m2"));
        assert!(document.graph.module("m2").is_none());
        assert!(document.graph.cables.is_empty());
        document.undo();
        assert_eq!(
            document.graph, original,
            "same modules, same cables, same order"
        );
        document.redo();
        assert!(document.graph.cables.is_empty());
        assert_eq!(document.graph.modules.len(), 2);
    }

    #[test]
    fn undoing_an_edit_that_changed_one_module_and_removed_another_keeps_the_order() {
        let mut document = Document::new(starter_graph());
        let mut expected = document.graph.clone();
        document.edit("Mixed", None, 0.0, |edit| {
            edit.module_mut("m1").unwrap().label = "Renamed".to_owned();
            edit.remove_module("m2");
        });
        let after = document.graph.clone();
        document.undo();
        assert_eq!(document.graph, expected);
        document.redo();
        assert_eq!(document.graph, after);
        expected.modules.retain(|module| module.id != "m2");
        expected.modules[0].label = "Renamed".to_owned();
        expected.cables.clear();
        assert_eq!(document.graph, expected);
    }

    #[test]
    fn moving_a_cable_among_its_ports_cables_is_one_step_that_undo_puts_back() {
        let mut document = Document::new(starter_graph());
        document.edit("Branch", None, 0.0, |edit| {
            for (id, target) in [("c7", "m1"), ("c8", "m3")] {
                let mut cable = Cable::new(
                    id,
                    Endpoint::new("m2", "data_out"),
                    Endpoint::new(target, "context_in"),
                );
                cable.condition = Some("true".to_owned());
                edit.add_cable(cable);
            }
        });
        let before = document.graph.clone();
        let order = |graph: &Graph| {
            let orders = graph::routing::cable_orders(graph);
            let mut numbered: Vec<(usize, String)> = orders
                .into_iter()
                .map(|(id, order)| (order.number, id))
                .collect();
            numbered.sort();
            numbered.into_iter().map(|(_, id)| id).collect::<Vec<_>>()
        };
        let first = order(&before);
        assert_eq!(first.len(), 3);
        let last = first[2].clone();
        document.edit("Move cable up", None, 0.0, |edit| {
            assert!(edit.move_cable(&last, true));
        });
        assert_eq!(
            order(&document.graph),
            [first[0].clone(), last.clone(), first[1].clone()]
        );
        document.undo();
        assert_eq!(document.graph, before);
        document.redo();
        assert_eq!(
            order(&document.graph),
            [first[0].clone(), last.clone(), first[1].clone()]
        );
    }

    #[test]
    fn typing_in_one_field_is_one_step() {
        let mut document = Document::new(starter_graph());
        let original = instruction(&document.graph, "m2");
        for (time, text) in [(0.0, "W"), (300.0, "Wr"), (600.0, "Wri"), (900.0, "Writ")] {
            document.edit("Instruction", Some("m2.instruction"), time, |edit| {
                set_instruction(edit, "m2", text)
            });
        }
        assert_eq!(instruction(&document.graph, "m2"), "Writ");
        document.undo();
        assert_eq!(instruction(&document.graph, "m2"), original);
        assert!(!document.can_undo());
        document.redo();
        assert_eq!(instruction(&document.graph, "m2"), "Writ");
    }

    #[test]
    fn a_pause_or_another_field_starts_a_new_step() {
        let mut document = Document::new(starter_graph());
        document.edit("Instruction", Some("m2.instruction"), 0.0, |edit| {
            set_instruction(edit, "m2", "A")
        });
        document.edit("Instruction", Some("m2.instruction"), 5000.0, |edit| {
            set_instruction(edit, "m2", "AB")
        });
        document.edit("Name", Some("name"), 5100.0, |edit| {
            edit.set_name("Renamed")
        });
        document.undo();
        assert_eq!(document.graph.name, "Draft, review, finalize");
        document.undo();
        assert_eq!(instruction(&document.graph, "m2"), "A");
    }

    #[test]
    fn an_edit_that_changes_nothing_is_not_a_step() {
        let mut document = Document::new(starter_graph());
        let change = document.edit("Move", None, 0.0, |edit| {
            let module = edit.module_mut("m1").unwrap();
            module.position = Position { ..module.position };
        });
        assert!(change.is_none());
        assert!(!document.can_undo());
    }

    #[test]
    fn adding_modules_and_cables_undoes_cleanly() {
        let mut document = Document::new(starter_graph());
        document.edit("Add", None, 0.0, |edit| {
            let id = edit.graph().next_module_id();
            edit.add_module(Module::new(
                id.clone(),
                ModuleKind::Output,
                Position::default(),
            ));
            let cable = edit.graph().next_cable_id();
            edit.add_cable(Cable::new(
                cable,
                Endpoint::new("m2", "signal_out"),
                Endpoint::new(id, "data_in"),
            ));
        });
        assert_eq!(document.graph.modules.len(), 4);
        assert_eq!(document.graph.cables.len(), 3);
        document.undo();
        assert_eq!(document.graph, starter_graph());
    }
}
