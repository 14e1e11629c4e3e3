//! Edits: what one editor changed in a graph, small enough to send as it
//! happens, and applied by the server in the order it receives them
//! (editing together, PRODUCT §3.16). An edit addresses a value by its path
//! in the document's JSON, where a list of things with ids (modules,
//! cables) is addressed by id, not by place: an edit of one module applies
//! wherever the module has moved to in the list meanwhile, and edits of two
//! different things never touch each other.
//!
//! Applying keeps the last writer's value. An edit says what it replaces
//! (`before`); when the document holds something else there, someone
//! changed it meanwhile: the edit still applies (the server's order decides)
//! and the replaced value is reported, so that the person whose value it was
//! can be shown what replaced it and take it back. An edit inside something
//! that is gone (a module deleted meanwhile) cannot apply and is reported,
//! never dropped silently.
//!
//! Lists without ids (re-prompts, criteria) are values whose items are
//! addressed by place. A reorder of such a list is an edit of its own (an
//! order), and an edit made before it by someone who had not seen it is
//! moved along with its item ([`transform`]): a re-prompt being typed in
//! while the other person reorders the list stays that re-prompt.
//!
//! Plain functions over `serde_json::Value`, tested natively.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One step of a path: a field of an object, the item of a list with this
/// `id`, or the item at this place of a list without ids.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(into = "String", try_from = "String")]
pub enum Step {
    Field(String),
    Id(String),
    Index(usize),
}

/// A step on the wire is a string, `.name`, `#id` or `3`: short, since a
/// drag sends one edit a frame.
impl From<Step> for String {
    fn from(step: Step) -> String {
        match step {
            Step::Field(name) => format!(".{name}"),
            Step::Id(id) => format!("#{id}"),
            Step::Index(index) => index.to_string(),
        }
    }
}

impl TryFrom<String> for Step {
    type Error = String;

    fn try_from(text: String) -> Result<Step, String> {
        if let Some(name) = text.strip_prefix('.') {
            Ok(Step::Field(name.to_owned()))
        } else if let Some(id) = text.strip_prefix('#') {
            Ok(Step::Id(id.to_owned()))
        } else {
            text.parse()
                .map(Step::Index)
                .map_err(|_| format!("a path step is .field, #id or a number, not {text:?}"))
        }
    }
}

pub type Path = Vec<Step>;

/// One edit, on the wire `{"set": {…}}` or `{"order": {…}}` (externally
/// tagged: an internally tagged enum costs the browser a buffered copy of
/// every value it reads).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Edit {
    /// The value at `path` becomes `after` (`None`: it is removed); it was
    /// `before` (`None`: there was none) when the edit was made.
    Set {
        path: Path,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<Value>,
    },
    /// The list at `path` is put in this order: ids for a list with ids,
    /// for one without, the place each item had (`order[k]` is the old
    /// place of the item that goes to place `k`).
    Order { path: Path, order: Vec<Step> },
}

impl Edit {
    pub fn path(&self) -> &Path {
        match self {
            Edit::Set { path, .. } | Edit::Order { path, .. } => path,
        }
    }
}

/// An edit that replaced a value someone else had set meanwhile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Replaced {
    pub path: Path,
    /// What was there (`None`: nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

/// Why an edit did not apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Unapplied {
    /// What it edits inside is gone (a module deleted meanwhile).
    Gone,
    /// Only when applied strictly ([`apply_strictly`], an undo): someone
    /// else changed the value since.
    ChangedSince,
    /// A list to reorder has other items than the order names.
    ListChanged,
    /// Someone else is typing in that field (`typing.rs`): kept for its
    /// author to take back once they pause.
    Held,
}

/// An edit that did not apply, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NotApplied {
    pub edit: Edit,
    pub why: Unapplied,
    /// Who holds the field, for [`Unapplied::Held`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// What applying edits did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Applied {
    /// The edits as applied: each `before` is what the document held, so
    /// that others can apply them to the same document and see the same.
    pub edits: Vec<Edit>,
    /// Values that someone else had set and these edits replaced.
    pub replaced: Vec<Replaced>,
    pub not_applied: Vec<NotApplied>,
}

/// Fields of the document that are not its content: the server stamps them.
const STAMPS: [&str; 2] = ["id", "revision"];

