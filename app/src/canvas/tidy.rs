//! Tidy up (PRODUCT §4): modules laid out left to right in layers, as a
//! plain function of their boxes and cables. A module's layer is the
//! longest chain of cables into it (inputs on the left, outputs on the
//! right); a cable that closes a loop (a revise loop back to its writer)
//! is left out of the layering, so the loop reads left to right and comes
//! back. Within a layer modules are ordered by where their neighbours are
//! (a few barycentre sweeps), starting from document order: the layout
//! depends on the modules and cables, not on where they were, so the same
//! graph always comes out the same and a tidy graph stays as it is. Modules no cable joins are
//! laid out as parts of their own, one below the other. The layout starts
//! at the top left of where the modules were, so a tidied selection stays
//! where it was.
//!
//! Compared with a layout crate: rust-sugiyama (petgraph, and a far bigger
//! chunk of the bundle) and dagre ports lay out any graph well, but this
//! canvas needs only layers, an order and a loop kept readable, for
//! modules whose sizes it already knows.

use std::collections::HashMap;

use graph::Position;

use super::arrange::Placed;

/// Space between layers, and between modules in a layer.
pub const LAYER_GAP: f64 = 80.0;
pub const ROW_GAP: f64 = 40.0;
/// Space between parts no cable joins.
const PART_GAP: f64 = 80.0;
/// Barycentre sweeps (down and up): enough to settle a graph of a
/// thousand modules, few enough to stay far under a frame or ten.
const SWEEPS: usize = 4;

/// Where each of `modules` goes, laid out along `cables` (from, to: module
/// ids; cables to modules not in `modules` are ignored). Only the modules
/// that move are returned.
pub fn tidy(modules: &[Placed], cables: &[(String, String)]) -> Vec<(String, Position)> {
    if modules.is_empty() {
        return Vec::new();
    }
    let index: HashMap<&str, usize> = modules
        .iter()
        .enumerate()
        .map(|(at, module)| (module.id.as_str(), at))
        .collect();
    let mut edges: Vec<(usize, usize)> = cables
        .iter()
        .filter_map(|(from, to)| Some((*index.get(from.as_str())?, *index.get(to.as_str())?)))
        .filter(|(from, to)| from != to)
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let forward = without_loops(modules, &edges);
    let layers = layers(modules.len(), &forward);
    let left = modules
        .iter()
        .map(|module| module.position.x)
        .fold(f64::INFINITY, f64::min);
    let mut top = modules
        .iter()
        .map(|module| module.position.y)
        .fold(f64::INFINITY, f64::min);
    let mut placed = vec![Position::default(); modules.len()];
    for part in parts(modules.len(), &edges, modules) {
        let rows = ordered(&part, &layers, &forward);
        top = place(&rows, modules, left, top, &mut placed) + PART_GAP;
    }
    modules
        .iter()
        .zip(placed)
        .filter(|(module, at)| module.position != *at)
        .map(|(module, at)| (module.id.clone(), at))
        .collect()
}

/// The cables with those that close a loop left out: a depth-first walk
/// from the modules nothing feeds (then any left, in document order)
/// drops a cable back to a module still on its path.
fn without_loops(modules: &[Placed], edges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let count = modules.len();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); count];
    let mut fed = vec![false; count];
    for &(from, to) in edges {
        out[from].push(to);
        fed[to] = true;
    }
    // 0: not seen, 1: on the path, 2: done.
    let mut state = vec![0u8; count];
    let mut kept = Vec::with_capacity(edges.len());
    let starts = (0..count)
        .filter(|&at| !fed[at])
        .chain((0..count).filter(|&at| fed[at]));
    for start in starts {
        if state[start] != 0 {
            continue;
        }
        // An explicit stack: a chain of a thousand modules is deep.
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some((at, next)) = stack.last_mut() {
            let at = *at;
            if let Some(&to) = out[at].get(*next) {
                *next += 1;
                match state[to] {
                    0 => {
                        kept.push((at, to));
                        state[to] = 1;
                        stack.push((to, 0));
                    }
                    1 => {}
                    _ => kept.push((at, to)),
                }
            } else {
                state[at] = 2;
                stack.pop();
            }
        }
    }
    kept
}

/// Each module's layer: the longest chain of (loop-free) cables into it.
fn layers(count: usize, forward: &[(usize, usize)]) -> Vec<usize> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); count];
    let mut waiting = vec![0usize; count];
    for &(from, to) in forward {
        out[from].push(to);
        waiting[to] += 1;
    }
    let mut layer = vec![0usize; count];
    let mut ready: Vec<usize> = (0..count).filter(|&at| waiting[at] == 0).rev().collect();
    while let Some(at) = ready.pop() {
        for &to in &out[at] {
            layer[to] = layer[to].max(layer[at] + 1);
            waiting[to] -= 1;
            if waiting[to] == 0 {
                ready.push(to);
            }
        }
    }
    layer
}

