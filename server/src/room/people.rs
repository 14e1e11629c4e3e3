//! Who has a graph open: a plain value the room changes as presence
//! updates come (from this process's browsers, or from another process's
//! on PostgreSQL) and as streams close. Nobody's entry lives forever: a
//! browser says where it is at least every [`HEARTBEAT_MILLIS`], and an
//! entry not heard of for [`FORGOTTEN_AFTER_MILLIS`] goes (a process that
//! died cannot say its people left).

use wire::room::{Person, PresenceUpdate, Role};

/// How often a browser says it is still here.
pub const HEARTBEAT_MILLIS: i64 = 15_000;
/// When an entry not heard of goes.
pub const FORGOTTEN_AFTER_MILLIS: i64 = 3 * HEARTBEAT_MILLIS;
/// The most modules one person's selection shows to others.
pub const MOST_SELECTED: usize = 100;
/// The longest name, in characters.
pub const MOST_NAME_CHARACTERS: usize = 40;

/// Colours people get until they choose one: distinct on the dark canvas.
const COLOURS: [&str; 8] = [
    "#f6ad55", "#68d391", "#b794f4", "#4fd1c5", "#fc8181", "#f6e05e", "#90cdf4", "#fbb6ce",
];

#[derive(Clone, Debug, Default)]
pub struct People {
    /// In the order they came.
    entries: Vec<Entry>,
}

#[derive(Clone, Debug)]
struct Entry {
    person: Person,
    heard_at: i64,
}

impl People {
    /// Everyone here, in the order they came.
    pub fn list(&self) -> Vec<Person> {
        self.entries
            .iter()
            .map(|entry| entry.person.clone())
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A browser of this process says where its person is; `role` is what
    /// its token proved. Returns the person as others see them.
    pub fn update(&mut self, update: &PresenceUpdate, role: Role, now: i64) -> Person {
        let known = self
            .entries
            .iter()
            .position(|entry| entry.person.connection == update.connection);
        let name = clean_name(&update.name);
        let name = match (name, known) {
            (Some(name), _) => name,
            // A default name, once given, stays.
            (None, Some(index)) if self.entries[index].person.role == role => {
                self.entries[index].person.name.clone()
            }
            (None, _) => self.default_name(role, &update.connection),
        };
        let colour = if is_colour(&update.colour) {
            update.colour.to_ascii_lowercase()
        } else {
            match known {
                Some(index) => self.entries[index].person.colour.clone(),
                None => COLOURS[self.entries.len() % COLOURS.len()].to_owned(),
            }
        };
        let person = Person {
            connection: update.connection.clone(),
            name,
            colour,
            role,
            pointer: update
                .pointer
                .filter(|(x, y)| x.is_finite() && y.is_finite()),
            selection: update
                .selection
                .iter()
                .take(MOST_SELECTED)
                .cloned()
                .collect(),
            editing: update.editing.clone(),
            moving: update
                .moving
                .iter()
                .filter(|(_, x, y)| x.is_finite() && y.is_finite())
                .take(MOST_SELECTED)
                .cloned()
                .collect(),
        };
        self.heard(person.clone(), now);
        person
    }

    /// Another process's person, as it announced them.
    pub fn heard(&mut self, person: Person, now: i64) {
        match self
            .entries
            .iter_mut()
            .find(|entry| entry.person.connection == person.connection)
        {
            Some(entry) => {
                entry.person = person;
                entry.heard_at = now;
            }
            None => self.entries.push(Entry {
                person,
                heard_at: now,
            }),
        }
    }

    /// Someone's stream closed. Whether they were here.
    pub fn leave(&mut self, connection: &str) -> bool {
        let before = self.entries.len();
        self.entries
            .retain(|entry| entry.person.connection != connection);
        self.entries.len() != before
    }

    /// Forgets whoever was not heard of for a while; returns them.
    pub fn forget_silent(&mut self, now: i64) -> Vec<String> {
        let (silent, heard): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut self.entries)
            .into_iter()
            .partition(|entry| now - entry.heard_at > FORGOTTEN_AFTER_MILLIS);
        self.entries = heard;
        silent
            .into_iter()
            .map(|entry| entry.person.connection)
            .collect()
    }

