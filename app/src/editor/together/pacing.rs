//! When this person's presence (pointer, selection, what they edit) is
//! sent: at most one every interval, one at a time — the next only once the
//! server has answered the last — and whatever changed meanwhile in one
//! more at the end. Two sent at once can reach the room in the other order
//! (the server reads the graph and the token before it takes either): the
//! others then kept the older one, a selection without the module it opened,
//! until the next heartbeat. An answer that has not come after
//! [`GIVE_UP_MILLIS`] is given up on (a request can hang on a dead
//! connection): presence goes on, and that late answer changes nothing.
//!
//! A plain value fed what happens; `together::say_presence` carries it out.

/// How long an answer is waited for before the next is sent anyway.
pub const GIVE_UP_MILLIS: f64 = 10_000.0;

#[derive(Clone, Copy, Debug, Default)]
pub struct Pacing {
    /// The last one sent: its number, and when (the browser's clock,
    /// milliseconds), until it is answered.
    in_flight: Option<(u64, f64)>,
    /// How many have been sent.
    sent: u64,
    /// Sent less than an interval ago.
    resting: bool,
    /// Something changed that has not been sent.
    waiting: bool,
}

impl Pacing {
    /// Something new to say at `now`: the number to send it under now, or
    /// `None` to send it when [`Pacing::answered`] or [`Pacing::rested`]
    /// says so.
    pub fn news(&mut self, now: f64) -> Option<u64> {
        let awaited = self
            .in_flight
            .is_some_and(|(_, since)| now - since < GIVE_UP_MILLIS);
        if awaited || self.resting {
            self.waiting = true;
            return None;
        }
        self.sent += 1;
        self.in_flight = Some((self.sent, now));
        self.resting = true;
        Some(self.sent)
    }

    /// The server answered number `sent` (or failed to): whether to say
    /// what waits now.
    pub fn answered(&mut self, sent: u64) -> bool {
        if self.in_flight.is_some_and(|(number, _)| number == sent) {
            self.in_flight = None;
        }
        self.release()
    }

    /// An interval has passed since the last was sent: whether to say what
    /// waits now.
    pub fn rested(&mut self) -> bool {
        self.resting = false;
        self.release()
    }

    fn release(&mut self) -> bool {
        let now = self.waiting && self.in_flight.is_none() && !self.resting;
        if now {
            self.waiting = false;
        }
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_goes_at_once_when_nothing_is_in_flight_or_recent() {
        let mut pacing = Pacing::default();
        assert_eq!(pacing.news(0.0), Some(1));
        assert_eq!(pacing.news(10.0), None, "within the interval it waits");
    }

    #[test]
    fn what_waits_goes_only_after_the_answer_and_the_interval_both() {
        let mut pacing = Pacing::default();
        assert_eq!(pacing.news(0.0), Some(1));
        assert_eq!(pacing.news(10.0), None);
        // The interval passes while the first is still on its way.
        assert!(!pacing.rested());
        assert_eq!(pacing.news(60.0), None, "still one at a time");
        // Its answer: the latest is sent now, once.
        assert!(pacing.answered(1));
        assert_eq!(pacing.news(70.0), Some(2));
        // The answer before the interval: sent when the interval ends.
        assert_eq!(pacing.news(80.0), None);
        assert!(!pacing.answered(2));
        assert!(pacing.rested());
    }

    #[test]
    fn nothing_is_sent_again_when_nothing_changed() {
        let mut pacing = Pacing::default();
        assert_eq!(pacing.news(0.0), Some(1));
        assert!(!pacing.answered(1));
        assert!(!pacing.rested());
        assert_eq!(pacing.news(100.0), Some(2), "the next news goes at once");
    }

    #[test]
    fn an_answer_that_never_comes_is_given_up_on_and_its_late_answer_changes_nothing() {
        let mut pacing = Pacing::default();
        assert_eq!(pacing.news(0.0), Some(1));
        assert!(!pacing.rested());
        assert_eq!(pacing.news(GIVE_UP_MILLIS - 1.0), None);
        assert_eq!(pacing.news(GIVE_UP_MILLIS), Some(2));
        // The first's answer at last: the second is still awaited.
        assert!(!pacing.rested());
        assert!(!pacing.answered(1));
        assert_eq!(pacing.news(GIVE_UP_MILLIS + 100.0), None);
        assert!(pacing.answered(2));
    }
}
