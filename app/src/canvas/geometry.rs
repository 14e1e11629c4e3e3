//! Where things are on the canvas, in graph units: module boxes, port
//! anchors and cable curves. Computed from the port lists alone, so the
//! server renders cables in the right place without measuring any DOM, and
//! the stylesheet uses the same numbers (style/main.css `--module-*`).

use std::fmt::Write;

use graph::{ModulePorts, Position};

/// Width of a module's content box (the border is added around it).
pub const MODULE_WIDTH: f64 = 180.0;
pub const BORDER: f64 = 1.0;
pub const HEADER_HEIGHT: f64 = 24.0;
pub const BODY_PADDING: f64 = 4.0;
pub const PORT_ROW_HEIGHT: f64 = 20.0;

/// Outer width of a module whose labels fit the narrowest box (the canvas
/// benchmark's modules, and most).
pub const MODULE_OUTER_WIDTH: f64 = MODULE_WIDTH + 2.0 * BORDER;

/// The widest a module grows to show its labels; past this they are cut,
/// with the whole text in a tooltip.
pub const MAX_MODULE_WIDTH: f64 = 340.0;
pub const MAX_OUTER_WIDTH: f64 = MAX_MODULE_WIDTH + 2.0 * BORDER;

/// Estimated widths, in graph units, of what a module shows: a character
/// of a port label (11 px), of the title (13 px, bold) and of the kind
/// (10 px capitals); the document icon; a port's dot and its gap; the gap
/// between the input and output columns; the header's padding and note.
/// Estimated, not measured, so that the server and the browser lay out
/// alike without a DOM; generous, so that a label is never cut by mistake.
const LABEL_CHARACTER: f64 = 6.4;
const TITLE_CHARACTER: f64 = 7.6;
const KIND_CHARACTER: f64 = 7.0;
const ICON: f64 = 14.0;
const PORT_DOT: f64 = 14.0;
const COLUMN_GAP: f64 = 16.0;
const HEADER_EXTRA: f64 = 28.0;

/// The text of a label without the document marker (`📄 `) DOC23 writes
/// in front of per-response and named outputs, and whether it had one: the
/// canvas draws the marker as an icon.
pub fn without_marker(label: &str) -> (bool, &str) {
    match label.strip_prefix("📄 ") {
        Some(rest) => (true, rest),
        None => (false, label),
    }
}

/// How wide a port label is drawn.
pub fn label_width(label: &str) -> f64 {
    let (icon, text) = without_marker(label);
    let icon = if icon { ICON } else { 0.0 };
    icon + text.chars().count() as f64 * LABEL_CHARACTER
}

fn column_width<'a>(labels: impl Iterator<Item = &'a str>) -> f64 {
    labels.map(label_width).fold(0.0, f64::max) + PORT_DOT
}

/// The content width of a module: wide enough for its widest input and
/// output labels side by side and for its header, between the usual width
/// and the maximum.
pub fn module_width<'a>(
    title: &str,
    kind: &str,
    note: &str,
    inputs: impl Iterator<Item = &'a str>,
    outputs: impl Iterator<Item = &'a str>,
) -> f64 {
    let ports = column_width(inputs) + COLUMN_GAP + column_width(outputs);
    let header = title.chars().count() as f64 * TITLE_CHARACTER
        + kind.chars().count() as f64 * KIND_CHARACTER
        + note.chars().count() as f64 * LABEL_CHARACTER
        + HEADER_EXTRA;
    ports
        .max(header)
        .clamp(MODULE_WIDTH, MAX_MODULE_WIDTH)
        .ceil()
}

/// How many characters of the title fit in the header of a module of
/// content width `width`, beside its kind and note.
pub fn title_limit(width: f64, kind: &str, note: &str) -> usize {
    let room = width
        - HEADER_EXTRA
        - kind.chars().count() as f64 * KIND_CHARACTER
        - note.chars().count() as f64 * LABEL_CHARACTER;
    (room / TITLE_CHARACTER).max(8.0) as usize
}

/// How many characters each column's labels may show in a module of
/// content width `width`: all of them, unless even the widest module is
/// too narrow; then the wider column gives way first.
pub fn label_limits<'a>(
    width: f64,
    inputs: impl Iterator<Item = &'a str> + Clone,
    outputs: impl Iterator<Item = &'a str> + Clone,
) -> (usize, usize) {
    let input = column_width(inputs.clone());
    let output = column_width(outputs.clone());
    let room = width - COLUMN_GAP;
    if input + output <= room {
        return (usize::MAX, usize::MAX);
    }
    let characters = |space: f64| ((space - PORT_DOT - ICON) / LABEL_CHARACTER).max(6.0) as usize;
    if input <= room / 2.0 {
        (usize::MAX, characters(room - input))
    } else if output <= room / 2.0 {
        (characters(room - output), usize::MAX)
    } else {
        (characters(room / 2.0), characters(room / 2.0))
    }
}

