//! Keeping one browser's document in step with the room's (PRODUCT §3.16):
//! a plain value fed what happens — an edit to send, the server's answer,
//! a change from the room, the whole document — that says what to send and
//! what the page's document becomes. The async shell (`together.rs`) only
//! carries that out.
//!
//! The page's document is always the server's (`confirmed`, at `revision`)
//! with this browser's edits not yet in it applied on top. A change from the
//! room moves `confirmed` on, and those edits are applied again on the new
//! one (moved along any reorder they had not seen): that is the rebase.
//! This browser's own changes come back through the room like anyone's, and
//! applying an edit to a document that already has it changes nothing.
//!
//! A field someone else is typing in is theirs until they pause
//! (`graph::typing`): what this person had typed there meanwhile is taken
//! out of the page's document whole and kept for them in a notice, never
//! mixed with the other's text.
//!
//! Plain Rust over `serde_json::Value`, tested natively.

use graph::edits::{self, Edit, NotApplied, Path, Unapplied};
use graph::typing::{self, Hold};
use serde_json::Value;
use wire::room::Change;

/// What this person wrote and when, kept a while to recognise it when
/// someone else's change replaces it.
const WRITTEN_KEPT_MILLIS: f64 = 120_000.0;

#[derive(Clone, Debug, Default)]
pub struct Sync {
    confirmed: Value,
    revision: i64,
    /// A change on its way; after its answer, the revision it made, until
    /// the room has brought it (edits sent are not sent twice meanwhile).
    sending: Sending,
    /// Values this person set, by path, with when.
    written: Vec<(Path, Value, f64)>,
    /// Where this browser's edits not yet sent replaced, in the rebase,
    /// a value someone else had set meanwhile: the value the edit was made
    /// on, sent as its `before` so that the server says it replaced the
    /// other's value (and they are told).
    contested: Vec<(Path, Option<Value>)>,
    /// The edits of the last change sent.
    last_sent: Vec<Edit>,
    /// Fields others are typing in, from their changes as the room brought
    /// them (this browser's clock), and from the server's refusals.
    holds: Vec<Hold>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Sending {
    #[default]
    Nothing,
    OnItsWay,
    Answered(i64),
}

/// What to tell the person about a change from the room.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// Someone's edit replaced what this person had just written there.
    Replaced {
        path: Path,
        by: String,
        mine: Value,
        theirs: Option<Value>,
    },
    /// This person's edit could not apply (what it edits is gone).
    NotApplied(NotApplied),
    /// Someone else (`by`) was typing in a field this person typed in
    /// too: what this person had there, taken out whole and kept for them.
    Held { path: Path, by: String, mine: Value },
}

impl Notice {
    /// The field and the person a notice is about: one notice each.
    pub fn about(&self) -> Option<(&Path, &str)> {
        match self {
            Notice::Replaced { path, by, .. } | Notice::Held { path, by, .. } => {
                Some((path, by.as_str()))
            }
            Notice::NotApplied(_) => None,
        }
    }
}

/// What a change from the room did to the page's document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rebased {
    /// The page's document now; `None` when the change was this browser's
    /// own and the page already shows it.
    pub document: Option<Value>,
    pub notices: Vec<Notice>,
    /// The ids of the modules and cables whose drawing may have changed.
    pub modules: Vec<String>,
    pub cables: Vec<String>,
}

/// The change to send: edits made on `base`.
#[derive(Clone, Debug, PartialEq)]
pub struct Outgoing {
    pub base: i64,
    pub edits: Vec<Edit>,
}

impl Sync {
    pub fn new(document: Value, revision: i64) -> Sync {
        Sync {
            confirmed: document,
            revision,
            ..Sync::default()
        }
    }

    pub fn revision(&self) -> i64 {
        self.revision
    }

    /// Whether the page has edits the server does not.
    pub fn has_unsent(&self, local: &Value) -> bool {
        !edits::diff(&self.confirmed, local).is_empty()
    }

