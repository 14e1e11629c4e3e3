//! The minimap: every module as a small box, the visible part of the graph
//! as a frame; a click or drag on it moves the view there.

use leptos::prelude::*;

use super::model::{CanvasModel, NodeHandle};
use super::{centre_on, geometry};

const WIDTH: f64 = 200.0;
const HEIGHT: f64 = 130.0;
const PADDING: f64 = 40.0;

/// Graph bounds and the scale that fits them into the minimap.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Frame {
    left: f64,
    top: f64,
    scale: f64,
}

#[component]
fn MiniModule(node: NodeHandle, frame: Memo<Frame>) -> impl IntoView {
    let position = node.position;
    let selected = node.selected;
    let height = geometry::module_height(
        node.inputs.with_untracked(Vec::len),
        node.outputs.with_untracked(Vec::len),
    );
    view! {
        <rect
            class:selected=move || selected.get()
            x=move || { let frame = frame.get(); (position.get().x - frame.left) * frame.scale }
            y=move || { let frame = frame.get(); (position.get().y - frame.top) * frame.scale }
            width=move || geometry::MODULE_OUTER_WIDTH * frame.get().scale
            height=move || height * frame.get().scale
        ></rect>
    }
}

#[component]
pub fn Minimap(model: CanvasModel) -> impl IntoView {
    // Follows the module list; a drag does not rescale the map every frame.
    let frame = Memo::new(move |_| {
        model.nodes.track();
        let (left, top, right, bottom) = model.bounds().unwrap_or((0.0, 0.0, 1.0, 1.0));
        let (left, top) = (left - PADDING, top - PADDING);
        let (width, height) = (right + PADDING - left, bottom + PADDING - top);
        Frame {
            left,
            top,
            scale: (WIDTH / width).min(HEIGHT / height),
        }
    });
    let visible = Memo::new(move |_| {
        let view = model.viewport.get();
        let frame = frame.get();
        let (width, height) = model.pane_size.get();
        let origin = view.to_graph(0.0, 0.0);
        (
            (origin.x - frame.left) * frame.scale,
            (origin.y - frame.top) * frame.scale,
            width / view.zoom * frame.scale,
            height / view.zoom * frame.scale,
        )
    });
    let jump = move |event: web_sys::PointerEvent| {
        event.prevent_default();
        event.stop_propagation();
        let Some(target) = event.current_target() else {
            return;
        };
        let Ok(element) = wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(target) else {
            return;
        };
        let rect = element.get_bounding_client_rect();
        let frame = frame.get_untracked();
        let x = (f64::from(event.client_x()) - rect.left()) / frame.scale + frame.left;
        let y = (f64::from(event.client_y()) - rect.top()) / frame.scale + frame.top;
        centre_on(model, graph::Position { x, y });
    };
    view! {
        <div
            class="minimap"
            data-pane-control=""
            role="img"
            aria-label="Minimap: click to move the view"
            style=format!("width: {WIDTH}px; height: {HEIGHT}px")
            on:pointerdown=jump
            on:pointermove=move |event: web_sys::PointerEvent| {
                if event.buttons() == 1 {
                    jump(event);
                }
            }
        >
            <svg width=WIDTH height=HEIGHT aria-hidden="true">
                <For each=move || model.nodes.get() key=|node| std::sync::Arc::clone(&node.id) let:node>
                    <MiniModule node frame/>
                </For>
            </svg>
            // A box of its own moved by transform: panning repaints neither
            // the map's modules nor the page.
            <div
                class="minimap-view"
                style:transform=move || { let (x, y, _, _) = visible.get(); format!("translate({x:.1}px, {y:.1}px)") }
                style:width=move || format!("{:.1}px", visible.get().2)
                style:height=move || format!("{:.1}px", visible.get().3)
            ></div>
        </div>
    }
}