/// The edits that turn `before` into `after` (two versions of a document).
pub fn diff(before: &Value, after: &Value) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut orders = Vec::new();
    if let (Value::Object(old), Value::Object(new)) = (before, after) {
        let content = |map: &Map<String, Value>| {
            map.iter()
                .filter(|(key, _)| !STAMPS.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect::<Map<String, Value>>()
        };
        diff_objects(
            &content(old),
            &content(new),
            &mut Vec::new(),
            &mut edits,
            &mut orders,
        );
    } else {
        diff_values(before, after, &mut Vec::new(), &mut edits, &mut orders);
    }
    // Orders last: an order places items that the sets before it added.
    edits.extend(orders);
    edits
}

/// `null` and a missing field read the same in a graph document.
fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|value| !value.is_null())
}

fn diff_values(
    before: &Value,
    after: &Value,
    path: &mut Path,
    edits: &mut Vec<Edit>,
    orders: &mut Vec<Edit>,
) {
    if before == after {
        return;
    }
    match (before, after) {
        (Value::Object(old), Value::Object(new)) => diff_objects(old, new, path, edits, orders),
        (Value::Array(old), Value::Array(new)) => {
            if let (Some(old_ids), Some(new_ids)) = (ids(old), ids(new)) {
                diff_lists_with_ids(old, new, &old_ids, &new_ids, path, edits, orders);
            } else if old.len() == new.len() {
                diff_lists_in_place(old, new, path, edits, orders);
            } else {
                set(path, Some(before), Some(after), edits);
            }
        }
        _ => set(path, Some(before), Some(after), edits),
    }
}

fn set(path: &Path, before: Option<&Value>, after: Option<&Value>, edits: &mut Vec<Edit>) {
    edits.push(Edit::Set {
        path: path.clone(),
        before: present(before).cloned(),
        after: present(after).cloned(),
    });
}

fn diff_objects(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    path: &mut Path,
    edits: &mut Vec<Edit>,
    orders: &mut Vec<Edit>,
) {
    let removed = old.keys().filter(|key| !new.contains_key(*key));
    for key in new.keys().chain(removed) {
        path.push(Step::Field(key.clone()));
        match (present(old.get(key)), present(new.get(key))) {
            (Some(before), Some(after)) => diff_values(before, after, path, edits, orders),
            (None, None) => {}
            (before, after) => set(path, before, after, edits),
        }
        path.pop();
    }
}

/// The ids of a list whose items all have one, each once; `None` when it
/// is a list without ids. An empty list may be either.
fn ids(list: &[Value]) -> Option<Vec<&str>> {
    let ids: Vec<&str> = list
        .iter()
        .map(|item| item.get("id").and_then(Value::as_str))
        .collect::<Option<_>>()?;
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == ids.len()).then_some(ids)
}

fn diff_lists_with_ids(
    old: &[Value],
    new: &[Value],
    old_ids: &[&str],
    new_ids: &[&str],
    path: &mut Path,
    edits: &mut Vec<Edit>,
    orders: &mut Vec<Edit>,
) {
    for (item, id) in new.iter().zip(new_ids) {
        path.push(Step::Id((*id).to_owned()));
        match old_ids.iter().position(|old_id| old_id == id) {
            Some(place) => diff_values(&old[place], item, path, edits, orders),
            None => set(path, None, Some(item), edits),
        }
        path.pop();
    }
    for id in old_ids.iter().filter(|id| !new_ids.contains(id)) {
        path.push(Step::Id((*id).to_owned()));
        let place = old_ids.iter().position(|old_id| old_id == id);
        set(path, place.map(|place| &old[place]), None, edits);
        path.pop();
    }
    // The order matters only among the items both versions have, plus where
    // the added ones go.
    let kept: Vec<&&str> = old_ids.iter().filter(|id| new_ids.contains(id)).collect();
    let kept_in_new: Vec<&&str> = new_ids.iter().filter(|id| old_ids.contains(id)).collect();
    let added_at_end = new_ids
        .iter()
        .skip(kept_in_new.len())
        .all(|id| !old_ids.contains(id))
        && new_ids
            .iter()
            .take(kept_in_new.len())
            .all(|id| old_ids.contains(id));
    if kept != kept_in_new || !added_at_end {
        orders.push(Edit::Order {
            path: path.clone(),
            order: new_ids
                .iter()
                .map(|id| Step::Id((*id).to_owned()))
                .collect(),
        });
    }
}

