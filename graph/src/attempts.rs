//! Attempts, give-up and timeouts (PRODUCT §3.9, after Cloche's
//! `max_attempts` and `timeout` and Gump's retry variables): how many times a
//! module may run in one run, how long it waits between attempts, how long
//! one attempt may take, and the variables only a retry instruction has.

use serde::{Deserialize, Serialize};

/// The most attempts a module may have: a retry is a whole activation, so
/// more than this is a loop better said with cables.
pub const MAX_ATTEMPTS_LIMIT: u32 = 20;
/// The longest wait between two attempts.
pub const BACKOFF_LIMIT_SECONDS: u32 = 3600;
/// A module's timeout when it does not set one: Cloche's 30 minutes.
pub const DEFAULT_TIMEOUT_SECONDS: u32 = 30 * 60;
/// The longest timeout a module may set: a week.
pub const TIMEOUT_LIMIT_SECONDS: u32 = 7 * 24 * 3600;

/// The retry variables every kind with a retry instruction has; a kind may
/// have more (its `KindDefinition::RETRY_VARIABLES`).
pub const RETRY_VARIABLES: [&str; 3] = ["attempt", "error", "prev.output"];
/// `{{ error }}` and `{{ diff }}` are cut to these lengths, as Gump does.
pub const ERROR_CHARACTERS: usize = 2000;
pub const DIFF_CHARACTERS: usize = 3000;

/// How often a module may run in one run. `max_attempts` 1 (the default)
/// means no retries: the module runs each time its inputs arrive and a
/// failure goes where it is wired. Above 1, a failed attempt (an error, a
/// failed check, a timeout, or a reply that chose `repeat`) runs the module
/// again while attempts remain, every activation counts — a loop coming
/// back to it too — and when none remain it gives up on `give_up_out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Retry {
    #[serde(skip_serializing_if = "is_one")]
    pub max_attempts: u32,
    /// The wait before the second attempt; it doubles for each one after.
    #[serde(skip_serializing_if = "is_zero")]
    pub backoff_seconds: u32,
}

impl Default for Retry {
    fn default() -> Retry {
        Retry {
            max_attempts: 1,
            backoff_seconds: 0,
        }
    }
}

fn is_one(value: &u32) -> bool {
    *value == 1
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

impl Retry {
    /// Whether the module retries and gives up at all.
    pub fn retries(&self) -> bool {
        self.max_attempts > 1
    }

    /// The wait in seconds before attempt `attempt` (2, 3, …): the backoff,
    /// doubled for each attempt after the second, at most an hour.
    pub fn delay_before(&self, attempt: u32) -> u32 {
        let doublings = attempt.saturating_sub(2).min(12);
        self.backoff_seconds
            .saturating_mul(1 << doublings)
            .min(BACKOFF_LIMIT_SECONDS)
    }

    /// What is out of range, as (field, message).
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut problems = Vec::new();
        if !(1..=MAX_ATTEMPTS_LIMIT).contains(&self.max_attempts) {
            problems.push((
                "max_attempts",
                format!(
                    "Attempts is {}: it must be between 1 (no retries) and {MAX_ATTEMPTS_LIMIT}",
                    self.max_attempts
                ),
            ));
        }
        if self.backoff_seconds > BACKOFF_LIMIT_SECONDS {
            problems.push((
                "backoff_seconds",
                format!(
                    "The wait between attempts is {} s: it may be at most {BACKOFF_LIMIT_SECONDS} s",
                    self.backoff_seconds
                ),
            ));
        }
        problems
    }
}

/// What is wrong with a timeout a module sets, if anything.
pub fn timeout_problem(seconds: u32) -> Option<String> {
    (!(1..=TIMEOUT_LIMIT_SECONDS).contains(&seconds)).then(|| {
        format!(
            "The timeout is {seconds} s: it must be between 1 s and {TIMEOUT_LIMIT_SECONDS} s (a week)"
        )
    })
}

/// A duration as a person reads it: "45 s", "30 min", "72 h", "1 h 30 min".
pub fn duration_words(seconds: u32) -> String {
    let (hours, minutes, rest) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    match (hours, minutes, rest) {
        (0, 0, seconds) => format!("{seconds} s"),
        (0, minutes, 0) => format!("{minutes} min"),
        (0, minutes, seconds) => format!("{minutes} min {seconds} s"),
        (hours, 0, 0) => format!("{hours} h"),
        (hours, minutes, _) => format!("{hours} h {minutes} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_from_the_second_attempt_and_stops_at_an_hour() {
        let retry = Retry {
            max_attempts: 5,
            backoff_seconds: 10,
        };
        let waits: Vec<u32> = (2..=5).map(|attempt| retry.delay_before(attempt)).collect();
        assert_eq!(waits, [10, 20, 40, 80]);
        let long = Retry {
            max_attempts: 20,
            backoff_seconds: 3000,
        };
        assert_eq!(long.delay_before(3), BACKOFF_LIMIT_SECONDS);
        assert_eq!(long.delay_before(40), BACKOFF_LIMIT_SECONDS);
        assert_eq!(Retry::default().delay_before(2), 0);
    }

    #[test]
    fn limits_are_checked_and_defaults_are_not_written() {
        assert!(Retry::default().problems().is_empty());
        assert!(!Retry::default().retries());
        let fields: Vec<&str> = Retry {
            max_attempts: 0,
            backoff_seconds: 4000,
        }
        .problems()
        .into_iter()
        .map(|(field, _)| field)
        .collect();
        assert_eq!(fields, ["max_attempts", "backoff_seconds"]);
        assert_eq!(
            serde_json::to_value(Retry::default()).unwrap(),
            serde_json::json!({})
        );
        assert!(timeout_problem(0).is_some());
        assert!(timeout_problem(60).is_none());
        assert!(timeout_problem(TIMEOUT_LIMIT_SECONDS + 1).is_some());
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration_words(45), "45 s");
        assert_eq!(duration_words(1800), "30 min");
        assert_eq!(duration_words(90), "1 min 30 s");
        assert_eq!(duration_words(72 * 3600), "72 h");
        assert_eq!(duration_words(5400), "1 h 30 min");
    }
}