    /// The change to send now, if there is one and nothing is on its way.
    pub fn outgoing(&mut self, local: &Value, now: f64) -> Option<Outgoing> {
        match self.sending {
            Sending::OnItsWay => return None,
            Sending::Answered(revision) if revision > self.revision => return None,
            Sending::Answered(_) | Sending::Nothing => {}
        }
        let mut edits = edits::diff(&self.confirmed, local);
        if edits.is_empty() {
            self.sending = Sending::Nothing;
            self.contested.clear();
            return None;
        }
        // Kept until the server has answered: a change that does not
        // arrive is sent again, saying the same.
        for edit in &mut edits {
            if let Edit::Set { path, before, .. } = edit
                && let Some((_, made_on)) = self.contested.iter().find(|(at, _)| at == path)
            {
                before.clone_from(made_on);
            }
        }
        // The same edits again, after the server took them and the room
        // has brought everything: the server's document already reads so
        // in its own words (a field cleared reads as its kind's default
        // there, e.g. a poll's timeout), and sending them again would be
        // answered the same way, forever. They are taken as stored.
        if matches!(self.sending, Sending::Answered(revision) if revision <= self.revision)
            && edits == self.last_sent
        {
            edits::apply(&mut self.confirmed, &edits);
            self.sending = Sending::Nothing;
            self.last_sent.clear();
            return None;
        }
        self.remember_written(&edits, now);
        self.last_sent.clone_from(&edits);
        self.sending = Sending::OnItsWay;
        Some(Outgoing {
            base: self.revision,
            edits,
        })
    }

    /// The server took the change as `revision` (the room brings it),
    /// without `not_applied`. Typing it held back because someone else is
    /// typing there is taken out of the page's document (`local`) and kept
    /// for this person: the page's document then, if it changed.
    pub fn answered(
        &mut self,
        revision: i64,
        not_applied: &[NotApplied],
        local: &Value,
        now: f64,
    ) -> Option<Rebased> {
        self.sending = Sending::Answered(revision);
        self.contested.clear();
        let mut held = false;
        for refused in not_applied
            .iter()
            .filter(|refused| refused.why == Unapplied::Held)
        {
            held = true;
            typing::take(
                &mut self.holds,
                Hold {
                    path: refused.edit.path().clone(),
                    // Whose connection the server does not say.
                    connection: SOMEONE_ELSE.to_owned(),
                    name: refused.by.clone().unwrap_or_default(),
                    until: millis(now) + typing::HOLD_MILLIS,
                },
            );
        }
        if !held {
            return None;
        }
        self.last_sent.retain(|edit| {
            !not_applied
                .iter()
                .any(|refused| refused.edit.path() == edit.path())
        });
        let mut pending = edits::diff(&self.confirmed, local);
        let notices = self.withdraw_held(&mut pending, "", now);
        let mut rebased = self.rebase(pending, local);
        rebased.notices.splice(0..0, notices);
        Some(rebased)
    }

    /// Who else is typing in the field at `path` now, if anyone.
    pub fn held_by(&self, path: &Path, me: &str, now: f64) -> Option<&str> {
        typing::held_by(&self.holds, path, me, millis(now)).map(|hold| hold.name.as_str())
    }

    /// The fields others are typing in now.
    pub fn holds(&mut self, now: f64) -> Vec<Hold> {
        self.holds.retain(|hold| hold.until > millis(now));
        self.holds.clone()
    }

    /// Takes this browser's typing in fields someone else holds out of
    /// `pending`, each as a notice keeping it whole for this person.
    fn withdraw_held(&self, pending: &mut Vec<Edit>, me: &str, now: f64) -> Vec<Notice> {
        let mut notices = Vec::new();
        pending.retain(|edit| {
            let held = typing::is_typing(edit)
                .then(|| typing::held_by(&self.holds, edit.path(), me, millis(now)))
                .flatten();
            let (Some(hold), Edit::Set { path, after, .. }) = (held, edit) else {
                return true;
            };
            notices.push(Notice::Held {
                path: path.clone(),
                by: hold.name.clone(),
                mine: after
                    .clone()
                    .unwrap_or_else(|| Value::String(String::new())),
            });
            false
        });
        notices
    }

    /// The change did not reach the server or was refused: it is sent
    /// again with the next one.
    pub fn failed(&mut self) {
        self.sending = Sending::Nothing;
    }

    /// Whether the room has brought everything this browser sent.
    pub fn caught_up(&self) -> bool {
        match self.sending {
            Sending::Nothing => true,
            Sending::OnItsWay => false,
            Sending::Answered(revision) => revision <= self.revision,
        }
    }

    fn remember_written(&mut self, edits: &[Edit], now: f64) {
        self.written
            .retain(|(_, _, at)| now - *at < WRITTEN_KEPT_MILLIS);
        for edit in edits {
            if let Edit::Set {
                path,
                after: Some(value),
                ..
            } = edit
            {
                self.written.retain(|(written, _, _)| written != path);
                self.written.push((path.clone(), value.clone(), now));
            }
        }
    }

