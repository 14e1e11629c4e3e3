//! When this person's presence (pointer, selection, what they edit) is
//! sent: at most one every interval, one at a time — the next only once the
//! server has answered the last — and whatever changed meanwhile in one
//! more at the end. Two sent at once can reach the room in the other order
//! (the server reads the graph and the token before it takes either): the
//! others then kept the older one, a selection without the module it opened,
//! until the next heartbeat.
//!
//! A plain value fed what happens; `together::say_presence` carries it out.

#[derive(Clone, Copy, Debug, Default)]
pub struct Pacing {
    /// Sent, not yet answered.
    in_flight: bool,
    /// Sent less than an interval ago.
    resting: bool,
    /// Something changed that has not been sent.
    waiting: bool,
}

impl Pacing {
    /// Something new to say: whether to send it now. If not, it is sent
    /// when [`Pacing::answered`] or [`Pacing::rested`] says so.
    pub fn news(&mut self) -> bool {
        if self.in_flight || self.resting {
            self.waiting = true;
            return false;
        }
        self.in_flight = true;
        self.resting = true;
        true
    }

    /// The server answered (or failed to): whether to say what waits now.
    pub fn answered(&mut self) -> bool {
        self.in_flight = false;
        self.release()
    }

    /// An interval has passed since the last was sent: whether to say what
    /// waits now.
    pub fn rested(&mut self) -> bool {
        self.resting = false;
        self.release()
    }

    fn release(&mut self) -> bool {
        let now = self.waiting && !self.in_flight && !self.resting;
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
        assert!(pacing.news());
        assert!(!pacing.news(), "within the interval it waits");
    }

    #[test]
    fn what_waits_goes_only_after_the_answer_and_the_interval_both() {
        let mut pacing = Pacing::default();
        assert!(pacing.news());
        assert!(!pacing.news());
        // The interval passes while the first is still on its way.
        assert!(!pacing.rested());
        assert!(!pacing.news(), "still one at a time");
        // Its answer: the latest is sent now, once.
        assert!(pacing.answered());
        assert!(pacing.news());
        // The answer before the interval: sent when the interval ends.
        assert!(!pacing.news());
        assert!(!pacing.answered());
        assert!(pacing.rested());
    }

    #[test]
    fn nothing_is_sent_again_when_nothing_changed() {
        let mut pacing = Pacing::default();
        assert!(pacing.news());
        assert!(!pacing.answered());
        assert!(!pacing.rested());
        assert!(pacing.news(), "and the next news goes at once");
    }
}
