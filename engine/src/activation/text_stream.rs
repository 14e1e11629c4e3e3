//! Streamed text on its way to the run's log. The run's event queue is
//! bounded, and text streams in from places that cannot wait (a provider's
//! or an agent's callback): a piece goes when the queue has room; while it
//! is full, the text gathers into the next piece, so nothing is lost and a
//! database that falls behind makes the pieces fewer, not the queue longer.

use std::time::Instant;

use tokio::sync::mpsc::Sender;
use tokio::sync::mpsc::error::TrySendError;
use wire::event::RunEvent;

/// Pieces go when they reach about this size, or this long after the last
/// (when the stream is paced).
const PIECE_CHARACTERS: usize = 48;
const PIECE_INTERVAL_MS: u128 = 100;

pub struct TextStream {
    events: Sender<RunEvent>,
    module_id: String,
    response_index: u32,
    /// Whether pieces wait for a size or an interval (a provider's tokens)
    /// or go as they come (an agent's chunks).
    paced: bool,
    pending: String,
    last_sent: Instant,
}

impl TextStream {
    pub fn new(
        events: Sender<RunEvent>,
        module_id: String,
        response_index: u32,
        paced: bool,
    ) -> TextStream {
        TextStream {
            events,
            module_id,
            response_index,
            paced,
            pending: String::new(),
            last_sent: Instant::now(),
        }
    }

    /// Adds `text`, and sends what has gathered if it is time and there is
    /// room.
    pub fn push(&mut self, text: &str) {
        self.pending.push_str(text);
        let due = !self.paced
            || self.pending.len() >= PIECE_CHARACTERS
            || self.last_sent.elapsed().as_millis() >= PIECE_INTERVAL_MS;
        if !due || self.pending.is_empty() {
            return;
        }
        let piece = self.piece();
        match self.events.try_send(piece) {
            Ok(()) => self.last_sent = Instant::now(),
            Err(TrySendError::Full(RunEvent::ModuleOutputDelta { text, .. })) => {
                self.pending = text;
            }
            // The run is ending: nothing reads the log any more.
            Err(_) => {}
        }
    }

    /// Sends what is left, waiting for room.
    pub async fn finish(mut self) {
        if !self.pending.is_empty() {
            let piece = self.piece();
            let _ = self.events.send(piece).await;
        }
    }

    fn piece(&mut self) -> RunEvent {
        RunEvent::ModuleOutputDelta {
            module_id: self.module_id.clone(),
            response_index: self.response_index,
            text: std::mem::take(&mut self.pending),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(event: RunEvent) -> String {
        match event {
            RunEvent::ModuleOutputDelta { text, .. } => text,
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn text_gathers_while_the_queue_is_full_and_none_is_lost() {
        let (events, mut receiver) = tokio::sync::mpsc::channel(1);
        let mut stream = TextStream::new(events, "m1".to_owned(), 0, false);
        stream.push("one ");
        // The queue holds one: these wait together.
        stream.push("two ");
        stream.push("three");
        assert_eq!(text_of(receiver.recv().await.unwrap()), "one ");
        stream.finish().await;
        assert_eq!(text_of(receiver.recv().await.unwrap()), "two three");
        assert!(receiver.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_paced_stream_sends_pieces_of_about_the_set_size() {
        let (events, mut receiver) = tokio::sync::mpsc::channel(16);
        let mut stream = TextStream::new(events, "m1".to_owned(), 2, true);
        stream.push("short");
        assert!(receiver.try_recv().is_err(), "too short to go yet");
        stream.push(&"x".repeat(PIECE_CHARACTERS));
        assert_eq!(
            text_of(receiver.try_recv().unwrap()).len(),
            5 + PIECE_CHARACTERS
        );
        stream.push("tail");
        stream.finish().await;
        assert_eq!(text_of(receiver.recv().await.unwrap()), "tail");
    }
}
