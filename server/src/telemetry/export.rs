//! Spans on their way to the collector: a bounded queue a run never waits
//! on, and a thread of its own that sends them in batches over OTLP/HTTP.
//! When the collector is down or slow, spans are dropped and counted
//! (`patchbay_spans_dropped_total`), and the log says so once, then once
//! again when spans go through.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use prometheus_client::metrics::counter::Counter;

/// Spans held for the collector at most; more are dropped.
const SPANS_WAITING: usize = 4096;
/// A batch is sent when it has this many spans or has waited this long.
const BATCH_SPANS: usize = 512;
const BATCH_WAIT: Duration = Duration::from_millis(500);

/// What is counted of spans that did not reach the collector.
#[derive(Debug, Default)]
pub struct Dropped {
    pub spans: Counter,
    /// Whether the log has said spans are being dropped.
    said: AtomicBool,
}

impl Dropped {
    fn count(&self, spans: usize, why: &str) {
        self.spans.inc_by(u64::try_from(spans).unwrap_or(u64::MAX));
        if !self.said.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "traces: spans are being dropped ({why}); they are counted in patchbay_spans_dropped_total, and this is said once until spans go through again"
            );
        }
    }

    fn went_through(&self) {
        if self.said.swap(false, Ordering::Relaxed) {
            tracing::info!("traces: spans reach the collector again");
        }
    }
}

/// The sending end, shared by every run of the process.
#[derive(Debug)]
pub struct Spans {
    queue: SyncSender<SpanData>,
    pub dropped: Arc<Dropped>,
}

impl Spans {
    /// Starts the thread that sends to `exporter`.
    pub fn start<E: SpanExporter + 'static>(
        exporter: E,
        counted_in: Counter,
    ) -> Result<Spans, std::io::Error> {
        let (queue, waiting) = mpsc::sync_channel(SPANS_WAITING);
        let dropped = Arc::new(Dropped {
            spans: counted_in,
            said: AtomicBool::new(false),
        });
        let counted = Arc::clone(&dropped);
        std::thread::Builder::new()
            .name("patchbay-traces".to_owned())
            .spawn(move || send_batches(&exporter, &waiting, &counted))?;
        Ok(Spans { queue, dropped })
    }

    /// Hands spans over without waiting: when the queue is full they are
    /// dropped and counted.
    pub fn offer(&self, spans: Vec<SpanData>) {
        let mut spans = spans.into_iter();
        while let Some(span) = spans.next() {
            match self.queue.try_send(span) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    self.dropped
                        .count(1 + spans.len(), "the collector is not keeping up");
                    return;
                }
                Err(TrySendError::Disconnected(_)) => return,
            }
        }
    }
}

fn send_batches<E: SpanExporter>(exporter: &E, waiting: &Receiver<SpanData>, dropped: &Dropped) {
    loop {
        let mut batch = Vec::new();
        let deadline = Instant::now() + BATCH_WAIT;
        while batch.len() < BATCH_SPANS {
            let left = deadline.saturating_duration_since(Instant::now());
            match waiting.recv_timeout(left) {
                Ok(span) => batch.push(span),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    send(exporter, batch, dropped);
                    return;
                }
            }
        }
        send(exporter, batch, dropped);
    }
}

fn send<E: SpanExporter>(exporter: &E, batch: Vec<SpanData>, dropped: &Dropped) {
    if batch.is_empty() {
        return;
    }
    let count = batch.len();
    match futures::executor::block_on(exporter.export(batch)) {
        Ok(()) => dropped.went_through(),
        Err(error) => dropped.count(count, &format!("the collector did not take them: {error}")),
    }
}
