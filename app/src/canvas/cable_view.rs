//! How a cable is drawn: an SVG curve between its ports' anchors, marked
//! when one of its ports is gone, with its number and condition when its
//! port's cables have conditions, lit or dimmed by the way a run went; and
//! the curve of a cable being drawn, from its output to the pointer.

use std::fmt::Write;

use graph::Position;
use graph::routing::CableOrder;
use leptos::prelude::*;

use super::geometry::{CableCurve, cable_path, header_anchor, input_anchor, output_anchor};
use super::model::{CableRoute, CanvasModel, EdgeHandle};
use super::sketches::write_condition_text;

/// Where a cable runs, in graph units.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct CableGeometry {
    pub curve: CableCurve,
    /// One of its ports is gone.
    pub dangling: bool,
    /// The middle of the curve, where its condition is written.
    pub middle: (f64, f64),
}

pub(super) fn cable_geometry(model: &CanvasModel, edge: &EdgeHandle) -> Option<CableGeometry> {
    let (from_module, from_port) = edge.from.get();
    let (to_module, to_port) = edge.to.get();
    let (source, target) = model.by_id.with(|nodes| {
        (
            nodes.get(from_module.as_str()).cloned(),
            nodes.get(to_module.as_str()).cloned(),
        )
    });
    let (source, target) = (source?, target?);
    let source_row = source
        .outputs
        .with(|ports| ports.iter().position(|port| port.id == from_port));
    let target_row = target
        .inputs
        .with(|ports| ports.iter().position(|port| port.id == to_port));
    let source_position = source.position.get();
    let target_position = target.position.get();
    let source_width = source.outer_width();
    let start = source_row.map_or_else(
        || header_anchor(source_position, source_width, true),
        |row| output_anchor(source_position, source_width, row),
    );
    let end = target_row.map_or_else(
        || header_anchor(target_position, 0.0, false),
        |row| input_anchor(target_position, row),
    );
    Some(CableGeometry {
        curve: CableCurve {
            from: start,
            to: end,
        },
        dangling: source_row.is_none() || target_row.is_none(),
        // The curve's control points sit level with its ends, so its
        // middle is the middle of its ends.
        middle: ((start.0 + end.0) / 2.0, (start.1 + end.1) / 2.0),
    })
}

/// "1st", "2nd", "3rd", "4th"…
fn ordinal(number: usize) -> String {
    let suffix = match (number % 10, number % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{number}{suffix}")
}

/// A conditional cable's label: short, written at its middle after its
/// number, and in full, its tooltip.
pub(super) fn condition_texts(order: &CableOrder) -> (String, String) {
    match &order.condition {
        Some(condition) => (
            graph::routing::short_condition(condition, 28),
            format!("Tried {}: {condition}", ordinal(order.number)),
        ),
        None => (
            "otherwise".to_owned(),
            format!(
                "Tried {}: no condition, so it takes the value when no cable before it does",
                ordinal(order.number)
            ),
        ),
    }
}

/// The path of a cable being drawn from output `from` to graph point `to`.
pub fn preview_path(model: CanvasModel, from: &(String, String), to: Position) -> Option<String> {
    let source = model.node(&from.0)?;
    let row = source
        .outputs
        .with_untracked(|ports| ports.iter().position(|port| port.id == from.1));
    let width = untrack(|| source.outer_width());
    let origin = row.map_or_else(
        || header_anchor(source.position.get_untracked(), width, true),
        |row| output_anchor(source.position.get_untracked(), width, row),
    );
    Some(cable_path(origin, (to.x, to.y)))
}

/// A cable's curves (a wide one to point at, the one seen) and its
/// condition as markup: put in the page with one `innerHTML`, not as views
/// with an effect per attribute and hydration markers, as hundreds come
/// into the page together when a graph loads.
fn cable_markup(geometry: Option<&CableGeometry>, order: Option<&CableOrder>) -> String {
    let path = geometry
        .map(|geometry| geometry.curve.path())
        .unwrap_or_default();
    let mut markup = String::with_capacity(2 * path.len() + 64);
    for class in ["cable-hit", "cable-line"] {
        let _ = write!(markup, r#"<path class="{class}" d="{path}"></path>"#);
    }
    if let Some(order) = order {
        markup.push_str(r#"<g class="cable-condition">"#);
        let middle = geometry.map_or((0.0, 0.0), |geometry| geometry.middle);
        write_condition_text(order, middle, &mut markup);
        markup.push_str("</g>");
    }
    markup
}

#[component]
pub fn CableView(model: CanvasModel, edge: EdgeHandle) -> impl IntoView {
    let id = edge.id.to_string();
    let selected = edge.selected;
    let flagged = edge.flagged;
    let order = edge.order;
    let route = edge.route;
    let geometry = Memo::new(move |_| cable_geometry(&model, &edge));
    let body = move || {
        geometry
            .with(|geometry| order.with(|order| cable_markup(geometry.as_ref(), order.as_ref())))
    };
    view! {
        // One class, not an effect per class: a view of a large graph
        // mounts hundreds of cables at once.
        <g
            class=move || {
                let mut class = String::from("cable");
                let dangling = geometry
                    .with(|geometry| geometry.as_ref().is_none_or(|geometry| geometry.dangling));
                let route = match route.get() {
                    CableRoute::Taken => " taken",
                    CableRoute::Passed => " passed",
                    CableRoute::Open => "",
                };
                for (on, name) in [
                    (dangling, " dangling"),
                    (selected.get(), " selected"),
                    (flagged.get(), " flagged"),
                ] {
                    if on {
                        class.push_str(name);
                    }
                }
                class.push_str(route);
                class
            }
            data-edge-id=id
            inner_html=body
        ></g>
    }
}
