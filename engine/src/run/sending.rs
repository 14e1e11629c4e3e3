//! Sending a value down the cables that leave a port (all of them, or the
//! one their conditions choose), and giving up for a module whose attempts
//! are used, which sends why on `give_up_out`.

use std::sync::Arc;

use graph::ports::GIVE_UP_OUT;
use wire::activation::{ActivationRecord, Route};
use wire::content::meta::GaveUp;
use wire::event::RunEvent;

use super::Run;
use crate::bundle::{ContextBundle, PortValue};
use crate::routing;

impl Run {
    /// Puts `value` on the cables from `module`'s `port` that take it,
    /// records and announces the way it went when there were conditions,
    /// and says whether any cable took it.
    pub(super) fn send(
        &mut self,
        module: usize,
        activation: u32,
        record: &mut ActivationRecord,
        port: &str,
        value: PortValue,
    ) -> bool {
        let Some(cables) = self.progress[module].cables_from(port) else {
            return false;
        };
        let exits: Vec<routing::Exit<'_>> = cables
            .iter()
            .map(|&index| routing::Exit {
                cable_id: &self.cables[index].id,
                condition: self.cables[index].condition.as_deref(),
            })
            .collect();
        let choice = routing::choose(port, &exits, || {
            routing::context(&value, record, &self.run_input.text, &self.state)
        });
        for &position in &choice.taken {
            self.cables[cables[position]].carry(value.clone());
        }
        if let Some(route) = choice.route {
            self.emit(route_event(&record.module_id, activation, &route));
            record.routes.push(route);
        }
        !choice.taken.is_empty()
    }

    /// Gives up for a module whose attempts are used: records and announces
    /// it, and sends why on `give_up_out`. Returns the run's failure when
    /// no cable takes it.
    pub(super) fn give_up(
        &mut self,
        module: usize,
        activation: u32,
        record: &mut ActivationRecord,
        attempts: u32,
        reason: String,
    ) -> Option<String> {
        let label = self.progress[module].label.clone();
        let module_id = record.module_id.clone();
        let plural = if attempts == 1 { "" } else { "s" };
        let message = format!("\"{label}\" gave up after {attempts} attempt{plural}: {reason}");
        record.gave_up = Some(reason.clone());
        Arc::make_mut(&mut self.state).insert(format!("{label}.status"), "gave_up".to_owned());
        self.emit(RunEvent::ModuleGaveUp {
            module_id: module_id.clone(),
            activation,
            attempts,
            reason,
        });
        let mut bundle = ContextBundle::text(&module_id, message.clone());
        bundle.add_meta(&GaveUp::after(attempts));
        let value = PortValue::Bundle(bundle);
        if self.send(module, activation, record, GIVE_UP_OUT, value.clone()) {
            record.outputs.insert(GIVE_UP_OUT.to_owned(), value);
            None
        } else {
            Some(message)
        }
    }
}

/// The event that says which way a port with conditions went.
fn route_event(module_id: &str, activation: u32, route: &Route) -> RunEvent {
    match &route.cable_id {
        Some(cable_id) => RunEvent::CableTaken {
            module_id: module_id.to_owned(),
            activation,
            port: route.port.clone(),
            cable_id: cable_id.clone(),
        },
        None => RunEvent::CableNoneTaken {
            module_id: module_id.to_owned(),
            activation,
            port: route.port.clone(),
            reason: route.reason.clone(),
        },
    }
}
