//! What the pointer is on, read from the page: the module, port or cable
//! under a press, as [`Press`] for the gesture machine, and the input port
//! under the pointer while a cable is drawn. Modules, ports and cables are
//! found by the attributes they carry (`data-node-id`, `data-port-id`,
//! `data-edge-id`), in the detailed drawing and in sketches alike.

use graph::PortType;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::gesture::{PluggedCable, Press, PressedModule};
use super::model::CanvasModel;

pub fn element_of(target: Option<web_sys::EventTarget>) -> Option<web_sys::Element> {
    target?.dyn_into::<web_sys::Element>().ok()
}

pub fn closest(element: &web_sys::Element, selector: &str) -> Option<web_sys::Element> {
    element.closest(selector).ok().flatten()
}

/// Whether the event happened inside an element `selector` matches.
pub fn closest_target(event: &web_sys::Event, selector: &str) -> bool {
    element_of(event.target())
        .and_then(|target| closest(&target, selector))
        .is_some()
}

/// The id of the module an event happened in.
pub fn module_of(event: &web_sys::Event) -> Option<String> {
    element_of(event.target())
        .and_then(|target| closest(&target, "[data-node-id]"))
        .and_then(|module| module.get_attribute("data-node-id"))
}

/// (module id, port id, port type) of a port element.
fn port_of(element: &web_sys::Element) -> Option<(String, String, PortType)> {
    let module = closest(element, "[data-node-id]")?.get_attribute("data-node-id")?;
    let port = element.get_attribute("data-port-id")?;
    let port_type = match element.get_attribute("data-port-type").as_deref() {
        Some("signal") => PortType::Signal,
        Some("receipt") => PortType::Receipt,
        _ => PortType::Bundle,
    };
    Some((module, port, port_type))
}

/// What the press on `target` is on, as the gesture machine takes it.
pub fn press_at(target: &web_sys::Element, model: CanvasModel) -> Press {
    if closest(target, "[data-pane-control]").is_some() {
        return Press::PaneControl;
    }
    let Some(id) =
        closest(target, "[data-node-id]").and_then(|module| module.get_attribute("data-node-id"))
    else {
        return match closest(target, "[data-edge-id]")
            .and_then(|cable| cable.get_attribute("data-edge-id"))
        {
            Some(cable) => Press::Cable(cable),
            None => Press::Background,
        };
    };
    let Some(node) = model.node(&id) else {
        return Press::RemovedModule;
    };
    let module = PressedModule {
        id,
        selected: node.selected.get_untracked(),
    };
    if let Some((module_id, port, port_type)) =
        closest(target, ".port-out").and_then(|element| port_of(&element))
    {
        Press::OutputPort {
            port: (module_id, port),
            port_type,
            module,
        }
    } else if let Some((module_id, port, _)) =
        closest(target, ".port-in").and_then(|element| port_of(&element))
    {
        let plugged = plugged_into(model, &module_id, &port);
        Press::InputPort {
            port: (module_id, port),
            plugged,
            module,
        }
    } else {
        Press::Module(module)
    }
}

/// The cable plugged into input `port` of `module`, with its output's type.
fn plugged_into(model: CanvasModel, module: &str, port: &str) -> Option<PluggedCable> {
    let edge = model.edges.with_untracked(|edges| {
        edges
            .iter()
            .rev()
            .find(|edge| edge.to.with_untracked(|to| to.0 == module && to.1 == port))
            .cloned()
    })?;
    let from = edge.from.get_untracked();
    let port_type = model
        .node(&from.0)
        .and_then(|node| {
            node.outputs.with_untracked(|ports| {
                ports
                    .iter()
                    .find(|candidate| candidate.id == from.1)
                    .map(|found| found.port_type)
            })
        })
        .unwrap_or(PortType::Bundle);
    Some(PluggedCable {
        id: edge.id.to_string(),
        from,
        port_type,
    })
}

/// (module id, port id) of the input port at a point of the page.
pub fn input_port_at(client: (f64, f64)) -> Option<(String, String)> {
    web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.element_from_point(client.0 as f32, client.1 as f32))
        .and_then(|element| closest(&element, ".port-in"))
        .and_then(|element| port_of(&element))
        .map(|(module, port, _)| (module, port))
}