/// The parts no cable joins, each its modules, in the order of their
/// topmost module (then document order).
fn parts(count: usize, edges: &[(usize, usize)], modules: &[Placed]) -> Vec<Vec<usize>> {
    let mut root: Vec<usize> = (0..count).collect();
    fn find(root: &mut [usize], mut at: usize) -> usize {
        while root[at] != at {
            root[at] = root[root[at]];
            at = root[at];
        }
        at
    }
    for &(from, to) in edges {
        let (a, b) = (find(&mut root, from), find(&mut root, to));
        if a != b {
            root[a.max(b)] = a.min(b);
        }
    }
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut part_of: HashMap<usize, usize> = HashMap::new();
    for at in 0..count {
        let key = find(&mut root, at);
        let part = *part_of.entry(key).or_insert_with(|| {
            parts.push(Vec::new());
            parts.len() - 1
        });
        parts[part].push(at);
    }
    let top = |part: &Vec<usize>| {
        part.iter()
            .map(|&at| modules[at].position.y)
            .fold(f64::INFINITY, f64::min)
    };
    parts.sort_by(|a, b| top(a).total_cmp(&top(b)).then(a[0].cmp(&b[0])));
    parts
}

/// A part's layers, each ordered top to bottom: first in document order,
/// then by the barycentre of their neighbours, sweeping down the layers
/// and back up.
fn ordered(part: &[usize], layer: &[usize], forward: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let depth = part.iter().map(|&at| layer[at]).max().unwrap_or(0);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); depth + 1];
    // `part` is in document order.
    for &at in part {
        rows[layer[at]].push(at);
    }
    let mut before: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut after: HashMap<usize, Vec<usize>> = HashMap::new();
    for &(from, to) in forward {
        before.entry(to).or_default().push(from);
        after.entry(from).or_default().push(to);
    }
    // Where a module is in its layer, as a fraction, so that layers of
    // different lengths compare.
    let mut rank = vec![0.0f64; layer.len()];
    let rerank = |row: &[usize], rank: &mut [f64]| {
        let length = row.len().max(1) as f64;
        for (place, &at) in row.iter().enumerate() {
            rank[at] = (place as f64 + 0.5) / length;
        }
    };
    for row in &rows {
        rerank(row, &mut rank);
    }
    for sweep in 0..SWEEPS * 2 {
        let (neighbours, order): (&HashMap<usize, Vec<usize>>, Vec<usize>) = if sweep % 2 == 0 {
            (&before, (1..rows.len()).collect())
        } else {
            (&after, (0..rows.len().saturating_sub(1)).rev().collect())
        };
        for at in order {
            let keys: HashMap<usize, f64> = rows[at]
                .iter()
                .map(|&module| {
                    let key = neighbours
                        .get(&module)
                        .filter(|list| !list.is_empty())
                        .map_or(rank[module], |list| {
                            list.iter().map(|&other| rank[other]).sum::<f64>() / list.len() as f64
                        });
                    (module, key)
                })
                .collect();
            rows[at].sort_by(|a, b| keys[a].total_cmp(&keys[b]).then(a.cmp(b)));
            rerank(&rows[at], &mut rank);
        }
    }
    rows
}

