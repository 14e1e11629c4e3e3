//! Editing together in the browser (PRODUCT §3.16): the graph's room
//! stream, this browser's edits sent as changes, everyone else's applied to
//! the canvas as they come, and who is here. What to send and what the page
//! becomes is decided by the plain value in `sync`; this shell carries it
//! out. `view` draws who is here, the others' pointers and selections, and
//! what the person must be told.

pub mod pacing;
pub mod sync;
pub mod view;

use std::time::Duration;

use graph::Graph;
use leptos::prelude::*;
use serde_json::Value;
use wire::room::{Change, ChangeRequest, Person, PresenceUpdate, RoomEvent};
use wire::room::{DocumentNow, Hello, Left, PeopleHere, PersonNow};

use super::save::SaveStatus;
use super::state::{EditorMode, EditorState, now_ms};
use crate::api::{self, ApiError};
use crate::browser;
use sync::{Notice, Rebased, Sync};

/// While others are here, edits go out at most this often (a drag is seen
/// moving); alone, after the pause autosave always waited.
const WITH_OTHERS: Duration = Duration::from_millis(50);
/// Where the pointer is goes out at most this often.
const PRESENCE_EVERY: Duration = Duration::from_millis(50);
/// How often a browser says it is still here (the server forgets it after
/// three times this).
const HEARTBEAT: Duration = Duration::from_secs(15);
/// A stream the browser gave up on is opened again after this.
const REOPEN_AFTER: Duration = Duration::from_secs(3);

/// A text someone else is typing in, as this page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldText {
    pub path: graph::edits::Path,
    /// What it reads on this page.
    pub text: String,
    /// Who is typing there.
    pub by: String,
}

/// This browser's connection to the room.
#[derive(Clone, Debug, PartialEq)]
struct Me {
    connection: String,
    secret: String,
}

/// How this person shows to others, kept in this browser.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Identity {
    pub name: String,
    pub colour: String,
}

const IDENTITY_KEY: &str = "patchbay.identity";

#[derive(Clone, Copy)]
pub struct Together {
    /// Everyone here, this browser included, in the order they came.
    pub people: RwSignal<Vec<Person>>,
    pub identity: RwSignal<Identity>,
    /// What this person should know about others' changes.
    pub notices: RwSignal<Vec<(u64, Notice)>>,
    /// The fields others are typing in now (`graph::typing`), with what
    /// they read: the panel shows them as held.
    pub held: RwSignal<Vec<HeldText>>,
    held_timer: StoredValue<Option<browser::Timer>>,
    me: StoredValue<Option<Me>>,
    /// The document and revision this page joined with, until the room's
    /// part makes them what `sync` starts from: taken at once (before a
    /// draft is restored on it, so the draft's edits are this page's to
    /// send), written as JSON only in that part.
    start: StoredValue<Option<(Graph, i64)>>,
    /// How this page tells the others where its person is: set by the
    /// room's part when it opens, before which no one would hear it.
    say: StoredValue<Option<fn(EditorState)>>,
    sync: StoredValue<Option<Sync>>,
    source: StoredValue<Option<send_wrapper::SendWrapper<browser::EventStream>>>,
    send_timer: StoredValue<Option<browser::Timer>>,
    presence_timer: StoredValue<Option<browser::Timer>>,
    presence: StoredValue<pacing::Pacing>,
    heartbeat: StoredValue<Option<browser::Repeat>>,
    /// When the last change was sent (the browser's clock, milliseconds).
    last_sent: StoredValue<f64>,
    /// The stream has been open (a later error is the network, not a start).
    was_connected: StoredValue<bool>,
    /// Where this person's pointer is on the canvas (graph coordinates).
    pub pointer: StoredValue<Option<(f64, f64)>>,
    notice_serial: StoredValue<u64>,
}