fn diff_lists_in_place(
    old: &[Value],
    new: &[Value],
    path: &mut Path,
    edits: &mut Vec<Edit>,
    orders: &mut Vec<Edit>,
) {
    if let Some(order) = permutation(old, new) {
        orders.push(Edit::Order {
            path: path.clone(),
            order: order.into_iter().map(Step::Index).collect(),
        });
        return;
    }
    for (place, (before, after)) in old.iter().zip(new).enumerate() {
        path.push(Step::Index(place));
        diff_values(before, after, path, edits, orders);
        path.pop();
    }
}

/// The old place of each item of `new` when `new` is `old` reordered (and
/// not the same order).
fn permutation(old: &[Value], new: &[Value]) -> Option<Vec<usize>> {
    let mut taken = vec![false; old.len()];
    let mut order = Vec::with_capacity(new.len());
    for item in new {
        let place = (0..old.len()).find(|&place| !taken[place] && old[place] == *item)?;
        taken[place] = true;
        order.push(place);
    }
    let moved = order.iter().enumerate().any(|(place, old)| place != *old);
    moved.then_some(order)
}

/// Applies `edits` to `document` in turn, the last writer's value kept.
pub fn apply(document: &mut Value, edits: &[Edit]) -> Applied {
    apply_with(document, edits, false)
}

/// Applies only the edits whose value is still what they expect, the
/// others reported as [`Unapplied::ChangedSince`]: an undo puts back what
/// the person changed, never what someone else changed since.
pub fn apply_strictly(document: &mut Value, edits: &[Edit]) -> Applied {
    apply_with(document, edits, true)
}

fn apply_with(document: &mut Value, edits: &[Edit], strict: bool) -> Applied {
    let mut applied = Applied::default();
    for edit in edits {
        let outcome = match edit {
            Edit::Set {
                path,
                before,
                after,
            } => apply_set(document, path, before.as_ref(), after.as_ref(), strict),
            Edit::Order { path, order } => apply_order(document, path, order),
        };
        match outcome {
            Ok(Outcome::Unchanged) => {}
            Ok(Outcome::Changed { replaced, conflict }) => {
                if conflict {
                    applied.replaced.push(Replaced {
                        path: edit.path().clone(),
                        value: replaced.clone(),
                    });
                }
                applied.edits.push(match edit {
                    Edit::Set { path, after, .. } => Edit::Set {
                        path: path.clone(),
                        before: replaced,
                        after: after.clone(),
                    },
                    order @ Edit::Order { .. } => order.clone(),
                });
            }
            Err(why) => applied.not_applied.push(NotApplied {
                edit: edit.clone(),
                why,
                by: None,
            }),
        }
    }
    applied
}

enum Outcome {
    Unchanged,
    Changed {
        replaced: Option<Value>,
        /// What it replaced is not what the edit expected.
        conflict: bool,
    },
}

/// The value at `path`, if there is one.
pub fn at<'a>(document: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter()
        .try_fold(document, |value, step| child(value, step))
}

fn child<'a>(value: &'a Value, step: &Step) -> Option<&'a Value> {
    match (value, step) {
        (Value::Object(map), Step::Field(name)) => present(map.get(name)),
        (Value::Array(list), Step::Id(id)) => list
            .iter()
            .find(|item| item.get("id").and_then(Value::as_str) == Some(id)),
        (Value::Array(list), Step::Index(place)) => list.get(*place),
        _ => None,
    }
}

fn child_mut<'a>(value: &'a mut Value, step: &Step) -> Option<&'a mut Value> {
    match (value, step) {
        (Value::Object(map), Step::Field(name)) => {
            map.get_mut(name).filter(|value| !value.is_null())
        }
        (Value::Array(list), Step::Id(id)) => list
            .iter_mut()
            .find(|item| item.get("id").and_then(Value::as_str) == Some(id)),
        (Value::Array(list), Step::Index(place)) => list.get_mut(*place),
        _ => None,
    }
}

