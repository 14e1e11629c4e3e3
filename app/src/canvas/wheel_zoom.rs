//! Zooming with the wheel, and the scaled view as a layer of its own.
//!
//! During a wheel zoom the scaled content is a compositor layer resized
//! as it is (no re-raster per wheel step), and what is in the page stays
//! as it was (nothing mounted per step). Once the zoom settles the layer
//! goes (the content is drawn sharp at its new scale), and what came into
//! view is mounted from the next frame on (both in one frame made a
//! frame of 50 ms at 1000 modules in 5 of 16 zooms; apart, 1 of 16).

use std::time::Duration;

use leptos::prelude::*;

use super::model::{self, CanvasModel};
use super::pointer::PaneOrigin;
use super::targets::closest_target;

/// The wheel's zoom on one pane.
#[derive(Clone, Copy)]
pub struct WheelZoom {
    model: CanvasModel,
    /// A wheel zoom is going on: the drawn view waits for it to settle.
    zooming: RwSignal<bool>,
    settle: StoredValue<Option<crate::browser::Timer>>,
    /// Whether the scaled view is a layer of its own.
    pub layered: Memo<bool>,
}

impl WheelZoom {
    /// Makes the drawn view follow the view, except during a wheel zoom.
    pub fn new(model: CanvasModel) -> WheelZoom {
        let zooming = RwSignal::new(false);
        Effect::new(move |_| {
            let view = model.viewport.get();
            if !zooming.get_untracked() {
                model::set_if_changed(model.drawn_view, view);
            }
        });
        WheelZoom {
            model,
            zooming,
            settle: StoredValue::new(None),
            layered: layered(model, zooming),
        }
    }

    fn settled(self) {
        let WheelZoom { model, zooming, .. } = self;
        crate::browser::restart_timeout(self.settle, Duration::from_millis(200), move || {
            zooming.set(false);
            // Callbacks that may come after the canvas is gone: `try_`.
            crate::browser::next_frame(move || {
                if zooming.try_get_untracked() == Some(false)
                    && let Some(view) = model.viewport.try_get_untracked()
                {
                    model::set_if_changed(model.drawn_view, view);
                }
            });
        });
    }

    pub fn wheel(self, event: web_sys::WheelEvent, origin: PaneOrigin) {
        if closest_target(&event, "[data-pane-control]") {
            return;
        }
        event.prevent_default();
        origin.measure();
        let (x, y) = origin.pane_point(f64::from(event.client_x()), f64::from(event.client_y()));
        // Pixels, or lines (about 16 px), as d3-zoom does it.
        let delta = match event.delta_mode() {
            1 => event.delta_y() * 16.0,
            2 => event.delta_y() * 400.0,
            _ => event.delta_y(),
        };
        let factor = 2f64.powf(-delta * 0.002);
        model::set_if_changed(self.zooming, true);
        self.model
            .viewport
            .update(|view| *view = view.zoomed_at(factor, x, y));
        self.settled();
    }
}

/// Whether the scaled view is a layer of its own: during a wheel zoom, and
/// once the view has been still for a moment at the zoom it has.
///
/// The layer is made again at the new zoom once the view has been still
/// for a moment, so that it is there before the next wheel notch: made
/// at the first notch, its raster held that frame back (33 ms at 5000
/// modules). Any other change of zoom (buttons, keys, fit) drops it too,
/// in the frame the zoom changes, or the old raster would be scaled.
fn layered(model: CanvasModel, zooming: RwSignal<bool>) -> Memo<bool> {
    let layer_zoom = RwSignal::new(model.viewport.get_untracked().zoom);
    let layered = Memo::new(move |_| {
        zooming.get() || model.viewport.with(|view| view.zoom) == layer_zoom.get()
    });
    let still = StoredValue::new(None::<crate::browser::Timer>);
    Effect::new(move |_| {
        // Pans too: the layer waits for the view to be still.
        model.drawn_view.track();
        crate::browser::restart_timeout(still, Duration::from_millis(400), move || {
            if let Some(view) = model.viewport.try_get_untracked() {
                model::set_if_changed(layer_zoom, view.zoom);
            }
        });
    });
    layered
}