    /// "Editor 2": the smallest number no one here of that role goes by.
    fn default_name(&self, role: Role, connection: &str) -> String {
        let word = match role {
            Role::Editor => "Editor",
            Role::Viewer => "Viewer",
        };
        (1..)
            .map(|number| format!("{word} {number}"))
            .find(|name| {
                !self.entries.iter().any(|entry| {
                    entry.person.name == *name && entry.person.connection != connection
                })
            })
            .unwrap_or_else(|| word.to_owned())
    }
}

/// A name as others see it: trimmed, one line, not too long; `None` when
/// nothing is left.
fn clean_name(name: &str) -> Option<String> {
    let name: String = name
        .chars()
        .filter(|character| !character.is_control())
        .take(MOST_NAME_CHARACTERS)
        .collect();
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

fn is_colour(text: &str) -> bool {
    text.len() == 7
        && text.starts_with('#')
        && text[1..].bytes().all(|byte| byte.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(connection: &str, name: &str) -> PresenceUpdate {
        PresenceUpdate {
            connection: connection.to_owned(),
            secret: String::new(),
            name: name.to_owned(),
            colour: String::new(),
            pointer: None,
            selection: Vec::new(),
            editing: None,
            moving: Vec::new(),
        }
    }

    #[test]
    fn people_get_numbered_default_names_by_role_and_keep_them() {
        let mut people = People::default();
        let first = people.update(&update("a", ""), Role::Editor, 0);
        let viewer = people.update(&update("v", ""), Role::Viewer, 0);
        let second = people.update(&update("b", "  "), Role::Editor, 0);
        assert_eq!(
            (
                first.name.as_str(),
                viewer.name.as_str(),
                second.name.as_str()
            ),
            ("Editor 1", "Viewer 1", "Editor 2")
        );
        // Updating again keeps the name; a set name replaces it.
        assert_eq!(
            people.update(&update("b", ""), Role::Editor, 1).name,
            "Editor 2"
        );
        assert_eq!(
            people.update(&update("b", "Ana\n"), Role::Editor, 2).name,
            "Ana"
        );
        assert!(people.leave("a"));
        // Editor 1 is free again.
        assert_eq!(
            people.update(&update("c", ""), Role::Editor, 3).name,
            "Editor 1"
        );
        let names: Vec<String> = people
            .list()
            .into_iter()
            .map(|person| person.name)
            .collect();
        assert_eq!(names, ["Viewer 1", "Ana", "Editor 1"]);
    }

    #[test]
    fn what_others_see_is_cleaned() {
        let mut people = People::default();
        let mut long = update("a", &"x".repeat(300));
        long.colour = "red; background: url(x)".to_owned();
        long.pointer = Some((f64::NAN, 1.0));
        long.selection = (0..500).map(|index| index.to_string()).collect();
        long.moving = vec![
            ("m1".to_owned(), 1.0, 2.0),
            ("m2".to_owned(), f64::INFINITY, 0.0),
        ];
        let person = people.update(&long, Role::Viewer, 0);
        assert_eq!(person.moving, [("m1".to_owned(), 1.0, 2.0)]);
        assert_eq!(person.name.chars().count(), MOST_NAME_CHARACTERS);
        assert_eq!(person.colour, COLOURS[0]);
        assert_eq!(person.pointer, None);
        assert_eq!(person.selection.len(), MOST_SELECTED);
        let mut chosen = update("a", "");
        chosen.colour = "#ABCDEF".to_owned();
        assert_eq!(people.update(&chosen, Role::Viewer, 1).colour, "#abcdef");
    }

    #[test]
    fn someone_not_heard_of_for_a_while_is_forgotten() {
        let mut people = People::default();
        people.update(&update("a", ""), Role::Editor, 0);
        people.update(&update("b", ""), Role::Editor, 20_000);
        assert!(people.forget_silent(FORGOTTEN_AFTER_MILLIS).is_empty());
        assert_eq!(people.forget_silent(FORGOTTEN_AFTER_MILLIS + 1), ["a"]);
        assert_eq!(people.list().len(), 1);
        assert!(!people.leave("a"));
    }
}
