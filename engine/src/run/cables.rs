//! The live cables of a run, each holding the last value it carried, and
//! which of them close a loop.

use graph::topology::Topology;

use crate::bundle::PortValue;

/// A live cable as the run sees it: where it goes, and what it holds.
#[derive(Clone, Debug)]
pub(super) struct LiveCable {
    pub id: String,
    /// Its condition's text, when it has one.
    pub condition: Option<String>,
    pub source: usize,
    /// The output port of `source` it leaves.
    pub source_port: String,
    pub target: usize,
    /// The input port of `target` it plugs into.
    pub port: String,
    /// It closes a loop: it does not hold up a first activation.
    pub loop_cable: bool,
    /// How many values it has carried in the run.
    pub arrivals: u32,
    /// The last value it carried.
    pub value: Option<PortValue>,
    /// That value arrived since `target` last ran.
    pub fresh: bool,
}

impl LiveCable {
    /// Puts a value on the cable.
    pub fn carry(&mut self, value: PortValue) {
        self.value = Some(value);
        self.fresh = true;
        self.arrivals += 1;
    }
}

/// The topology's live cables, in its order.
pub(super) fn live_cables(topology: &Topology<'_>) -> Vec<LiveCable> {
    let loops = loop_cables(topology);
    topology
        .live
        .iter()
        .zip(loops)
        .map(|((cable, from, to), loop_cable)| LiveCable {
            id: cable.id.clone(),
            condition: cable.condition().map(str::to_owned),
            source: *from,
            source_port: cable.from.port.clone(),
            target: *to,
            port: cable.to.port.clone(),
            loop_cable,
            arrivals: 0,
            value: None,
            fresh: false,
        })
        .collect()
}

/// Cables (indices into `topology.live`) that close a loop: found by a
/// depth-first walk from the entry modules, a cable to a module still on the
/// walk's path.
fn loop_cables(topology: &Topology<'_>) -> Vec<bool> {
    let count = topology.graph.modules.len();
    let mut outgoing: Vec<Vec<(usize, usize)>> = vec![Vec::new(); count];
    for (index, (_, from, to)) in topology.live.iter().enumerate() {
        outgoing[*from].push((index, *to));
    }
    let mut is_loop = vec![false; topology.live.len()];
    // 0 = not seen, 1 = on the path, 2 = done
    let mut state = vec![0u8; count];
    let mut roots = topology.entries();
    roots.extend(0..count);
    for root in roots {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        let mut stack = vec![(root, 0usize)];
        while let Some(&mut (module, ref mut next)) = stack.last_mut() {
            if let Some(&(cable, target)) = outgoing[module].get(*next) {
                *next += 1;
                match state[target] {
                    0 => {
                        state[target] = 1;
                        stack.push((target, 0));
                    }
                    1 => is_loop[cable] = true,
                    _ => {}
                }
            } else {
                state[module] = 2;
                stack.pop();
            }
        }
    }
    is_loop
}