/// Outer height of a module with this many input and output ports.
pub fn module_height(inputs: usize, outputs: usize) -> f64 {
    let rows = inputs.max(outputs).max(1) as f64;
    2.0 * BORDER + HEADER_HEIGHT + 2.0 * BODY_PADDING + rows * PORT_ROW_HEIGHT
}

/// Outer size of a module with these ports.
pub fn module_size(ports: &ModulePorts) -> (f64, f64) {
    (
        MODULE_OUTER_WIDTH,
        module_height(ports.inputs.len(), ports.outputs.len()),
    )
}

fn row_centre(position: Position, row: usize) -> f64 {
    position.y + BORDER + HEADER_HEIGHT + BODY_PADDING + (row as f64 + 0.5) * PORT_ROW_HEIGHT
}

/// The point where a cable meets the input port in row `row`.
pub fn input_anchor(position: Position, row: usize) -> (f64, f64) {
    (position.x, row_centre(position, row))
}

/// The point where a cable leaves the output port in row `row` of a
/// module `outer_width` wide.
pub fn output_anchor(position: Position, outer_width: f64, row: usize) -> (f64, f64) {
    (position.x + outer_width, row_centre(position, row))
}

/// Where a cable meets a module whose port is gone: the header's edge.
pub fn header_anchor(position: Position, outer_width: f64, outgoing: bool) -> (f64, f64) {
    let x = if outgoing {
        position.x + outer_width
    } else {
        position.x
    };
    (x, position.y + BORDER + HEADER_HEIGHT / 2.0)
}

/// How far a control point sits from its end, as React Flow's default
/// bezier does it: half the horizontal distance going forwards, a gentle
/// loop when the target is behind the source.
fn control_offset(distance: f64) -> f64 {
    if distance >= 0.0 {
        0.5 * distance
    } else {
        0.25 * 25.0 * (-distance).sqrt()
    }
}

/// A cable's curve, in graph units: a cubic Bézier from an output anchor
/// to an input anchor, its control points level with its ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CableCurve {
    pub from: (f64, f64),
    pub to: (f64, f64),
}

impl CableCurve {
    /// The control points after `from`, then before `to`.
    pub fn controls(&self) -> ((f64, f64), (f64, f64)) {
        let offset = control_offset(self.to.0 - self.from.0);
        (
            (self.from.0 + offset, self.from.1),
            (self.to.0 - offset, self.to.1),
        )
    }

    /// SVG path data of the curve.
    pub fn path(&self) -> String {
        let (first, second) = self.controls();
        let mut path = String::with_capacity(64);
        for (separator, (x, y)) in [
            ("M", self.from),
            (" C", first),
            (" ", second),
            (" ", self.to),
        ] {
            path.push_str(separator);
            write_tenths(x, &mut path);
            path.push(',');
            write_tenths(y, &mut path);
        }
        path
    }

    /// The point at `t` (0 at `from`, 1 at `to`).
    fn at(&self, t: f64) -> (f64, f64) {
        let (first, second) = self.controls();
        let u = 1.0 - t;
        let (a, b, c, d) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
        (
            a * self.from.0 + b * first.0 + c * second.0 + d * self.to.0,
            a * self.from.1 + b * first.1 + c * second.1 + d * self.to.1,
        )
    }

