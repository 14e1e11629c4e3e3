//! Notes on the canvas (PRODUCT §1.6): each a box of Markdown drawn by
//! `graph::markdown` (the server draws the same markup in the page it
//! sends), under the modules. Where the graph can be edited, a note moves
//! by dragging, resizes from its corner, opens for writing on a
//! double-click or Enter, and from the keyboard, arrows move it and Delete
//! removes it. What a gesture means for the document goes to the owner as
//! a [`NoteEvent`]; a gesture in progress is drawn here only.
//!
//! A view link's first load carries almost none of this: the notes are
//! written with one `innerHTML` (as a module's body is), drawn by the
//! server; reading them, drawing them again and their gestures are a part
//! fetched once they change or can be edited (the pane's and the editor's
//! listeners ask its [`NoteHandlers`] first); writing in a note (its field,
//! colours, removal) is the editor's part.

use graph::Position;
use graph::frame::{LARGEST, SMALLEST, Size};
use graph::notes::Note;
use leptos::prelude::*;

use super::CanvasEvents;
use super::model::CanvasModel;
use super::targets::{closest, element_of};

/// What a person did to a note.
#[derive(Clone, Debug, PartialEq)]
pub enum NoteEvent {
    /// The note is now this: moved, resized, written in or coloured.
    /// `coalesce`: typing in one note is one step to undo.
    Changed {
        note: Note,
        label: &'static str,
        coalesce: Option<String>,
    },
    Removed(String),
    /// A new note wanted here (a double-click on empty canvas).
    Add(Position),
}

/// How far an arrow key moves a note (with Shift, five times as far).
const KEY_STEP: f64 = 10.0;

/// A drag or resize under way: the note as it was, where the pointer was
/// pressed, and the note's element, restyled as the pointer moves (the
/// layer's markup is written again only when the gesture ends).
struct Press {
    note: Note,
    client: (f64, f64),
    resize: bool,
    element: web_sys::HtmlElement,
    /// Where the gesture has taken it so far.
    now: (Position, Size),
}

thread_local! {
    static PRESS: std::cell::RefCell<Option<Press>> = const { std::cell::RefCell::new(None) };
}

/// What handles gestures and keys on notes: the notes' part, once it has
/// arrived where they can be edited (the pane's and the editor's own
/// listeners ask it first). Each says whether the event was a note's.
#[derive(Clone, Copy)]
pub struct NoteHandlers {
    pub down: fn(CanvasModel, &web_sys::PointerEvent) -> bool,
    pub moved: fn(CanvasModel, &web_sys::PointerEvent) -> bool,
    pub up: fn(CanvasEvents) -> bool,
    pub cancel: fn() -> bool,
    pub double_click: fn(CanvasModel, &web_sys::MouseEvent) -> bool,
    pub key: fn(CanvasModel, &web_sys::KeyboardEvent) -> Option<NoteKey>,
}

/// The notes, every one in one write of the layer, as a module's body is
/// written. The page the server sends has them drawn; in the browser
/// they are read and drawn again (a part of their own, with the Markdown
/// renderer) only once they change or can be edited, so a view link's
/// first load carries none of that code.
#[component]
pub fn NoteLayer(model: CanvasModel, editable: Signal<bool>) -> impl IntoView {
    // Where they can be edited, each gets its corner to resize it by.
    Effect::new(move |_| {
        let editable = editable.get();
        let (notes, drawn_editable) = model.notes_drawn.get_value();
        if editable != drawn_editable {
            draw(model, notes, editable);
        }
    });
    // Written as the server drew it; in the browser, written again in
    // place when the notes change (`shown`), never by a reactive attribute
    // a frame later, so that the focus stays on the note a key moved.
    view! {
        <div class="note-layer" node_ref=model.notes_layer inner_html=model.notes_markup.get_untracked()></div>
    }
}

/// Reads the document's `notes` and draws them: at once on the server, in
/// the browser through their part.
pub fn draw(model: CanvasModel, notes: Option<serde_json::Value>, editable: bool) {
    model.notes_drawn.set_value((notes.clone(), editable));
    // No notes: nothing to read, draw or handle, and no part to fetch.
    if notes
        .as_ref()
        .and_then(serde_json::Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        shown(model, (Vec::new(), String::new(), None));
        return;
    }
    #[cfg(not(feature = "hydrate"))]
    shown(model, read_and_draw(notes, editable));
    #[cfg(feature = "hydrate")]
    leptos::task::spawn_local(async move {
        // A part that does not arrive leaves the notes as they were drawn.
        if let Ok(drawn) = notes_part(notes, editable).await {
            shown(model, drawn);
        }
    });
}

