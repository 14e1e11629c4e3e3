//! The modules drawn in detail: a box per module near the view, mounted a
//! batch per frame, so that panning or zooming over a large graph never
//! spends one long frame mounting hundreds.

use std::sync::Arc;

use leptos::prelude::*;

use super::batched::batched;
use super::detail::Detail;
use super::model::{CanvasModel, NodeHandle};
use super::module_box::ModuleBox;

/// The modules in the page: those near the view when drawn in detail,
/// all at once as the page loads, then those coming into view a batch per
/// frame.
pub fn drawn_modules(detail: Detail) -> RwSignal<Vec<NodeHandle>> {
    let wanted = Memo::new(move |_| detail.in_detail(detail.near_nodes));
    batched(wanted, usize::MAX, 40, |node: &NodeHandle| {
        Arc::clone(&node.id)
    })
}

#[component]
pub fn ModuleLayer(model: CanvasModel, nodes: RwSignal<Vec<NodeHandle>>) -> impl IntoView {
    view! {
        <For each=move || nodes.get() key=|node| Arc::clone(&node.id) let:node>
            <ModuleBox node model/>
        </For>
    }
}