    /// How far `point` is from the curve, or `None` when it is further
    /// than `within` (cheaply: the curve lies inside its control points'
    /// box).
    pub fn distance(&self, point: (f64, f64), within: f64) -> Option<f64> {
        let (first, second) = self.controls();
        let xs = [self.from.0, first.0, second.0, self.to.0];
        let ys = [self.from.1, first.1, second.1, self.to.1];
        let (left, right) = (
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let (top, bottom) = (
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        if point.0 < left - within
            || point.0 > right + within
            || point.1 < top - within
            || point.1 > bottom + within
        {
            return None;
        }
        const SEGMENTS: usize = 32;
        let mut nearest = f64::INFINITY;
        let mut previous = self.from;
        for step in 1..=SEGMENTS {
            let next = self.at(step as f64 / SEGMENTS as f64);
            nearest = nearest.min(distance_to_segment(point, previous, next));
            previous = next;
        }
        (nearest <= within).then_some(nearest)
    }
}

/// How far `point` is from the segment from `a` to `b`.
fn distance_to_segment(point: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let length = dx * dx + dy * dy;
    let t = if length == 0.0 {
        0.0
    } else {
        (((point.0 - a.0) * dx + (point.1 - a.1) * dy) / length).clamp(0.0, 1.0)
    };
    let (x, y) = (a.0 + t * dx, a.1 + t * dy);
    ((point.0 - x).powi(2) + (point.1 - y).powi(2)).sqrt()
}

/// SVG path data of a cable from an output anchor to an input anchor.
/// Appends `value` to a tenth, as `{:.1}` would, through integers: a
/// float formatted with a precision takes the slow path of `core::fmt`,
/// and a graph's cables write eight numbers each as it loads.
fn write_tenths(value: f64, text: &mut String) {
    let tenths = (value * 10.0).round();
    if tenths.is_nan() || tenths.abs() >= 1e15 {
        let _ = write!(text, "{value:.1}");
        return;
    }
    // Within ±1e15, so the conversion is exact.
    let tenths = tenths as i64;
    if tenths < 0 {
        text.push('-');
    }
    let magnitude = tenths.unsigned_abs();
    let _ = write!(text, "{}.{}", magnitude / 10, magnitude % 10);
}

pub fn cable_path(from: (f64, f64), to: (f64, f64)) -> String {
    CableCurve { from, to }.path()
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::{ModuleConfig, ModuleKind, ports::ports_of};

    #[test]
    fn a_module_with_three_rows_is_the_bench_size() {
        // Two inputs and three outputs (a command's first three), the
        // shape of the canvas benchmark's modules.
        let mut ports = ports_of(&ModuleConfig::new_for(ModuleKind::Command));
        assert_eq!(ports.inputs.len(), 2);
        ports.outputs.truncate(3);
        assert_eq!(module_size(&ports), (182.0, 94.0));
    }

    #[test]
    fn anchors_sit_on_the_module_edges_at_row_centres() {
        let position = Position { x: 100.0, y: 50.0 };
        assert_eq!(input_anchor(position, 0), (100.0, 89.0));
        assert_eq!(output_anchor(position, 182.0, 1), (282.0, 109.0));
    }

    #[test]
    fn a_module_grows_to_fit_its_labels_up_to_a_maximum() {
        let short = module_width(
            "Module 1",
            "",
            "",
            ["in0", "in1"].into_iter(),
            ["out0"].into_iter(),
        );
        assert_eq!(
            short, MODULE_WIDTH,
            "the benchmark's modules keep their size"
        );
        let inputs = ["Data", "Context", "Instruction", "Start after"];
        let outputs = ["Output", "📄 \"Follow-up number seven\"", "Done"];
        let wide = module_width(
            "Draft",
            "Agent task",
            "↻ 9",
            inputs.into_iter(),
            outputs.into_iter(),
        );
        assert!(wide > MODULE_WIDTH && wide < MAX_MODULE_WIDTH, "{wide}");
        assert_eq!(
            label_limits(wide, inputs.into_iter(), outputs.into_iter()),
            (usize::MAX, usize::MAX),
            "nothing is cut"
        );
        let huge = "x".repeat(200);
        let widest = module_width("T", "", "", inputs.into_iter(), [huge.as_str()].into_iter());
        assert_eq!(widest, MAX_MODULE_WIDTH);
        let (input, output) = label_limits(widest, inputs.into_iter(), [huge.as_str()].into_iter());
        assert_eq!(input, usize::MAX, "the shorter column keeps its labels");
        assert!(output < 200 && output > 20, "{output}");
    }

    #[test]
    fn numbers_are_written_to_a_tenth_as_format_writes_them() {
        let written = |value: f64| {
            let mut text = String::new();
            write_tenths(value, &mut text);
            text
        };
        for value in [0.0, 12.34, 182.0, 1234.56, -62.5, -7.26, 99.96, 1e14 + 0.3] {
            assert_eq!(written(value), format!("{value:.1}"), "{value}");
        }
        // Nearer to zero than a twentieth: no minus sign to draw.
        assert_eq!(written(-0.04), "0.0");
        assert_eq!(written(1e20), format!("{:.1}", 1e20));
        assert_eq!(written(f64::NAN), "NaN");
    }

    #[test]
    fn cables_curve_forwards_and_loop_back() {
        assert_eq!(
            cable_path((0.0, 0.0), (100.0, 40.0)),
            "M0.0,0.0 C50.0,0.0 50.0,40.0 100.0,40.0"
        );
        // Backwards: offset 0.25·25·√100 = 62.5.
        assert_eq!(
            cable_path((100.0, 0.0), (0.0, 0.0)),
            "M100.0,0.0 C162.5,0.0 -62.5,0.0 0.0,0.0"
        );
    }
}