fn shown(model: CanvasModel, (notes, markup, handlers): Drawn) {
    model.note_handlers.set_value(handlers);
    super::model::set_if_changed(model.notes, notes);
    // In the browser the layer is written again at once, and a note that
    // had the focus keeps it (the server has no focus, nor a window).
    #[cfg(feature = "hydrate")]
    if let Some(layer) = model.notes_layer.get_untracked()
        && model.notes_markup.with_untracked(|shown| *shown != markup)
    {
        let focused = web_sys::window()
            .and_then(|window| window.document())
            .and_then(|document| document.active_element())
            .and_then(|element| element.get_attribute("data-note-id"));
        layer.set_inner_html(&markup);
        if let Some(id) = focused {
            focus_note(&id);
        }
    }
    super::model::set_if_changed(model.notes_markup, markup);
    model.notes_read();
}

#[cfg(feature = "hydrate")]
#[lazy(fallible)]
fn notes_part(
    notes: Option<serde_json::Value>,
    editable: bool,
) -> Result<Drawn, crate::routes::PartMissing> {
    Ok(read_and_draw(notes, editable))
}

/// The notes a document's `notes` holds, their markup, and where they
/// can be edited, what handles their gestures.
pub type Drawn = (Vec<Note>, String, Option<NoteHandlers>);

pub fn read_and_draw(notes: Option<serde_json::Value>, editable: bool) -> Drawn {
    let notes = notes
        .as_ref()
        .map(graph::notes::drawn_from)
        .unwrap_or_default();
    let mut markup = String::new();
    for note in &notes {
        note_markup(note, editable, &mut markup);
    }
    let handlers = editable.then_some(NoteHandlers {
        down,
        moved,
        up,
        cancel,
        double_click,
        key: key_on_note,
    });
    (notes, markup, handlers)
}

/// A press on a note starts moving or resizing it (not a pan or a box
/// selection of the pane).
fn down(model: CanvasModel, event: &web_sys::PointerEvent) -> bool {
    if event.button() != 0 {
        return false;
    }
    let Some((note, element)) = note_at(model, event) else {
        return false;
    };
    let Ok(element) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(element) else {
        return false;
    };
    let _ = element.set_pointer_capture(event.pointer_id());
    let _ = element.focus();
    let press = Press {
        now: (note.position, note.size),
        note,
        client: (f64::from(event.client_x()), f64::from(event.client_y())),
        resize: super::targets::closest_target(event, ".note-resize"),
        element,
    };
    PRESS.with(|pressed| *pressed.borrow_mut() = Some(press));
    true
}

fn moved(model: CanvasModel, event: &web_sys::PointerEvent) -> bool {
    let zoom = model.viewport.with_untracked(|view| view.zoom);
    PRESS.with(|pressed| {
        let mut pressed = pressed.borrow_mut();
        let Some(gesture) = pressed.as_mut() else {
            return false;
        };
        let dx = (f64::from(event.client_x()) - gesture.client.0) / zoom;
        let dy = (f64::from(event.client_y()) - gesture.client.1) / zoom;
        let Note { position, size, .. } = gesture.note;
        gesture.now = if gesture.resize {
            (position, resized(size, dx, dy))
        } else {
            let at = Position {
                x: (position.x + dx).round(),
                y: (position.y + dy).round(),
            };
            (at, size)
        };
        let (at, size) = gesture.now;
        let _ = gesture
            .element
            .set_attribute("style", &frame_style(at, size));
        true
    })
}

fn up(events: CanvasEvents) -> bool {
    let Some(gesture) = PRESS.with(|pressed| pressed.borrow_mut().take()) else {
        return false;
    };
    let (position, size) = gesture.now;
    let note = gesture.note;
    if position != note.position || size != note.size {
        let label = if gesture.resize {
            "Resize note"
        } else {
            "Move note"
        };
        events.note.run(NoteEvent::Changed {
            note: Note {
                position,
                size,
                ..note
            },
            label,
            coalesce: None,
        });
    }
    true
}

fn cancel() -> bool {
    let Some(gesture) = PRESS.with(|pressed| pressed.borrow_mut().take()) else {
        return false;
    };
    let note = &gesture.note;
    let _ = gesture
        .element
        .set_attribute("style", &frame_style(note.position, note.size));
    true
}

/// A double-click on a note opens it for writing (and adds no note).
fn double_click(model: CanvasModel, event: &web_sys::MouseEvent) -> bool {
    let Some((note, _)) = note_at(model, event) else {
        return false;
    };
    model.editing_note.set(Some(note.id));
    true
}

