//! Where things are on the canvas, in graph units: module boxes, port
//! anchors and cable curves. Computed from the port lists alone, so the
//! server renders cables in the right place without measuring any DOM, and
//! the stylesheet uses the same numbers (style/main.css `--module-*`).

use graph::{ModulePorts, Position};

/// Width of a module's content box (the border is added around it).
pub const MODULE_WIDTH: f64 = 180.0;
pub const BORDER: f64 = 1.0;
pub const HEADER_HEIGHT: f64 = 24.0;
pub const BODY_PADDING: f64 = 4.0;
pub const PORT_ROW_HEIGHT: f64 = 20.0;

/// Outer width of every module.
pub const MODULE_OUTER_WIDTH: f64 = MODULE_WIDTH + 2.0 * BORDER;

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

/// The point where a cable leaves the output port in row `row`.
pub fn output_anchor(position: Position, row: usize) -> (f64, f64) {
    (position.x + MODULE_OUTER_WIDTH, row_centre(position, row))
}

/// Where a cable meets a module whose port is gone: the header's edge.
pub fn header_anchor(position: Position, outgoing: bool) -> (f64, f64) {
    let x = if outgoing {
        position.x + MODULE_OUTER_WIDTH
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

/// SVG path data of a cable from an output anchor to an input anchor.
pub fn cable_path(from: (f64, f64), to: (f64, f64)) -> String {
    let offset = control_offset(to.0 - from.0);
    format!(
        "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
        from.0,
        from.1,
        from.0 + offset,
        from.1,
        to.0 - offset,
        to.1,
        to.0,
        to.1
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use graph::{ModuleConfig, ModuleKind, ports::ports_of};

    #[test]
    fn a_module_with_three_rows_is_the_bench_size() {
        // Input has no inputs and two outputs; a command has two inputs and
        // three outputs, the shape of the canvas benchmark's modules.
        let ports = ports_of(&ModuleConfig::new_for(ModuleKind::Command));
        assert_eq!(module_size(&ports), (182.0, 94.0));
    }

    #[test]
    fn anchors_sit_on_the_module_edges_at_row_centres() {
        let position = Position { x: 100.0, y: 50.0 };
        assert_eq!(input_anchor(position, 0), (100.0, 89.0));
        assert_eq!(output_anchor(position, 1), (282.0, 109.0));
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
