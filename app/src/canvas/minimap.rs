//! The minimap: every module as a small box, drawn on one `<canvas>`, the
//! visible part of the graph as a frame; a click or drag on it moves the
//! view there. As an SVG box per module, a drag at 5000 modules repainted
//! 5000 boxes every frame (5 ms of a 16 ms frame); the canvas is drawn again
//! only when the boxes change. Colours are the page's: custom properties of
//! `.minimap canvas` in the stylesheet.

use super::model::CanvasModel;
use super::{centre_on, drawing, geometry};
use leptos::prelude::*;

const WIDTH: f64 = 200.0;
const HEIGHT: f64 = 130.0;
const PADDING: f64 = 40.0;
/// A pane narrower or lower than this gets the map at 60 % (`.minimap-small`):
/// at its full size, beside the side panel and the run panel, it covered
/// modules a person was looking at.
const SMALL_PANE: (f64, f64) = (900.0, 560.0);

/// Whether a pane of this size gets the small map.
fn small_pane((width, height): (f64, f64)) -> bool {
    width < SMALL_PANE.0 || height < SMALL_PANE.1
}

/// Graph bounds and the scale that fits them into the minimap.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Frame {
    left: f64,
    top: f64,
    scale: f64,
}

/// A module's box on the map, in the map's pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
struct MiniBox {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    selected: bool,
}

/// The colours of a box and of a selected one, as the stylesheet gives them.
type Colours = [String; 2];

fn read_colours(canvas: &web_sys::HtmlCanvasElement) -> Option<Colours> {
    drawing::stylesheet_colours(canvas, ["--minimap-module", "--minimap-selected"])
}

/// Draws `boxes` (selected ones on top) at the screen's pixel density.
fn draw(canvas: &web_sys::HtmlCanvasElement, colours: &Colours, boxes: &[MiniBox]) {
    let ratio = web_sys::window().map_or(1.0, |window| window.device_pixel_ratio());
    let (width, height) = (
        (WIDTH * ratio).round() as u32,
        (HEIGHT * ratio).round() as u32,
    );
    if canvas.width() != width || canvas.height() != height {
        canvas.set_width(width);
        canvas.set_height(height);
    }
    let Some(context) = drawing::context(canvas, ratio, (0.0, 0.0)) else {
        return;
    };
    context.clear_rect(0.0, 0.0, WIDTH, HEIGHT);
    for (selected, colour) in [false, true].into_iter().zip(colours) {
        context.set_fill_style_str(colour);
        for mini in boxes.iter().filter(|mini| mini.selected == selected) {
            context.fill_rect(mini.x, mini.y, mini.width, mini.height);
        }
    }
}

#[component]
pub fn Minimap(model: CanvasModel) -> impl IntoView {
    // Follows the module list and `layout` (a drag's end, not its every
    // frame).
    let frame = Memo::new(move |_| {
        model.nodes.track();
        model.layout.track();
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
    // The boxes follow the module list, the selection and `layout` (an
    // edit, an undo, the end of a drag), not each frame of a drag.
    let boxes = Memo::new(move |_| {
        model.layout.track();
        let frame = frame.get();
        model.nodes.with(|nodes| {
            nodes
                .iter()
                .map(|node| {
                    let position = node.position.get_untracked();
                    let height = geometry::module_height(
                        node.inputs.with_untracked(Vec::len),
                        node.outputs.with_untracked(Vec::len),
                    );
                    MiniBox {
                        x: (position.x - frame.left) * frame.scale,
                        y: (position.y - frame.top) * frame.scale,
                        width: geometry::MODULE_OUTER_WIDTH * frame.scale,
                        height: height * frame.scale,
                        selected: node.selected.get(),
                    }
                })
                .collect::<Vec<_>>()
        })
    });
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let colours = StoredValue::new(None::<Colours>);
    Effect::new(move |_| {
        let Some(element) = canvas.get() else {
            return;
        };
        if colours.with_value(Option::is_none) {
            colours.set_value(read_colours(&element));
        }
        colours.with_value(|colours| {
            if let Some(colours) = colours {
                boxes.with(|boxes| draw(&element, colours, boxes));
            }
        });
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
        // Drawn smaller on a small pane: the page's pixels per map pixel.
        let shrink = rect.width() / WIDTH;
        let frame = frame.get_untracked();
        let x = (f64::from(event.client_x()) - rect.left()) / shrink / frame.scale + frame.left;
        let y = (f64::from(event.client_y()) - rect.top()) / shrink / frame.scale + frame.top;
        centre_on(model, graph::Position { x, y });
    };
    view! {
        <div
            class=move || {
                if small_pane(model.pane_size.get()) { "minimap minimap-small" } else { "minimap" }
            }
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
            <canvas
                aria-hidden="true"
                style=format!("width: {WIDTH}px; height: {HEIGHT}px")
                node_ref=canvas
            ></canvas>
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
