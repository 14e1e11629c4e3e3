//! The shape of a graph as its live cables make it: where runs start, what is
//! reachable, and which modules sit on cycles. Validation and the run engine
//! read the same answers from here.

use std::collections::HashMap;

use crate::ports::{ModulePorts, ports};
use crate::{Cable, Graph, ModuleKind};

/// A graph's modules' ports and its cables classified, computed once.
pub struct Topology<'a> {
    pub graph: &'a Graph,
    /// `ports[i]` belongs to `graph.modules[i]`.
    pub ports: Vec<ModulePorts>,
    index: HashMap<&'a str, usize>,
    /// Cables joining an existing output port to an existing input port,
    /// as (cable, from module index, to module index).
    pub live: Vec<(&'a Cable, usize, usize)>,
    successors: Vec<Vec<usize>>,
    predecessors: Vec<Vec<usize>>,
}

impl<'a> Topology<'a> {
    pub fn new(graph: &'a Graph) -> Topology<'a> {
        let ports: Vec<ModulePorts> = graph.modules.iter().map(ports).collect();
        let index: HashMap<&str, usize> = graph
            .modules
            .iter()
            .enumerate()
            .map(|(position, module)| (module.id.as_str(), position))
            .collect();
        let mut live = Vec::new();
        let mut successors = vec![Vec::new(); graph.modules.len()];
        let mut predecessors = vec![Vec::new(); graph.modules.len()];
        for cable in &graph.cables {
            let (Some(&from), Some(&to)) = (
                index.get(cable.from.module.as_str()),
                index.get(cable.to.module.as_str()),
            ) else {
                continue;
            };
            if ports[from].output(&cable.from.port).is_none()
                || ports[to].input(&cable.to.port).is_none()
            {
                continue;
            }
            live.push((cable, from, to));
            successors[from].push(to);
            predecessors[to].push(from);
        }
        Topology {
            graph,
            ports,
            index,
            live,
            successors,
            predecessors,
        }
    }

    pub fn module_index(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    pub fn successors(&self, module: usize) -> &[usize] {
        &self.successors[module]
    }

    pub fn predecessors(&self, module: usize) -> &[usize] {
        &self.predecessors[module]
    }

    /// Modules a run starts at once: modules of a kind that starts a run
    /// (`step.input`) and modules with no live cable coming in.
    pub fn entries(&self) -> Vec<usize> {
        (0..self.graph.modules.len())
            .filter(|&module| {
                self.graph.modules[module]
                    .kind()
                    .is_some_and(ModuleKind::starts_a_run)
                    || self.predecessors[module].is_empty()
            })
            .collect()
    }

    /// `reached[i]` says whether module `i` can be reached from `starts`
    /// following cables forwards.
    pub fn reachable_from(&self, starts: &[usize]) -> Vec<bool> {
        self.walk(starts, &self.successors)
    }

    /// `found[i]` says whether module `i` is upstream of `module` (a module
    /// on a cycle is upstream of itself).
    pub fn upstream_of(&self, module: usize) -> Vec<bool> {
        self.walk(&self.predecessors[module], &self.predecessors)
    }

    fn walk(&self, starts: &[usize], edges: &[Vec<usize>]) -> Vec<bool> {
        let mut seen = vec![false; self.graph.modules.len()];
        let mut stack: Vec<usize> = starts.to_vec();
        while let Some(module) = stack.pop() {
            if std::mem::replace(&mut seen[module], true) {
                continue;
            }
            stack.extend(edges[module].iter().copied().filter(|&next| !seen[next]));
        }
        seen
    }

    /// Every strongly connected component that holds a cycle (two or more
    /// modules, or one module cabled to itself), each in document order.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        let components = strongly_connected(&self.successors);
        let mut cycles: Vec<Vec<usize>> = components
            .into_iter()
            .filter(|component| {
                component.len() > 1 || self.successors[component[0]].contains(&component[0])
            })
            .map(|mut component| {
                crate::order::by_rank(&mut component, |&index| index);
                component
            })
            .collect();
        crate::order::by_rank(&mut cycles, |component| component[0]);
        cycles
    }

    /// Whether a cycle is bounded (PRODUCT §3.9): it passes through a
    /// module of a kind that bounds loops (a review gate, by its
    /// `max_rounds`), through a module with more than one attempt whose
    /// `give_up_out` leads out of the cycle (its attempts count every time
    /// the loop comes back, and then it gives up), or leaves a module
    /// through an intent port inside the cycle (the model chooses, under
    /// the run's activation limit).
    pub fn cycle_is_bounded(&self, cycle: &[usize]) -> bool {
        let inside =
            |(_, from, to): &&(&Cable, usize, usize)| cycle.contains(from) && cycle.contains(to);
        let through_gate = cycle.iter().any(|&module| {
            self.graph.modules[module]
                .kind()
                .is_some_and(ModuleKind::bounds_loops)
        });
        let through_attempts = cycle.iter().any(|&module| {
            self.graph.modules[module].config.max_attempts() > 1
                && !self.live.iter().filter(inside).any(|(cable, from, _)| {
                    *from == module && cable.from.port == crate::ports::GIVE_UP_OUT
                })
        });
        let through_intent = self.live.iter().filter(inside).any(|(cable, from, _)| {
            self.ports[*from]
                .output(&cable.from.port)
                .is_some_and(|port| port.retry)
        });
        through_gate || through_attempts || through_intent
    }
}

/// Tarjan's algorithm without recursion (graphs of thousands of modules run
/// in the browser, where the stack is small).
fn strongly_connected(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNVISITED: usize = usize::MAX;
    let count = successors.len();
    let mut order = vec![UNVISITED; count];
    let mut low = vec![0; count];
    let mut on_stack = vec![false; count];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut next_order = 0;
    for root in 0..count {
        if order[root] != UNVISITED {
            continue;
        }
        // (module, index of the next successor to look at)
        let mut work = vec![(root, 0usize)];
        order[root] = next_order;
        low[root] = next_order;
        next_order += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (module, ref mut next)) = work.last_mut() {
            if let Some(&successor) = successors[module].get(*next) {
                *next += 1;
                if order[successor] == UNVISITED {
                    order[successor] = next_order;
                    low[successor] = next_order;
                    next_order += 1;
                    stack.push(successor);
                    on_stack[successor] = true;
                    work.push((successor, 0));
                } else if on_stack[successor] {
                    low[module] = low[module].min(order[successor]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[module]);
            }
            if low[module] == order[module] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == module {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tarjan_finds_the_cycles_and_only_them() {
        // 0 → 1 → 2 → 0, 2 → 3, 3 → 3, 4 alone
        let successors = vec![vec![1], vec![2], vec![0, 3], vec![3], vec![]];
        let mut components: Vec<Vec<usize>> = strongly_connected(&successors)
            .into_iter()
            .map(|mut component| {
                component.sort_unstable();
                component
            })
            .collect();
        components.sort();
        assert_eq!(components, vec![vec![0, 1, 2], vec![3], vec![4]]);
    }

    #[test]
    fn a_long_chain_does_not_overflow_the_stack() {
        let count = 200_000;
        let successors: Vec<Vec<usize>> = (0..count)
            .map(|module| {
                if module + 1 < count {
                    vec![module + 1]
                } else {
                    vec![0]
                }
            })
            .collect();
        let components = strongly_connected(&successors);
        assert_eq!(components.len(), 1);
        assert_eq!(components[0].len(), count);
    }
}
