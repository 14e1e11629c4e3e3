//! Aligning and spreading the selected modules, and the grid they snap to
//! (PRODUCT §4): plain functions over the modules' boxes, so that each
//! arrangement is one edit of positions, tested without a browser. The
//! editing part carries them out (`Command::Arrange`); a drag snaps as it
//! goes (`pointer.rs`).

use graph::Position;

/// The grid modules snap to, in graph units: the canvas's dots.
pub const GRID: f64 = 20.0;

/// What a person asks of the selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrangement {
    /// Left edges on the leftmost.
    Left,
    /// Centres on one vertical line, the middle of the selection.
    Centre,
    Right,
    Top,
    /// Middles on one horizontal line, the middle of the selection.
    Middle,
    Bottom,
    /// Equal gaps from left to right, the outermost two kept in place.
    SpreadAcross,
    /// Equal gaps from top to bottom, the outermost two kept in place.
    SpreadDown,
}

impl Arrangement {
    pub const ALL: [Arrangement; 8] = [
        Arrangement::Left,
        Arrangement::Centre,
        Arrangement::Right,
        Arrangement::Top,
        Arrangement::Middle,
        Arrangement::Bottom,
        Arrangement::SpreadAcross,
        Arrangement::SpreadDown,
    ];

    /// Its name, as a button, the history and a screen reader say it.
    pub fn label(self) -> &'static str {
        match self {
            Arrangement::Left => "Align left edges",
            Arrangement::Centre => "Align centres",
            Arrangement::Right => "Align right edges",
            Arrangement::Top => "Align top edges",
            Arrangement::Middle => "Align middles",
            Arrangement::Bottom => "Align bottom edges",
            Arrangement::SpreadAcross => "Spread evenly across",
            Arrangement::SpreadDown => "Spread evenly down",
        }
    }

    /// Its keys: Alt+Shift with an arrow for an edge, with a letter for the
    /// rest (Alt alone with a letter or an arrow is the browser's: Alt+D
    /// goes to the address bar, Alt+← back).
    pub fn keys(self) -> &'static str {
        match self {
            Arrangement::Left => "Alt+Shift+←",
            Arrangement::Centre => "Alt+Shift+C",
            Arrangement::Right => "Alt+Shift+→",
            Arrangement::Top => "Alt+Shift+↑",
            Arrangement::Middle => "Alt+Shift+M",
            Arrangement::Bottom => "Alt+Shift+↓",
            Arrangement::SpreadAcross => "Alt+Shift+H",
            Arrangement::SpreadDown => "Alt+Shift+V",
        }
    }

    /// The arrangement of a key pressed with Alt+Shift (`KeyboardEvent.code`,
    /// so that a layout where Alt makes another character still finds it).
    pub fn of_key(code: &str) -> Option<Arrangement> {
        Some(match code {
            "ArrowLeft" => Arrangement::Left,
            "KeyC" => Arrangement::Centre,
            "ArrowRight" => Arrangement::Right,
            "ArrowUp" => Arrangement::Top,
            "KeyM" => Arrangement::Middle,
            "ArrowDown" => Arrangement::Bottom,
            "KeyH" => Arrangement::SpreadAcross,
            "KeyV" => Arrangement::SpreadDown,
            _ => return None,
        })
    }

    /// How many modules it needs to do anything: two to align, three to
    /// spread.
    pub fn needs(self) -> usize {
        match self {
            Arrangement::SpreadAcross | Arrangement::SpreadDown => 3,
            _ => 2,
        }
    }
}

/// A module's box on the canvas.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    pub id: String,
    pub position: Position,
    pub width: f64,
    pub height: f64,
}

/// Where each module goes, for the modules that move.
pub fn arrange(modules: &[Placed], how: Arrangement) -> Vec<(String, Position)> {
    if modules.len() < how.needs() {
        return Vec::new();
    }
    let left = fold(modules, |module| module.position.x, f64::min);
    let right = fold(modules, |module| module.position.x + module.width, f64::max);
    let top = fold(modules, |module| module.position.y, f64::min);
    let bottom = fold(
        modules,
        |module| module.position.y + module.height,
        f64::max,
    );
    let placed: Vec<(String, Position)> = match how {
        Arrangement::SpreadAcross => spread(modules, Axis::Across),
        Arrangement::SpreadDown => spread(modules, Axis::Down),
        _ => modules
            .iter()
            .map(|module| {
                let Position { x, y } = module.position;
                let at = match how {
                    Arrangement::Left => Position { x: left, y },
                    Arrangement::Centre => Position {
                        x: (left + right - module.width) / 2.0,
                        y,
                    },
                    Arrangement::Right => Position {
                        x: right - module.width,
                        y,
                    },
                    Arrangement::Top => Position { x, y: top },
                    Arrangement::Middle => Position {
                        x,
                        y: (top + bottom - module.height) / 2.0,
                    },
                    _ => Position {
                        x,
                        y: bottom - module.height,
                    },
                };
                (module.id.clone(), at)
            })
            .collect(),
    };
    placed
        .into_iter()
        .filter(|(id, at)| {
            modules
                .iter()
                .any(|module| &module.id == id && module.position != *at)
        })
        .collect()
}