/// What a key on a focused note asks for: Enter opens it, Delete removes
/// it, the arrows move it (`None`: the key is not a note's).
fn key_on_note(model: CanvasModel, event: &web_sys::KeyboardEvent) -> Option<NoteKey> {
    let on_note =
        element_of(event.target()).is_some_and(|target| target.has_attribute("data-note-id"));
    if !on_note {
        return None;
    }
    let (note, _) = note_at(model, event)?;
    let step = if event.shift_key() {
        5.0 * KEY_STEP
    } else {
        KEY_STEP
    };
    let (dx, dy) = match event.key().as_str() {
        "Enter" => return Some(NoteKey::Open(note.id)),
        "Delete" | "Backspace" => return Some(NoteKey::Edit(NoteEvent::Removed(note.id))),
        "ArrowLeft" => (-step, 0.0),
        "ArrowRight" => (step, 0.0),
        "ArrowUp" => (0.0, -step),
        "ArrowDown" => (0.0, step),
        _ => return None,
    };
    let position = Position {
        x: note.position.x + dx,
        y: note.position.y + dy,
    };
    let coalesce = Some(format!("note:{}:place", note.id));
    Some(NoteKey::Edit(NoteEvent::Changed {
        note: Note { position, ..note },
        label: "Move note",
        coalesce,
    }))
}

/// What a key on a note does.
pub enum NoteKey {
    Open(String),
    Edit(NoteEvent),
}

/// The note an event happened in, as the document has it, and its element.
fn note_at(model: CanvasModel, event: &web_sys::Event) -> Option<(Note, web_sys::Element)> {
    let element =
        element_of(event.target()).and_then(|target| closest(&target, "[data-note-id]"))?;
    let id = element.get_attribute("data-note-id")?;
    let note = model
        .notes
        .with_untracked(|notes| notes.iter().find(|note| note.id == id).cloned())?;
    Some((note, element))
}

fn frame_style(at: Position, size: Size) -> String {
    format!(
        "left:{}px;top:{}px;width:{}px;height:{}px",
        at.x, at.y, size.width, size.height
    )
}

/// One note: its frame, its colour, its name and its markup; with
/// `resize`, the corner to resize it by.
fn note_markup(note: &Note, resize: bool, markup: &mut String) {
    markup.push_str(r#"<div class="note note-"#);
    markup.push_str(note.colour.as_str());
    markup.push_str(r#"" style=""#);
    markup.push_str(&frame_style(note.position, note.size));
    markup.push_str(r#"" data-note-id=""#);
    super::escape(&note.id, markup);
    markup.push_str(r#"" tabindex="0" role="note" aria-label=""#);
    super::escape(&label_of(note), markup);
    markup.push_str(r#"">"#);
    let text = graph::markdown::to_markup(&note.text);
    if text.is_empty() {
        markup.push_str(r#"<p class="note-empty">Empty note</p>"#);
    } else {
        markup.push_str(&text);
    }
    if resize {
        markup.push_str(r#"<div class="note-resize" aria-hidden="true"></div>"#);
    }
    markup.push_str("</div>");
}

/// Gives the note `id` the keyboard focus.
pub fn focus_note(id: &str) {
    // The id in a CSS string: quotes, backslashes and control characters
    // escaped (an id is any text).
    let mut selector = String::from("[data-note-id=\"");
    for character in id.chars() {
        match character {
            '"' | '\\' => {
                selector.push('\\');
                selector.push(character);
            }
            control if control.is_control() => {
                selector.push_str(&format!("\\{:x} ", u32::from(control)));
            }
            other => selector.push(other),
        }
    }
    selector.push_str("\"]");
    let element = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.query_selector(&selector).ok().flatten())
        .and_then(|element| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(element).ok());
    if let Some(element) = element {
        let _ = element.focus();
    }
}

/// What a screen reader calls a note: its first line.
fn label_of(note: &Note) -> String {
    let first = note
        .text
        .lines()
        .map(|line| line.trim_start_matches(['#', ' ', '-', '*', '>']).trim())
        .find(|line| !line.is_empty())
        .unwrap_or("empty");
    format!("Note: {}", super::module_box::fit(first, 60))
}

/// Size after dragging the corner by (`dx`, `dy`), kept within what a note
/// may be.
fn resized(size: Size, dx: f64, dy: f64) -> Size {
    Size {
        width: (size.width + dx)
            .round()
            .clamp(SMALLEST.width, LARGEST.width),
        height: (size.height + dy)
            .round()
            .clamp(SMALLEST.height, LARGEST.height),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_named_by_its_first_line_and_kept_within_its_sizes() {
        let note = Note {
            id: "n".to_owned(),
            text: "\n## Review loop\nmore".to_owned(),
            position: Position::default(),
            size: graph::notes::NEW_NOTE_SIZE,
            colour: graph::frame::Colour::Blue,
        };
        assert_eq!(label_of(&note), "Note: Review loop");
        assert_eq!(
            label_of(&Note {
                text: String::new(),
                ..note.clone()
            }),
            "Note: empty"
        );
        assert_eq!(
            resized(note.size, -1000.0, 30.4),
            Size {
                width: 80.0,
                height: 170.0
            }
        );
    }
}
