//! Wiring: whether a cable may join an output to an input, and why not in
//! a person's words. The canvas asks while a cable is dragged (the hint
//! before the drop) and when it is dropped; the rule is the model's, so it
//! lives here beside `ports()`.

use crate::document::Cable;
use crate::{Graph, ports};

/// A proposed cable: from an output port to an input port, as
/// (module id, port id).
#[derive(Clone, Debug, PartialEq)]
pub struct Connection {
    pub from: (String, String),
    pub to: (String, String),
    /// The cable whose end was picked up, when rewiring.
    pub rewire: Option<String>,
}

/// Whether a cable may join these ports. `Ok(Some(id))`: it replaces the
/// cable already in a single-cable input. `Err`: the reason it may not.
pub fn check_connection(graph: &Graph, connection: &Connection) -> Result<Option<String>, String> {
    let (source, target) = match (
        graph.module(&connection.from.0),
        graph.module(&connection.to.0),
    ) {
        (Some(source), Some(target)) => (source, target),
        _ => return Err("That module no longer exists.".to_owned()),
    };
    let output = ports(source)
        .output(&connection.from.1)
        .cloned()
        .ok_or("That output no longer exists.")?;
    let input = ports(target)
        .input(&connection.to.1)
        .cloned()
        .ok_or("That input no longer exists.")?;
    if source.id == target.id {
        return Err("A module cannot feed itself.".to_owned());
    }
    if !output.port_type.connects_to(input.port_type) {
        return Err(format!(
            "A {} output cannot feed a {} input (\"{}\" → \"{}\").",
            output.port_type.as_str(),
            input.port_type.as_str(),
            output.label,
            input.label
        ));
    }
    let existing: Vec<&Cable> = graph
        .cables
        .iter()
        .filter(|cable| {
            cable.to.module == target.id
                && cable.to.port == input.id
                && Some(&cable.id) != connection.rewire.as_ref()
        })
        .collect();
    if existing
        .iter()
        .any(|cable| cable.from.module == source.id && cable.from.port == output.id)
    {
        return Err("These ports are already joined.".to_owned());
    }
    Ok(if input.accepts_many {
        None
    } else {
        existing.first().map(|cable| cable.id.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::starter::starter_graph;
    use crate::{Endpoint, Module, ModuleKind, Position};

    fn connection(from: (&str, &str), to: (&str, &str)) -> Connection {
        Connection {
            from: (from.0.to_owned(), from.1.to_owned()),
            to: (to.0.to_owned(), to.1.to_owned()),
            rewire: None,
        }
    }

    #[test]
    fn incompatible_ports_are_refused_with_a_reason() {
        let graph = starter_graph();
        let refused =
            check_connection(&graph, &connection(("m2", "signal_out"), ("m3", "data_in")))
                .unwrap_err();
        assert_eq!(
            refused,
            "A signal output cannot feed a bundle input (\"Done\" → \"Results\")."
        );
        assert!(
            check_connection(
                &graph,
                &connection(("m2", "receipt_out"), ("m3", "data_in"))
            )
            .is_ok()
        );
        assert!(
            check_connection(&graph, &connection(("m2", "data_out"), ("m3", "data_in")))
                .unwrap_err()
                .contains("already joined")
        );
        assert!(
            check_connection(
                &graph,
                &connection(("m2", "data_out"), ("m2", "context_in"))
            )
            .is_err()
        );
    }

    #[test]
    fn a_single_cable_input_replaces_its_cable() {
        let mut graph = starter_graph();
        graph.cables.push(Cable::new(
            "c9",
            Endpoint::new("m1", "signal_out"),
            Endpoint::new("m2", "signal_in"),
        ));
        assert_eq!(
            check_connection(
                &graph,
                &connection(("m1", "signal_out"), ("m2", "signal_in"))
            )
            .unwrap_err(),
            "These ports are already joined."
        );
        graph
            .modules
            .push(Module::new("m4", ModuleKind::Input, Position::default()));
        assert_eq!(
            check_connection(
                &graph,
                &connection(("m4", "signal_out"), ("m2", "signal_in"))
            ),
            Ok(Some("c9".to_owned()))
        );
        // data_in takes many cables.
        assert_eq!(
            check_connection(&graph, &connection(("m4", "data_out"), ("m2", "data_in"))),
            Ok(None)
        );
    }
}