impl Together {
    pub fn new() -> Together {
        Together {
            people: RwSignal::new(Vec::new()),
            identity: RwSignal::new(Identity::default()),
            notices: RwSignal::new(Vec::new()),
            held: RwSignal::new(Vec::new()),
            held_timer: StoredValue::new(None),
            me: StoredValue::new(None),
            start: StoredValue::new(None),
            say: StoredValue::new(None),
            sync: StoredValue::new(None),
            source: StoredValue::new(None),
            send_timer: StoredValue::new(None),
            presence_timer: StoredValue::new(None),
            presence: StoredValue::new(pacing::Pacing::default()),
            heartbeat: StoredValue::new(None),
            was_connected: StoredValue::new(false),
            last_sent: StoredValue::new(f64::NEG_INFINITY),
            pointer: StoredValue::new(None),
            notice_serial: StoredValue::new(0),
        }
    }

    /// This browser's connection id, once the room has said it.
    pub fn connection(&self) -> Option<String> {
        self.me
            .with_value(|me| me.as_ref().map(|me| me.connection.clone()))
    }

    /// Whether anyone else has the graph open.
    pub fn others_here(&self) -> bool {
        let me = self.connection();
        self.people.with_untracked(|people| {
            people
                .iter()
                .any(|person| Some(&person.connection) != me.as_ref())
        })
    }

    /// Tells the person; a notice about a field and a person they were
    /// told of already takes the old one's place (one notice each).
    fn tell(&self, notice: Notice) {
        let about = notice
            .about()
            .map(|(path, by)| (path.clone(), by.to_owned()));
        let told = about.as_ref().and_then(|(path, by)| {
            self.notices.with_untracked(|notices| {
                notices
                    .iter()
                    .find(|(_, told)| told.about() == Some((path, by.as_str())))
                    .map(|(serial, _)| *serial)
            })
        });
        if let Some(serial) = told {
            self.notices.update(|notices| {
                if let Some(entry) = notices.iter_mut().find(|(kept, _)| *kept == serial) {
                    entry.1 = notice;
                }
            });
            return;
        }
        let serial = self.notice_serial.get_value() + 1;
        self.notice_serial.set_value(serial);
        self.notices
            .update(|notices| notices.push((serial, notice)));
    }

    /// Who else is typing in the field at `path` now, if anyone.
    pub fn holder_of(&self, path: &graph::edits::Path) -> Option<String> {
        self.held.with(|held| {
            held.iter()
                .find(|text| text.path == *path)
                .map(|text| text.by.clone())
        })
    }

    pub fn dismiss(&self, serial: u64) {
        self.notices
            .update(|notices| notices.retain(|(kept, _)| *kept != serial));
    }
}

impl Default for Together {
    fn default() -> Together {
        Together::new()
    }
}

/// The page's document as the room's edits address it.
fn local_value(editor: EditorState) -> Option<Value> {
    editor.with_graph(Graph::to_value)
}

/// Joins the graph's room (a stored graph's page, in the browser).
pub fn join(editor: EditorState) {
    if editor.mode != EditorMode::Stored {
        return;
    }
    let together = editor.together;
    together.identity.set(stored_identity());
    let revision = i64::try_from(editor.save.revision.get_value()).unwrap_or(0);
    together.start.set_value(Some((editor.graph(), revision)));
    enter_room(editor, true);
}

/// Opens the room's stream (`entering`: and starts saying this person is
/// here). What reads the room's events — others' edits, presence, runs —
/// is a part of its own (`lazy_parts::room`), fetched once the page is
/// interactive: a first load does without it.
fn enter_room(editor: EditorState, entering: bool) {
    leptos::task::spawn_local(async move {
        if super::lazy_parts::room(editor, entering).await.is_err() {
            editor.notify(format!(
                "What others do here cannot be shown, nor this page's edits saved. {}",
                crate::routes::PART_MISSING
            ));
        }
    });
}

/// In the room's part: opens its stream, and on entering starts the
/// heartbeat that says this person is here.
pub(crate) fn open_room(editor: EditorState, entering: bool) {
    let together = editor.together;
    if let Some((document, revision)) = together.start.try_update_value(Option::take).flatten()
        && let Some(document) = document.to_value()
    {
        together.sync.set_value(Some(Sync::new(document, revision)));
    }
    together.say.set_value(Some(say_presence_now));
    open(editor);
    if entering {
        show_waiting_run(editor);
        let heartbeat = browser::every(move || say_presence(editor), HEARTBEAT);
        editor.together.heartbeat.set_value(heartbeat);
    }
}