    /// A change from the room, at `now`. `None` when it does not follow
    /// the revision this browser has (the document is needed).
    pub fn received(
        &mut self,
        change: &Change,
        local: &Value,
        me: &str,
        now: f64,
    ) -> Option<Rebased> {
        if change.revision <= self.revision {
            return Some(Rebased::default());
        }
        if change.previous != self.revision {
            return None;
        }
        let mut pending = edits::diff(&self.confirmed, local);
        edits::apply(&mut self.confirmed, &change.edits);
        self.revision = change.revision;
        edits::transform(&mut pending, &change.edits);
        let mut withdrawn = Vec::new();
        if change.author != me {
            for edit in change.edits.iter().filter(|edit| typing::is_typing(edit)) {
                typing::take(
                    &mut self.holds,
                    Hold {
                        path: edit.path().clone(),
                        connection: change.author.clone(),
                        name: change.author_name.clone(),
                        until: millis(now) + typing::HOLD_MILLIS,
                    },
                );
            }
            withdrawn = self.withdraw_held(&mut pending, me, now);
        }
        let mut rebased = self.rebase(pending, local);
        if change.author != me {
            let mut notices = withdrawn;
            notices.extend(self.replaced_notices(change));
            rebased.notices.splice(0..0, notices);
        }
        touched(&change.edits, &mut rebased);
        Some(rebased)
    }

    /// The whole document from the room (after being away too long).
    pub fn document(&mut self, document: Value, revision: i64, local: &Value) -> Rebased {
        let pending = edits::diff(&self.confirmed, local);
        let arrived = edits::diff(&self.confirmed, &document);
        self.confirmed = document;
        self.revision = revision;
        self.sending = Sending::Nothing;
        let mut rebased = self.rebase(pending, local);
        touched(&arrived, &mut rebased);
        rebased
    }

    /// This browser's edits not yet in `confirmed`, applied to it again.
    fn rebase(&mut self, pending: Vec<Edit>, local: &Value) -> Rebased {
        let mut document = self.confirmed.clone();
        let mut applied = edits::apply(&mut document, &pending);
        edits::drop_dangling_cables(&mut document, &mut applied);
        for replaced in &applied.replaced {
            let made_on = pending.iter().find_map(|edit| match edit {
                Edit::Set { path, before, .. } if *path == replaced.path => Some(before.clone()),
                _ => None,
            });
            if let Some(made_on) = made_on
                && !self.contested.iter().any(|(at, _)| *at == replaced.path)
            {
                self.contested.push((replaced.path.clone(), made_on));
            }
        }
        let mut rebased = Rebased {
            notices: applied
                .not_applied
                .iter()
                .filter(|not_applied| not_applied.why == Unapplied::Gone)
                .cloned()
                .map(Notice::NotApplied)
                .collect(),
            ..Rebased::default()
        };
        // The page shows these edits already; what it must draw again is
        // what could not stay: an edit of something gone, a cable to a
        // module deleted meanwhile.
        let undone: Vec<Edit> = applied
            .not_applied
            .iter()
            .map(|not_applied| not_applied.edit.clone())
            .chain(
                applied
                    .edits
                    .iter()
                    .filter(|edit| matches!(edit, Edit::Set { after: None, .. }))
                    .cloned(),
            )
            .collect();
        touched(&undone, &mut rebased);
        if document != *local {
            rebased.document = Some(document);
        }
        rebased
    }

    /// What of this person's the change replaced.
    fn replaced_notices(&self, change: &Change) -> Vec<Notice> {
        change
            .replaced
            .iter()
            .filter_map(|replaced| {
                let (_, mine, _) = self.written.iter().find(|(path, value, _)| {
                    *path == replaced.path && replaced.value.as_ref() == Some(value)
                })?;
                let theirs = change.edits.iter().find_map(|edit| match edit {
                    Edit::Set { path, after, .. } if *path == replaced.path => Some(after.clone()),
                    _ => None,
                });
                Some(Notice::Replaced {
                    path: replaced.path.clone(),
                    by: change.author_name.clone(),
                    mine: mine.clone(),
                    theirs: theirs.flatten(),
                })
            })
            .collect()
    }
}

/// The holder of a field the server said was held: someone other than
/// this connection (no connection id reads so).
const SOMEONE_ELSE: &str = "someone else";

