//! The order a port's cables are tried in when some of them have
//! conditions: their order in the document. The canvas numbers them 1, 2,
//! 3… from here, the panel moves one up or down here, and the run engine
//! tries them in the same order ([`crate::condition`] is the language).

use std::collections::HashMap;

use crate::{Cable, Graph};

/// A cable's place among its port's cables, for ports where some cable has
/// a condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CableOrder {
    /// 1 for the cable tried first.
    pub number: usize,
    /// `None`: the catch-all.
    pub condition: Option<String>,
}

fn same_port(left: &Cable, right: &Cable) -> bool {
    left.from.module == right.from.module && left.from.port == right.from.port
}

/// The cables leaving the same output port as `cable` (it included), in
/// the order they are tried.
pub fn port_cables<'a>(graph: &'a Graph, cable: &'a Cable) -> impl Iterator<Item = &'a Cable> {
    graph
        .cables
        .iter()
        .filter(move |other| same_port(other, cable))
}

/// Every cable of a port where some cable has a condition, with its number.
pub fn cable_orders(graph: &Graph) -> HashMap<String, CableOrder> {
    let mut orders = HashMap::new();
    let mut next: HashMap<(&str, &str), usize> = HashMap::new();
    let conditioned: Vec<(&str, &str)> = graph
        .cables
        .iter()
        .filter(|cable| cable.condition().is_some())
        .map(|cable| (cable.from.module.as_str(), cable.from.port.as_str()))
        .collect();
    for cable in &graph.cables {
        let port = (cable.from.module.as_str(), cable.from.port.as_str());
        if !conditioned.contains(&port) {
            continue;
        }
        let number = next.entry(port).or_insert(0);
        *number += 1;
        orders.insert(
            cable.id.clone(),
            CableOrder {
                number: *number,
                condition: cable.condition().map(str::to_owned),
            },
        );
    }
    orders
}

/// Moves a cable one place earlier (`earlier`) or later among its port's
/// cables. False when it is already first (or last) or not found.
pub fn move_cable(graph: &mut Graph, cable_id: &str, earlier: bool) -> bool {
    let Some(at) = graph.cables.iter().position(|cable| cable.id == cable_id) else {
        return false;
    };
    let cable = &graph.cables[at];
    let neighbour = if earlier {
        graph.cables[..at]
            .iter()
            .rposition(|other| same_port(other, cable))
    } else {
        graph.cables[at + 1..]
            .iter()
            .position(|other| same_port(other, cable))
            .map(|offset| at + 1 + offset)
    };
    match neighbour {
        Some(other) => {
            graph.cables.swap(at, other);
            true
        }
        None => false,
    }
}

/// A condition as the canvas shows it: `get('$.output.intent')` read as
/// `intent`, other paths as themselves, and no longer than `limit`
/// characters.
pub fn short_condition(text: &str, limit: usize) -> String {
    let mut short = String::new();
    let mut rest = text.trim();
    while let Some(start) = rest.find("get(") {
        short.push_str(&rest[..start]);
        let after = &rest[start + 4..];
        let quote = after.trim_start().chars().next();
        let inner = quote
            .filter(|quote| matches!(quote, '\'' | '"'))
            .and_then(|quote| {
                let body = &after.trim_start()[1..];
                let end = body.find(quote)?;
                let close = body[end + 1..].find(')')?;
                Some((body[..end].to_owned(), &body[end + 1 + close + 1..]))
            });
        match inner {
            Some((path, remainder)) => {
                let path = path
                    .strip_prefix("$.output.")
                    .map_or(path.as_str(), |field| field);
                short.push_str(path);
                rest = remainder;
            }
            None => {
                short.push_str("get(");
                rest = after;
            }
        }
    }
    short.push_str(rest);
    if short.chars().count() > limit {
        let mut cut: String = short.chars().take(limit.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn graph() -> Graph {
        let cable = |id: &str, port: &str, to: &str, condition: Option<&str>| {
            let mut cable = json!({"id": id, "from": {"module": "a", "port": port}, "to": {"module": to, "port": "data_in"}});
            if let Some(condition) = condition {
                cable["condition"] = json!(condition);
            }
            cable
        };
        Graph::from_value(json!({"modules": [], "cables": [
            cable("c1", "data_out", "x", Some("get('$.output.intent') == 'sales'")),
            cable("c2", "signal_out", "y", None),
            cable("c3", "data_out", "z", None),
            cable("c4", "data_out", "w", Some("true")),
        ]}))
        .unwrap_or_default()
    }

    #[test]
    fn cables_of_a_conditioned_port_are_numbered_in_document_order() {
        let orders = cable_orders(&graph());
        assert_eq!(orders.len(), 3, "the signal cable has no number");
        assert_eq!(orders["c1"].number, 1);
        assert_eq!(
            orders["c3"],
            CableOrder {
                number: 2,
                condition: None
            }
        );
        assert_eq!(orders["c4"].number, 3);
    }

    #[test]
    fn a_cable_moves_past_its_own_ports_cables_only() {
        let mut graph = graph();
        assert!(move_cable(&mut graph, "c4", true));
        let ids: Vec<&str> = graph.cables.iter().map(|cable| cable.id.as_str()).collect();
        assert_eq!(ids, ["c1", "c2", "c4", "c3"]);
        assert!(move_cable(&mut graph, "c4", true));
        assert!(!move_cable(&mut graph, "c4", true), "already first");
        assert_eq!(cable_orders(&graph)["c4"].number, 1);
        assert!(move_cable(&mut graph, "c1", false));
        assert!(!move_cable(&mut graph, "c2", false), "alone on its port");
        assert!(!move_cable(&mut graph, "nope", false));
    }

    #[test]
    fn conditions_are_shortened_for_the_canvas() {
        assert_eq!(
            short_condition("get('$.output.intent') == 'sales'", 40),
            "intent == 'sales'"
        );
        assert_eq!(
            short_condition(
                "get(\"$.state['a.status']\") == 'x' and get('$.output.n') > 2",
                80
            ),
            "$.state['a.status'] == 'x' and n > 2"
        );
        assert_eq!(
            short_condition("get('$.output.intent') == 'sales'", 10),
            "intent ==…"
        );
        assert_eq!(short_condition("get(", 10), "get(");
    }
}
