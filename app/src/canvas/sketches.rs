//! The canvas zoomed out: modules as sketches (a box and its title) and
//! cables' conditions as text, written as markup and put in the page with
//! one `innerHTML` each (the cables themselves are drawn on a canvas, in
//! `cable_sketches`). Hundreds come into view at once when a zoom settles;
//! as views, an effect per attribute each, that was one frame of about
//! 100 ms of script at 2000 modules; the browser parses the markup in a few.
//! A sketch is one element (a module's box holds its title as text), as
//! styling and laying out thousands of elements was the other half of that
//! frame. They carry the `data-node-id`/`data-edge-id` of the detailed
//! drawing, so clicks and drags find sketches as they find modules and
//! cables.

use std::fmt::Write;
use std::sync::Arc;

use graph::routing::CableOrder;
use leptos::prelude::{Get, GetUntracked, With};

use super::cable_view::{cable_geometry, condition_texts};
use super::geometry;
use super::model::{CableRoute, CanvasModel, EdgeHandle, NodeHandle};
use super::module_box::fit;

/// Appends `text` with the characters markup gives a meaning escaped.
pub(crate) fn escape(text: &str, markup: &mut String) {
    for character in text.chars() {
        match character {
            '&' => markup.push_str("&amp;"),
            '<' => markup.push_str("&lt;"),
            '>' => markup.push_str("&gt;"),
            '"' => markup.push_str("&quot;"),
            '\'' => markup.push_str("&#39;"),
            other => markup.push(other),
        }
    }
}

/// Appends the classes whose flag is on, each after a space.
fn classes(flags: &[(&str, bool)], markup: &mut String) {
    for (name, on) in flags {
        if *on {
            markup.push(' ');
            markup.push_str(name);
        }
    }
}

/// Module sketches put in the page together: a chunk per animation frame,
/// nearest the view first, so that hundreds coming into view when a zoom
/// settles are never one long frame of styling and painting.
#[derive(Clone, Debug, PartialEq)]
pub struct SketchChunk {
    /// Its place in the order, nearest the view first.
    pub key: Arc<str>,
    pub markup: String,
}

/// Modules in a chunk of sketches.
const MODULES_PER_CHUNK: usize = 100;

/// The sketches of `nodes` as they are now (tracked), in chunks, those
/// nearest `centre` (graph units) first.
pub fn module_chunks(nodes: &[&NodeHandle], centre: (f64, f64)) -> Vec<SketchChunk> {
    let mut by_distance: Vec<(f64, &NodeHandle)> = nodes
        .iter()
        .map(|node| {
            let at = node.position.get_untracked();
            ((at.x - centre.0).powi(2) + (at.y - centre.1).powi(2), *node)
        })
        .collect();
    by_distance.sort_by(|(a, _), (b, _)| a.total_cmp(b));
    by_distance
        .chunks(MODULES_PER_CHUNK)
        .enumerate()
        .map(|(index, chunk)| {
            let mut markup = String::new();
            for (_, node) in chunk {
                write_module(node, &mut markup);
            }
            SketchChunk {
                key: Arc::from(index.to_string()),
                markup,
            }
        })
        .collect()
}

/// Appends module `node`'s sketch as it is now (tracked: a memo of the
/// markup is computed again when a module moves, is renamed or selected).
pub fn write_module(node: &NodeHandle, markup: &mut String) {
    markup.push_str("<div class=\"module sketch kind-");
    node.kind.with(|kind| escape(kind, markup));
    classes(
        &[
            ("selected", node.selected.get()),
            ("flagged", node.flagged.get()),
        ],
        markup,
    );
    markup.push_str("\" data-node-id=\"");
    escape(&node.id, markup);
    let position = node.position.get();
    let height = geometry::module_height(node.inputs.with(Vec::len), node.outputs.with(Vec::len));
    let _ = write!(
        markup,
        "\" style=\"left: {}px; top: {}px; height: {height}px;",
        position.x, position.y
    );
    // Cables meet its ports' places: a wide module stays as wide.
    let width = node.outer_width();
    if width > geometry::MODULE_OUTER_WIDTH {
        let _ = write!(markup, " width: {width}px;");
    }
    markup.push_str("\">");
    node.title.with(|title| escape(&fit(title, 18), markup));
    markup.push_str("</div>");
}

/// Appends cable `edge`'s number and condition, when its port's cables
/// have conditions, at its middle (tracked).
pub fn write_condition(model: &CanvasModel, edge: &EdgeHandle, markup: &mut String) {
    let Some(order) = edge.order.get() else {
        return;
    };
    let Some(geometry) = cable_geometry(model, edge) else {
        return;
    };
    markup.push_str("<g class=\"cable-condition");
    classes(
        &[("passed", edge.route.get() == CableRoute::Passed)],
        markup,
    );
    markup.push_str("\" data-edge-id=\"");
    escape(&edge.id, markup);
    markup.push_str("\">");
    write_condition_text(&order, geometry.middle, markup);
    markup.push_str("</g>");
}

/// Appends a conditional cable's number and condition written at
/// `middle`, its condition in full as the tooltip.
pub fn write_condition_text(order: &CableOrder, middle: (f64, f64), markup: &mut String) {
    let (short, full) = condition_texts(order);
    markup.push_str("<title>");
    escape(&full, markup);
    let _ = write!(
        markup,
        "</title><text x=\"{}\" y=\"{}\"><tspan class=\"cable-order\">{}</tspan> ",
        middle.0,
        middle.1 - 5.0,
        order.number
    );
    escape(&short, markup);
    markup.push_str("</text>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_sketch_keeps_a_graphs_text_as_text() {
        // Signals live in an owner's arena (the server build requires one).
        leptos::prelude::Owner::new().with(hostile_module_sketch);
    }

    fn hostile_module_sketch() {
        let model = CanvasModel::new();
        let node = model.node_handle(
            "m1\" onclick=\"x",
            graph::Position { x: 10.0, y: 20.0 },
            super::super::model::NodeLook {
                title: "<script>alert(1)</script>".to_owned(),
                subtitle: String::new(),
                kind: "agent_task\" onmouseover=\"x".to_owned(),
                note: String::new(),
                inputs: Vec::new(),
                outputs: Vec::new(),
            },
        );
        let mut markup = String::new();
        write_module(&node, &mut markup);
        assert!(!markup.contains("<script"), "{markup}");
        assert!(!markup.contains("\" onclick"), "{markup}");
        assert!(!markup.contains("\" onmouseover"), "{markup}");
        assert!(
            markup.contains("data-node-id=\"m1&quot; onclick=&quot;x\""),
            "{markup}"
        );
        assert!(markup.contains("left: 10px; top: 20px;"), "{markup}");
    }

    #[test]
    fn text_from_a_graph_cannot_become_markup() {
        let mut markup = String::new();
        escape(r#"<img src=x onerror="alert('x')"> & co"#, &mut markup);
        assert_eq!(
            markup,
            "&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt; &amp; co"
        );
    }
}