/// The browser's clock (milliseconds, fractional) as the holds count it.
fn millis(now: f64) -> i64 {
    // Whole milliseconds since the epoch fit an i64 for ages to come.
    now as i64
}

/// The modules and cables `edits` touch, added to `rebased`'s.
fn touched(edits: &[Edit], rebased: &mut Rebased) {
    use graph::edits::Step;
    for edit in edits {
        if let [Step::Field(list), Step::Id(id), ..] = edit.path().as_slice() {
            let ids = match list.as_str() {
                "modules" => &mut rebased.modules,
                "cables" => &mut rebased.cables,
                _ => continue,
            };
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        // A reorder of the modules or cables themselves: every one of them.
        if let (Edit::Order { order, .. }, [Step::Field(list)]) = (edit, edit.path().as_slice()) {
            let ids = match list.as_str() {
                "modules" => &mut rebased.modules,
                "cables" => &mut rebased.cables,
                _ => continue,
            };
            for step in order {
                if let Step::Id(id) = step
                    && !ids.contains(id)
                {
                    ids.push(id.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use graph::edits::Step;
    use serde_json::json;

    use super::*;

    fn document() -> Value {
        json!({
            "name": "Essay",
            "modules": [
                {"id": "m1", "label": "Topic", "position": {"x": 0.0, "y": 0.0}},
                {"id": "m2", "label": "Draft", "position": {"x": 200.0, "y": 0.0},
                 "config": {"instruction": "Write.", "reprompts": ["Shorter.", "Warmer."]}}
            ],
            "cables": [{"id": "c1", "from": {"module": "m1"}, "to": {"module": "m2"}}]
        })
    }

    /// A change of the room, made by `author` on `previous`.
    fn change(previous: i64, author: &str, before: &Value, after: &Value) -> Change {
        let mut confirmed = before.clone();
        let applied = edits::apply(&mut confirmed, &edits::diff(before, after));
        Change {
            revision: previous + 1,
            previous,
            author: author.to_owned(),
            author_name: format!("{author}'s name"),
            edits: applied.edits,
            replaced: applied.replaced,
        }
    }

    #[test]
    fn an_edit_is_sent_once_and_its_return_changes_nothing_on_the_page() {
        let mut sync = Sync::new(document(), 1);
        let mut local = document();
        local["modules"][0]["label"] = json!("Subject");
        let outgoing = sync.outgoing(&local, 0.0).unwrap();
        assert_eq!(outgoing.base, 1);
        // Nothing more goes while it is on its way, or answered but not
        // yet back through the room.
        assert_eq!(sync.outgoing(&local, 1.0), None);
        sync.answered(2, &[], &local, 0.0);
        assert_eq!(sync.outgoing(&local, 2.0), None);
        assert!(!sync.caught_up());
        let mine = Change {
            revision: 2,
            previous: 1,
            author: "me".into(),
            author_name: "Ana".into(),
            edits: outgoing.edits,
            replaced: Vec::new(),
        };
        let rebased = sync.received(&mine, &local, "me", 0.0).unwrap();
        assert_eq!(rebased.document, None);
        assert!(sync.caught_up());
        assert_eq!(sync.outgoing(&local, 3.0), None);
        assert!(!sync.has_unsent(&local));
    }

    #[test]
    fn edits_the_server_takes_without_a_new_revision_are_not_sent_again_and_again() {
        // The server reads a cleared timeout as the kind's default, so the
        // room brings the clearing while the page reads the default back.
        let mut sync = Sync::new(document(), 1);
        let mut local = document();
        local["modules"][1]["config"]["timeout_seconds"] = json!(259_200);
        assert!(sync.outgoing(&local, 0.0).is_some());
        // Answered with the revision it already had: nothing was stored,
        // and the same edits are not sent again.
        sync.answered(1, &[], &local, 0.0);
        assert_eq!(sync.outgoing(&local, 1.0), None);
        assert!(sync.caught_up());
        assert!(!sync.has_unsent(&local));
        // A new edit still goes.
        local["modules"][0]["label"] = json!("Subject");
        assert!(sync.outgoing(&local, 3.0).is_some());
    }

    #[test]
    fn someone_elses_change_arrives_under_edits_not_yet_sent() {
        let mut sync = Sync::new(document(), 1);
        let mut local = document();
        local["modules"][0]["label"] = json!("Subject");
        let mut theirs = document();
        theirs["modules"][1]["position"]["x"] = json!(300.0);
        let rebased = sync
            .received(&change(1, "ben", &document(), &theirs), &local, "me", 0.0)
            .unwrap();
        let page = rebased.document.unwrap();
        assert_eq!(page["modules"][0]["label"], "Subject");
        assert_eq!(page["modules"][1]["position"]["x"], 300.0);
        assert_eq!(rebased.modules, ["m2"]);
        // What is still to send is this browser's edit alone, on revision 2.
        let outgoing = sync.outgoing(&page, 0.0).unwrap();
        assert_eq!(outgoing.base, 2);
        assert_eq!(outgoing.edits.len(), 1);
        // A change that skips a revision asks for the document.
        let mut later = change(3, "ben", &document(), &theirs);
        later.previous = 5;
        assert_eq!(sync.received(&later, &page, "me", 0.0), None);
    }

    #[test]
    fn whose_text_another_edit_replaced_is_told_with_their_text_and_what_replaced_it() {
        let mut sync = Sync::new(document(), 1);
        let mut local = document();
        local["modules"][1]["config"]["instruction"] = json!("Ana's");
        let outgoing = sync.outgoing(&local, 0.0).unwrap();
        let mut server = document();
        let mine = edits::apply(&mut server, &outgoing.edits);
        let anas = Change {
            revision: 2,
            previous: 1,
            author: "me".into(),
            author_name: "Ana".into(),
            edits: mine.edits,
            replaced: Vec::new(),
        };
        sync.received(&anas, &local, "me", 0.0);
        // Ben, who had not seen it, typed his own; the server keeps his.
        let mut bens = document();
        bens["modules"][1]["config"]["instruction"] = json!("Ben's");
        let mut his = edits::apply(&mut server, &edits::diff(&document(), &bens));
        assert_eq!(his.replaced.len(), 1);
        let change = Change {
            revision: 3,
            previous: 2,
            author: "ben".into(),
            author_name: "Ben".into(),
            edits: std::mem::take(&mut his.edits),
            replaced: his.replaced,
        };
        let rebased = sync.received(&change, &local, "me", 0.0).unwrap();
        assert_eq!(
            rebased.document.unwrap()["modules"][1]["config"]["instruction"],
            "Ben's"
        );
        assert_eq!(
            rebased.notices,
            [Notice::Replaced {
                path: vec![
                    Step::Field("modules".into()),
                    Step::Id("m2".into()),
                    Step::Field("config".into()),
                    Step::Field("instruction".into())
                ],
                by: "Ben".into(),
                mine: json!("Ana's"),
                theirs: Some(json!("Ben's")),
            }]
        );
    }

    #[test]
    fn an_edit_not_yet_sent_that_overrides_anothers_still_says_what_it_was_made_on() {
        // A value that is not typed (a number): the later writer's stays.
        let temperature = || {
            vec![
                Step::Field("modules".into()),
                Step::Id("m2".into()),
                Step::Field("config".into()),
                Step::Field("temperature".into()),
            ]
        };
        let mut sync = Sync::new(document(), 1);
        let mut local = document();
        local["modules"][1]["config"]["temperature"] = json!(0.9);
        let mut anas = document();
        anas["modules"][1]["config"]["temperature"] = json!(0.1);
        let rebased = sync
            .received(&change(1, "ana", &document(), &anas), &local, "me", 0.0)
            .unwrap();
        // The page keeps Ben's (he is the later writer)…
        let page = rebased.document.unwrap_or(local);
        assert_eq!(page["modules"][1]["config"]["temperature"], 0.9);
        // …and his change says it was made on the original, so the server
        // tells Ana that his replaced hers: sent again after a failure too.
        let _ = sync.outgoing(&page, 0.0).unwrap();
        sync.failed();
        let outgoing = sync.outgoing(&page, 1.0).unwrap();
        assert_eq!(
            outgoing.edits,
            [Edit::Set {
                path: temperature(),
                before: None,
                after: Some(json!(0.9)),
            }]
        );
    }

    fn instruction() -> Path {
        vec![
            Step::Field("modules".into()),
            Step::Id("m2".into()),
            Step::Field("config".into()),
            Step::Field("instruction".into()),
        ]
    }

    #[test]
    fn typing_where_someone_else_types_is_taken_out_whole_and_kept_for_its_typist() {
        let mut sync = Sync::new(document(), 1);
        // Ben typed into the instruction; Ana's typing there reached the
        // server first.
        let mut local = document();
        local["modules"][1]["config"]["instruction"] = json!("Write. BBBB");
        local["modules"][0]["label"] = json!("Subject");
        let mut anas = document();
        anas["modules"][1]["config"]["instruction"] = json!("Write. A");
        let rebased = sync
            .received(
                &change(1, "ana", &document(), &anas),
                &local,
                "ben",
                1_000.0,
            )
            .unwrap();
        let page = rebased.document.unwrap();
        // Ana's text, untouched by Ben's; Ben's other edit stays.
        assert_eq!(page["modules"][1]["config"]["instruction"], "Write. A");
        assert_eq!(page["modules"][0]["label"], "Subject");
        assert_eq!(
            rebased.notices,
            [Notice::Held {
                path: instruction(),
                by: "ana's name".into(),
                mine: json!("Write. BBBB"),
            }]
        );
        assert_eq!(
            sync.held_by(&instruction(), "ben", 2_000.0),
            Some("ana's name")
        );
        // Only the label goes to the server.
        let outgoing = sync.outgoing(&page, 1_001.0).unwrap();
        assert_eq!(outgoing.edits.len(), 1);
        // Ana goes on typing: nothing more of Ben's to take out.
        let mut more = anas.clone();
        more["modules"][1]["config"]["instruction"] = json!("Write. AA");
        let rebased = sync
            .received(&change(2, "ana", &anas, &more), &page, "ben", 1_100.0)
            .unwrap();
        assert!(rebased.notices.is_empty());
        // Two seconds after her last key, the field is free.
        assert_eq!(
            sync.held_by(&instruction(), "ben", 3_099.0),
            Some("ana's name")
        );
        assert_eq!(sync.held_by(&instruction(), "ben", 3_100.0), None);
        assert!(sync.holds(3_100.0).is_empty());
    }

    #[test]
    fn typing_the_server_held_back_is_taken_out_of_the_page_and_not_sent_again() {
        let mut sync = Sync::new(document(), 1);
        let mut local = document();
        local["modules"][1]["config"]["instruction"] = json!("Write. B");
        let outgoing = sync.outgoing(&local, 0.0).unwrap();
        // Ben typed on: the page has more than was sent.
        local["modules"][1]["config"]["instruction"] = json!("Write. BBB");
        let refused = NotApplied {
            edit: outgoing.edits[0].clone(),
            why: Unapplied::Held,
            by: Some("Ana".into()),
        };
        let rebased = sync.answered(1, &[refused], &local, 10.0).unwrap();
        let page = rebased.document.unwrap();
        assert_eq!(page["modules"][1]["config"]["instruction"], "Write.");
        // All he had typed, not what the refused change carried.
        assert_eq!(
            rebased.notices,
            [Notice::Held {
                path: instruction(),
                by: "Ana".into(),
                mine: json!("Write. BBB"),
            }]
        );
        assert_eq!(sync.outgoing(&page, 11.0), None);
        assert!(sync.caught_up());
        assert!(!sync.has_unsent(&page));
    }

    #[test]
    fn an_edit_of_a_module_someone_deleted_is_told_not_lost_silently() {
        let mut sync = Sync::new(document(), 1);
        let mut local = document();
        local["modules"][1]["label"] = json!("Essay");
        let mut theirs = document();
        let _ = theirs["modules"]
            .as_array_mut()
            .map(|modules| modules.remove(1));
        let _ = theirs["cables"].as_array_mut().map(Vec::clear);
        let rebased = sync
            .received(&change(1, "ben", &document(), &theirs), &local, "me", 0.0)
            .unwrap();
        assert_eq!(rebased.document.unwrap(), theirs);
        assert!(matches!(
            rebased.notices.as_slice(),
            [Notice::NotApplied(NotApplied {
                why: Unapplied::Gone,
                ..
            })]
        ));
    }

    #[test]
    fn a_browser_back_from_away_keeps_its_edits_on_the_document_it_gets() {
        let mut sync = Sync::new(document(), 1);
        let mut local = document();
        local["modules"][0]["position"]["y"] = json!(80.0);
        let _ = sync.outgoing(&local, 0.0);
        sync.failed();
        let mut now = document();
        now["name"] = json!("Renamed meanwhile");
        let rebased = sync.document(now, 9, &local);
        let page = rebased.document.unwrap();
        assert_eq!(
            (
                page["name"].as_str(),
                page["modules"][0]["position"]["y"].as_f64()
            ),
            (Some("Renamed meanwhile"), Some(80.0))
        );
        assert_eq!(
            sync.outgoing(&page, 1.0).map(|outgoing| outgoing.base),
            Some(9)
        );
    }
}
