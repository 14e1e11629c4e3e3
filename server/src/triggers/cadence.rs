//! A schedule's cadence: its cron expression (five fields, or six with
//! seconds first) read by croner in its IANA time zone, and the times it
//! falls on, as Unix milliseconds like every stored time.

use std::str::FromStr;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

/// The most next times the API lists at once.
pub const MOST_TIMES: usize = 20;

#[derive(Clone, Debug)]
pub struct Cadence {
    cron: Cron,
    timezone: Tz,
}

/// Why a schedule cannot run, and which of its fields is at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CadenceError {
    Cron(String),
    Timezone(String),
}

impl CadenceError {
    /// The document field at fault.
    pub fn field(&self) -> &'static str {
        match self {
            CadenceError::Cron(_) => "cron",
            CadenceError::Timezone(_) => "timezone",
        }
    }

    pub fn message(&self) -> &str {
        match self {
            CadenceError::Cron(message) | CadenceError::Timezone(message) => message,
        }
    }
}

impl Cadence {
    pub fn parse(cron: &str, timezone: &str) -> Result<Cadence, CadenceError> {
        let timezone = Tz::from_str(timezone.trim()).map_err(|_| {
            CadenceError::Timezone(format!(
                "\"{timezone}\" is not a time zone this server knows: an IANA name such as \"UTC\" or \"Europe/Paris\""
            ))
        })?;
        let parser = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build();
        let cron = parser.parse(cron).map_err(|error| {
            CadenceError::Cron(format!(
                "\"{cron}\" is not a cron expression this server reads ({error}): five fields (minute hour day month weekday) or six with seconds first"
            ))
        })?;
        let cadence = Cadence { cron, timezone };
        // A pattern that never falls (the 31st of February) is refused
        // here rather than found idle later.
        if cadence.next_after(0).is_none()
            && cadence.next_after(crate::store::now_millis()).is_none()
        {
            return Err(CadenceError::Cron(
                "this cron expression never falls on a real time".to_owned(),
            ));
        }
        Ok(cadence)
    }

    /// The first time strictly after `millis`, if there is one.
    pub fn next_after(&self, millis: i64) -> Option<i64> {
        // Ticks fall on whole seconds; croner keeps the fraction it is
        // given, so it searches from the second `millis` falls in.
        let second = millis.div_euclid(1_000) * 1_000;
        let after: DateTime<Tz> = self.timezone.from_utc_datetime(&utc(second)?.naive_utc());
        self.cron
            .find_next_occurrence(&after, false)
            .ok()
            .map(|next| next.with_timezone(&Utc).timestamp_millis())
    }

    /// The next `count` times after `millis` (at most [`MOST_TIMES`]).
    pub fn next_times(&self, millis: i64, count: usize) -> Vec<i64> {
        let mut times = Vec::new();
        let mut after = millis;
        while times.len() < count.min(MOST_TIMES) {
            let Some(next) = self.next_after(after) else {
                break;
            };
            times.push(next);
            after = next;
        }
        times
    }

    /// `millis` on the schedule's clocks: "Mon 2026-11-30 09:00:00 CET".
    pub fn local_time(&self, millis: i64) -> String {
        utc(millis).map_or_else(String::new, |time| {
            time.with_timezone(&self.timezone)
                .format("%a %Y-%m-%d %H:%M:%S %Z")
                .to_string()
        })
    }
}

fn utc(millis: i64) -> Option<DateTime<Utc>> {
    Utc.timestamp_millis_opt(millis).single()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-03-29 00:30:00 UTC, the night Paris moves to summer time.
    const BEFORE_PARIS_SPRING: i64 = 1_774_744_200_000;

    #[test]
    fn five_fields_fall_on_minutes_and_six_on_seconds() {
        let minutes = Cadence::parse("*/15 * * * *", "UTC").unwrap();
        assert_eq!(
            minutes.next_times(0, 3),
            vec![15 * 60_000, 30 * 60_000, 45 * 60_000]
        );
        let seconds = Cadence::parse("*/2 * * * * *", "UTC").unwrap();
        assert_eq!(seconds.next_times(1_000, 3), vec![2_000, 4_000, 6_000]);
        // From within a second, the next whole one.
        assert_eq!(seconds.next_after(2_232), Some(4_000));
        assert_eq!(minutes.next_after(15 * 60_000 - 1), Some(15 * 60_000));
    }

    #[test]
    fn the_time_zone_decides_when_nine_oclock_is() {
        let paris = Cadence::parse("0 9 * * *", "Europe/Paris").unwrap();
        // 09:00 in Paris is 07:00 UTC in summer, 08:00 in winter.
        let [winter, summer] = [1_774_656_000_000_i64, BEFORE_PARIS_SPRING]
            .map(|from| paris.next_after(from).unwrap());
        assert_eq!(winter % 86_400_000, 8 * 3_600_000);
        assert_eq!(summer % 86_400_000, 7 * 3_600_000);
    }

    #[test]
    fn times_read_as_the_zone_s_clocks_show_them() {
        let paris = Cadence::parse("0 9 * * *", "Europe/Paris").unwrap();
        let next = paris.next_after(BEFORE_PARIS_SPRING).unwrap();
        assert_eq!(paris.local_time(next), "Sun 2026-03-29 09:00:00 CEST");
    }

    #[test]
    fn bad_fields_say_which_and_why() {
        let cron = Cadence::parse("every day", "UTC").unwrap_err();
        assert_eq!(cron.field(), "cron");
        assert!(cron.message().contains("five fields"), "{}", cron.message());
        let zone = Cadence::parse("0 9 * * *", "Mars/Olympus").unwrap_err();
        assert_eq!(zone.field(), "timezone");
        assert_eq!(
            Cadence::parse("0 0 31 2 *", "UTC").unwrap_err().field(),
            "cron"
        );
    }
}
