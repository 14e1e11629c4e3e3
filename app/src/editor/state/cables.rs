//! Drawing and rewiring cables: the wiring rule (`graph::check_connection`)
//! said before the drop and applied on it.

use graph::{Cable, Connection, Endpoint, check_connection};
use leptos::prelude::*;

use super::EditorState;

impl EditorState {
    /// A cable being drawn is over `over` (or no input): says why it does
    /// not fit, if it does not.
    pub fn hover_connection(&self, over: Option<Connection>) {
        let reason = over.and_then(|connection| {
            self.with_graph(|graph| check_connection(graph, &connection))
                .err()
        });
        let at = self.model.pointer.get_value().unwrap_or_default();
        self.connection_hint
            .set(reason.map(|reason| (reason, at.0, at.1)));
    }

    /// Draws (or rewires) a cable, refusing ports that do not fit with a
    /// short reason.
    pub fn connect(&self, connection: Connection) {
        let checked = self.with_graph(|graph| check_connection(graph, &connection));
        let replaced = match checked {
            Ok(replaced) => replaced,
            Err(reason) => {
                self.notify(reason);
                return;
            }
        };
        let Connection { from, to, rewire } = connection;
        self.edit(
            if rewire.is_some() {
                "Rewire cable"
            } else {
                "Connect"
            },
            None,
            |edit| {
                if let Some(old) = replaced {
                    edit.remove_cable(&old);
                }
                match rewire {
                    Some(id) => {
                        if let Some(cable) = edit.cable_mut(&id) {
                            cable.from = Endpoint::new(from.0, from.1);
                            cable.to = Endpoint::new(to.0, to.1);
                        }
                    }
                    None => {
                        let id = edit.graph().next_cable_id();
                        edit.add_cable(Cable::new(
                            id,
                            Endpoint::new(from.0, from.1),
                            Endpoint::new(to.0, to.1),
                        ));
                    }
                }
            },
        );
    }
}