fn apply_set(
    document: &mut Value,
    path: &[Step],
    before: Option<&Value>,
    after: Option<&Value>,
    strict: bool,
) -> Result<Outcome, Unapplied> {
    let Some((last, parent_path)) = path.split_last() else {
        return Err(Unapplied::Gone);
    };
    let parent = parent_path
        .iter()
        .try_fold(document, |value, step| child_mut(value, step))
        .ok_or(Unapplied::Gone)?;
    let current = child(parent, last).cloned();
    if current.as_ref() == after {
        return Ok(Outcome::Unchanged);
    }
    let conflict = current.as_ref() != before;
    if conflict && strict {
        return Err(Unapplied::ChangedSince);
    }
    put(parent, last, after)?;
    Ok(Outcome::Changed {
        replaced: current,
        conflict,
    })
}

/// Puts `value` (or removes what is there) at `step` of `parent`.
fn put(parent: &mut Value, step: &Step, value: Option<&Value>) -> Result<(), Unapplied> {
    match (parent, step) {
        (Value::Object(map), Step::Field(name)) => {
            match value {
                Some(value) => map.insert(name.clone(), value.clone()),
                None => map.remove(name),
            };
            Ok(())
        }
        (Value::Array(list), Step::Id(id)) => {
            let place = list
                .iter()
                .position(|item| item.get("id").and_then(Value::as_str) == Some(id));
            match (place, value) {
                (Some(place), Some(value)) => list[place] = value.clone(),
                (Some(place), None) => {
                    list.remove(place);
                }
                // An order edit puts it in its place.
                (None, Some(value)) => list.push(value.clone()),
                (None, None) => {}
            }
            Ok(())
        }
        (Value::Array(list), Step::Index(place)) => match (list.get_mut(*place), value) {
            (Some(slot), Some(value)) => {
                *slot = value.clone();
                Ok(())
            }
            _ => Err(Unapplied::Gone),
        },
        _ => Err(Unapplied::Gone),
    }
}

fn apply_order(document: &mut Value, path: &[Step], order: &[Step]) -> Result<Outcome, Unapplied> {
    let list = path
        .iter()
        .try_fold(document, |value, step| child_mut(value, step))
        .and_then(Value::as_array_mut)
        .ok_or(Unapplied::Gone)?;
    let reordered = if order.iter().all(|step| matches!(step, Step::Id(_))) {
        order_by_ids(list, order)
    } else {
        order_by_places(list, order)?
    };
    if reordered == *list {
        return Ok(Outcome::Unchanged);
    }
    *list = reordered;
    Ok(Outcome::Changed {
        replaced: None,
        conflict: false,
    })
}

/// The items in the order the ids give; an item the order does not name
/// (added by someone else meanwhile) stays after the item it followed.
fn order_by_ids(list: &[Value], order: &[Step]) -> Vec<Value> {
    let id_of = |item: &Value| item.get("id").and_then(Value::as_str).map(str::to_owned);
    let mut placed: Vec<Value> = order
        .iter()
        .filter_map(|step| match step {
            Step::Id(id) => list
                .iter()
                .find(|item| id_of(item).as_deref() == Some(id.as_str()))
                .cloned(),
            _ => None,
        })
        .collect();
    let named = |item: &Value| {
        order
            .iter()
            .any(|step| matches!(step, Step::Id(id) if id_of(item).as_deref() == Some(id.as_str())))
    };
    for (place, item) in list.iter().enumerate() {
        if named(item) {
            continue;
        }
        let after = list[..place]
            .iter()
            .rev()
            .find_map(|earlier| placed.iter().position(|kept| kept == earlier));
        placed.insert(after.map_or(0, |after| after + 1), item.clone());
    }
    placed
}

fn order_by_places(list: &[Value], order: &[Step]) -> Result<Vec<Value>, Unapplied> {
    let places: Vec<usize> = order
        .iter()
        .map(|step| match step {
            Step::Index(place) => Some(*place),
            _ => None,
        })
        .collect::<Option<_>>()
        .ok_or(Unapplied::ListChanged)?;
    let mut sorted = places.clone();
    sorted.sort_unstable();
    if sorted != (0..list.len()).collect::<Vec<_>>() {
        return Err(Unapplied::ListChanged);
    }
    Ok(places.iter().map(|place| list[*place].clone()).collect())
}

