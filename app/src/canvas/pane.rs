//! The pane: the viewport the layers are drawn in, panned and zoomed, and
//! every gesture on it. Pointer handling is delegated to the pane, one
//! listener for thousands of modules ([`PointerGestures`]); the wheel zooms
//! ([`WheelZoom`]); space held makes any drag a pan. The zoom controls
//! and the minimap sit over it.

use leptos::children::TypedChildren;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::CanvasEvents;
use super::cable_sketches::SketchedCable;
use super::minimap::Minimap;
use super::model::{self, CanvasModel};
use super::overlays::PaneControls;
use super::pointer::{GestureMarks, PaneOrigin, PointerGestures};
use super::targets::{closest_target, module_of};
use super::typing;
use super::wheel_zoom::WheelZoom;

#[component]
pub fn Pane<Layers>(
    model: CanvasModel,
    editable: Signal<bool>,
    movable: Signal<bool>,
    events: CanvasEvents,
    pane: NodeRef<leptos::html::Div>,
    /// What a gesture in progress shows in the layers.
    marks: GestureMarks,
    /// The cables sketched zoomed out, which a press finds by their curves.
    sketched_cables: Memo<Vec<SketchedCable>>,
    /// What is drawn in the viewport, scaled with it.
    children: TypedChildren<Layers>,
) -> impl IntoView
where
    Layers: IntoView + 'static,
{
    let origin = PaneOrigin::new(pane);
    let pointer = PointerGestures::new(
        model,
        editable,
        movable,
        events,
        origin,
        marks,
        sketched_cables,
    );
    // Gestures on notes, where they can be edited (their part's).
    let notes = move || model.note_handlers.get_value();
    let zoom = WheelZoom::new(model);
    follow_pane_size(model, pane);
    hold_space(pointer.space_held);

    let pane_class = move || {
        let mut class = "pane".to_owned();
        let pending = model
            .pending_from
            .with(|pending| pending.as_ref().map(|(_, _, port_type)| *port_type));
        if let Some(port_type) = pointer.connecting.get().or(pending) {
            class.push_str(" connecting connecting-");
            class.push_str(port_type.as_str());
        }
        if pointer.space_held.get() {
            class.push_str(" grab");
        }
        class
    };
    let on_double_click = move |event: web_sys::MouseEvent| {
        if let Some(id) = module_of(&event) {
            events.open.run(id);
        } else if notes().is_some_and(|notes| (notes.double_click)(model, &event)) {
            // A note, opened for writing.
        } else if editable.get_untracked()
            && !closest_target(&event, "[data-edge-id], [data-pane-control]")
            && let Some(pane) = pane.get_untracked()
        {
            // Empty canvas: a note there.
            let rect = pane.get_bounding_client_rect();
            let at = model.viewport.get_untracked().to_graph(
                f64::from(event.client_x()) - rect.left(),
                f64::from(event.client_y()) - rect.top(),
            );
            events.note.run(super::NoteEvent::Add(at));
        }
    };
    // A module's own menu instead of the browser's.
    let on_context_menu = move |event: web_sys::MouseEvent| {
        if let Some(id) = module_of(&event) {
            event.prevent_default();
            events
                .menu
                .run((id, f64::from(event.client_x()), f64::from(event.client_y())));
        }
    };
    let layers = children.into_inner();

    view! {
        <div
            class=pane_class
            data-bench-pane=""
            // Focusable, so that a click on the canvas takes focus from a
            // field and the canvas's keys act; and reachable with Tab.
            tabindex="0"
            aria-label="Canvas"
            node_ref=pane
            on:pointerdown=move |event: web_sys::PointerEvent| {
                if !notes().is_some_and(|notes| (notes.down)(model, &event)) {
                    pointer.down(event);
                }
            }
            on:pointermove=move |event: web_sys::PointerEvent| {
                if !notes().is_some_and(|notes| (notes.moved)(model, &event)) {
                    pointer.moved(event);
                }
            }
            on:pointerup=move |event: web_sys::PointerEvent| {
                if !notes().is_some_and(|notes| (notes.up)(events)) {
                    pointer.up(event);
                }
            }
            on:pointercancel=move |event: web_sys::PointerEvent| {
                if !notes().is_some_and(|notes| (notes.cancel)()) {
                    pointer.cancel(event);
                }
            }
            on:wheel=move |event: web_sys::WheelEvent| zoom.wheel(event, origin)
            on:dblclick=on_double_click
            on:contextmenu=on_context_menu
        >
            // Pan is a pure 2D translation of the outer element, which
            // Chromium applies on the compositor without re-layerizing the
            // page; zoom scales the inner one.
            <div class="viewport" style:transform=move || model.viewport.with(|view| format!("translate({}px, {}px)", view.x, view.y))>
            <div
                class="viewport-scale"
                class:layered=move || zoom.layered.get()
                style:transform=move || model.viewport.with(|view| format!("scale({})", view.zoom))
            >
                {layers()}
            </div>
            </div>
            <PaneControls model/>
            <Minimap model/>
        </div>
    }
}

/// Keeps the model's pane size, for the minimap, fitting the view and
/// placing new modules. It changes with the window and as side panels open
/// and close.
fn follow_pane_size(model: CanvasModel, pane: NodeRef<leptos::html::Div>) {
    Effect::new(move |_| {
        let Some(element) = pane.get() else { return };
        let measure = move || {
            if let Some(element) = pane.get_untracked() {
                let rect = element.get_bounding_client_rect();
                model::set_if_changed(model.pane_size, (rect.width(), rect.height()));
            }
        };
        measure();
        let callback = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(measure);
        if let Ok(observer) = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()) {
            observer.observe(&element);
            let observer = send_wrapper::SendWrapper::new(observer);
            let callback = send_wrapper::SendWrapper::new(callback);
            on_cleanup(move || {
                observer.disconnect();
                drop(callback);
            });
        }
    });
}

/// Space held: dragging anywhere pans (not while typing in a field).
fn hold_space(space_held: RwSignal<bool>) {
    Effect::new(move |_| {
        let down = window_event_listener(leptos::ev::keydown, move |event| {
            if event.code() == "Space" && !typing(&event) {
                space_held.set(true);
                event.prevent_default();
            }
        });
        let up = window_event_listener(leptos::ev::keyup, move |event| {
            if event.code() == "Space" {
                space_held.set(false);
            }
        });
        on_cleanup(move || {
            down.remove();
            up.remove();
        });
    });
}