fn fold(modules: &[Placed], value: impl Fn(&Placed) -> f64, pick: fn(f64, f64) -> f64) -> f64 {
    modules.iter().map(value).reduce(pick).unwrap_or_default()
}

#[derive(Clone, Copy)]
enum Axis {
    Across,
    Down,
}

/// Equal gaps between the modules in their order along `axis` (ties in
/// document order), the first and the last kept where they are.
fn spread(modules: &[Placed], axis: Axis) -> Vec<(String, Position)> {
    let start = |module: &Placed| match axis {
        Axis::Across => module.position.x,
        Axis::Down => module.position.y,
    };
    let length = |module: &Placed| match axis {
        Axis::Across => module.width,
        Axis::Down => module.height,
    };
    let mut order: Vec<&Placed> = modules.iter().collect();
    order.sort_by(|a, b| start(a).total_cmp(&start(b)));
    let (Some(first), Some(last)) = (order.first(), order.last()) else {
        return Vec::new();
    };
    let span = start(last) + length(last) - start(first);
    let lengths: f64 = order.iter().map(|module| length(module)).sum();
    let gap = (span - lengths) / (order.len() - 1) as f64;
    let mut at = start(first);
    order
        .iter()
        .map(|module| {
            let position = match axis {
                Axis::Across => Position {
                    x: at,
                    y: module.position.y,
                },
                Axis::Down => Position {
                    x: module.position.x,
                    y: at,
                },
            };
            at += length(module) + gap;
            (module.id.clone(), position)
        })
        .collect()
}

/// `position` on the nearest point of the grid.
pub fn snapped(position: Position) -> Position {
    Position {
        x: (position.x / GRID).round() * GRID,
        y: (position.y / GRID).round() * GRID,
    }
}

