//! The canvas zoomed out, its cables: stroked on one `<canvas>`, a path per
//! look, and found under the pointer by their curves. As SVG, hundreds of
//! long curves came into view at once when a zoom settled, and rastering
//! them, tile by tile, each across many tiles, took 150–250 ms at 2000
//! modules; on one canvas they take a few tens. The colours are the page's:
//! custom properties of `.cable-sketches` in the stylesheet.

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::cable_view::cable_geometry;
use super::drawing;
use super::geometry::CableCurve;
use super::model::{CableRoute, CanvasModel, EdgeHandle};

/// The colour a sketched cable is stroked in, lowest drawn first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ink {
    Plain,
    Dangling,
    Flagged,
    Selected,
    Taken,
}

impl Ink {
    const ALL: [Ink; 5] = [
        Ink::Plain,
        Ink::Dangling,
        Ink::Flagged,
        Ink::Selected,
        Ink::Taken,
    ];

    /// The custom property of `.cable-sketches` that holds the colour.
    fn property(self) -> &'static str {
        match self {
            Ink::Plain => "--cable-plain",
            Ink::Dangling => "--cable-dangling",
            Ink::Flagged => "--cable-flagged",
            Ink::Selected => "--cable-selected",
            Ink::Taken => "--cable-taken",
        }
    }
}

/// The inks' colours, in `Ink::ALL`'s order, as the stylesheet gives them.
type Palette = [String; 5];

fn read_palette(canvas: &web_sys::HtmlCanvasElement) -> Option<Palette> {
    drawing::stylesheet_colours(canvas, Ink::ALL.map(Ink::property))
}

/// How a sketched cable is stroked: as the detailed cable's classes style
/// it (`.cable.dangling`, `.selected`, `.flagged`, `.taken`, `.passed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CableLook {
    pub ink: Ink,
    /// Selected or taken: 3 units wide, not 2.
    pub wide: bool,
    /// Dashes and gaps, in graph units.
    pub dashes: Option<(u8, u8)>,
    /// A cable the run passed over: faded.
    pub faded: bool,
}

impl CableLook {
    pub fn of(dangling: bool, selected: bool, flagged: bool, route: CableRoute) -> CableLook {
        let taken = route == CableRoute::Taken;
        let passed = route == CableRoute::Passed;
        let ink = if taken {
            Ink::Taken
        } else if selected {
            Ink::Selected
        } else if flagged {
            Ink::Flagged
        } else if dangling {
            Ink::Dangling
        } else {
            Ink::Plain
        };
        CableLook {
            ink,
            wide: taken || selected,
            dashes: if passed {
                Some((3, 5))
            } else if dangling {
                Some((6, 4))
            } else {
                None
            },
            faded: passed,
        }
    }

    /// Faded cables first, then by ink: what matters is drawn on top.
    fn layer(self) -> (bool, Ink) {
        (!self.faded, self.ink)
    }
}

/// A cable as sketched: where it runs and how it looks.
#[derive(Clone, Debug, PartialEq)]
pub struct SketchedCable {
    pub id: Arc<str>,
    pub curve: CableCurve,
    pub look: CableLook,
}

/// Cable `edge` as sketched now (tracked), or `None` when one of its
/// modules is gone.
pub fn sketch_of(model: &CanvasModel, edge: &EdgeHandle) -> Option<SketchedCable> {
    let geometry = cable_geometry(model, edge)?;
    Some(SketchedCable {
        id: Arc::clone(&edge.id),
        curve: geometry.curve,
        look: CableLook::of(
            geometry.dangling,
            edge.selected.get(),
            edge.flagged.get(),
            edge.route.get(),
        ),
    })
}

/// The cable nearest `point` (graph units), if one is within `within`; of
/// equally near ones, the one drawn on top.
pub fn cable_at(cables: &[SketchedCable], point: (f64, f64), within: f64) -> Option<Arc<str>> {
    cables
        .iter()
        .filter_map(|cable| {
            cable
                .curve
                .distance(point, within)
                .map(|distance| (distance, cable))
        })
        .min_by(|(a, first), (b, second)| {
            a.total_cmp(b)
                .then_with(|| second.look.layer().cmp(&first.look.layer()))
        })
        .map(|(_, cable)| Arc::clone(&cable.id))
}

/// The largest side of the canvas, in device pixels: past it, the sketch
/// is drawn coarser rather than in a bitmap of hundreds of megabytes.
const LARGEST_SIDE: f64 = 4096.0;

/// The drawing area: the drawn region (graph units) and the zoom.
type Area = ((f64, f64, f64, f64), f64);

/// One `<canvas>` over the drawn region with `cables` stroked on it, drawn
/// again (once per frame at most) when they or the region change.
#[component]
pub fn CableSketches(model: CanvasModel, cables: Memo<Vec<SketchedCable>>) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let area = Memo::new(move |_| {
        (
            model.drawn_region(),
            model.drawn_view.with(|view| view.zoom),
        )
    });
    let palette = StoredValue::new(None::<Palette>);
    Effect::new(move |_| {
        if let Some(element) = canvas.get() {
            palette.set_value(read_palette(&element));
        }
    });
    let queued = StoredValue::new(false);
    Effect::new(move |_| {
        cables.track();
        area.track();
        if queued.get_value() {
            return;
        }
        queued.set_value(true);
        let draw_now = move || {
            queued.set_value(false);
            let Some(element) = canvas.get_untracked() else {
                return;
            };
            palette.with_value(|palette| {
                if let Some(palette) = palette {
                    cables.with_untracked(|cables| {
                        draw(&element, palette, area.get_untracked(), cables);
                    });
                }
            });
        };
        crate::browser::next_frame(draw_now);
    });
    view! { <canvas class="cable-sketches" aria-hidden="true" width="0" height="0" node_ref=canvas></canvas> }
}

fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    palette: &Palette,
    area: Area,
    cables: &[SketchedCable],
) {
    let ((left, top, right, bottom), zoom) = area;
    let (width, height) = (right - left, bottom - top);
    if cables.is_empty() || width <= 0.0 || height <= 0.0 {
        // Nothing to draw, and no bitmap kept for it.
        canvas.set_width(0);
        canvas.set_height(0);
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let scale = (zoom * window.device_pixel_ratio())
        .min(LARGEST_SIDE / width)
        .min(LARGEST_SIDE / height);
    // Setting the size clears the bitmap, whatever it was.
    canvas.set_width((width * scale).ceil() as u32);
    canvas.set_height((height * scale).ceil() as u32);
    let _ = canvas.set_attribute(
        "style",
        &format!("left: {left}px; top: {top}px; width: {width}px; height: {height}px"),
    );
    let Some(context) = drawing::context(canvas, scale, (left, top)) else {
        return;
    };
    let mut looks: Vec<CableLook> = Vec::new();
    for cable in cables {
        if !looks.contains(&cable.look) {
            looks.push(cable.look);
        }
    }
    looks.sort_by_key(|look| look.layer());
    for look in looks {
        context.set_stroke_style_str(&palette[look.ink as usize]);
        context.set_line_width(if look.wide { 3.0 } else { 2.0 });
        context.set_global_alpha(if look.faded { 0.45 } else { 1.0 });
        let dashes = js_sys::Array::new();
        if let Some((dash, gap)) = look.dashes {
            dashes.push(&JsValue::from(f64::from(dash)));
            dashes.push(&JsValue::from(f64::from(gap)));
        }
        let _ = context.set_line_dash(&dashes);
        // One path for every cable of a look: one stroke, not hundreds.
        context.begin_path();
        for cable in cables.iter().filter(|cable| cable.look == look) {
            let CableCurve { from, to } = cable.curve;
            let (first, second) = cable.curve.controls();
            context.move_to(from.0, from.1);
            context.bezier_curve_to(first.0, first.1, second.0, second.1, to.0, to.1);
        }
        context.stroke();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cable(id: &str, from: (f64, f64), to: (f64, f64), look: CableLook) -> SketchedCable {
        SketchedCable {
            id: Arc::from(id),
            curve: CableCurve { from, to },
            look,
        }
    }

    const PLAIN: CableLook = CableLook {
        ink: Ink::Plain,
        wide: false,
        dashes: None,
        faded: false,
    };

    #[test]
    fn a_sketched_cable_looks_as_its_detailed_cable_is_styled() {
        assert_eq!(CableLook::of(false, false, false, CableRoute::Open), PLAIN);
        let dangling = CableLook::of(true, false, false, CableRoute::Open);
        assert_eq!(
            (dangling.ink, dangling.dashes),
            (Ink::Dangling, Some((6, 4)))
        );
        // Selected wins over flagged and dangling, taken over selected.
        let selected = CableLook::of(true, true, true, CableRoute::Open);
        assert_eq!((selected.ink, selected.wide), (Ink::Selected, true));
        let taken = CableLook::of(false, true, false, CableRoute::Taken);
        assert_eq!((taken.ink, taken.wide), (Ink::Taken, true));
        let passed = CableLook::of(false, false, false, CableRoute::Passed);
        assert_eq!((passed.faded, passed.dashes), (true, Some((3, 5))));
        assert!(passed.layer() < PLAIN.layer() && PLAIN.layer() < taken.layer());
    }

    #[test]
    fn a_press_finds_the_cable_drawn_under_it() {
        let cables = [
            cable("low", (0.0, 0.0), (400.0, 0.0), PLAIN),
            cable("high", (0.0, 100.0), (400.0, 300.0), PLAIN),
        ];
        // On the straight one, and near it.
        assert_eq!(cable_at(&cables, (200.0, 1.0), 4.0).as_deref(), Some("low"));
        // The middle of the other: its curve passes (200, 200).
        assert_eq!(
            cable_at(&cables, (200.0, 202.0), 4.0).as_deref(),
            Some("high")
        );
        // Inside its control points' box but off the curve.
        assert_eq!(cable_at(&cables, (60.0, 280.0), 4.0), None);
        assert_eq!(cable_at(&cables, (200.0, 50.0), 4.0), None);
    }

    #[test]
    fn of_two_cables_under_a_press_the_one_on_top_is_found() {
        let selected = CableLook::of(false, true, false, CableRoute::Open);
        let cables = [
            cable("top", (0.0, 0.0), (400.0, 0.0), selected),
            cable("below", (0.0, 0.0), (400.0, 0.0), PLAIN),
        ];
        assert_eq!(cable_at(&cables, (100.0, 0.0), 4.0).as_deref(), Some("top"));
    }
}
