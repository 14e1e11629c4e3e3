//! What editing together shows: the list of who is here in the toolbar
//! (your own entry sets your name and colour), the others' pointers and
//! selections on the canvas, and notices of others' edits that replaced
//! yours or of yours that could not apply, with one click to take yours
//! back.

use graph::edits::{Path, Step};
use leptos::prelude::*;
use serde_json::Value;
use wire::room::{Person, Role};

use super::sync::Notice;
use super::{Identity, set_identity};
use crate::canvas::peers::{PeerMark, PeerMarks};
use crate::editor::state::EditorState;

/// The others as the canvas draws them.
pub fn provide_peer_marks(editor: EditorState) {
    let marks = Memo::new(move |_| {
        let me = editor.together.connection();
        editor.together.people.with(|people| {
            people
                .iter()
                .filter(|person| Some(&person.connection) != me.as_ref())
                .map(|person| PeerMark {
                    name: person.name.clone(),
                    colour: person.colour.clone(),
                    pointer: person.pointer,
                    modules: person.selection.clone(),
                })
                .collect::<Vec<_>>()
        })
    });
    provide_context(PeerMarks {
        marks: marks.into(),
        draw: RwSignal::new(None),
    });
}

/// "People here": one entry per person, you included.
#[component]
pub fn PeopleHere() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let together = editor.together;
    // Someone else is here: their marks on the canvas are drawn with this
    // part's code.
    if let Some(peers) = use_context::<PeerMarks>() {
        peers.draw.set(Some(crate::canvas::peers::draw));
    }
    let renaming = RwSignal::new(false);
    view! {
        <Show when=move || together.people.with(|people| !people.is_empty())>
            <ul class="people-here" aria-label="People here">
                <For
                    each=move || together.people.get()
                    key=|person| format!("{}|{}|{}|{:?}|{:?}", person.connection, person.name, person.colour, person.role, person.editing)
                    let:person
                >
                    <PersonEntry person renaming/>
                </For>
            </ul>
        </Show>
    }
}

#[component]
fn PersonEntry(person: Person, renaming: RwSignal<bool>) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let mine = editor.together.connection().as_deref() == Some(person.connection.as_str());
    let editing = person
        .editing
        .as_deref()
        .map(|module| editor.module_label(module))
        .filter(|label| !label.is_empty());
    let mut words = person.name.clone();
    if mine {
        words.push_str(" (you)");
    }
    // What they do, after the name: it gives way first when the toolbar is
    // narrow (the whole is the entry's title).
    let mut detail = String::new();
    if person.role == Role::Viewer {
        detail.push_str(" · viewing");
    }
    if let Some(label) = &editing {
        detail.push_str(&format!(" · editing {label}"));
    }
    let title = format!("{words}{detail}");
    let dot = format!("background: {}", person.colour);
    let name = person.name.clone();
    let colour = person.colour.clone();
    if !mine {
        return view! {
            <li class="person" title=title>
                <span class="person-dot" style=dot aria-hidden="true"></span>
                <span class="person-name">{words}</span>
                <span class="person-detail">{detail}</span>
            </li>
        }
        .into_any();
    }
    let words = format!("{words}{detail}");
    view! {
        <li class="person me" title=title>
            <span class="person-dot" style=dot aria-hidden="true"></span>
            <Show
                when=move || renaming.get()
                fallback=move || {
                    let words = words.clone();
                    view! {
                        <button type="button" class="person-name" title="Set your name and colour, as the others see them" on:click=move |_| renaming.set(true)>{words}</button>
                    }
                }
            >
                <IdentityForm name=name.clone() colour=colour.clone() renaming/>
            </Show>
        </li>
    }
    .into_any()
}

#[component]
fn IdentityForm(name: String, colour: String, renaming: RwSignal<bool>) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let name_field = NodeRef::<leptos::html::Input>::new();
    let colour_field = NodeRef::<leptos::html::Input>::new();
    let save = move || {
        let name = name_field
            .get_untracked()
            .map(|field| field.value())
            .unwrap_or_default();
        let colour = colour_field
            .get_untracked()
            .map(|field| field.value())
            .unwrap_or_default();
        set_identity(
            editor,
            Identity {
                name: name.trim().to_owned(),
                colour,
            },
        );
        renaming.set(false);
    };
    Effect::new(move |_| {
        if let Some(field) = name_field.get() {
            let _ = field.focus();
            field.select();
        }
    });
    view! {
        <form class="identity" on:submit=move |event| { event.prevent_default(); save(); }>
            <input node_ref=name_field aria-label="Your name" maxlength="40" value=name
                on:keydown=move |event: web_sys::KeyboardEvent| if event.key() == "Escape" { event.stop_propagation(); renaming.set(false); }/>
            <input node_ref=colour_field type="color" aria-label="Your colour" value=colour/>
            <button type="submit">"Set"</button>
        </form>
    }
}

