//! What a process does with a schedule whose tick has come, decided from
//! the tick, the time and the schedule alone: fire it, or skip ticks that
//! fell while no server was up (`catch_up`). The ticker claims what this
//! decides in one conditional write before it starts anything.

use graph::triggers::CatchUp;

use super::cadence::Cadence;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tick {
    /// Start a run for the tick at `tick`, and move the schedule on to
    /// `next_at`.
    Fire {
        tick: i64,
        next_at: Option<i64>,
        /// It stands for ticks that fell while no server was up.
        caught_up: bool,
    },
    /// Start nothing; move the schedule on to `next_at`.
    Skip { next_at: Option<i64> },
}

impl Tick {
    pub fn next_at(self) -> Option<i64> {
        match self {
            Tick::Fire { next_at, .. } | Tick::Skip { next_at } => next_at,
        }
    }
}

/// The decision for the tick at `due_at`, seen at `now`. A tick seen
/// within `late_after_millis` of its time is on time, and fires; the
/// schedule moves on to the tick after it, so a process that fell behind
/// fires each tick it missed once. A tick seen later fell while nothing
/// watched: one run stands for every such tick, or none, and the
/// schedule moves on to the first tick after now.
pub fn decide(
    cadence: &Cadence,
    due_at: i64,
    catch_up: CatchUp,
    now: i64,
    late_after_millis: i64,
) -> Tick {
    if now - due_at <= late_after_millis {
        return Tick::Fire {
            tick: due_at,
            next_at: cadence.next_after(due_at),
            caught_up: false,
        };
    }
    let next_at = cadence.next_after(now);
    match catch_up {
        CatchUp::One => Tick::Fire {
            tick: due_at,
            next_at,
            caught_up: true,
        },
        CatchUp::None => Tick::Skip { next_at },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60_000;

    fn every_minute() -> Cadence {
        Cadence::parse("* * * * *", "UTC").unwrap()
    }

    #[test]
    fn a_tick_on_time_fires_and_moves_to_the_next() {
        let tick = decide(
            &every_minute(),
            10 * MINUTE,
            CatchUp::None,
            10 * MINUTE + 150,
            MINUTE,
        );
        assert_eq!(
            tick,
            Tick::Fire {
                tick: 10 * MINUTE,
                next_at: Some(11 * MINUTE),
                caught_up: false
            }
        );
    }

    #[test]
    fn a_process_behind_fires_each_tick_it_missed_once() {
        let cadence = Cadence::parse("* * * * * *", "UTC").unwrap();
        let now = 10_500;
        let mut due = 7_000;
        let mut fired = Vec::new();
        while due <= now {
            let decided = decide(&cadence, due, CatchUp::None, now, 60_000);
            let Tick::Fire { tick, next_at, .. } = decided else {
                panic!("{decided:?}");
            };
            fired.push(tick);
            due = next_at.unwrap();
        }
        assert_eq!(fired, vec![7_000, 8_000, 9_000, 10_000]);
        assert_eq!(due, 11_000);
    }

    #[test]
    fn ticks_missed_while_no_server_was_up_run_once_or_not_at_all() {
        let now = 60 * MINUTE + 30_000;
        let caught = decide(&every_minute(), 10 * MINUTE, CatchUp::One, now, MINUTE);
        assert_eq!(
            caught,
            Tick::Fire {
                tick: 10 * MINUTE,
                next_at: Some(61 * MINUTE),
                caught_up: true
            }
        );
        let skipped = decide(&every_minute(), 10 * MINUTE, CatchUp::None, now, MINUTE);
        assert_eq!(
            skipped,
            Tick::Skip {
                next_at: Some(61 * MINUTE)
            }
        );
        // Either way the next decision is about a tick after now: the
        // missed ones are never looked at again.
        assert!(caught.next_at().unwrap() > now && skipped.next_at().unwrap() > now);
    }
}