/// Places a part's layers from `left`, `top`: each layer a column as wide
/// as its widest module, its modules one below the other, the columns
/// centred on the tallest. Returns the part's bottom.
fn place(
    rows: &[Vec<usize>],
    modules: &[Placed],
    left: f64,
    top: f64,
    placed: &mut [Position],
) -> f64 {
    let height = |row: &Vec<usize>| {
        row.iter().map(|&at| modules[at].height).sum::<f64>()
            + ROW_GAP * row.len().saturating_sub(1) as f64
    };
    let tallest = rows.iter().map(height).fold(0.0, f64::max);
    let mut x = left;
    for row in rows {
        let mut y = top + (tallest - height(row)) / 2.0;
        for &at in row {
            placed[at] = Position {
                x: x.round(),
                y: y.round(),
            };
            y += modules[at].height + ROW_GAP;
        }
        let widest = row.iter().map(|&at| modules[at].width).fold(0.0, f64::max);
        if !row.is_empty() {
            x += widest + LAYER_GAP;
        }
    }
    top + tallest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(id: &str, x: f64, y: f64) -> Placed {
        Placed {
            id: id.to_owned(),
            position: Position { x, y },
            width: 182.0,
            height: 78.0,
        }
    }

    fn cable(from: &str, to: &str) -> (String, String) {
        (from.to_owned(), to.to_owned())
    }

    fn laid_out(modules: &[Placed], cables: &[(String, String)]) -> Vec<Placed> {
        let moves = tidy(modules, cables);
        modules
            .iter()
            .map(|module| Placed {
                position: moves
                    .iter()
                    .find(|(id, _)| *id == module.id)
                    .map_or(module.position, |(_, at)| *at),
                ..module.clone()
            })
            .collect()
    }

    fn overlap(a: &Placed, b: &Placed) -> bool {
        a.position.x < b.position.x + b.width
            && b.position.x < a.position.x + a.width
            && a.position.y < b.position.y + b.height
            && b.position.y < a.position.y + a.height
    }

    fn find<'a>(modules: &'a [Placed], id: &str) -> &'a Placed {
        modules
            .iter()
            .find(|module| module.id == id)
            .unwrap_or(&modules[0])
    }

    /// A scrambled graph: a chain with branches, a loop back, and a
    /// module no cable joins, all piled on one spot.
    fn scrambled() -> (Vec<Placed>, Vec<(String, String)>) {
        let modules = vec![
            module("review", 10.0, 10.0),
            module("input", 30.0, 0.0),
            module("write", 0.0, 20.0),
            module("publish", 5.0, 5.0),
            module("notify", 15.0, 25.0),
            module("alone", 12.0, 12.0),
        ];
        let cables = vec![
            cable("input", "write"),
            cable("write", "review"),
            cable("review", "publish"),
            cable("review", "write"),
            cable("publish", "notify"),
            cable("input", "notify"),
        ];
        (modules, cables)
    }

    #[test]
    fn no_two_modules_overlap() {
        let (modules, cables) = scrambled();
        let after = laid_out(&modules, &cables);
        for (at, a) in after.iter().enumerate() {
            for b in &after[at + 1..] {
                assert!(!overlap(a, b), "{} and {} overlap: {after:?}", a.id, b.id);
            }
        }
    }

    #[test]
    fn cables_run_left_to_right_except_the_one_closing_a_loop() {
        let (modules, cables) = scrambled();
        let after = laid_out(&modules, &cables);
        for (from, to) in &cables {
            let (from_box, to_box) = (find(&after, from), find(&after, to));
            if (from.as_str(), to.as_str()) == ("review", "write") {
                assert!(
                    to_box.position.x < from_box.position.x,
                    "the loop comes back"
                );
            } else {
                assert!(
                    from_box.position.x + from_box.width < to_box.position.x,
                    "{from} → {to}: {after:?}"
                );
            }
        }
        // The layout starts where the modules were.
        let left = after
            .iter()
            .map(|m| m.position.x)
            .fold(f64::INFINITY, f64::min);
        let top = after
            .iter()
            .map(|m| m.position.y)
            .fold(f64::INFINITY, f64::min);
        assert_eq!((left, top), (0.0, 0.0));
    }

    #[test]
    fn the_same_graph_is_laid_out_the_same_and_a_tidy_graph_stays() {
        let (modules, cables) = scrambled();
        assert_eq!(tidy(&modules, &cables), tidy(&modules, &cables));
        let once = laid_out(&modules, &cables);
        assert!(
            tidy(&once, &cables).is_empty(),
            "{:?}",
            tidy(&once, &cables)
        );
    }

    #[test]
    fn a_module_no_cable_joins_goes_below_the_rest() {
        let (modules, cables) = scrambled();
        let after = laid_out(&modules, &cables);
        let alone = find(&after, "alone");
        let others = after
            .iter()
            .filter(|module| module.id != "alone")
            .map(|module| module.position.y + module.height)
            .fold(0.0, f64::max);
        assert!(alone.position.y >= others + PART_GAP, "{after:?}");
    }

    #[test]
    fn a_thousand_modules_in_a_chain_with_branches_lay_out_without_overlap() {
        let modules: Vec<Placed> = (0..1000)
            .map(|at| module(&format!("m{at}"), (at % 37) as f64, (at % 11) as f64))
            .collect();
        let cables: Vec<(String, String)> = (1..1000)
            .map(|at| cable(&format!("m{}", at / 2), &format!("m{at}")))
            .collect();
        let after = laid_out(&modules, &cables);
        for (from, to) in &cables {
            assert!(find(&after, from).position.x < find(&after, to).position.x);
        }
        let mut by_column: HashMap<i64, Vec<&Placed>> = HashMap::new();
        for module in &after {
            by_column
                .entry(module.position.x as i64)
                .or_default()
                .push(module);
        }
        for column in by_column.values_mut() {
            column.sort_by(|a, b| a.position.y.total_cmp(&b.position.y));
            for pair in column.windows(2) {
                assert!(pair[0].position.y + pair[0].height <= pair[1].position.y);
            }
        }
    }
}