/// How far to move a drag that started with its first module at `origin`
/// and went `dx`, `dy`, so that module lands on the grid and the others
/// keep their places around it.
pub fn snapped_travel(origin: Position, dx: f64, dy: f64) -> (f64, f64) {
    let landed = snapped(Position {
        x: origin.x + dx,
        y: origin.y + dy,
    });
    (landed.x - origin.x, landed.y - origin.y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(id: &str, x: f64, y: f64, width: f64, height: f64) -> Placed {
        Placed {
            id: id.to_owned(),
            position: Position { x, y },
            width,
            height,
        }
    }

    fn three() -> Vec<Placed> {
        vec![
            placed("m1", 10.0, 100.0, 180.0, 80.0),
            placed("m2", 400.0, 20.0, 240.0, 60.0),
            placed("m3", 150.0, 300.0, 100.0, 120.0),
        ]
    }

    fn at(moves: &[(String, Position)], id: &str, modules: &[Placed]) -> Position {
        moves
            .iter()
            .find(|(moved, _)| moved == id)
            .map(|(_, position)| *position)
            .or_else(|| {
                modules
                    .iter()
                    .find(|module| module.id == id)
                    .map(|module| module.position)
            })
            .unwrap_or_default()
    }

    #[test]
    fn aligning_edges_lines_them_up_on_the_outermost_and_keeps_the_other_axis() {
        let modules = three();
        let left = arrange(&modules, Arrangement::Left);
        for module in &modules {
            let position = at(&left, &module.id, &modules);
            assert_eq!(position.x, 10.0);
            assert_eq!(position.y, module.position.y);
        }
        // The leftmost does not move, so it is not in the edit.
        assert!(left.iter().all(|(id, _)| id != "m1"));
        let right = arrange(&modules, Arrangement::Right);
        for module in &modules {
            assert_eq!(at(&right, &module.id, &modules).x + module.width, 640.0);
        }
        let bottom = arrange(&modules, Arrangement::Bottom);
        for module in &modules {
            assert_eq!(at(&bottom, &module.id, &modules).y + module.height, 420.0);
        }
        let top = arrange(&modules, Arrangement::Top);
        for module in &modules {
            assert_eq!(at(&top, &module.id, &modules).y, 20.0);
        }
    }

    #[test]
    fn centres_and_middles_meet_in_the_middle_of_the_selection() {
        let modules = three();
        let centre = arrange(&modules, Arrangement::Centre);
        for module in &modules {
            let x = at(&centre, &module.id, &modules).x;
            assert_eq!(x + module.width / 2.0, (10.0 + 640.0) / 2.0);
        }
        let middle = arrange(&modules, Arrangement::Middle);
        for module in &modules {
            let y = at(&middle, &module.id, &modules).y;
            assert_eq!(y + module.height / 2.0, (20.0 + 420.0) / 2.0);
        }
    }

    #[test]
    fn spreading_leaves_equal_gaps_and_the_outermost_in_place() {
        let modules = vec![
            placed("a", 0.0, 0.0, 100.0, 50.0),
            placed("b", 130.0, 40.0, 100.0, 50.0),
            placed("c", 500.0, 80.0, 100.0, 50.0),
            placed("d", 200.0, 10.0, 50.0, 50.0),
        ];
        let moves = arrange(&modules, Arrangement::SpreadAcross);
        let mut boxes: Vec<(f64, f64)> = modules
            .iter()
            .map(|module| (at(&moves, &module.id, &modules).x, module.width))
            .collect();
        boxes.sort_by(|a, b| a.0.total_cmp(&b.0));
        let gaps: Vec<f64> = boxes
            .windows(2)
            .map(|pair| pair[1].0 - (pair[0].0 + pair[0].1))
            .collect();
        assert!(
            gaps.iter().all(|gap| (gap - gaps[0]).abs() < 1e-9),
            "{gaps:?}"
        );
        assert_eq!(boxes.first().map(|b| b.0), Some(0.0));
        assert_eq!(boxes.last().map(|b| b.0 + b.1), Some(600.0));
        // Only across: every module keeps its height on the page.
        for module in &modules {
            assert_eq!(at(&moves, &module.id, &modules).y, module.position.y);
        }
        let down = arrange(&modules, Arrangement::SpreadDown);
        assert!(down.iter().all(|(_, position)| position.x >= 0.0));
    }

    #[test]
    fn too_few_modules_change_nothing() {
        let one = vec![placed("m1", 3.0, 4.0, 10.0, 10.0)];
        for how in Arrangement::ALL {
            assert!(arrange(&one, how).is_empty());
        }
        let two = vec![one[0].clone(), placed("m2", 50.0, 60.0, 10.0, 10.0)];
        assert!(arrange(&two, Arrangement::SpreadAcross).is_empty());
        assert_eq!(arrange(&two, Arrangement::Left).len(), 1);
    }

    #[test]
    fn an_arrangement_done_twice_changes_nothing_the_second_time() {
        let modules = three();
        for how in Arrangement::ALL {
            let moves = arrange(&modules, how);
            let after: Vec<Placed> = modules
                .iter()
                .map(|module| Placed {
                    position: at(&moves, &module.id, &modules),
                    ..module.clone()
                })
                .collect();
            let again = arrange(&after, how);
            assert!(
                again.iter().all(
                    |(id, position)| (at(&moves, id, &modules).x - position.x).abs() < 1e-9
                        && (at(&moves, id, &modules).y - position.y).abs() < 1e-9
                ),
                "{how:?}: {again:?}"
            );
        }
    }

    #[test]
    fn snapping_lands_on_the_nearest_grid_point_and_a_drag_keeps_its_shape() {
        assert_eq!(
            snapped(Position { x: 29.0, y: -11.0 }),
            Position { x: 20.0, y: -20.0 }
        );
        assert_eq!(
            snapped(Position { x: 30.0, y: 40.0 }),
            Position { x: 40.0, y: 40.0 }
        );
        let (dx, dy) = snapped_travel(Position { x: 13.0, y: 7.0 }, 50.0, 2.0);
        assert_eq!((13.0 + dx, 7.0 + dy), (60.0, 0.0));
        for how in Arrangement::ALL {
            let code = match how.keys().trim_start_matches("Alt+Shift+") {
                "←" => "ArrowLeft".to_owned(),
                "→" => "ArrowRight".to_owned(),
                "↑" => "ArrowUp".to_owned(),
                "↓" => "ArrowDown".to_owned(),
                letter => format!("Key{letter}"),
            };
            assert_eq!(Arrangement::of_key(&code), Some(how), "{code}");
        }
        assert_eq!(Arrangement::of_key("KeyQ"), None);
    }
}