/// Moves `edits`, made without having seen `through`, along the reorders
/// among `through`: an edit of the item at place 2 of a list that `through`
/// reordered edits that item at its new place.
pub fn transform(edits: &mut [Edit], through: &[Edit]) {
    for reorder in through {
        let Edit::Order {
            path: list,
            order: moved,
        } = reorder
        else {
            continue;
        };
        let Some(moved) = places(moved) else {
            continue;
        };
        let new_place = |old: usize| moved.iter().position(|place| *place == old);
        for edit in edits.iter_mut() {
            match edit {
                Edit::Set { path, .. } if path.len() > list.len() && path.starts_with(list) => {
                    if let Step::Index(place) = &mut path[list.len()]
                        && let Some(new) = new_place(*place)
                    {
                        *place = new;
                    }
                }
                // Two reorders of one list: the later one's intended order,
                // said in places of the list as the earlier one left it.
                Edit::Order { path, order } if path == list => {
                    if let Some(mine) = places(order) {
                        let rebased: Option<Vec<Step>> = mine
                            .iter()
                            .map(|old| new_place(*old).map(Step::Index))
                            .collect();
                        if let Some(rebased) = rebased {
                            *order = rebased;
                        }
                    }
                }
                Edit::Set { .. } | Edit::Order { .. } => {}
            }
        }
    }
}

fn places(order: &[Step]) -> Option<Vec<usize>> {
    order
        .iter()
        .map(|step| match step {
            Step::Index(place) => Some(*place),
            _ => None,
        })
        .collect()
}