fn stored_identity() -> Identity {
    browser::local_storage()
        .and_then(|storage| storage.get_item(IDENTITY_KEY).ok().flatten())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Sets how this person shows to others, kept in this browser.
pub fn set_identity(editor: EditorState, identity: Identity) {
    if let (Some(storage), Ok(text)) = (browser::local_storage(), serde_json::to_string(&identity))
    {
        let _ = storage.set_item(IDENTITY_KEY, &text);
    }
    editor.together.identity.set(identity);
    say_presence(editor);
}

/// Opens the room's stream from the revision the page has.
fn open(editor: EditorState) {
    let together = editor.together;
    let since = together
        .sync
        .with_value(|sync| sync.as_ref().map(Sync::revision))
        .unwrap_or(0);
    let address = api::room_address(&editor.graph_id(), since);
    let stream = browser::EventStream::open(
        &address,
        &RoomEvent::NAMES,
        move |name, data| {
            if let Some(event) = RoomEvent::read(name, &data) {
                heard(editor, event);
            }
        },
        move |closed| {
            together.me.set_value(None);
            // Edits not yet sent wait for the stream: said so.
            if local_value(editor).is_some_and(|local| {
                together
                    .sync
                    .with_value(|sync| sync.as_ref().is_some_and(|sync| sync.has_unsent(&local)))
            }) {
                editor.save.status.set(SaveStatus::Offline);
            }
            if closed {
                browser::run_after(move || open(editor), REOPEN_AFTER);
            }
        },
    );
    together
        .source
        .set_value(stream.map(send_wrapper::SendWrapper::new));
}

fn heard(editor: EditorState, event: RoomEvent) {
    let together = editor.together;
    match event {
        RoomEvent::Hello(Hello {
            connection, secret, ..
        }) => {
            together.me.set_value(Some(Me { connection, secret }));
            together.was_connected.set_value(true);
            say_presence(editor);
            // Edits made while away (or a draft restored) go now.
            send_soon(editor, Duration::ZERO);
        }
        RoomEvent::People(PeopleHere { people }) => together.people.set(people),
        RoomEvent::Person(PersonNow { person }) => {
            let mine = together.connection().as_deref() == Some(person.connection.as_str());
            let before = together
                .people
                .with_untracked(|people| {
                    people
                        .iter()
                        .find(|known| known.connection == person.connection)
                        .map(|known| known.moving.clone())
                })
                .unwrap_or_default();
            if !mine {
                show_moving(editor, &person, &before);
            }
            let new = together.people.try_update(|people| {
                match people
                    .iter_mut()
                    .find(|known| known.connection == person.connection)
                {
                    Some(known) => {
                        *known = person;
                        false
                    }
                    None => {
                        people.push(person);
                        true
                    }
                }
            });
            // Someone new, perhaps served by another process that has not
            // heard of this person yet: said again for them.
            if new == Some(true) {
                say_presence(editor);
            }
        }
        RoomEvent::Left(Left { connection }) => together
            .people
            .update(|people| people.retain(|person| person.connection != connection)),
        RoomEvent::Change(change) => take_change(editor, &change),
        RoomEvent::Run => follow_new_run(editor),
        RoomEvent::Document(DocumentNow { revision, document }) => {
            let Some(local) = local_value(editor) else {
                return;
            };
            let rebased = together
                .sync
                .try_update_value(|sync| {
                    sync.as_mut()
                        .map(|sync| sync.document(document, revision, &local))
                })
                .flatten();
            if let Some(rebased) = rebased {
                show(editor, rebased);
            }
        }
    }
}

/// Someone started a run: an editor's canvas shows the newest run of the
/// graph too (unless it shows it already: this browser started it).
fn follow_new_run(editor: EditorState) {
    if !editor.can_edit.get_untracked() {
        return;
    }
    let graph_id = editor.graph_id();
    leptos::task::spawn_local(async move {
        let Ok(list) = api::runs_of_graph(&graph_id).await else {
            return;
        };
        let Some(newest) = list.runs.iter().max_by_key(|run| run.created_at) else {
            return;
        };
        if editor.run.run_id.get_untracked().as_deref() != Some(newest.id.as_str()) {
            editor.run.follow(editor.model, editor.graph(), &newest.id);
        }
    });
}

/// An editor who opens a graph whose run waits for a person sees that run,
/// its decision open (the home page says "Waiting for you"; a bookmark of
/// the graph must not hide it).
fn show_waiting_run(editor: EditorState) {
    if !editor.can_edit.get_untracked() || editor.run.run_id.get_untracked().is_some() {
        return;
    }
    let graph_id = editor.graph_id();
    leptos::task::spawn_local(async move {
        let Ok(list) = api::runs_of_graph(&graph_id).await else {
            return;
        };
        let waiting = list
            .runs
            .iter()
            .filter(|run| run.status == wire::RunStatus::Waiting)
            .max_by_key(|run| run.created_at);
        if let Some(waiting) = waiting
            && editor.run.run_id.get_untracked().is_none()
        {
            editor.run.follow(editor.model, editor.graph(), &waiting.id);
            crate::run::remember_in_address(Some(&waiting.id));
        }
    });
}

fn take_change(editor: EditorState, change: &Change) {
    let together = editor.together;
    let me = together.connection().unwrap_or_default();
    let Some(local) = local_value(editor) else {
        return;
    };
    let rebased = together
        .sync
        .try_update_value(|sync| {
            sync.as_mut()
                .map(|sync| sync.received(change, &local, &me, now_ms()))
        })
        .flatten();
    match rebased {
        Some(Some(rebased)) => show(editor, rebased),
        // A change was missed: the stream opened again brings it.
        Some(None) => open(editor),
        None => {}
    }
}

/// Shows what a change from the room made of the page's document.
fn show(editor: EditorState, rebased: Rebased) {
    let together = editor.together;
    if let Some(document) = rebased.document {
        match Graph::from_value(document) {
            Ok(graph) => editor.take_remote(graph, &rebased.modules, &rebased.cables),
            Err(error) => editor.notify(format!(
                "A change from someone else could not be shown ({error}); reload the page to see the graph as it is."
            )),
        }
    }
    for notice in rebased.notices {
        together.tell(notice);
    }
    refresh_holds(editor);
    let revision = together
        .sync
        .with_value(|sync| sync.as_ref().map(Sync::revision))
        .unwrap_or(0);
    editor
        .save
        .revision
        .set_value(u64::try_from(revision).unwrap_or(0));
    settle_status(editor);
    send_soon(editor, Duration::ZERO);
}

/// Shows the fields others are typing in now, and again when the first
/// of those holds ends.
fn refresh_holds(editor: EditorState) {
    let together = editor.together;
    let now = now_ms();
    let holds = together
        .sync
        .try_update_value(|sync| sync.as_mut().map(|sync| sync.holds(now)))
        .flatten()
        .unwrap_or_default();
    let next = holds.iter().map(|hold| hold.until).min();
    // What each reads is read here, where the page's document is JSON
    // already: the panel only compares texts.
    let document = if holds.is_empty() {
        None
    } else {
        local_value(editor)
    };
    let held: Vec<HeldText> = holds
        .into_iter()
        .map(|hold| HeldText {
            text: document
                .as_ref()
                .and_then(|document| graph::edits::at(document, &hold.path))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            path: hold.path,
            by: hold.name,
        })
        .collect();
    if together.held.with_untracked(|known| *known != held) {
        together.held.set(held);
    }
    if let Some(timer) = together.held_timer.try_update_value(Option::take).flatten() {
        timer.clear();
    }
    if let Some(until) = next {
        let wait = (until as f64 - now).max(0.0) + 1.0;
        let timer = browser::run_after(
            move || refresh_holds(editor),
            Duration::from_secs_f64(wait / 1000.0),
        );
        together.held_timer.set_value(timer);
    }
}

/// Says "Saved" once the server has everything this page has.
fn settle_status(editor: EditorState) {
    let Some(local) = local_value(editor) else {
        return;
    };
    let settled = editor.together.sync.with_value(|sync| {
        sync.as_ref()
            .is_some_and(|sync| sync.caught_up() && !sync.has_unsent(&local))
    });
    if settled
        && matches!(
            editor.save.status.get_untracked(),
            SaveStatus::Pending | SaveStatus::Saving | SaveStatus::Offline
        )
    {
        editor.save.status.set(SaveStatus::Saved);
        super::save::clear_draft(editor);
    }
}

/// An edit happened: send it soon (at once while others watch, after a
/// pause when alone, as autosave did).
pub fn changed(editor: EditorState, alone_after: Duration) {
    let together = editor.together;
    if together.others_here() {
        // A throttle, not a debounce: a drag is sent as it goes, the first
        // edit at once, the next ones at most every WITH_OTHERS.
        if together.send_timer.with_value(Option::is_none) {
            let since = now_ms() - together.last_sent.get_value();
            let wait = (WITH_OTHERS.as_secs_f64() * 1000.0 - since).max(0.0);
            send_soon(editor, Duration::from_secs_f64(wait / 1000.0));
        }
    } else {
        browser::restart_timeout(editor.together.send_timer, alone_after, move || {
            editor.together.send_timer.set_value(None);
            send(editor);
        });
    }
}

fn send_soon(editor: EditorState, after: Duration) {
    let timer = browser::run_after(
        move || {
            editor.together.send_timer.set_value(None);
            send(editor);
        },
        after,
    );
    if let Some(old) = editor
        .together
        .send_timer
        .try_update_value(|slot| std::mem::replace(slot, timer))
        .flatten()
    {
        old.clear();
    }
}

/// Sends this page's edits the server does not have, if nothing is on its
/// way; with the stream down, they go when it is back (its hello).
pub fn send(editor: EditorState) {
    let together = editor.together;
    let Some(me) = together.me.get_value() else {
        if together.was_connected.get_value() {
            editor.save.status.set(SaveStatus::Offline);
        }
        return;
    };
    if !editor.can_edit.get_untracked()
        || matches!(
            editor.save.status.get_untracked(),
            SaveStatus::Conflict(_) | SaveStatus::ViewOnly
        )
    {
        // Nothing goes until the person has chosen (a draft left on an
        // older revision), or ever (view only).
        return;
    }
    let Some(local) = local_value(editor) else {
        return;
    };
    let outgoing = together
        .sync
        .try_update_value(|sync| {
            sync.as_mut()
                .and_then(|sync| sync.outgoing(&local, now_ms()))
        })
        .flatten();
    let Some(outgoing) = outgoing else {
        settle_status(editor);
        return;
    };
    let request = ChangeRequest {
        connection: me.connection,
        secret: me.secret,
        base: outgoing.base,
        edits: outgoing.edits,
        checkpoint: !together.others_here(),
    };
    editor.save.status.set(SaveStatus::Saving);
    together.last_sent.set_value(now_ms());
    let graph_id = editor.graph_id();
    leptos::task::spawn_local(async move {
        let answer = api::send_changes(&graph_id, &request).await;
        answered(editor, answer);
    });
}

fn answered(editor: EditorState, answer: Result<wire::room::ChangeAccepted, ApiError>) {
    let together = editor.together;
    let fail = || {
        together
            .sync
            .update_value(|sync| sync.iter_mut().for_each(Sync::failed))
    };
    match answer {
        Ok(accepted) => {
            let local = local_value(editor).unwrap_or_default();
            let rebased = together
                .sync
                .try_update_value(|sync| {
                    sync.as_mut().and_then(|sync| {
                        sync.answered(accepted.revision, &accepted.not_applied, &local, now_ms())
                    })
                })
                .flatten();
            for not_applied in accepted.not_applied {
                // Typing held back is told, and kept, by what `answered` made.
                if not_applied.why != graph::edits::Unapplied::Held {
                    together.tell(Notice::NotApplied(not_applied));
                }
            }
            if let Some(rebased) = rebased {
                show(editor, rebased);
            }
            settle_status(editor);
            // The room may have brought this change before its answer came:
            // what was edited meanwhile goes now, not with the next edit.
            send_soon(editor, Duration::ZERO);
        }
        Err(ApiError::Refused { status: 403, error }) => {
            fail();
            let code = error
                .as_ref()
                .map(|error| error.code.clone())
                .unwrap_or_default();
            if code == "room.connection_invalid" {
                // A stream opened again gives a new connection.
                enter_room(editor, false);
            } else {
                editor.save.status.set(SaveStatus::ViewOnly);
                editor.can_edit.set(false);
                editor.notify("The server did not accept this browser's edit token; the graph is view only here.");
            }
        }
        Err(ApiError::Refused { status: 429, .. }) => {
            fail();
            send_soon(editor, Duration::from_millis(500));
        }
        Err(
            refused @ ApiError::Refused {
                status: 400..500, ..
            },
        ) => {
            fail();
            let status = refused.status().unwrap_or_default();
            editor.save.status.set(SaveStatus::Refused(
                refused.message_or(&format!("the server answered {status}")),
            ));
        }
        Err(_) => {
            fail();
            editor.save.status.set(SaveStatus::Offline);
            send_soon(editor, Duration::from_secs(4));
        }
    }
}

/// The modules this person is dragging, where they are now.
fn moving(editor: EditorState) -> Vec<(String, f64, f64)> {
    editor
        .model
        .dragging
        .get_untracked()
        .iter()
        .filter_map(|id| {
            let position = editor.model.node(id)?.position.get_untracked();
            Some((id.to_string(), position.x, position.y))
        })
        .collect()
}

/// Shows the modules someone is dragging where they are now; those they
/// stopped dragging go back to where the graph has them a moment later,
/// unless the change that moved them has come by then.
fn show_moving(editor: EditorState, person: &Person, before: &[(String, f64, f64)]) {
    for (id, x, y) in &person.moving {
        if let Some(node) = editor.model.node(id) {
            node.position.set(graph::Position { x: *x, y: *y });
        }
    }
    let stopped: Vec<String> = before
        .iter()
        .map(|(id, _, _)| id.clone())
        .filter(|id| !person.moving.iter().any(|(moving, _, _)| moving == id))
        .collect();
    if stopped.is_empty() {
        return;
    }
    browser::run_after(
        move || {
            for id in &stopped {
                let (Some(node), Some(position)) = (
                    editor.model.node(id),
                    editor.with_graph(|graph| graph.module(id).map(|module| module.position)),
                ) else {
                    continue;
                };
                if node.position.get_untracked() != position {
                    node.position.set(position);
                }
            }
        },
        Duration::from_millis(1500),
    );
}

/// Says where this person is, once the room's part has opened the room
/// (its code is there: a first load does without it).
pub fn say_presence(editor: EditorState) {
    if let Some(say) = editor.together.say.get_value() {
        say(editor);
    }
}

/// Says where this person is, at most every [`PRESENCE_EVERY`] and one
/// at a time (`pacing.rs`).
fn say_presence_now(editor: EditorState) {
    let together = editor.together;
    let Some(me) = together.me.get_value() else {
        return;
    };
    let Some(number) = together
        .presence
        .try_update_value(|pacing| pacing.news(now_ms()))
        .flatten()
    else {
        return;
    };
    let identity = together.identity.get_untracked();
    let selection = editor.model.selected_ids();
    let update = PresenceUpdate {
        connection: me.connection,
        secret: me.secret,
        name: identity.name,
        colour: identity.colour,
        pointer: together.pointer.get_value(),
        editing: editor.selected.get_untracked(),
        selection,
        moving: moving(editor),
    };
    let graph_id = editor.graph_id();
    leptos::task::spawn_local(async move {
        // Lost presence is said again with the next move or heartbeat.
        let _ = api::say_presence(&graph_id, &update).await;
        if together
            .presence
            .try_update_value(|pacing| pacing.answered(number))
            .unwrap_or(false)
        {
            say_presence_now(editor);
        }
    });
    let timer = browser::run_after(
        move || {
            together.presence_timer.set_value(None);
            if together
                .presence
                .try_update_value(pacing::Pacing::rested)
                .unwrap_or(false)
            {
                say_presence_now(editor);
            }
        },
        PRESENCE_EVERY,
    );
    if timer.is_none() {
        // No timer to end the interval: it is over at once.
        together.presence.update_value(|pacing| {
            pacing.rested();
        });
    }
    together.presence_timer.set_value(timer);
}
