//! The canvas: modules as boxes with the ports `graph::ports` gives them,
//! cables as SVG curves between port anchors. Every module element carries
//! `data-node-id` and every cable element `data-edge-id`.

pub mod geometry;

use graph::{Cable, Graph, Module, ModulePorts, Port, ports};
use leptos::prelude::*;

use geometry::{cable_path, input_anchor, module_size, output_anchor};

/// A module with its computed ports, laid out once per render.
struct Placed<'a> {
    module: &'a Module,
    ports: ModulePorts,
}

/// Where a cable is drawn, and whether it leads anywhere.
struct CableLine {
    id: String,
    path: String,
    dangling: bool,
}

fn header_anchor(placed: &Placed<'_>, outgoing: bool) -> (f64, f64) {
    let position = placed.module.position;
    let (width, _) = module_size(&placed.ports);
    let x = if outgoing {
        position.x + width
    } else {
        position.x
    };
    (
        x,
        position.y + geometry::BORDER + geometry::HEADER_HEIGHT / 2.0,
    )
}

fn cable_line(cable: &Cable, placed: &[Placed<'_>]) -> Option<CableLine> {
    let find = |id: &str| placed.iter().find(|entry| entry.module.id == id);
    let (from, to) = (find(&cable.from.module)?, find(&cable.to.module)?);
    let from_row = from
        .ports
        .outputs
        .iter()
        .position(|port| port.id == cable.from.port);
    let to_row = to
        .ports
        .inputs
        .iter()
        .position(|port| port.id == cable.to.port);
    // A cable whose port vanished stays, drawn to the module's header.
    let start = from_row.map_or_else(
        || header_anchor(from, true),
        |row| output_anchor(from.module.position, row),
    );
    let end = to_row.map_or_else(
        || header_anchor(to, false),
        |row| input_anchor(to.module.position, row),
    );
    Some(CableLine {
        id: cable.id.clone(),
        path: cable_path(start, end),
        dangling: from_row.is_none() || to_row.is_none(),
    })
}

#[component]
fn PortRow(port: Port) -> impl IntoView {
    let class = format!(
        "port port-{} port-type-{} accent-{}",
        match port.direction {
            graph::Direction::Input => "in",
            graph::Direction::Output => "out",
        },
        port.port_type.as_str(),
        port.accent.as_str()
    );
    view! {
        <div class=class data-port-id=port.id.clone() title=port.description.clone()>
            <span class="port-dot"></span>
            <span class="port-label">{port.label.clone()}</span>
        </div>
    }
}

#[component]
fn ModuleBox(module: Module, ports: ModulePorts) -> impl IntoView {
    let kind_class = module
        .kind()
        .map_or("unknown", |kind| kind.as_str().trim_start_matches("step."));
    let kind_title = module.kind().map_or_else(
        || format!("Unknown: {}", module.config.kind_name()),
        |kind| kind.title().to_owned(),
    );
    let style = format!(
        "transform: translate({}px, {}px)",
        module.position.x, module.position.y
    );
    let class = format!("module kind-{kind_class}");
    let label = module.display_label().to_owned();
    view! {
        <div class=class data-node-id=module.id.clone() style=style>
            <div class="module-header">
                <span class="module-label">{label}</span>
                <span class="module-kind">{kind_title}</span>
            </div>
            <div class="module-ports">
                <div class="ports-in">
                    {ports.inputs.into_iter().map(|port| view! { <PortRow port/> }).collect_view()}
                </div>
                <div class="ports-out">
                    {ports.outputs.into_iter().map(|port| view! { <PortRow port/> }).collect_view()}
                </div>
            </div>
        </div>
    }
}

/// The graph drawn at its stored positions.
#[component]
pub fn Canvas(graph: Graph) -> impl IntoView {
    let placed: Vec<Placed<'_>> = graph
        .modules
        .iter()
        .map(|module| Placed {
            module,
            ports: ports(module),
        })
        .collect();
    let cables: Vec<CableLine> = graph
        .cables
        .iter()
        .filter_map(|cable| cable_line(cable, &placed))
        .collect();
    let modules: Vec<(Module, ModulePorts)> = placed
        .into_iter()
        .map(|entry| (entry.module.clone(), entry.ports))
        .collect();
    view! {
        <div class="pane" data-bench-pane="">
            <div class="viewport">
                <svg class="cables" aria-hidden="true">
                    {cables
                        .into_iter()
                        .map(|line| {
                            let class = if line.dangling { "cable dangling" } else { "cable" };
                            view! { <path class=class data-edge-id=line.id d=line.path></path> }
                        })
                        .collect_view()}
                </svg>
                {modules
                    .into_iter()
                    .map(|(module, ports)| view! { <ModuleBox module ports/> })
                    .collect_view()}
            </div>
        </div>
    }
}
