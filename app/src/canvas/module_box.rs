//! How a module is drawn: its box with a header and a row per port, labels
//! cut to fit, written as markup. (Zoomed out, a module is a sketch: sketches.rs.)

use std::fmt::Write;

use leptos::prelude::*;

use super::geometry;
use super::model::{CanvasModel, NodeHandle, PortView};
use super::sketches::escape;

/// `text` cut to `limit` characters with an ellipsis. Shortening here rather
/// than with CSS `overflow: hidden` matters: every clipped box is a clip node
/// and a paint chunk of its own, and thousands of them slow every frame.
pub fn fit(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(limit.saturating_sub(1)).collect();
        short.push('…');
        short
    }
}

/// A port label as the canvas draws it: DOC23's document marker as an
/// icon (an emoji needs a font many machines lack), the text cut to
/// `limit` characters (the whole label is the row's tooltip).
fn label_markup(label: &str, limit: usize, markup: &mut String) {
    let (marked, text) = geometry::without_marker(label);
    if marked {
        markup.push_str(&crate::icons::document_markup());
    }
    escape(&fit(text, limit), markup);
}

/// A port row as markup, its label cut to `limit` characters.
fn port_row_markup(port: &PortView, incoming: bool, limit: usize, markup: &mut String) {
    let side = if incoming { "port-in" } else { "port-out" };
    let port_type = port.port_type.as_str();
    let _ = write!(
        markup,
        r#"<div class="port {side} port-type-{port_type} accent-{}" data-port-id=""#,
        port.accent
    );
    escape(&port.id, markup);
    let _ = write!(markup, r#"" data-port-type="{port_type}" data-label=""#);
    escape(&port.label, markup);
    markup.push_str(r#"" title=""#);
    escape(&port.label, markup);
    if !port.description.is_empty() {
        markup.push_str(" — ");
        escape(&port.description, markup);
    }
    markup.push_str(r#""><span class="port-dot"></span><span class="port-label">"#);
    label_markup(&port.label, limit, markup);
    markup.push_str("</span></div>");
}

/// How much of a module's title and labels are shown.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layout {
    /// The module's content width.
    width: f64,
    input_limit: usize,
    output_limit: usize,
    title_limit: usize,
}

/// A module's header and port rows as markup (tracked): written and put
/// in the page with one `innerHTML`, not as views. A view of a large graph
/// mounts a hundred modules at once, and as views, with an effect per
/// label and hydration markers around each, they were most of what loading
/// a graph cost; they change only when the module is edited.
fn body_markup(node: &NodeHandle, layout: Layout) -> String {
    let mut markup = String::with_capacity(1024);
    node.title.with(|title| {
        node.subtitle.with(|subtitle| {
            markup.push_str(r#"<div class="module-header" title=""#);
            escape(title, &mut markup);
            markup.push_str(" (");
            escape(subtitle, &mut markup);
            markup.push_str(r#")"><span class="module-label">"#);
            escape(&fit(title, layout.title_limit), &mut markup);
            markup.push_str(r#"</span><span class="module-note" title="Re-prompts">"#);
            node.note.with(|note| escape(note, &mut markup));
            markup.push_str(r#"</span><span class="module-kind">"#);
            escape(subtitle, &mut markup);
        })
    });
    markup.push_str(r#"</span></div><div class="module-ports"><div class="ports-in">"#);
    node.inputs.with(|ports| {
        for port in ports {
            port_row_markup(port, true, layout.input_limit, &mut markup);
        }
    });
    markup.push_str(r#"</div><div class="ports-out">"#);
    node.outputs.with(|ports| {
        for port in ports {
            port_row_markup(port, false, layout.output_limit, &mut markup);
        }
    });
    markup.push_str("</div></div>");
    markup
}

#[component]
pub fn ModuleBox(node: NodeHandle, model: CanvasModel) -> impl IntoView {
    let dragging = {
        let id = std::sync::Arc::clone(&node.id);
        Memo::new(move |_| model.dragging.with(|dragging| dragging.contains(&id)))
    };
    let NodeHandle {
        id,
        position,
        subtitle,
        kind,
        inputs,
        outputs,
        selected,
        flagged,
        note,
        run,
        ..
    } = node.clone();
    let clock = model.clock;
    // Width and how much of each label fits, worked out together.
    let layout = Memo::new({
        let node = node.clone();
        move |_| {
            let width = node.width();
            let (input_limit, output_limit) = inputs.with(|inputs| {
                outputs.with(|outputs| {
                    geometry::label_limits(
                        width,
                        inputs.iter().map(|port| port.label.as_str()),
                        outputs.iter().map(|port| port.label.as_str()),
                    )
                })
            });
            let title_limit =
                subtitle.with(|kind| note.with(|note| geometry::title_limit(width, kind, note)));
            Layout {
                width,
                input_limit,
                output_limit,
                title_limit,
            }
        }
    });
    let body = move || body_markup(&node, layout.get());
    view! {
        // One class and one style each, not an effect per class and per
        // property: a view of a large graph mounts a hundred modules at once.
        <div
            class=move || {
                let state = run.with(|run| run.as_ref().map_or("", |run| run.state.class()));
                let mut class = kind.with(|kind| format!("module kind-{kind} {state}"));
                for (on, name) in [
                    (selected.get(), " selected"),
                    (flagged.get(), " flagged"),
                    (dragging.get(), " dragging"),
                ] {
                    if on {
                        class.push_str(name);
                    }
                }
                class
            }
            data-node-id=id.to_string()
            style=move || {
                // left/top, not a transform: a transform per module gives
                // each its own paint chunk, and Chromium re-layerizes a
                // thousand of them on every frame of a pan.
                let at = position.get();
                let mut style = format!("left:{}px;top:{}px", at.x, at.y);
                // Only modules wider than the stylesheet's width carry one
                // of their own (a thousand identical declarations cost a
                // style pass).
                let outer = layout.with(|layout| layout.width) + 2.0 * geometry::BORDER;
                if outer > geometry::MODULE_OUTER_WIDTH {
                    style.push_str(&format!(";width:{outer}px"));
                }
                style
            }
        >
            {move || {
                run.get().map(|state| {
                    let class = format!("run-badge {}", state.state.class());
                    let title = state.error.clone().unwrap_or_default();
                    view! {
                        <div class=class title=title>
                            {move || run.with(|run| run.as_ref().map(|run| run.badge_text(clock.get())).unwrap_or_default())}
                        </div>
                    }
                })
            }}
            <div class="module-body" inner_html=body></div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(id: &str, label: &str, description: &str) -> PortView {
        PortView {
            id: id.to_owned(),
            label: label.to_owned(),
            title: label.to_owned(),
            description: description.to_owned(),
            accent: "accent",
            port_type: graph::PortType::Bundle,
        }
    }

    #[test]
    fn a_module_is_written_with_what_its_graph_says_escaped() {
        Owner::new().with(|| {
            let model = CanvasModel::new();
            let node = model.node_handle(
                "m1",
                graph::Position { x: 0.0, y: 0.0 },
                super::super::model::NodeLook {
                    title: "<img src=x onerror=alert(1)>".to_owned(),
                    subtitle: "Agent \"task\"".to_owned(),
                    kind: "agent_task".to_owned(),
                    note: "↻ 2".to_owned(),
                    inputs: vec![port("in\"", "a & b", "")],
                    outputs: vec![
                        port("response", "📄 Response", "What it said"),
                        port("long", &"x".repeat(60), ""),
                    ],
                },
            );
            let layout = Layout {
                width: 180.0,
                input_limit: usize::MAX,
                output_limit: 10,
                title_limit: 12,
            };
            let markup = body_markup(&node, layout);
            assert!(!markup.contains("<img"), "{markup}");
            assert!(markup.contains(r#"title="&lt;img src=x onerror=alert(1)&gt; (Agent &quot;task&quot;)""#), "{markup}");
            assert!(markup.contains(r#"<span class="module-label">&lt;img src=x …</span>"#), "{markup}");
            assert!(markup.contains(r#"data-port-id="in&quot;""#), "{markup}");
            assert!(markup.contains(r#"<span class="port-label">a &amp; b</span>"#), "{markup}");
            // The document marker is an icon, the description the tooltip's.
            assert!(markup.contains(r#"title="📄 Response — What it said""#), "{markup}");
            assert!(markup.contains(r#"<span class="port-label"><span class="icon-box"><svg class="icon icon-document""#), "{markup}");
            assert!(markup.contains(&format!(r#"<span class="port-label">{}…</span>"#, "x".repeat(9))), "{markup}");
            assert_eq!(markup.matches("port port-in ").count(), 1);
            assert_eq!(markup.matches("port port-out ").count(), 2);
        });
    }

    #[test]
    fn labels_are_cut_to_their_limit_in_characters() {
        assert_eq!(fit("Output", 10), "Output");
        assert_eq!(fit("📄 \"Review your work\"", 12), "📄 \"Review y…");
        assert_eq!(fit("é".repeat(20).as_str(), 5).chars().count(), 5);
    }
}
