//! Two people typing in one field (PRODUCT §3.16): the field is held by the
//! first of them until they pause. Whole-value edits of a text would
//! otherwise replace each other keystroke by keystroke, leaving a mix that
//! nobody wrote; so while someone's typing in a field is younger than
//! [`HOLD_MILLIS`], anyone else's edit of that text is not applied
//! ([`Unapplied::Held`]) and is kept for its author to take back whole once
//! the field is free. The server decides from the changes it stored (so
//! every process decides the same, and the decision is part of the write
//! that is conditional on the revision); the browser keeps its own copy of
//! the holds from the changes the room brings, to show the field as held
//! and not send what would be refused.

use crate::edits::{Edit, NotApplied, Path, Unapplied};

/// How long a pause ends a hold: a person typing at a normal pace never
/// pauses this long between keys.
pub const HOLD_MILLIS: i64 = 2_000;

/// Whether an edit is typing: a text set, changed or cleared.
pub fn is_typing(edit: &Edit) -> bool {
    match edit {
        Edit::Set { before, after, .. } => {
            let text = |value: &Option<serde_json::Value>| {
                value.as_ref().is_some_and(serde_json::Value::is_string)
            };
            (text(after) || text(before)) && !matches!((before, after), (None, None))
        }
        Edit::Order { .. } => false,
    }
}

/// A field someone is typing in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    pub path: Path,
    /// Their connection.
    pub connection: String,
    /// Their name, as the others see it.
    pub name: String,
    /// When it ends unless they type again (milliseconds).
    pub until: i64,
}

/// The fields held, from recent changes (each its author's connection and
/// name, when it was taken, and its edits), oldest first.
pub fn holds<'a>(
    changes: impl IntoIterator<Item = (&'a str, &'a str, i64, &'a [Edit])>,
) -> Vec<Hold> {
    let mut holds: Vec<Hold> = Vec::new();
    for (connection, name, at, edits) in changes {
        // A save through the API (no connection) is not someone typing.
        if connection.is_empty() {
            continue;
        }
        for edit in edits.iter().filter(|edit| is_typing(edit)) {
            take(
                &mut holds,
                Hold {
                    path: edit.path().clone(),
                    connection: connection.to_owned(),
                    name: name.to_owned(),
                    until: at + HOLD_MILLIS,
                },
            );
        }
    }
    holds
}

/// Someone typed in a field: they hold it from now, unless someone else
/// still does.
pub fn take(holds: &mut Vec<Hold>, hold: Hold) {
    match holds.iter_mut().find(|held| held.path == hold.path) {
        Some(held)
            if held.connection == hold.connection || held.until <= hold.until - HOLD_MILLIS =>
        {
            *held = hold;
        }
        Some(_) => {}
        None => holds.push(hold),
    }
}

/// Who else holds the field at `path` at `now`, if anyone.
pub fn held_by<'a>(holds: &'a [Hold], path: &Path, me: &str, now: i64) -> Option<&'a Hold> {
    holds
        .iter()
        .find(|hold| hold.path == *path && hold.connection != me && hold.until > now)
}

/// `edits` by connection `me` at `now`, without the typing in fields
/// someone else holds: those are returned as not applied, saying who holds
/// the field.
pub fn withhold(
    edits: Vec<Edit>,
    holds: &[Hold],
    me: &str,
    now: i64,
) -> (Vec<Edit>, Vec<NotApplied>) {
    let mut kept = Vec::with_capacity(edits.len());
    let mut held = Vec::new();
    for edit in edits {
        match held_by(holds, edit.path(), me, now).filter(|_| is_typing(&edit)) {
            Some(hold) => held.push(NotApplied {
                edit,
                why: Unapplied::Held,
                by: Some(hold.name.clone()),
            }),
            None => kept.push(edit),
        }
    }
    (kept, held)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::edits::Step;

    fn path() -> Path {
        vec![
            Step::Field("modules".into()),
            Step::Id("m2".into()),
            Step::Field("config".into()),
            Step::Field("instruction".into()),
        ]
    }

    fn typed(text: &str) -> Edit {
        Edit::Set {
            path: path(),
            before: Some(json!("Write.")),
            after: Some(json!(text)),
        }
    }

    #[test]
    fn text_edits_are_typing_and_moves_are_not() {
        assert!(is_typing(&typed("Write")));
        let cleared = Edit::Set {
            path: path(),
            before: Some(json!("Write.")),
            after: None,
        };
        assert!(is_typing(&cleared));
        let moved = Edit::Set {
            path: vec![Step::Field("position".into())],
            before: Some(json!(1.0)),
            after: Some(json!(2.0)),
        };
        assert!(!is_typing(&moved));
    }

    #[test]
    fn the_first_to_type_holds_the_field_until_they_pause() {
        let anas = [typed("Write. A")];
        let bens = [typed("Write. B")];
        let holds = holds([
            ("ana", "Ana", 1_000, &anas[..]),
            ("ben", "Ben", 1_010, &bens[..]),
        ]);
        assert_eq!(holds.len(), 1);
        assert_eq!((holds[0].name.as_str(), holds[0].until), ("Ana", 3_000));
        // Ben's typing is held back, saying who holds the field; Ana's goes.
        let (kept, held) = withhold(vec![typed("Write. BB")], &holds, "ben", 1_500);
        assert!(kept.is_empty());
        assert_eq!(
            (held[0].why, held[0].by.as_deref()),
            (Unapplied::Held, Some("Ana"))
        );
        let (kept, held) = withhold(vec![typed("Write. AA")], &holds, "ana", 1_500);
        assert_eq!((kept.len(), held.len()), (1, 0));
        // Once she has paused, the field is anyone's.
        let (kept, _) = withhold(vec![typed("Write. BB")], &holds, "ben", 3_000);
        assert_eq!(kept.len(), 1);
    }

    #[test]
    fn typing_again_keeps_the_hold_and_a_save_through_the_api_takes_none() {
        let first = [typed("Write. A")];
        let again = [typed("Write. AA")];
        let holds_now = holds([
            ("ana", "Ana", 1_000, &first[..]),
            ("", "A save through the API", 1_500, &again[..]),
            ("ana", "Ana", 2_900, &again[..]),
        ]);
        assert_eq!(holds_now[0].until, 4_900);
        let mut holds_now = holds_now;
        // Ben, after Ana paused, takes it.
        take(
            &mut holds_now,
            Hold {
                path: path(),
                connection: "ben".into(),
                name: "Ben".into(),
                until: 4_900 + HOLD_MILLIS,
            },
        );
        assert_eq!(holds_now[0].name, "Ben");
    }
}