/// A path as a person reads it: "Draft › instruction".
pub fn path_words(editor: EditorState, path: &Path) -> String {
    let mut words = Vec::new();
    for step in path {
        match step {
            Step::Field(name) if name == "modules" || name == "cables" || name == "config" => {}
            Step::Field(name) => words.push(name.replace('_', " ")),
            Step::Id(id) => {
                let label = editor.module_label(id);
                words.push(if label.is_empty() {
                    id.clone()
                } else {
                    format!("“{label}”")
                });
            }
            Step::Index(place) => words.push(format!("#{}", place + 1)),
        }
    }
    if words.is_empty() {
        "the graph".to_owned()
    } else {
        words.join(" › ")
    }
}

fn shown(value: Option<&Value>) -> String {
    match value {
        None => "(nothing)".to_owned(),
        Some(Value::String(text)) => format!("“{text}”"),
        Some(other) => other.to_string(),
    }
}

/// What the person should know about others' changes.
#[component]
pub fn TogetherNotices() -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let together = editor.together;
    view! {
        <div class="together-notices" role="status" aria-live="polite">
            <For each=move || together.notices.get() key=|(serial, _)| *serial let:entry>
                <TogetherNotice serial=entry.0 notice=entry.1/>
            </For>
        </div>
    }
}

#[component]
fn TogetherNotice(serial: u64, notice: Notice) -> impl IntoView {
    let editor = expect_context::<EditorState>();
    let dismiss = move |_| editor.together.dismiss(serial);
    match notice {
        Notice::Replaced {
            path,
            by,
            mine,
            theirs,
        } => {
            let text = format!(
                "{by} changed {} at the same time as you, and theirs is kept: {}. Yours: {}",
                path_words(editor, &path),
                shown(theirs.as_ref()),
                shown(Some(&mine))
            );
            let take_back = move |_| {
                editor.take_back(&path, mine.clone());
                editor.together.dismiss(serial);
            };
            view! {
                <div class="notice together-notice">
                    <p>{text}</p>
                    <button type="button" class="primary" on:click=take_back>"Take yours back"</button>
                    <button type="button" on:click=dismiss>"Keep theirs"</button>
                </div>
            }
            .into_any()
        }
        Notice::Held { path, by, mine } => {
            let text = format!(
                "{by} was typing in {} when you typed there too, so the field stayed theirs. What you had typed is kept here: {}",
                path_words(editor, &path),
                shown(Some(&mine))
            );
            let held = {
                let path = path.clone();
                Signal::derive(move || editor.together.holder_of(&path).is_some())
            };
            let take_back = move |_| {
                editor.take_back(&path, mine.clone());
                editor.together.dismiss(serial);
            };
            let waiting = format!("Free once {by} pauses");
            view! {
                <div class="notice together-notice">
                    <p>{text}</p>
                    <button
                        type="button"
                        class="primary"
                        disabled=move || held.get()
                        title=move || if held.get() { waiting.clone() } else { String::new() }
                        on:click=take_back
                    >"Take yours back"</button>
                    <button type="button" on:click=dismiss>"Keep theirs"</button>
                </div>
            }
            .into_any()
        }
        Notice::NotApplied(not_applied) => {
            let (path, value) = match &not_applied.edit {
                graph::edits::Edit::Set { path, after, .. } => (path.clone(), after.clone()),
                graph::edits::Edit::Order { path, .. } => (path.clone(), None),
            };
            let text = format!(
                "Your change of {} could not be made: someone deleted what it was in meanwhile. What you had: {}",
                path_words(editor, &path),
                shown(value.as_ref())
            );
            view! {
                <div class="notice together-notice">
                    <p>{text}</p>
                    <button type="button" on:click=dismiss>"Dismiss"</button>
                </div>
            }
            .into_any()
        }
    }
}