/// Takes out the cables of a graph document that join a module no longer
/// there: a cable drawn to a module someone else deleted meanwhile. One
/// that these edits made is reported as not applied (and its edits moved
/// there); one that was there before is removed by an edit of its own,
/// added to `applied`, so that everyone's document stays the same.
pub fn drop_dangling_cables(document: &mut Value, applied: &mut Applied) {
    let modules: Vec<String> = document
        .get("modules")
        .and_then(Value::as_array)
        .map(|modules| {
            modules
                .iter()
                .filter_map(|module| module.get("id").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let Some(cables) = document.get_mut("cables").and_then(Value::as_array_mut) else {
        return;
    };
    let joins_missing = |cable: &Value| {
        ["from", "to"].iter().any(|end| {
            cable
                .get(end)
                .and_then(|end| end.get("module"))
                .and_then(Value::as_str)
                .is_none_or(|module| !modules.iter().any(|id| id == module))
        })
    };
    let dangling: Vec<Value> = cables
        .iter()
        .filter(|cable| joins_missing(cable))
        .cloned()
        .collect();
    cables.retain(|cable| !joins_missing(cable));
    for cable in dangling {
        let Some(id) = cable.get("id").and_then(Value::as_str) else {
            continue;
        };
        let path = vec![Step::Field("cables".to_owned()), Step::Id(id.to_owned())];
        let (made_here, kept): (Vec<Edit>, Vec<Edit>) = std::mem::take(&mut applied.edits)
            .into_iter()
            .partition(|edit| matches!(edit, Edit::Set { .. }) && edit.path().starts_with(&path));
        applied.edits = kept;
        if made_here
            .iter()
            .any(|edit| matches!(edit, Edit::Set { path: at, before: None, .. } if *at == path))
        {
            applied
                .not_applied
                .extend(made_here.into_iter().map(|edit| NotApplied {
                    edit,
                    why: Unapplied::Gone,
                    by: None,
                }));
        } else {
            applied.edits.extend(made_here);
            applied.edits.push(Edit::Set {
                path,
                before: Some(cable),
                after: None,
            });
        }
    }
}

/// The edits that undo `edits` (applied in turn), last first.
pub fn inverse(edits: &[Edit]) -> Vec<Edit> {
    edits
        .iter()
        .rev()
        .map(|edit| match edit {
            Edit::Set {
                path,
                before,
                after,
            } => Edit::Set {
                path: path.clone(),
                before: after.clone(),
                after: before.clone(),
            },
            Edit::Order { path, order } => match places(order) {
                Some(places) => {
                    let mut back = vec![0; places.len()];
                    for (new, old) in places.iter().enumerate() {
                        if let Some(slot) = back.get_mut(*old) {
                            *slot = new;
                        }
                    }
                    Edit::Order {
                        path: path.clone(),
                        order: back.into_iter().map(Step::Index).collect(),
                    }
                }
                // A list with ids: an undo of a reorder has no order of its
                // own to go back to (the sets put items back by id).
                None => Edit::Order {
                    path: path.clone(),
                    order: Vec::new(),
                },
            },
        })
        .filter(|edit| !matches!(edit, Edit::Order { order, .. } if order.is_empty()))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn document() -> Value {
        json!({
            "format": "patchbay/1",
            "id": "g1",
            "revision": 4,
            "name": "Essay",
            "modules": [
                {"id": "topic", "label": "Topic", "position": {"x": 0.0, "y": 0.0}, "config": {"kind": "input"}},
                {"id": "draft", "label": "Draft", "position": {"x": 200.0, "y": 0.0},
                 "config": {"kind": "agent_task", "instruction": "Write.", "reprompts": ["Shorter.", "Warmer.", "Cite."]}},
                {"id": "out", "label": "Out", "position": {"x": 400.0, "y": 0.0}, "config": {"kind": "output"}}
            ],
            "cables": [
                {"id": "c1", "from": {"module": "topic", "port": "out"}, "to": {"module": "draft", "port": "in"}},
                {"id": "c2", "from": {"module": "draft", "port": "reprompt-2"}, "to": {"module": "out", "port": "in"}}
            ]
        })
    }

    fn edited(change: impl FnOnce(&mut Value)) -> Value {
        let mut document = document();
        change(&mut document);
        document
    }

    fn path(steps: &[&str]) -> Path {
        steps
            .iter()
            .map(|step| Step::try_from((*step).to_owned()).unwrap_or(Step::Field(String::new())))
            .collect()
    }

    #[test]
    fn applying_the_difference_of_two_versions_gives_the_second() {
        let after = edited(|document| {
            document["name"] = json!("Essay, shorter");
            document["modules"][1]["position"]["x"] = json!(260.0);
            document["modules"][1]["config"]["instruction"] = json!("Write an essay.");
            document["modules"][1]["config"]["reprompts"] = json!(["Cite.", "Shorter.", "Warmer."]);
            let removed = document["cables"]
                .as_array_mut()
                .map(|cables| cables.remove(0));
            assert!(removed.is_some());
            if let Some(modules) = document["modules"].as_array_mut() {
                modules.insert(
                    1,
                    json!({"id": "note", "label": "Note", "config": {"kind": "note"}}),
                );
            }
        });
        let edits = diff(&document(), &after);
        let mut document = document();
        let applied = apply(&mut document, &edits);
        assert_eq!(document, after);
        assert!(applied.replaced.is_empty() && applied.not_applied.is_empty());
        // The stamps are the server's, never an edit's.
        assert!(edits.iter().all(
            |edit| !matches!(edit.path().first(), Some(Step::Field(name)) if name == "revision")
        ));
        // A move is one small edit of the module's place, addressed by id.
        assert!(edits.contains(&Edit::Set {
            path: path(&[".modules", "#draft", ".position", ".x"]),
            before: Some(json!(200.0)),
            after: Some(json!(260.0)),
        }));
        // The reorder of re-prompts is an order, not three changed texts.
        assert!(edits.contains(&Edit::Order {
            path: path(&[".modules", "#draft", ".config", ".reprompts"]),
            order: vec![Step::Index(2), Step::Index(0), Step::Index(1)],
        }));
    }

    #[test]
    fn edits_of_two_different_modules_made_at_once_both_survive() {
        let base = document();
        let mine = diff(
            &base,
            &edited(|document| document["modules"][0]["label"] = json!("Subject")),
        );
        let theirs = diff(
            &base,
            &edited(|document| document["modules"][2]["position"]["y"] = json!(90.0)),
        );
        let mut document = base;
        assert!(apply(&mut document, &theirs).replaced.is_empty());
        assert!(apply(&mut document, &mine).replaced.is_empty());
        assert_eq!(document["modules"][0]["label"], "Subject");
        assert_eq!(document["modules"][2]["position"]["y"], 90.0);
    }

    #[test]
    fn the_last_writer_of_one_field_wins_and_what_it_replaced_is_said() {
        let base = document();
        let first = diff(
            &base,
            &edited(|document| document["modules"][1]["config"]["instruction"] = json!("Ana's")),
        );
        let second = diff(
            &base,
            &edited(|document| document["modules"][1]["config"]["instruction"] = json!("Ben's")),
        );
        let mut document = base;
        apply(&mut document, &first);
        let applied = apply(&mut document, &second);
        assert_eq!(document["modules"][1]["config"]["instruction"], "Ben's");
        let instruction = path(&[".modules", "#draft", ".config", ".instruction"]);
        assert_eq!(
            applied.replaced,
            vec![Replaced {
                path: instruction.clone(),
                value: Some(json!("Ana's"))
            }]
        );
        // As applied, it says what it replaced: the same document for all.
        assert_eq!(
            applied.edits,
            vec![Edit::Set {
                path: instruction,
                before: Some(json!("Ana's")),
                after: Some(json!("Ben's"))
            }]
        );
        // The same edit twice changes nothing the second time.
        let again = apply(&mut document, &second);
        assert!(again.edits.is_empty() && again.replaced.is_empty());
    }

    #[test]
    fn an_edit_inside_a_module_deleted_meanwhile_is_reported_not_dropped() {
        let base = document();
        let deleted = diff(
            &base,
            &edited(|document| {
                let _ = document["modules"]
                    .as_array_mut()
                    .map(|modules| modules.remove(1));
            }),
        );
        let typed = diff(
            &base,
            &edited(|document| document["modules"][1]["config"]["instruction"] = json!("Mine")),
        );
        let mut document = base;
        apply(&mut document, &deleted);
        let applied = apply(&mut document, &typed);
        assert!(applied.edits.is_empty());
        assert_eq!(applied.not_applied.len(), 1);
        assert_eq!(applied.not_applied[0].why, Unapplied::Gone);
        assert_eq!(applied.not_applied[0].edit, typed[0]);
    }

    #[test]
    fn a_re_prompt_typed_in_while_the_list_is_reordered_stays_that_re_prompt() {
        let base = document();
        // Ben moves "Cite." first; Ana, not having seen it, edits "Warmer."
        // (place 1 before the move, place 2 after it).
        let reorder = diff(
            &base,
            &edited(|document| {
                document["modules"][1]["config"]["reprompts"] =
                    json!(["Cite.", "Shorter.", "Warmer."]);
            }),
        );
        let mut typed = diff(
            &base,
            &edited(|document| {
                document["modules"][1]["config"]["reprompts"][1] = json!("Warmer, please.");
            }),
        );
        let expected = json!(["Cite.", "Shorter.", "Warmer, please."]);

        // The reorder reached the server first: Ana's edit moves along.
        let mut document = base.clone();
        apply(&mut document, &reorder);
        transform(&mut typed, &reorder);
        apply(&mut document, &typed);
        assert_eq!(document["modules"][1]["config"]["reprompts"], expected);

        // The edit reached it first: the reorder moves the edited item.
        let typed = diff(
            &base,
            &edited(|document| {
                document["modules"][1]["config"]["reprompts"][1] = json!("Warmer, please.");
            }),
        );
        let mut document = base;
        apply(&mut document, &typed);
        apply(&mut document, &reorder);
        assert_eq!(document["modules"][1]["config"]["reprompts"], expected);
    }

    #[test]
    fn undoing_ones_own_edit_leaves_what_others_changed_since() {
        let base = document();
        let mine = diff(
            &base,
            &edited(|document| {
                document["modules"][1]["label"] = json!("Essay draft");
                document["modules"][1]["position"]["x"] = json!(300.0);
            }),
        );
        let mut document = base.clone();
        apply(&mut document, &mine);
        // Someone else then moves the module further and renames the graph.
        let theirs = diff(&document, &{
            let mut next = document.clone();
            next["modules"][1]["position"]["x"] = json!(500.0);
            next["name"] = json!("Their name");
            next
        });
        apply(&mut document, &theirs);
        let undone = apply_strictly(&mut document, &inverse(&mine));
        assert_eq!(document["modules"][1]["label"], "Draft");
        assert_eq!(document["modules"][1]["position"]["x"], 500.0);
        assert_eq!(document["name"], "Their name");
        assert_eq!(undone.not_applied.len(), 1);
        assert_eq!(undone.not_applied[0].why, Unapplied::ChangedSince);
        // And undoing a reorder puts the list back.
        let reorder = diff(
            &base,
            &edited(|document| {
                document["modules"][1]["config"]["reprompts"] =
                    json!(["Warmer.", "Cite.", "Shorter."]);
            }),
        );
        let mut document = base.clone();
        apply(&mut document, &reorder);
        apply_strictly(&mut document, &inverse(&reorder));
        assert_eq!(document, base);
    }

    #[test]
    fn a_cable_drawn_to_a_module_deleted_meanwhile_is_reported_and_never_left_dangling() {
        let base = document();
        // Ben deletes Out and its cable; Ana, not having seen it, draws a
        // second cable into Out.
        let deleted = diff(
            &base,
            &edited(|document| {
                let _ = document["modules"]
                    .as_array_mut()
                    .map(|modules| modules.remove(2));
                let _ = document["cables"]
                    .as_array_mut()
                    .map(|cables| cables.remove(1));
            }),
        );
        let drawn = diff(
            &base,
            &edited(|document| {
                let _ = document["cables"].as_array_mut().map(|cables| {
                cables.push(json!({"id": "c3", "from": {"module": "draft", "port": "out"}, "to": {"module": "out", "port": "in"}}));
            });
            }),
        );
        let mut document = base.clone();
        apply(&mut document, &deleted);
        let mut applied = apply(&mut document, &drawn);
        drop_dangling_cables(&mut document, &mut applied);
        assert_eq!(document["cables"].as_array().map(Vec::len), Some(1));
        assert!(applied.edits.is_empty());
        assert_eq!(applied.not_applied.len(), 1);
        assert_eq!(applied.not_applied[0].why, Unapplied::Gone);

        // The other way round: the cable was drawn first, then the module
        // deleted by someone who had not seen it: the deletion takes the
        // cable with it, by an edit everyone applies.
        let mut document = base;
        apply(&mut document, &drawn);
        let mut applied = apply(&mut document, &deleted);
        drop_dangling_cables(&mut document, &mut applied);
        assert_eq!(document["cables"].as_array().map(Vec::len), Some(1));
        assert!(
            applied
                .edits
                .iter()
                .any(|edit| edit.path() == &path(&[".cables", "#c3"]))
        );
    }

    #[test]
    fn a_module_added_by_someone_else_keeps_its_place_through_a_reorder() {
        let list = vec![
            json!({"id": "a"}),
            json!({"id": "new"}),
            json!({"id": "b"}),
            json!({"id": "c"}),
        ];
        let order = vec![
            Step::Id("c".into()),
            Step::Id("a".into()),
            Step::Id("b".into()),
        ];
        let ids: Vec<Value> = order_by_ids(&list, &order)
            .into_iter()
            .map(|item| item["id"].clone())
            .collect();
        assert_eq!(ids, vec![json!("c"), json!("a"), json!("new"), json!("b")]);
    }

    #[test]
    fn edits_are_small_on_the_wire_and_read_back() {
        let edit = Edit::Set {
            path: path(&[".modules", "#draft", ".position", ".x"]),
            before: Some(json!(200.0)),
            after: Some(json!(260.0)),
        };
        let text = serde_json::to_string(&edit).unwrap_or_default();
        assert_eq!(
            text,
            r##"{"set":{"path":[".modules","#draft",".position",".x"],"before":200.0,"after":260.0}}"##
        );
        assert_eq!(serde_json::from_str::<Edit>(&text).ok(), Some(edit));
        let order: Result<Edit, _> =
            serde_json::from_str(r#"{"order":{"path":[".modules"],"order":["x1"]}}"#);
        assert!(order.is_err(), "a step is .field, #id or a number");
        let removal: Result<Edit, _> =
            serde_json::from_str(r##"{"set":{"path":[".cables","#c1"],"before":{"id":"c1"}}}"##);
        assert!(matches!(removal, Ok(Edit::Set { after: None, .. })));
    }
}
