//! How a module is drawn: its box with a header and a row per port, labels
//! cut to fit. (Zoomed out, a module is a sketch: sketches.rs.)

use leptos::prelude::*;

use super::geometry;
use super::model::{CanvasModel, NodeHandle, PortView};

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
fn label_view(label: &str, limit: usize) -> impl IntoView + use<> {
    let (marked, text) = geometry::without_marker(label);
    let text = fit(text, limit);
    view! {
        {marked.then(crate::icons::document)}
        {text}
    }
}

/// A port row's identity: its id and its label, so that a port whose id
/// stays while its label changes (a re-prompt renumbered) is drawn anew.
/// One string, as the other lists' keys are (one keyed list in the bundle).
fn port_key(port: &PortView) -> String {
    format!("{}\u{0}{}", port.id, port.label)
}

#[component]
fn PortRow(port: PortView, incoming: bool, limit: Signal<usize>) -> impl IntoView {
    let class = format!(
        "port {} port-type-{} accent-{}",
        if incoming { "port-in" } else { "port-out" },
        port.port_type.as_str(),
        port.accent
    );
    let tooltip = if port.description.is_empty() {
        port.label.clone()
    } else {
        format!("{} — {}", port.label, port.description)
    };
    view! {
        <div
            class=class
            data-port-id=port.id.clone()
            data-port-type=port.port_type.as_str()
            data-label=port.label.clone()
            title=tooltip
        >
            <span class="port-dot"></span>
            <span class="port-label">{
                let label = port.label.clone();
                move || label_view(&label, limit.get())
            }</span>
        </div>
    }
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
        title,
        subtitle,
        kind,
        inputs,
        outputs,
        selected,
        flagged,
        note,
        run,
    } = node.clone();
    let clock = model.clock;
    // Width and how much of each label fits, worked out together.
    let layout = Memo::new({
        let node = node.clone();
        move |_| {
            let width = node.width();
            let (inputs, outputs) = inputs.with(|inputs| {
                outputs.with(|outputs| {
                    geometry::label_limits(
                        width,
                        inputs.iter().map(|port| port.label.as_str()),
                        outputs.iter().map(|port| port.label.as_str()),
                    )
                })
            });
            let title =
                subtitle.with(|kind| note.with(|note| geometry::title_limit(width, kind, note)));
            (width, inputs, outputs, title)
        }
    });
    let input_limit = Signal::derive(move || layout.get().1);
    let output_limit = Signal::derive(move || layout.get().2);
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
                let outer = layout.get().0 + 2.0 * geometry::BORDER;
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
            <div class="module-header" title=move || format!("{} ({})", title.get(), subtitle.get())>
                <span class="module-label">{move || fit(&title.get(), layout.get().3)}</span>
                <span class="module-note" title="Re-prompts">{move || note.get()}</span>
                <span class="module-kind">{move || subtitle.get()}</span>
            </div>
            <div class="module-ports">
                <div class="ports-in">
                    <For each=move || inputs.get() key=port_key let:port>
                        <PortRow port incoming=true limit=input_limit/>
                    </For>
                </div>
                <div class="ports-out">
                    <For each=move || outputs.get() key=port_key let:port>
                        <PortRow port incoming=false limit=output_limit/>
                    </For>
                </div>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_cut_to_their_limit_in_characters() {
        assert_eq!(fit("Output", 10), "Output");
        assert_eq!(fit("📄 \"Review your work\"", 12), "📄 \"Review y…");
        assert_eq!(fit("é".repeat(20).as_str(), 5).chars().count(), 5);
    }
}
