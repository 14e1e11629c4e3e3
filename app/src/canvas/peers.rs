//! The others editing the graph (PRODUCT §3.16), drawn on the canvas: each
//! one's pointer with their name, and an outline in their colour around
//! the modules they have selected. Whoever shows the canvas with others
//! provides [`PeerMarks`]; without it (the bench page), or until someone
//! else is here, nothing is drawn.

use leptos::prelude::*;

use super::geometry::module_height;
use super::model::CanvasModel;

/// One other person, as the canvas draws them.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerMark {
    pub name: String,
    pub colour: String,
    /// Graph coordinates.
    pub pointer: Option<(f64, f64)>,
    pub modules: Vec<String>,
}

/// Draws others' marks. Its code comes with what shows who is here
/// (`editor::lazy_parts::together_part`, fetched once someone else is),
/// which sets it: a first load does without it.
pub type DrawPeers = fn(CanvasModel, Signal<Vec<PeerMark>>) -> AnyView;

#[derive(Clone, Copy)]
pub struct PeerMarks {
    pub marks: Signal<Vec<PeerMark>>,
    pub draw: RwSignal<Option<DrawPeers>>,
}

/// Where others' marks go, above the modules: drawn once there is code to
/// draw them with.
#[component]
pub fn Peers(model: CanvasModel) -> impl IntoView {
    let peers = use_context::<PeerMarks>();
    move || peers.and_then(|peers| peers.draw.get().map(|draw| draw(model, peers.marks)))
}

/// The outlines of others' selections and their pointers.
pub fn draw(model: CanvasModel, marks: Signal<Vec<PeerMark>>) -> AnyView {
    (move || {
        // Kept the same size on screen whatever the zoom.
        let unscale = format!(
            "scale({})",
            1.0 / model.viewport.with(|view| view.zoom).max(0.01)
        );
        marks.with(|marks| {
            marks
                .iter()
                .flat_map(|mark| {
                    let outlines = mark.modules.iter().filter_map(|id| {
                        let node = model.node(id)?;
                        let position = node.position.get();
                        let height = node.inputs.with(|inputs| {
                            node.outputs.with(|outputs| module_height(inputs.len(), outputs.len()))
                        });
                        let style = format!(
                            "left: {}px; top: {}px; width: {}px; height: {}px; border-color: {}",
                            position.x - 3.0,
                            position.y - 3.0,
                            node.outer_width() + 6.0,
                            height + 6.0,
                            mark.colour
                        );
                        Some(view! { <div class="peer-selection" style=style data-peer=mark.name.clone()></div> }.into_any())
                    });
                    let pointer = mark.pointer.map(|(x, y)| {
                        let style = format!(
                            "left: {x}px; top: {y}px; color: {}; transform: {unscale}",
                            mark.colour
                        );
                        view! {
                            <div class="peer-pointer" style=style data-peer=mark.name.clone()>
                                <svg width="14" height="18" viewBox="0 0 14 18" aria-hidden="true">
                                    <path d="M1 1 L1 15 L5 11 L8 17 L10 16 L7 10 L13 10 Z" fill="currentColor" stroke="#14161b" stroke-width="1"/>
                                </svg>
                                <span class="peer-name" style=format!("background: {}", mark.colour)>{mark.name.clone()}</span>
                            </div>
                        }
                        .into_any()
                    });
                    outlines.chain(pointer).collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        })
    })
    .into_any()
}
