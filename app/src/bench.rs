//! `/bench?bench=N`: the canvas benchmark page of
//! `../shared/bench/canvas/CONTRACT.md`. The page builds the contract's graph
//! in the browser at start-up (never fetched) and shows it in the same
//! canvas the editor uses, with the same drag, pan and zoom.

use leptos::prelude::*;

use crate::canvas::model::{CanvasModel, EdgeHandle, NodeHandle, NodeLook, PortView};
use crate::canvas::{Canvas, CanvasEvents};

/// The contract's random numbers: a 32-bit LCG, Numerical Recipes
/// constants, seed 42.
struct Lcg(u32);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        self.0
    }

    /// `floor(next() * n / 2^32)`: the high bits.
    fn below(&mut self, n: u32) -> u32 {
        ((u64::from(self.next()) * u64::from(n)) >> 32) as u32
    }
}

/// One edge of the contract graph: (source, output port, target, input port).
pub type BenchEdge = (u32, u32, u32, u32);

/// The contract's edges for `n` nodes, in order (§2).
pub fn contract_edges(n: u32) -> Vec<BenchEdge> {
    let mut edges = Vec::new();
    for i in 0..n.saturating_sub(1) {
        edges.push((i, i % 3, i + 1, i % 2));
    }
    let mut random = Lcg(42);
    for _ in 0..n / 2 {
        let a = random.below(n);
        let mut b = random.below(n);
        if b == a {
            b = (a + 1) % n;
        }
        let p = random.below(3);
        let q = random.below(2);
        edges.push((a, p, b, q));
    }
    edges
}

/// Node `i`'s position: a grid of ceil(√n) columns, 220 × 140 apart.
pub fn contract_position(i: u32, n: u32) -> (f64, f64) {
    let mut columns = 1;
    while columns * columns < n {
        columns += 1;
    }
    (
        f64::from(i % columns) * 220.0,
        f64::from(i / columns) * 140.0,
    )
}

fn port(id: String) -> PortView {
    PortView {
        title: id.clone(),
        label: id.clone(),
        description: String::new(),
        id,
        accent: "accent",
        port_type: graph::PortType::Bundle,
    }
}

pub(crate) fn contract_model(model: &CanvasModel, n: u32) -> (Vec<NodeHandle>, Vec<EdgeHandle>) {
    let nodes = (0..n)
        .map(|i| {
            let (x, y) = contract_position(i, n);
            model.node_handle(
                &i.to_string(),
                graph::Position { x, y },
                NodeLook {
                    title: format!("Module {i}"),
                    subtitle: String::new(),
                    kind: "bench".to_owned(),
                    note: String::new(),
                    inputs: (0..2)
                        .map(|port_index| port(format!("in{port_index}")))
                        .collect(),
                    outputs: (0..3)
                        .map(|port_index| port(format!("out{port_index}")))
                        .collect(),
                },
            )
        })
        .collect();
    let edges = contract_edges(n)
        .into_iter()
        .enumerate()
        .map(|(index, (a, p, b, q))| {
            model.edge_handle(
                &format!("e{index}"),
                (a.to_string(), format!("out{p}")),
                (b.to_string(), format!("in{q}")),
            )
        })
        .collect();
    (nodes, edges)
}

/// `name=N` from the address, in the browser (`bench=N`, `notes=K`).
fn requested(name: &str) -> Option<u32> {
    let search = web_sys::window()?.location().search().ok()?;
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        .and_then(|value| value.parse().ok())
}

/// `count` notes over the contract graph of `n` modules, spread over its
/// grid, each a few lines of Markdown: what a graph people annotate has.
pub fn bench_notes(count: u32, n: u32) -> Vec<graph::notes::Note> {
    let mut random = Lcg(7);
    let (width, height) = contract_position(n.saturating_sub(1), n);
    (0..count)
        .map(|index| graph::notes::Note {
            id: format!("note-{index}"),
            text: format!(
                "### Note {index}\n- what this part does\n- **who** to ask: [the guide](https://example.com/{index})"
            ),
            position: graph::Position {
                x: f64::from(random.below(1 + width as u32)) + 30.0,
                y: f64::from(random.below(1 + height as u32)) + 60.0,
            },
            size: graph::notes::NEW_NOTE_SIZE,
            colour: graph::frame::Colour::ALL[index as usize % graph::frame::Colour::ALL.len()],
        })
        .collect()
}

#[component]
pub fn BenchPage() -> impl IntoView {
    let model = CanvasModel::new();
    let pane = NodeRef::new();
    // After hydration, in the browser only: the graph is built here.
    Effect::new(move |_| {
        if let Some(n) = requested("bench") {
            let n = n.min(100_000);
            let (nodes, edges) = contract_model(&model, n);
            model.load(nodes, edges);
            let notes = requested("notes")
                .unwrap_or(0)
                .min(graph::notes::MOST_NOTES as u32);
            let notes = bench_notes(notes, n)
                .iter()
                .map(graph::notes::Note::to_value)
                .collect();
            crate::canvas::note_layer::draw(model, Some(serde_json::Value::Array(notes)), false);
        }
    });
    view! {
        <div class="bench-page">
            <Canvas model editable=false movable=true events=CanvasEvents::ignored() pane/>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a over `"<src>.out<p>><dst>.in<q>;"` per edge (the contract's fingerprint).
    fn fingerprint(n: u32) -> String {
        let mut hash: u32 = 0x811c_9dc5;
        for (a, p, b, q) in contract_edges(n) {
            for byte in format!("{a}.out{p}>{b}.in{q};").bytes() {
                hash ^= u32::from(byte);
                hash = hash.wrapping_mul(0x0100_0193);
            }
        }
        format!("{hash:08x}")
    }

    #[test]
    fn the_graph_matches_the_contract_test_vectors() {
        for (n, edges, expected) in [
            (10, 14, "3866741b"),
            (100, 149, "11e0d557"),
            (1000, 1499, "ab1c952e"),
            (2000, 2999, "b0f11f6b"),
            (5000, 7499, "0934eb42"),
        ] {
            assert_eq!(contract_edges(n).len(), edges, "N = {n}");
            assert_eq!(fingerprint(n), expected, "N = {n}");
        }
        let edges = contract_edges(1000);
        assert_eq!(edges[999], (252, 1, 88, 0));
        assert_eq!(edges[1000], (375, 1, 25, 0));
        assert_eq!(edges[1001], (873, 2, 994, 0));
    }

    #[test]
    fn nodes_sit_on_the_contract_grid() {
        assert_eq!(contract_position(0, 1000), (0.0, 0.0));
        assert_eq!(contract_position(33, 1000), (220.0, 140.0));
        assert_eq!(contract_position(9, 10), (220.0, 280.0));
    }
}
