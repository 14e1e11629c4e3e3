//! How a cable is drawn: an SVG curve between its ports' anchors, marked
//! when one of its ports is gone; and the curve of a cable being drawn, from
//! its output to the pointer.

use graph::Position;
use leptos::prelude::*;

use super::geometry::{cable_path, header_anchor, input_anchor, output_anchor};
use super::model::{CanvasModel, EdgeHandle};

/// Where a cable runs, in graph units, and whether one of its ports is gone.
fn cable_geometry(model: &CanvasModel, edge: &EdgeHandle) -> Option<(String, bool)> {
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
    Some((
        cable_path(start, end),
        source_row.is_none() || target_row.is_none(),
    ))
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

#[component]
pub fn CableView(model: CanvasModel, edge: EdgeHandle) -> impl IntoView {
    let id = edge.id.to_string();
    let selected = edge.selected;
    let flagged = edge.flagged;
    let geometry = Memo::new(move |_| cable_geometry(&model, &edge));
    let path = move || {
        geometry.with(|geometry| {
            geometry
                .as_ref()
                .map(|(path, _)| path.clone())
                .unwrap_or_default()
        })
    };
    view! {
        <g
            class="cable"
            class:dangling=move || geometry.with(|geometry| geometry.as_ref().is_none_or(|(_, dangling)| *dangling))
            class:selected=move || selected.get()
            class:flagged=move || flagged.get()
            data-edge-id=id
        >
            <path class="cable-hit" d=path></path>
            <path class="cable-line" d=path></path>
        </g>
    }
}
